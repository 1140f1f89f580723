"""Prometheus metrics. One registry per application instance (no module-level state), so
tests and several apps in one process never share counters.

Under `ragline serve --workers N` the worker processes share their counters through
prometheus_client's multiprocess mode (PROMETHEUS_MULTIPROC_DIR, set by `ragline serve`
before the workers start): a scrape answered by any worker reports the totals of all of
them, plus the state read from the truth at scrape time (jobs, freshness, breakers).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from core.types import Answer

log = logging.getLogger("ragline.metrics")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 2.5, 5, 10, 30)
# Search stages as timed by fusion/pipeline.py and generation, and their stage label.
_STAGES = {"route": "route", "fuse_serve": "fuse", "rerank": "rerank", "generate": "generate"}
JOB_STATES = (
    *("queued", "parsing", "indexing", "searchable", "failed", "deleted", "done"),
    "superseded",
)
BREAKER_STATES = ("closed", "half-open", "open")


@dataclass(frozen=True, slots=True)
class OpsState:
    """Read at scrape time from the truth: job counts by state, the index freshness lag and
    each retrieval source's breaker state."""

    jobs: Mapping[str, int]
    freshness_s: float
    breakers: Mapping[str, str]


class _StateCollector(Collector):
    def __init__(self, read: Callable[[], OpsState]) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        try:
            state = self._read()
        except Exception as exc:  # a scrape must not fail because a store is down
            log.warning("metrics: cannot read the operational state: %s", exc)
            return
        jobs = GaugeMetricFamily(
            "ragline_jobs", "Jobs (uploads, deletes, reindexes, syncs) by state", labels=["state"]
        )
        for name in JOB_STATES:
            jobs.add_metric([name], state.jobs.get(name, 0))
        yield jobs
        yield GaugeMetricFamily(
            "ragline_queue_depth",
            "Jobs waiting to be picked up (state queued)",
            value=state.jobs.get("queued", 0),
        )
        yield GaugeMetricFamily(
            "ragline_index_freshness_seconds",
            "How long the oldest staged, not yet searchable version has waited (0 = none)",
            value=state.freshness_s,
        )
        breakers = GaugeMetricFamily(
            "ragline_breaker_state",
            "Circuit breaker per retrieval source: 1 for its current state, 0 for the others",
            labels=["source", "state"],
        )
        for source, current in sorted(state.breakers.items()):
            for name in BREAKER_STATES:
                breakers.add_metric([source, name], float(name == current))
        yield breakers


