"""Alert rules: loading, and the evaluator on a real SQLite metadata store with crafted
rows, firing exactly the alerts the rows call for."""

from __future__ import annotations

from pathlib import Path

import pytest
from alert_rows import add_job, add_outbox, add_query, ago, now

from core.errors import ConfigError
from indexing.stores.sql_metadata import SqlMetadataStore
from monitoring.alert_source import StoreAlertSource
from monitoring.alerts import AlertEvaluator, AlertRule, load_rules
from monitoring.metrics import Metrics

STORES = ("dense", "keyword", "graph")


def _rules(**overrides: float) -> list[AlertRule]:
    t = {
        "backlog": 2,
        "failures": 0,
        "jobs": 1,
        "stalled": 0,
        "ratio": 0.5,
        "removed": 2,
        "metric": 1,
        **overrides,
    }
    return [
        AlertRule("backlog", "outbox_backlog", t["backlog"]),
        AlertRule("failing", "outbox_failures", t["failures"], "critical", min_attempts=3),
        AlertRule("jobs", "failed_jobs", t["jobs"], window_s=3600),
        AlertRule("stalled", "stalled_jobs", t["stalled"], window_s=1800),
        AlertRule("not_covered", "not_covered_ratio", t["ratio"], window_s=3600, min_queries=4),
        AlertRule("removed", "removed_citations", t["removed"], window_s=3600),
        AlertRule(
            "dense_failures",
            "metric",
            t["metric"],
            metric="ragline_source_failures_total",
            labels=(("source", "dense"),),
        ),
        # Off: if it were read, the missing derived stores would make it fire.
        AlertRule("divergence", "store_divergence", 0, enabled=False),
    ]


@pytest.fixture
def crafted(store: SqlMetadataStore) -> StoreAlertSource:
    # Outbox: dense 3 pending (tried twice each), keyword 1 pending tried 3 times,
    # graph 3 entries all applied (one after 5 failures).
    for _ in range(3):
        add_outbox(store, "dense", attempts=2)
    add_outbox(store, "keyword", attempts=3, error="es: 503")
    for attempts in (0, 0, 5):
        entry = add_outbox(store, "graph", attempts=attempts)
        store.mark_done([entry])
    # Jobs: two failed within the hour, one failed yesterday, one fine.
    add_job(store, "failed")
    add_job(store, "failed", at=ago(minutes=30))
    add_job(store, "failed", at=ago(hours=20))
    add_job(store, "searchable")
    # Unfinished: one parsing for two hours (stalled), one queued a moment ago, and a job
    # finished long ago (not unfinished).
    add_job(store, "parsing", at=ago(hours=2))
    add_job(store, "queued")
    add_job(store, "searchable", at=ago(hours=3))
    # Queries in the window: 3 of 4 not covered, 3 removed citations. Outside it: ten
    # covered answers and five removed labels, which must not count.
    add_query(store, covered=True)
    add_query(store, covered=False, removed=("[Doca_p1]", "[Docb_p1]"))
    add_query(store, covered=False, removed=("[Docc_p2]",), at=ago(minutes=59))
    add_query(store, covered=False)
    for i in range(10):
        add_query(store, covered=True, removed=("[Docz_p1]",) if i < 5 else (), at=ago(hours=2))
    # Registry: dense failed 2 + 3 times (two statuses), keyword 7 times.
    metrics = Metrics()
    metrics.source_failures.labels(source="dense", status="timeout").inc(2)
    metrics.source_failures.labels(source="dense", status="open").inc(3)
    metrics.source_failures.labels(source="keyword", status="error").inc(7)
    return StoreAlertSource(store, STORES, registry=metrics.registry)


def test_evaluator_fires_exactly_what_the_rows_call_for(crafted: StoreAlertSource) -> None:
    fired = AlertEvaluator(_rules()).evaluate(crafted, now())
    got = {(a.name, a.subject): a.value for a in fired}
    assert got == {
        ("backlog", "dense"): 3,
        ("failing", "keyword"): 1,
        ("jobs", ""): 2,
        ("stalled", ""): 1,
        ("not_covered", ""): 0.75,
        ("removed", ""): 3,
        ("dense_failures", ""): 5,  # both dense statuses; keyword's 7 not counted
    }
    failing = next(a for a in fired if a.name == "failing")
    assert failing.severity == "critical" and "es: 503" in failing.message


