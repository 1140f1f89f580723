"""Convergence of the derived stores with the metadata store.

Writers only stage versions (one transaction in the metadata store, with outbox entries);
`OutboxApplier` applies those entries to each derived store in order, idempotently, and
promotes a version to current once every store has it. `check` and `repair` compare and
re-align the stores with the truth after crashes or outages.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from core.types import Chunk, DocumentVersion
from indexing.protocols import DerivedStore, IndexedChunk, MetadataStore, OutboxEntry

log = logging.getLogger(__name__)


@dataclass
class SyncReport:
    applied: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    promoted: list[DocumentVersion] = field(default_factory=list)
    # (doc_id, version) whose metadata changed (an ACL, a title) in at least one store.
    relabelled: set[tuple[str, str]] = field(default_factory=set)


def _relabel(applied: list[OutboxEntry], relabelled: set[tuple[str, str]] | None) -> None:
    if relabelled is not None:
        relabelled.update((e.doc_id, e.version) for e in applied if e.op == "meta")


# Chunks (with their vectors) of the versions read in one batch, kept for the other stores.
_CACHED_CHUNKS = 20_000


class OutboxApplier:
    def __init__(
        self,
        metadata: MetadataStore,
        stores: Mapping[str, DerivedStore],
        batch: int = 200,
        group_chunks: int = 2000,
    ) -> None:
        self._meta = metadata
        self._stores = stores
        self._batch = batch
        self._group_chunks = group_chunks  # 0 or 1: every entry on its own
        # A version's items as read for the stores in this round of `run`: every store
        # has the same entries pending, and reading and rebuilding the chunks was a
        # sixth of store ingest, three times over (bench/RESULTS.md).
        self._items: dict[tuple[str, str], list[IndexedChunk]] = {}

    def _version_items(self, doc_id: str, version: str) -> list[IndexedChunk]:
        key = (doc_id, version)
        items = self._items.get(key)
        if items is None:
            items = list(self._meta.version_items(doc_id, version))
            self._keep(key, items)
        return items

    def _keep(self, key: tuple[str, str], items: list[IndexedChunk]) -> None:
        held = sum(len(v) for v in self._items.values())
        if held + len(items) <= _CACHED_CHUNKS:  # bounded: vectors are large
            self._items[key] = items

    def _apply_one(self, store: DerivedStore, entry: OutboxEntry) -> None:
        if entry.op == "upsert":
            store.upsert(self._version_items(entry.doc_id, entry.version))
        elif entry.op == "delete":
            store.delete(self._meta.version_content_ids(entry.doc_id, entry.version))
        elif entry.op == "meta":
            # Read fresh: the entry is there because the fields changed since.
            items = list(self._meta.version_items(entry.doc_id, entry.version))
            self._items.pop((entry.doc_id, entry.version), None)
            self._keep((entry.doc_id, entry.version), items)
            store.update_metadata([item.chunk for item in items])
        else:
            raise ValueError(f"unknown outbox op {entry.op!r}")

    def _apply(self, store: DerivedStore, entries: list[OutboxEntry], done: list[int]) -> None:
        """Apply `entries` in order, appending each applied id to `done`. Runs of
        consecutive upserts go to the store as one write (up to `group_chunks` chunks):
        one transaction / bulk request / index append per run instead of one per
        document, which is most of the sync time for small documents
        (bench/RESULTS.md). Order across deletes and metadata updates stays."""
        run: list[OutboxEntry] = []
        items: list[IndexedChunk] = []

        def write_run() -> None:
            if run:
                store.upsert(items)
                done.extend(e.id for e in run)
                run.clear()
                items.clear()

        for entry in entries:
            if entry.op != "upsert" or self._group_chunks <= 1:
                write_run()
                self._apply_one(store, entry)
                done.append(entry.id)
                continue
            items.extend(self._version_items(entry.doc_id, entry.version))
            run.append(entry)
            if len(items) >= self._group_chunks:
                write_run()
        write_run()

    def apply_batch(self, name: str, relabelled: set[tuple[str, str]] | None = None) -> int:
        """Apply up to one batch of this store's pending entries, in order; how many were
        applied (0: none pending). Stops at the first failure so entries never apply out
        of order; the failed one is retried on the next run. Versions whose "meta"
        entries were applied are added to `relabelled`."""
        store = self._stores[name]
        entries = self._meta.pending(name, self._batch)
        done: list[int] = []
        try:
            self._apply(store, entries, done)
        except Exception as exc:
            _relabel(entries[: len(done)], relabelled)
            failed = entries[len(done)]
            log.warning("outbox %s #%d failed: %s", name, failed.id, exc)
            if done:
                store.flush()
                self._meta.mark_done(done)
            self._meta.mark_failed(failed.id, f"{type(exc).__name__}: {exc}")
            raise
        if not entries:
            return 0
        # Durable in the store first, then marked done: a crash in between only means
        # the (idempotent) entries are applied again.
        store.flush()
        self._meta.mark_done(done)
        _relabel(entries, relabelled)
        return len(done)

    def apply_store(self, name: str, relabelled: set[tuple[str, str]] | None = None) -> int:
        """Apply all of this store's pending entries (see `apply_batch`)."""
        applied = 0
        try:
            while n := self.apply_batch(name, relabelled):
                applied += n
        finally:
            self._items.clear()
        return applied

    def run(self) -> SyncReport:
        """Every store's pending entries, batch by batch and store by store in turn, so
        the stores read each version's items once between them; a store that fails is
        left for the next run, the others go on."""
        report = SyncReport()
        for _round in range(2):  # promotion enqueues deletes of superseded versions
            active = list(self._stores)
            try:
                while active:
                    self._items.clear()  # one batch's versions in memory at a time
                    for name in list(active):
                        try:
                            n = self.apply_batch(name, report.relabelled)
                        except Exception as exc:
                            report.errors[name] = f"{type(exc).__name__}: {exc}"
                            n = 0
                        if n == 0:
                            active.remove(name)
                        else:
                            report.applied[name] = report.applied.get(name, 0) + n
            finally:
                self._items.clear()
            for name in self._stores:
                if name not in report.errors:
                    report.applied.setdefault(name, 0)
            promoted = self._meta.promote_ready()
            report.promoted.extend(promoted)
            if not promoted:
                break
        return report