class SourceStatus(Protocol):
    """What a retrieval source reports (fusion's SourceOutcome fits)."""

    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    # Collectors read at scrape time (not counted in processes): added to every exposition.
    _scrape_time: list[Collector] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.queries = Counter(
            "ragline_queries", "Questions answered", ["kind", "covered"], registry=self.registry
        )
        self.query_seconds = Histogram(
            "ragline_query_seconds",
            "End-to-end query latency",
            ["kind"],
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.source_failures = Counter(
            "ragline_source_failures",
            "Retrieval sources that failed, timed out or were open",
            ["source", "status"],
            registry=self.registry,
        )
        self.files = Counter(
            "ragline_ingested_files",
            "Files processed by ingestion",
            ["status"],
            registry=self.registry,
        )
        self.removed_citations = Counter(
            "ragline_removed_citations",
            "LLM citations removed as not retrieved",
            registry=self.registry,
        )
        self.refused = Counter(
            "ragline_requests_refused",
            "Requests refused with 429 (backpressure, rate limits)",
            ["reason"],
            registry=self.registry,
        )
        self.gateway_calls = Counter(
            "ragline_gateway_calls",
            "Knowledge gateway calls by kind, source and outcome",
            ["kind", "source", "status"],
            registry=self.registry,
        )
        self.gateway_answers = Counter(
            "ragline_gateway_answers",
            "Answers by the kind of source that answered",
            ["answered_by"],
            registry=self.registry,
        )
        self.model_choices = Counter(
            "ragline_llm_model_choices",
            "Answers per model routing tier (small/large/none)",
            ["tier", "model"],
            registry=self.registry,
        )
        # Known label values exist from the start (at 0), so a dashboard shows "none yet"
        # rather than "no data".
        for reason in ("in_flight", "rate_limit"):
            self.refused.labels(reason=reason)
        for kind in ("documents", "rows", "status"):
            self.gateway_answers.labels(answered_by=kind)
        self.knowledge_gaps = Counter(
            "ragline_knowledge_gaps",
            "Questions recorded as knowledge gaps (not covered or low coverage)",
            ["reason"],
            registry=self.registry,
        )
        self.gaps_closed = Counter(
            "ragline_knowledge_gaps_closed",
            "Knowledge gaps closed because a later ingest made them answerable",
            registry=self.registry,
        )
        # Set (not counted up) by the alert scheduler on every evaluation, so a resolved
        # alert drops back to 0.
        self.retrieval_seconds = Histogram(
            "ragline_retrieval_seconds",
            "Search latency from routing to rerank",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.stage_seconds = Histogram(
            "ragline_stage_seconds",
            "Latency per stage: route, source_<name>, fuse, rerank, generate",
            ["stage"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.http_requests = Counter(
            "ragline_http_requests",
            "HTTP requests by endpoint (route template) and status",
            ["endpoint", "method", "status"],
            registry=self.registry,
        )
        self.http_seconds = Histogram(
            "ragline_http_request_seconds",
            "HTTP request latency by endpoint",
            ["endpoint"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.answer_sentences = Counter(
            "ragline_answer_sentences",
            "Sentences of covered answers",
            ["mode"],
            registry=self.registry,
        )
        self.answer_sentences_verified = Counter(
            "ragline_answer_sentences_verified",
            "Sentences of covered answers carrying a verified citation label",
            ["mode"],
            registry=self.registry,
        )
        self.acl_denials = Counter(
            "ragline_acl_denials",
            "Requests refused or narrowed by permissions (403, or a document hidden as 404)",
            ["endpoint", "reason"],
            registry=self.registry,
        )
        self.ingested_chunks = Counter(
            "ragline_ingested_chunks",
            "Chunks staged by ingestion",
            registry=self.registry,
        )
        self.ingested_pages = Counter(
            "ragline_ingested_pages",
            "Pages (or sheets/sections) staged by ingestion",
            registry=self.registry,
        )
        # multiprocess_mode (ignored in one process): the highest value of the live workers.
        self.alerts_firing = Gauge(
            "ragline_alerts_firing",
            "Alerts firing now, per rule (monitoring/alert_rules.toml)",
            ["alert", "severity"],
            registry=self.registry,
            multiprocess_mode="livemax",
        )
        self.actions_active = Gauge(
            "ragline_alert_action_active",
            "Automatic alert actions in effect (1) or not (0): degrade_routing, pause_llm, ...",
            ["action"],
            registry=self.registry,
            multiprocess_mode="livemax",
        )

    def observe_answer(
        self, answer: Answer, sources: Iterable[SourceStatus], seconds: float
    ) -> None:
        kind = answer.mode
        self.queries.labels(kind=kind, covered=str(answer.covered).lower()).inc()
        self.query_seconds.labels(kind=kind).observe(seconds)
        self.removed_citations.inc(len(answer.removed_labels))
        self.observe_sources(sources)

    def observe_sources(self, sources: Iterable[SourceStatus]) -> None:
        for source in sources:
            if source.status != "ok":
                self.source_failures.labels(source=source.name, status=source.status).inc()

    def observe_model(self, tier: str, model: str) -> None:
        self.model_choices.labels(tier=tier, model=model).inc()

    def observe_files(self, statuses: Iterable[str]) -> None:
        for status in statuses:
            self.files.labels(status=status).inc()

    def observe_ingest(self, status: str, chunks: int, pages: int) -> None:
        self.files.labels(status=status).inc()
        if status == "indexed":
            self.ingested_chunks.inc(chunks)
            self.ingested_pages.inc(pages)

    def observe_search(self, timings_ms: Mapping[str, float], retrieval_ms: float) -> None:
        self.retrieval_seconds.observe(retrieval_ms / 1000)
        for key, ms in timings_ms.items():
            stage = key if key.startswith("source_") else _STAGES.get(key)
            if stage is not None and stage != "generate":
                self.stage_seconds.labels(stage=stage).observe(ms / 1000)

    def observe_generation(
        self, answer: Answer, sentences: int, verified: int, intent: str
    ) -> None:
        for stage in ("generate", "embed_sentences"):  # the second is inside the first
            if stage in answer.timings_ms:
                self.stage_seconds.labels(stage=stage).observe(answer.timings_ms[stage] / 1000)
        if answer.covered:
            self.answer_sentences.labels(mode=answer.mode).inc(sentences)
            self.answer_sentences_verified.labels(mode=answer.mode).inc(verified)

    def watch_state(self, read: Callable[[], OpsState]) -> None:
        """Expose jobs, queue depth, freshness and breakers, read at each scrape."""
        collector = _StateCollector(read)
        self.registry.register(collector)
        self._scrape_time.append(collector)

    def exposition(self) -> bytes:
        shared = os.environ.get(MULTIPROC_ENV, "")
        if not shared:
            return generate_latest(self.registry)
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=shared)
        for collector in self._scrape_time:
            registry.register(collector)
        return generate_latest(registry)

    def observe_gateway_call(self, kind: str, source: str, status: str) -> None:
        self.gateway_calls.labels(kind=kind, source=source, status=status).inc()

    def observe_gateway(self, answered_by: str) -> None:
        self.gateway_answers.labels(answered_by=answered_by).inc()
