"""The store contracts. Every backend (embedded or production) implements one of these and
passes the same contract test module under tests/indexing/.

Derived stores (dense, keyword, graph) are written only by outbox appliers, keyed by
content_id, so every write is an idempotent upsert or delete. The metadata store is the
source of truth: derived stores can be rebuilt from it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from core.types import Chunk, Document, DocumentVersion, QueryFilter, ScoredId


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """A chunk with its embedding: what an applier hands to every derived store."""

    chunk: Chunk
    vector: np.ndarray  # float32, L2-normalised, shape (dim,)


@runtime_checkable
class DerivedStore(Protocol):
    name: str

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        """Insert or replace by content_id. Applying the same items twice changes nothing."""
        ...

    def delete(self, content_ids: Sequence[str]) -> None:
        """Remove by content_id; unknown ids are ignored."""
        ...

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        """Replace the document-level fields this store keeps (acl_tags, title, doc_type,
        department, source_trust, modified) of chunks it already holds, by content_id:
        a change of ACL or title with unchanged bytes. Text, vectors and entities stay;
        unknown ids are ignored; applying the same chunks twice changes nothing."""
        ...

    def content_ids(self) -> set[str]:
        """Every content_id held, for consistency checks."""
        ...

    def metadata_signature(self, chunk: Chunk) -> str:
        """The document-level fields this store keeps for `chunk` (ACL, title, type,
        department, trust, date: whichever it keeps), in the form `held_metadata` reads
        them back: `check` compares the two to find stale copies."""
        ...

    def held_metadata(self) -> dict[str, str]:
        """content_id -> the signature of the document-level fields this store holds."""
        ...

    def flush(self) -> None:
        """Make every write so far durable (a no-op where writes already are)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class DenseIndex(DerivedStore, Protocol):
    dim: int
    model: str

    def search(self, vector: np.ndarray, k: int, where: QueryFilter) -> list[ScoredId]:
        """Top-k by inner product among chunks `where` admits (filter applied before top-k)."""
        ...