_PENDING_SCAN = 100_000  # outbox entries read to tell "not synced yet" from "stale"


@dataclass(frozen=True)
class StoreDivergence:
    store: str
    missing: frozenset[str]  # served by the truth, absent from the store
    extra: frozenset[str]  # in the store, neither served nor staged
    # Held and served, but the document-level fields the store keeps for it (ACL tags,
    # title, type, department, trust, date) differ from the truth's, with no outbox
    # entry on its way to fix them: e.g. a metadata update that failed halfway. A stale
    # ACL in a derived store is a permission filter that no longer matches the truth.
    stale: frozenset[str] = frozenset()

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra and not self.stale


def _stale(
    store: DerivedStore, truth: Mapping[str, Chunk], held: Mapping[str, str], syncing: set[str]
) -> frozenset[str]:
    return frozenset(
        cid
        for cid, chunk in truth.items()
        if cid in held
        and chunk.doc_id not in syncing
        and held[cid] != store.metadata_signature(chunk)
    )


def check(metadata: MetadataStore, stores: Mapping[str, DerivedStore]) -> list[StoreDivergence]:
    serving = metadata.serving_ids()
    allowed = serving | metadata.pending_ids()
    truth = metadata.serving(sorted(serving))
    out = []
    for name, store in stores.items():
        held = store.content_ids()
        # Documents with entries still to apply here converge on the next sync: a delete
        # queued (a worker stopped) leaves passages here that are not extra, only late.
        entries = metadata.pending(name, _PENDING_SCAN)
        syncing = {e.doc_id for e in entries}
        leaving = {
            cid
            for e in entries
            if e.op == "delete"
            for cid in metadata.version_content_ids(e.doc_id, e.version)
        }
        stale = _stale(store, truth, store.held_metadata(), syncing)
        out.append(
            StoreDivergence(
                name, frozenset(serving - held), frozenset(held - allowed - leaving), stale
            )
        )
    return out


def repair(metadata: MetadataStore, stores: Mapping[str, DerivedStore]) -> list[StoreDivergence]:
    """Make every store hold exactly what the truth serves (plus staged versions), with
    the truth's document-level fields."""
    found = check(metadata, stores)
    for div in found:
        if div.ok:
            continue
        store = stores[div.store]
        if div.extra:
            store.delete(sorted(div.extra))
        if div.missing:
            store.upsert(metadata.items(sorted(div.missing)))
        if div.stale:
            # Rewritten whole from the truth (text, vector and fields): whatever drifted.
            store.upsert(metadata.items(sorted(div.stale)))
        store.flush()
    return found
