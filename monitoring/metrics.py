"""Prometheus metrics. One registry per application instance (no module-level state), so
tests and several apps in one process never share counters."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from core.types import Answer


class SourceStatus(Protocol):
    """What a retrieval source reports (fusion's SourceOutcome fits)."""

    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.queries = Counter(
            "ragline_queries", "Questions answered", ["kind", "covered"], registry=self.registry
        )
        self.query_seconds = Histogram(
            "ragline_query_seconds", "End-to-end query latency", ["kind"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10), registry=self.registry,
        )
        self.source_failures = Counter(
            "ragline_source_failures", "Retrieval sources that failed, timed out or were open",
            ["source", "status"], registry=self.registry,
        )
        self.files = Counter(
            "ragline_ingested_files", "Files processed by ingestion", ["status"],
            registry=self.registry,
        )
        self.removed_citations = Counter(
            "ragline_removed_citations", "LLM citations removed as not retrieved",
            registry=self.registry,
        )
        # Set (not counted up) by the alert scheduler on every evaluation, so a resolved
        # alert drops back to 0.
        self.alerts_firing = Gauge(
            "ragline_alerts_firing", "Alerts firing now, per rule (monitoring/alert_rules.toml)",
            ["alert", "severity"], registry=self.registry,
        )
        self.actions_active = Gauge(
            "ragline_alert_action_active",
            "Automatic alert actions in effect (1) or not (0): degrade_routing, pause_llm, ...",
            ["action"], registry=self.registry,
        )

    def observe_answer(
        self, answer: Answer, sources: Iterable[SourceStatus], seconds: float
    ) -> None:
        kind = answer.mode
        self.queries.labels(kind=kind, covered=str(answer.covered).lower()).inc()
        self.query_seconds.labels(kind=kind).observe(seconds)
        self.removed_citations.inc(len(answer.removed_labels))
        for source in sources:
            if source.status != "ok":
                self.source_failures.labels(source=source.name, status=source.status).inc()

    def observe_files(self, statuses: Iterable[str]) -> None:
        for status in statuses:
            self.files.labels(status=status).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
