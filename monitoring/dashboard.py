"""The Grafana dashboard, built from code with grafanalib (not hand-edited JSON).

    python -m monitoring.dashboard          # rewrites deploy/docker/grafana/dashboards/ragline.json
    python -m monitoring.dashboard --check  # exit 1 if the checked-in JSON is not what it builds

Every panel's PromQL is run against a real Prometheus scraping a real Ragline by
tests/integration/test_prometheus.py; tests/monitoring/test_dashboard.py checks that the
checked-in JSON is exactly what this module generates.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grafanalib._gen import DashboardEncoder
from grafanalib.core import Dashboard, GridPos, RowPanel, Target, Time, TimeSeries

OUT = Path(__file__).resolve().parents[1] / "deploy/docker/grafana/dashboards/ragline.json"
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}


@dataclass(frozen=True)
class Panel:
    title: str
    exprs: tuple[tuple[str, str], ...]  # (PromQL, legend)
    unit: str = "short"
    description: str = ""


def _q(q: float, metric: str, by: str) -> str:
    return f"histogram_quantile({q}, sum by (le{', ' + by if by else ''}) (rate({metric}[5m])))"


ROWS: tuple[tuple[str, tuple[Panel, ...]], ...] = (
    (
        "Traffic",
        (
            Panel(
                "Requests by endpoint",
                (("sum by (endpoint) (rate(ragline_http_requests_total[5m]))", "{{endpoint}}"),),
                "reqps",
            ),
            Panel(
                "Errors by endpoint (4xx and 5xx)",
                (
                    (
                        "sum by (endpoint, status) "
                        '(rate(ragline_http_requests_total{status=~"[45].."}[5m]))',
                        "{{endpoint}} {{status}}",
                    ),
                ),
                "reqps",
            ),
            Panel(
                "HTTP latency P95 by endpoint",
                ((_q(0.95, "ragline_http_request_seconds_bucket", "endpoint"), "{{endpoint}}"),),
                "s",
            ),
            Panel(
                "Requests refused with 429 (in-flight bound, per-key rate limits)",
                (("sum by (reason) (rate(ragline_requests_refused_total[5m]))", "{{reason}}"),),
                "reqps",
            ),
        ),
    ),
    (
        "Latency per stage",
        (
            Panel(
                "Stage latency P50 / P95 / P99 (route, each source, fuse, rerank, generate)",
                tuple(
                    (_q(q, "ragline_stage_seconds_bucket", "stage"), f"{{{{stage}}}} P{p}")
                    for q, p in ((0.5, 50), (0.95, 95), (0.99, 99))
                ),
                "s",
            ),
            Panel(
                "Retrieval latency P95 (alert above 0.8 s)",
                ((_q(0.95, "ragline_retrieval_seconds_bucket", ""), "P95"),),
                "s",
            ),
            Panel(
                "End-to-end query latency P95 by kind",
                ((_q(0.95, "ragline_query_seconds_bucket", "kind"), "{{kind}}"),),
                "s",
            ),
        ),
    ),
    (
        "Answer quality",
        (
            Panel(
                "Hit rate (answers covered, 1 h; alert under 75 %)",
                (
                    (
                        'sum(rate(ragline_queries_total{covered="true"}[1h])) '
                        "/ sum(rate(ragline_queries_total[1h]))",
                        "hit rate",
                    ),
                ),
                "percentunit",
            ),
            Panel(
                "Citation completeness (sentences with a verified label; alert under 95 %)",
                (
                    (
                        "sum by (mode) (rate(ragline_answer_sentences_verified_total[15m])) "
                        "/ sum by (mode) (rate(ragline_answer_sentences_total[15m]))",
                        "{{mode}}",
                    ),
                ),
                "percentunit",
            ),
            Panel(
                "Knowledge gaps recorded (by reason) and closed by later ingests, 1 h",
                (
                    ("sum by (reason) (increase(ragline_knowledge_gaps_total[1h]))", "{{reason}}"),
                    ("sum(increase(ragline_knowledge_gaps_closed_total[1h]))", "closed by ingests"),
                ),
            ),
            Panel(
                "Answers by mode and coverage; removed LLM citations",
                (
                    (
                        "sum by (kind, covered) (rate(ragline_queries_total[5m]))",
                        "{{kind}} covered={{covered}}",
                    ),
                    (
                        "sum(increase(ragline_removed_citations_total[1h]))",
                        "removed citations (1 h)",
                    ),
                ),
            ),
        ),
    ),
    (
        "Reliability",
        (
            Panel(
                "Circuit breaker state per source",
                (
                    (
                        'max by (source) (ragline_breaker_state{state!="closed"})',
                        "{{source}} not closed",
                    ),
                    ("max by (source, state) (ragline_breaker_state)", "{{source}} {{state}}"),
                ),
            ),
            Panel(
                "Retrieval source failures",
                (
                    (
                        "sum by (source, status) (rate(ragline_source_failures_total[5m]))",
                        "{{source}} {{status}}",
                    ),
                ),
                "ops",
            ),
            Panel(
                "Alerts firing and automatic actions in effect",
                (
                    ("sum by (alert) (ragline_alerts_firing)", "{{alert}}"),
                    ("max by (action) (ragline_alert_action_active)", "action {{action}}"),
                ),
            ),
        ),
    ),
    (
        "Ingestion and freshness",
        (
            Panel(
                "Queue depth and jobs by state",
                (
                    ("sum(ragline_queue_depth)", "queued"),
                    ("sum by (state) (ragline_jobs)", "{{state}}"),
                ),
            ),
            Panel(
                "Ingest throughput",
                (
                    (
                        "sum by (status) (rate(ragline_ingested_files_total[5m]))",
                        "files {{status}}",
                    ),
                    ("sum(rate(ragline_ingested_chunks_total[5m]))", "chunks"),
                    ("sum(rate(ragline_ingested_pages_total[5m]))", "pages"),
                ),
                "ops",
            ),
            Panel(
                "Index freshness (oldest upload not yet searchable; alert above 5 min)",
                (("max(ragline_index_freshness_seconds)", "lag"),),
                "s",
            ),
        ),
    ),
    (
        "Knowledge gateway and models",
        (
            Panel(
                "Gateway calls by kind, source and outcome",
                (
                    (
                        "sum by (kind, source, status) (rate(ragline_gateway_calls_total[5m]))",
                        "{{kind}} {{source}} {{status}}",
                    ),
                ),
                "ops",
            ),
            Panel(
                "Answers by the kind of source that answered",
                (
                    (
                        "sum by (answered_by) (rate(ragline_gateway_answers_total[5m]))",
                        "{{answered_by}}",
                    ),
                ),
                "ops",
            ),
            Panel(
                "Answers by model tier (none = extractive)",
                (
                    (
                        "sum by (tier, model) (rate(ragline_llm_model_choices_total[5m]))",
                        "{{tier}} {{model}}",
                    ),
                ),
                "ops",
            ),
        ),
    ),
    (
        "Permissions",
        (
            Panel(
                "ACL denials by endpoint",
                (
                    (
                        "sum by (endpoint, reason) (rate(ragline_acl_denials_total[5m]))",
                        "{{endpoint}} {{reason}}",
                    ),
                ),
                "reqps",
            ),
        ),
    ),
)


def expressions() -> list[str]:
    """Every PromQL expression of the dashboard."""
    return [expr for _, panels in ROWS for p in panels for expr, _ in p.exprs]


def build() -> Dashboard:
    panels: list[Any] = []
    y, next_id = 0, 1
    for row_title, row in ROWS:
        panels.append(RowPanel(title=row_title, gridPos=GridPos(h=1, w=24, x=0, y=y), id=next_id))
        next_id += 1
        y += 1
        width = 24 // len(row)
        for i, p in enumerate(row):
            panels.append(
                TimeSeries(
                    title=p.title,
                    id=next_id,
                    dataSource=DATASOURCE,
                    targets=[
                        Target(
                            expr=expr,
                            legendFormat=legend,
                            refId=chr(ord("A") + j),
                            datasource=DATASOURCE,
                        )
                        for j, (expr, legend) in enumerate(p.exprs)
                    ],
                    gridPos=GridPos(h=8, w=width, x=i * width, y=y),
                    unit=p.unit,
                    description=p.description,
                )
            )
            next_id += 1
        y += 8
    return Dashboard(
        title="Ragline",
        uid="ragline-overview",
        description="Traffic, per-stage latency, answer quality, reliability, ingestion and "
        "permissions of a Ragline deployment (generated by monitoring/dashboard.py).",
        tags=["ragline"],
        timezone="utc",
        refresh="30s",
        time=Time("now-6h", "now"),
        panels=panels,
    ).auto_panel_ids()


def render() -> str:
    data = json.loads(json.dumps(build().to_json_data(), cls=DashboardEncoder))
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python -m monitoring.dashboard", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
