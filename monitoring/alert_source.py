"""What alert rules read, from the real stores and a Prometheus registry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from prometheus_client import CollectorRegistry

from indexing.protocols import DerivedStore, MetadataStore, OutboxEntry, QueryLogRecord
from indexing.sync import check
from monitoring.latency_window import LatencyWindow

# Enough rows to decide any sensible threshold without reading an unbounded backlog into
# memory; a value at the cap means "at least this many".
READ_CAP = 10_000
_SUFFIXES = ("", "_total", "_count", "_sum", "_bucket", "_created")
# The states of a job that has not finished (ragline.jobs: the app layer names them).
UNFINISHED_JOBS = ("queued", "parsing", "indexing")


class StoreAlertSource:
    def __init__(
        self,
        metadata: MetadataStore,
        store_names: Sequence[str],
        *,
        derived: Mapping[str, DerivedStore] | None = None,
        registry: CollectorRegistry | None = None,
        latencies: LatencyWindow | None = None,
        cap: int = READ_CAP,
    ) -> None:
        self._latencies = latencies
        self._metadata = metadata
        self._store_names = list(store_names)
        self._derived = derived
        self._registry = registry
        self._cap = cap

    def outbox_pending(self) -> dict[str, list[OutboxEntry]]:
        return {s: self._metadata.pending(s, limit=self._cap) for s in self._store_names}

    def failed_jobs(self, since: datetime) -> int:
        # Jobs come newest first by creation; one that failed late still counts by its
        # last update, the moment it failed.
        failed = self._metadata.jobs(state="failed", limit=self._cap)
        return sum(1 for j in failed if j.updated_at is not None and j.updated_at >= since)

    def stalled_jobs(self, before: datetime) -> int:
        return sum(
            1
            for state in UNFINISHED_JOBS
            for j in self._metadata.jobs(state=state, limit=self._cap)
            if j.updated_at is not None and j.updated_at < before
        )

    def queries(self, since: datetime) -> list[QueryLogRecord]:
        return self._metadata.query_log(since=since, limit=self._cap)

    def divergence(self) -> dict[str, int]:
        if self._derived is None:
            raise RuntimeError("store divergence needs the derived stores, which are not open")
        return {
            d.store: len(d.missing) + len(d.extra) + len(d.stale)
            for d in check(self._metadata, self._derived)
        }

    def metric(self, name: str, labels: Mapping[str, str]) -> float | None:
        if self._registry is None:
            return None
        known = False
        total = 0.0
        for family in self._registry.collect():
            if name not in {family.name + s for s in _SUFFIXES}:
                continue
            known = True
            for sample in family.samples:
                if sample.name == name and all(
                    sample.labels.get(k) == v for k, v in labels.items()
                ):
                    total += sample.value
        return total if known else None

    def retrieval_ms(self, since: datetime) -> list[float]:
        # Latencies live in the serving process; a one-off check elsewhere sees none.
        return self._latencies.since(since) if self._latencies is not None else []

    def oldest_unsearchable(self) -> datetime | None:
        return self._metadata.oldest_unsearchable()