@runtime_checkable
class KeywordIndex(DerivedStore, Protocol):
    def search(self, query: str, k: int, where: QueryFilter) -> list[ScoredId]:
        """Top-k by BM25 over text, title and section path, among chunks `where` admits."""
        ...

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(chunks held, {term: chunks holding it}) for query terms, each analysed as a
        query is; a term the analysis drops (a stop word) is left out, and one analysed into
        several tokens counts the chunks of its rarest token. Corpus statistics for the
        rerank (how rare a question's words are), not filtered by ACL, like BM25's own."""
        ...


@runtime_checkable
class GraphStore(DerivedStore, Protocol):
    def search(self, entities: Sequence[str], k: int, where: QueryFilter) -> list[ScoredId]:
        """Chunks that mention the entities (1 hop) or sit next to such chunks (2 hops),
        ranked by how many query entities they reach and how directly."""
        ...

    def entities_of(self, content_id: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Expect:
    """A write's guard: the live document (None: none) the writer decided on. The store
    refuses the write (core.errors.DocumentChanged) unless the live document is still
    exactly that, checked in the write's own transaction."""

    document: Document | None


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    id: int
    store: str
    op: str  # "upsert" | "delete" | "meta" (document metadata changed, same chunks)
    doc_id: str
    version: str
    attempts: int
    last_error: str


@dataclass(frozen=True, slots=True)
class IngestRecord:
    """One file's outcome in a batch: kept so failures are never silently dropped."""

    source: str
    status: str  # "indexed" | "unchanged" | "failed" | "deleted"
    reason: str
    doc_id: str
    version: str
    at: datetime


@dataclass(frozen=True, slots=True)
class QueryLogRecord:
    """One answered question from the audit log. `payload` is the decoded JSON the
    application logged (route, covered, hits, citations, removed_labels, timings_ms);
    the store keeps it opaque, so new keys need no schema change."""

    trace_id: str
    user: str
    question: str
    at: datetime  # naive UTC, like every timestamp in the metadata store
    payload: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One asynchronous task's progress. `state`: queued | parsing | indexing | searchable
    | failed | deleted; `reason` says why it failed (or why nothing had to be done)."""

    job_id: str
    kind: str  # "ingest" | "delete" | "reindex" | "sync"
    state: str
    doc_id: str = ""
    version: str = ""
    batch_id: str = ""
    source: str = ""
    owner: str = ""
    reason: str = ""
    attempts: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class AlertEventRecord:
    """One step of an alert: `event` is firing | action | action_failed | recovered |
    action_reverted | notified | notify_failed | notify_suppressed."""

    alert: str
    event: str
    at: datetime  # naive UTC
    subject: str = ""
    severity: str = ""
    value: float | None = None
    threshold: float | None = None
    message: str = ""
    detail: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class GapRecord:
    """A knowledge gap: one normalised question the documents did not (well) answer."""

    key: str
    normalised: str
    question: str
    count: int
    first_at: datetime
    last_at: datetime
    roles: tuple[str, ...]
    near_misses: tuple[dict[str, Any], ...] = field(hash=False)
    reason: str
    best_coverage: float
    status: str  # open | closed
    closed_at: datetime | None = None
    closed_by: str = ""


@runtime_checkable
class MetadataStore(Protocol):
    """Documents, versions, chunks (with vectors), outbox, ingest log and query audit."""

    def document(self, doc_id: str) -> Document | None: ...

    def writer_lock(self) -> AbstractContextManager[None]:
        """Exclusive across every process (and host) writing this deployment's stores:
        held while the outbox is applied or the derived stores repaired. Not re-entrant."""
        ...

    def claim(self, name: str) -> bool:
        """Whether this store holds the role `name` (one holder across every process and
        host of this deployment): taken when free, kept until close; call again to learn
        whether it is still held, or to take it once its holder is gone."""
        ...

    def documents(self) -> list[Document]: ...

    def documents_at(self, source: str) -> list[Document]:
        """The live documents with this source key (several for an upload key written by
        writers who could not see each other's documents), by doc_id."""
        ...

    def deployment_secret(self, name: str) -> str:
        """A random secret kept in the truth under `name`, made on first use; the same
        in every process of this deployment."""
        ...

    def versions(self, doc_id: str) -> list[DocumentVersion]: ...

    def current_version(self, doc_id: str) -> str | None: ...

    def has_version(self, doc_id: str, version: str) -> bool:
        """True when this exact version is already stored (pending or current)."""
        ...

    def versions_needed(
        self, versions: Collection[str], job_states: Collection[str], except_job: str = ""
    ) -> set[str]:
        """The content versions among these that something still needs: a version of a
        live document (pending, current, or superseded: old answers cite it), or a job in
        one of `job_states` other than `except_job`. Uploads are content-addressed, so
        their bytes may back several documents."""
        ...

    def stage_version(
        self,
        document: Document,
        version: DocumentVersion,
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        stores: Iterable[str],
        lineage: dict[str, Any] | None = None,
        expect: Expect | None = None,
    ) -> None:
        """One transaction: document, version (pending), chunks, vectors and one upsert
        outbox entry per derived store. A version is not served until promoted. With
        `expect`, raises DocumentChanged (writing nothing) unless the live document is
        still `expect.document`."""
        ...

    def pending(self, store: str, limit: int = 100) -> list[OutboxEntry]: ...

    def mark_done(self, entry_ids: Sequence[int]) -> None: ...

    def mark_failed(self, entry_id: int, error: str) -> None: ...

    def version_items(self, doc_id: str, version: str) -> list[IndexedChunk]: ...

    def version_content_ids(self, doc_id: str, version: str) -> list[str]: ...

    def items(self, content_ids: Sequence[str]) -> list[IndexedChunk]: ...

    def replace_vectors(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Store new embeddings (after a change of embedder) so repairs use them."""
        ...

    def promote_ready(self) -> list[DocumentVersion]:
        """Make current every pending version whose upserts are done in all stores; the
        version it replaces becomes superseded and gets delete entries. Returns promoted."""
        ...

    def delete_document(self, doc_id: str, stores: Iterable[str]) -> bool:
        """Mark deleted and enqueue deletes of its chunks everywhere. False if unknown."""
        ...

    def update_document(
        self, document: Document, stores: Iterable[str], expect: Expect | None = None
    ) -> bool:
        """One transaction: replace a live document's metadata (title, doc_type, acl_tags,
        department, source_trust, modified; not its source) and enqueue one "meta" entry
        per derived store for each of its pending and current versions. Served chunks
        carry the new metadata from the commit on. False if unknown or deleted. With
        `expect`, raises DocumentChanged unless the live document is `expect.document`."""
        ...

    def serving(self, content_ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks among `content_ids` that belong to a current version: a derived store
        that still holds stale ids can never leak them into an answer."""
        ...

    def serving_ids(self) -> set[str]:
        """content_ids of every current version (what every derived store must hold)."""
        ...

    def pending_ids(self) -> set[str]:
        """content_ids of staged versions not yet promoted (a store may hold them)."""
        ...

    def record_ingest(self, record: IngestRecord) -> None: ...

    def ingest_log(
        self, limit: int = 1000, since: datetime | None = None, until: datetime | None = None
    ) -> list[IngestRecord]: ...

    def log_query(self, trace_id: str, user: str, question: str, payload: str) -> None: ...

    def query_log(
        self,
        since: datetime | None = None,
        until: datetime | None = None,
        user: str | None = None,
        limit: int = 1000,
        trace_id: str | None = None,
        mentions: str | None = None,
    ) -> list[QueryLogRecord]:
        """Logged queries with `since <= at < until` (either bound optional; aware times
        are converted to UTC), of one user when given, of one trace when given, and whose
        payload holds the text `mentions` when given (a document id: the caller checks
        where); newest first, at most `limit`."""
        ...

    def record_gap(
        self,
        key: str,
        normalised: str,
        question: str,
        roles: Sequence[str],
        near_misses: Sequence[dict[str, Any]],
        reason: str,
        best_coverage: float,
    ) -> GapRecord:
        """Count one more asking of a gap (created if new, reopened if it was closed):
        roles accumulate, the latest phrasing, near misses and reason replace the old."""
        ...

    def gaps(
        self, since: datetime | None = None, status: str | None = None, limit: int = 1000
    ) -> list[GapRecord]:
        """Gaps last asked at or after `since`, most asked first."""
        ...

    def close_gap(self, key: str, closed_by: str) -> None: ...

    def create_job(self, job: JobRecord) -> JobRecord:
        """Insert a job; an existing job_id is left as it is and returned (idempotent)."""
        ...

    def update_job(
        self,
        job_id: str,
        state: str,
        reason: str = "",
        *,
        version: str | None = None,
        doc_id: str | None = None,
        attempt: bool = False,
    ) -> JobRecord | None:
        """Move a job to `state` (None if unknown); `attempt` counts one more try."""
        ...

    def job(self, job_id: str) -> JobRecord | None: ...

    def hold_job_task(self, job_id: str, runner: str, task: str) -> None:
        """Keep the task a job runs (`task`: JSON) with the runner that holds it (a process
        token), so that another process can take it up when that one is gone."""
        ...

    def held_job_tasks(self, states: Collection[str]) -> list[tuple[str, str, str]]:
        """(job_id, runner, task) of the jobs in `states` that keep their task."""
        ...

    def take_job_task(self, job_id: str, runner: str, taker: str) -> bool:
        """Move a held task from `runner` to `taker`; False when another took it first (or
        it is no longer `runner`'s)."""
        ...

    def version_times(self, doc_id: str) -> dict[str, tuple[datetime, datetime | None]]:
        """version -> (staged at, promoted at or None), for a document's history."""
        ...

    def jobs(
        self,
        *,
        batch_id: str = "",
        doc_id: str = "",
        state: str = "",
        limit: int = 100,
        offset: int = 0,
    ) -> list[JobRecord]:
        """Newest first, narrowed by whichever of batch, document and state are given;
        `offset` newest ones skipped."""
        ...

    def job_counts(self) -> dict[str, int]:
        """Number of jobs per state."""
        ...

    def version_lineage(self, doc_id: str, version: str) -> dict[str, Any]:
        """How a version was made (parser, chunker, embedder, PII counts); {} if unknown."""
        ...

    def oldest_unsearchable(self) -> datetime | None:
        """When the oldest version still pending (staged, not yet searchable) was staged;
        None when every staged version is searchable."""
        ...

    def record_alert_event(self, record: AlertEventRecord) -> None: ...

    def alert_events(
        self, since: datetime | None = None, until: datetime | None = None, limit: int = 1000
    ) -> list[AlertEventRecord]:
        """Newest first, `since <= at < until`."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class OriginalStore(Protocol):
    """Uploads' bytes by content-addressed name (`<sha256><suffix>`), where every API host
    and worker of a deployment reaches them. Names never change meaning, so a put of a
    name already held stores nothing (it only says the bytes were accepted again)."""

    def put(self, name: str, path: Path, accepted: bool = True) -> bool:
        """Keep the bytes of `path` as `name`, accepted now; False when the name was held
        already. `accepted` False (copying what a host holds, not a new upload) leaves a
        held name's acceptance time as it was."""
        ...

    def fetch(self, name: str, into: Path) -> bool:
        """Write the bytes of `name` to `into` (atomically); False when none are held."""
        ...

    def find(self, version: str) -> str | None:
        """The name of the bytes whose name starts with `version`; None if none."""
        ...

    def names(self, accepted_before: datetime, prefix: str = "") -> list[str]:
        """The names held (starting with `prefix`) whose bytes were last accepted before
        then (UTC)."""
        ...

    def delete(self, name: str, accepted_before: datetime | None = None) -> bool:
        """Remove `name` (with `accepted_before`: only if last accepted before then);
        whether it was removed."""
        ...