def test_nothing_fires_under_higher_thresholds(crafted: StoreAlertSource) -> None:
    quiet = _rules(backlog=3, failures=1, jobs=2, stalled=1, ratio=0.75, removed=3, metric=5)
    assert AlertEvaluator(quiet).evaluate(crafted, now()) == []


def test_no_ratio_verdict_on_too_few_answers(store: SqlMetadataStore) -> None:
    add_query(store, covered=False)
    source = StoreAlertSource(store, STORES)
    rule = AlertRule("nc", "not_covered_ratio", 0.5, min_queries=2)
    assert AlertEvaluator([rule]).evaluate(source, now()) == []
    add_query(store, covered=False)
    assert [a.value for a in AlertEvaluator([rule]).evaluate(source, now())] == [1.0]


class _Derived:
    def __init__(self, ids: set[str]) -> None:
        self.ids = ids

    def content_ids(self) -> set[str]:
        return self.ids

    def held_metadata(self) -> dict[str, str]:
        return {}

    def metadata_signature(self, chunk: object) -> str:
        return ""


def test_divergence_and_unreadable_rules(store: SqlMetadataStore) -> None:
    rule = AlertRule("divergence", "store_divergence", 0)
    # Without the derived stores the rule cannot read its number: it fires, value None.
    (alert,) = AlertEvaluator([rule]).evaluate(StoreAlertSource(store, STORES), now())
    assert alert.value is None and "cannot evaluate" in alert.message
    derived = {"dense": _Derived(set()), "keyword": _Derived({"stale-1", "stale-2"})}
    source = StoreAlertSource(store, STORES, derived=derived)  # type: ignore[arg-type]
    fired = AlertEvaluator([rule]).evaluate(source, now())
    assert [(a.subject, a.value) for a in fired] == [("keyword", 2)]
    unknown = AlertRule("typo", "metric", 0, metric="ragline_no_such_metric")
    source = StoreAlertSource(store, STORES, registry=Metrics().registry)
    (alert,) = AlertEvaluator([unknown]).evaluate(source, now())
    assert alert.value is None and "ragline_no_such_metric" in alert.message


def test_packaged_rules_load() -> None:
    rules = {r.name: r for r in load_rules()}
    assert set(rules) == {
        "outbox_backlog",
        "outbox_failures",
        "failed_ingestion",
        "stalled_jobs",
        "not_covered_ratio",
        "removed_citations",
        "store_divergence",
        "retrieval_latency_p95",
        "hit_rate",
        "citation_completeness",
        "index_freshness",
    }
    # The four golden signals at the thresholds of the issue, each with its action.
    golden = {
        n: (rules[n].threshold, rules[n].below, rules[n].window_s, rules[n].action)
        for n in ("retrieval_latency_p95", "hit_rate", "citation_completeness")
    }
    assert golden == {
        "retrieval_latency_p95": (800, False, 300, "degrade_routing"),
        "hit_rate": (0.75, True, 3600, "reindex_misses"),
        "citation_completeness": (0.95, True, 900, "pause_llm"),
    }
    assert (rules["index_freshness"].threshold, rules["index_freshness"].action) == (
        300,
        "incremental_sync",
    )
    assert not rules["store_divergence"].enabled  # heavier: off by default
    assert not AlertEvaluator(list(rules.values())).needs_derived_stores


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('[[rule]]\nname = "a"\nkind = "nope"\nthreshold = 1\n', "kind 'nope'"),
        ('[[rule]]\nname = "a"\nkind = "failed_jobs"\nthreshold = 1\nwindow = 5\n', "unknown"),
        ('[[rule]]\nname = "a"\nkind = "failed_jobs"\n', "missing ['threshold']"),
        ('[[rule]]\nname = "a"\nkind = "metric"\nthreshold = 1\n', "needs `metric`"),
        (
            '[[rule]]\nname = "a"\nkind = "failed_jobs"\nthreshold = 1\nseverity = "page"\n',
            "severity",
        ),
        ('[[rule]]\nname = "a"\nkind = "failed_jobs"\nthreshold = 1\n' * 2, "unique"),
        ("[[rule]\n", "alert rules"),
    ],
)
def test_bad_rules_are_refused(tmp_path: Path, body: str, error: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(body)
    with pytest.raises(ConfigError) as info:
        load_rules(path)
    assert error in str(info.value)
