"""The Grafana dashboard charts metrics that exist: every metric name in its PromQL must
be exposed by `Metrics()`, so renaming a metric without the dashboard fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from monitoring.metrics import Metrics, OpsState

ROOT = Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "deploy" / "docker" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "ragline.json"
_NAME = re.compile(r"\bragline_[A-Za-z0-9_]+")
# The series names Prometheus stores for each metric type.
_SERIES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
}


def exposed_series() -> dict[str, set[str]]:
    """metric family -> the series names PromQL may use for it."""
    metrics = Metrics()
    # The scrape-time gauges (jobs, queue depth, freshness, breakers) of a serving app.
    metrics.watch_state(lambda: OpsState({"queued": 1}, 0.0, {"keyword": "closed"}))
    text = metrics.exposition().decode()
    return {
        f.name: {f.name + s for s in _SERIES.get(f.type, ("",))}
        for f in text_string_to_metric_families(text)
        # A counter's creation time, parsed as a family of its own: not a metric of ours.
        if not f.name.endswith("_created")
    }


def dashboard_exprs() -> list[str]:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]


def test_every_metric_in_the_dashboard_is_exposed() -> None:
    exposed = set().union(*exposed_series().values())
    used = {name for expr in dashboard_exprs() for name in _NAME.findall(expr)}
    assert used, "the dashboard queries no ragline metric"
    assert used <= exposed, f"not exposed by Metrics(): {sorted(used - exposed)}"


def test_every_exposed_metric_is_charted() -> None:
    used = {name for expr in dashboard_exprs() for name in _NAME.findall(expr)}
    uncharted = [f for f, series in exposed_series().items() if not series & used]
    assert uncharted == []


def test_dashboard_is_provisioned_against_the_provisioned_datasource() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)) and dash["uid"]
    uids = {t["datasource"]["uid"] for p in dash["panels"] for t in p["targets"]}
    assert uids == {"prometheus"}
    assert "uid: prometheus" in (GRAFANA / "datasources.yml").read_text()
    provider = (GRAFANA / "dashboards.yml").read_text()
    compose = (ROOT / "docker-compose.yml").read_text()
    assert "path: /etc/grafana/dashboards" in provider
    assert "./deploy/docker/grafana/dashboards:/etc/grafana/dashboards:ro" in compose
    assert "grafana/dashboards.yml:/etc/grafana/provisioning/dashboards/" in compose


def test_checked_in_json_is_what_the_code_generates() -> None:
    from monitoring.dashboard import render

    assert DASHBOARD.read_text(encoding="utf-8") == render(), (
        "regenerate with: python -m monitoring.dashboard"
    )


def test_dashboard_has_a_panel_for_each_operational_question() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    titles = " | ".join(p["title"] for p in dash["panels"]).lower()
    for topic in (
        "requests by endpoint",
        "errors by endpoint",
        "p50 / p95 / p99",
        "hit rate",
        "citation completeness",
        "breaker",
        "queue depth",
        "jobs by state",
        "ingest throughput",
        "index freshness",
        "knowledge gaps",
        "acl denials",
    ):
        assert topic in titles, topic
    stages = " ".join(dashboard_exprs())
    assert "ragline_stage_seconds_bucket" in stages
