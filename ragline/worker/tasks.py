"""The task functions, shared by both runners: plain functions of a `TaskContext`.

Every task is idempotent, keyed by document and content hash: running one twice (a
redelivery after a crash, a retry) finds the version already staged or already current
and only finishes what is missing. Store writes are idempotent upserts by content_id.
A `TransientError` (a store was unavailable) is retried by the runner; anything else is
recorded on the job as `failed` with its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sqlalchemy.exc import OperationalError

from core.errors import StoreError
from core.ids import doc_id_for, path_from_uri
from indexing.sync import SyncReport
from ragline.app import Ragline
from ragline.events import EventBus, IndexEvent
from ragline.jobs import (
    DELETED,
    DONE,
    FAILED,
    INDEXING,
    PARSING,
    SEARCHABLE,
    SUPERSEDED,
    newer_upload,
)
from ragline.writes import WriteDenied, authorize_write, principal_from_dict

log = logging.getLogger(__name__)


class TransientError(Exception):
    """Worth retrying later: a store or the broker was unavailable, or not yet caught up."""


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, TransientError | StoreError | OperationalError | ConnectionError):
        return True
    try:
        import redis

        return isinstance(exc, redis.ConnectionError | redis.TimeoutError)
    except ImportError:  # pragma: no cover - redis is a dependency
        return False


@dataclass(frozen=True, slots=True)
class IngestSpec:
    """What the ingest task needs; JSON-serialisable for the broker."""

    path: str  # the stored, content-addressed upload (or any local file)
    source: str  # the document's source key, e.g. "upload:report.pdf"
    version: str  # hash of the bytes: the idempotency key with the doc_id
    title: str = ""
    # None keeps an existing document's value (a new one gets "" / 1.0 / no tags).
    department: str | None = None
    source_trust: float | None = None
    tags: list[str] | None = None
    name: str = ""  # the upload's file name: the title when none is given or parsed
    modified: str = ""  # ISO date; "" = the stored file's date
    # Who asked (ragline.writes.principal_to_dict); None = the operator. The write is
    # checked again here: the document may have changed hands since the request.
    principal: dict[str, Any] | None = None
    # The document this writes, chosen by the API (Ragline.upload_target); "" (messages
    # queued before ids were chosen so) = the one of `source`.
    target: str = ""

    @property
    def doc_id(self) -> str:
        return self.target or doc_id_for(self.source)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def write(self) -> dict[str, Any]:
        """What the write sets and who makes it, as DocumentIngestor.ingest's keywords."""
        return {
            "tags": self.tags,
            "department": self.department,
            "source_trust": self.source_trust,
            "title": self.title or None,
            "name": self.name,
            "modified": date.fromisoformat(self.modified) if self.modified else None,
            "principal": principal_from_dict(self.principal),
        }


@dataclass
class TaskContext:
    """What a task runs against. Built once per worker process (not per task): the
    embedder and the stores are expensive to open."""

    rag: Ragline
    events: EventBus
    max_attempts: int = 6  # deliveries of one job before it is declared failed
    sync_folders: list[str] = field(default_factory=list)

    def writer_lock(self) -> AbstractContextManager[None]:
        """One writer of the derived stores at a time, across processes and hosts
        (`Ragline.writing`)."""
        return self.rag.writing()

    def sync(self) -> SyncReport:
        report = self.rag.sync()  # under the writer lock
        self.announce(report)
        if report.errors:
            raise TransientError(
                "; ".join(f"{store} store: {err}" for store, err in report.errors.items())
            )
        return report

    def announce(self, report: SyncReport) -> None:
        for v in report.promoted:
            self.events.publish(IndexEvent("indexed", v.doc_id, v.version))
        # A metadata update promotes nothing, but cached answers may now be wrong.
        for doc_id, version in sorted(report.relabelled):
            self.events.publish(IndexEvent("indexed", doc_id, version))


def _fail(ctx: TaskContext, job_id: str, reason: str) -> dict[str, Any]:
    ctx.rag.stores.metadata.update_job(job_id, FAILED, reason)
    return {"job_id": job_id, "state": FAILED, "reason": reason}


def _start(ctx: TaskContext, job_id: str, state: str) -> dict[str, Any] | None:
    """Count one more delivery; a job delivered too often (its worker keeps dying on it,
    e.g. killed for memory) is failed rather than redelivered forever."""
    job = ctx.rag.stores.metadata.update_job(job_id, state, attempt=True)
    if job is not None and job.attempts > ctx.max_attempts:
        return _fail(
            ctx, job_id, f"gave up after {job.attempts - 1} deliveries (worker lost each time)"
        )
    return None


def ingest_version(ctx: TaskContext, job_id: str, spec: dict[str, Any]) -> dict[str, Any]:
    s = IngestSpec(**spec)
    meta = ctx.rag.stores.metadata
    prior = meta.job(job_id)  # the API may have applied a metadata update already
    if (given_up := _start(ctx, job_id, PARSING)) is not None:
        return given_up
    path = ctx.rag.uploads.local(Path(s.path))
    if path is None:
        return _fail(
            ctx,
            job_id,
            f"stored upload {Path(s.path).name} is missing: not on this host, nor in the "
            "database (RAGLINE_API__UPLOAD_STORE; or share RAGLINE_API__UPLOAD_DIR)",
        )

    def superseded() -> str:
        newer = newer_upload(meta.jobs(doc_id=s.doc_id, limit=100), prior) if prior else None
        if newer is None:
            return ""
        what = "a delete" if newer.kind == "delete" else "a newer upload"
        return (
            f"superseded: {what} of this document (job {newer.job_id}) was accepted after this one"
        )

    # A job redelivered after a newer upload (its worker was lost), or slower than one:
    # the newest accepted upload stays current, checked now and again before staging.
    if why := superseded():
        return _superseded(ctx, job_id, s, why)
    # Unchanged bytes cost no parse: the ingestor compares the metadata (an "updated"
    # outcome when the ACL, title, ... changed) after checking the write.
    outcome = ctx.rag.ingestor.ingest(
        path, source=s.source, doc_id=s.doc_id, superseded=superseded, **s.write()
    )
    ctx.rag.metrics.observe_ingest(outcome.status, outcome.chunks, outcome.pages)
    if outcome.status == "failed" and (why := superseded()):
        return _superseded(ctx, job_id, s, why)  # overtaken while it was parsed
    if outcome.status == "failed":
        release_upload(ctx, job_id, s)
        return _fail(ctx, job_id, outcome.reason)
    meta.update_job(job_id, INDEXING, version=outcome.version, doc_id=outcome.doc_id)
    ctx.sync()  # announces promoted versions and applied metadata updates
    if meta.document(s.doc_id) is None:
        meta.update_job(job_id, DELETED, "document deleted while it was being indexed")
        return {"job_id": job_id, "state": DELETED}
    current = meta.current_version(s.doc_id)
    if current != outcome.version:
        raise TransientError(f"version {outcome.version[:12]} staged but not promoted yet")
    # The event goes out (in ctx.sync) before the job says searchable, so a client that
    # sees "searchable" can no longer get an answer cached before the upload.
    # Indexed with warnings (chunks left out, characters removed): the job says what.
    reason = {
        "updated": outcome.reason,
        # Unchanged because an earlier delivery of this job indexed it (its worker was
        # lost after staging): not an upload of unchanged bytes.
        "unchanged": (
            prior.reason
            if prior and prior.reason
            else ("" if prior and prior.attempts else "unchanged")
        ),
    }.get(outcome.status, outcome.note)
    meta.update_job(job_id, SEARCHABLE, reason)
    return {"job_id": job_id, "state": SEARCHABLE, "version": outcome.version}


def _superseded(ctx: TaskContext, job_id: str, spec: IngestSpec, why: str) -> dict[str, Any]:
    release_upload(ctx, job_id, spec)
    ctx.rag.stores.metadata.update_job(job_id, SUPERSEDED, why)
    return {"job_id": job_id, "state": SUPERSEDED, "reason": why}


def release_upload(ctx: TaskContext, job_id: str, spec: IngestSpec) -> None:
    """Remove the stored upload of a failed ingestion, unless other work needs the same
    bytes (uploads are content-addressed: one file per content): a version of a live
    document, another job on its way, or an upload that accepted them after this job was
    queued."""
    if not spec.source.startswith("upload:"):
        return
    job = ctx.rag.stores.metadata.job(job_id)
    queued = job.created_at if job is not None else None
    ctx.rag.release_originals([spec.version], queued, except_job=job_id)


def delete_document(
    ctx: TaskContext, job_id: str, doc_id: str, principal: dict[str, Any] | None = None
) -> dict[str, Any]:
    meta = ctx.rag.stores.metadata
    _start(ctx, job_id, INDEXING)
    doc = meta.document(doc_id)
    if doc is not None:  # still live (the API marks it deleted first): check the write
        who = principal_from_dict(principal)
        if who is not None and not who.can_see(doc.acl_tags):
            return _fail(ctx, job_id, f"no document {doc_id}")
        try:
            authorize_write(who, doc, None, doc_id)
        except WriteDenied as exc:
            return _fail(ctx, job_id, str(exc))
    # False when the API already marked it deleted: then only the stores need to converge.
    meta.delete_document(doc_id, ctx.rag.stores.derived)
    ctx.sync()
    ctx.events.publish(IndexEvent("deleted", doc_id))
    ctx.rag.release_document(doc_id)
    meta.update_job(job_id, DELETED, "")
    return {"job_id": job_id, "state": DELETED, "doc_id": doc_id}


def apply_outbox(ctx: TaskContext, job_id: str = "") -> dict[str, Any]:
    report = ctx.sync()
    if job_id:
        ctx.rag.stores.metadata.update_job(job_id, DONE, "")
    return {"job_id": job_id, "state": DONE, "promoted": len(report.promoted)}


def _ingest_paths(ctx: TaskContext, paths: list[Path]) -> dict[str, Any]:
    # Parsing and embedding run beside other workers; each sync takes the writer lock.
    outcomes, report = ctx.rag.ingest(paths)
    ctx.announce(report)
    failed = {o.path: o.reason for o in outcomes if o.status == "failed"}
    if report.errors:
        raise TransientError("; ".join(f"{k}: {v}" for k, v in report.errors.items()))
    return {
        "files": len(outcomes),
        "indexed": sum(o.status == "indexed" for o in outcomes),
        "deleted": sum(o.status == "deleted" for o in outcomes),
        "failed": failed,
        "warnings": {o.path: list(o.warnings) for o in outcomes if o.warnings},
    }


def reindex(ctx: TaskContext, job_id: str = "", source: str = "") -> dict[str, Any]:
    """`source` empty: re-align every derived store with the truth (repair). A folder or
    file (path or file: URI): re-ingest it, picking up changes. Any other source key (an
    upload): re-apply its current version to every derived store."""
    meta = ctx.rag.stores.metadata
    if job_id:
        _start(ctx, job_id, INDEXING)
    result: dict[str, Any]
    path = path_from_uri(source) if source.startswith("file:") else Path(source)
    if not source:
        found = ctx.rag.repair()  # under the writer lock
        ctx.events.publish(IndexEvent("resync"))
        result = {"repaired": {d.store: not d.ok for d in found}}
    elif path is not None and path.exists():
        result = _ingest_paths(ctx, [path])
    else:
        # An upload key may hold several documents (one per writer scope): all of them.
        found_versions = [
            (d.doc_id, v)
            for d in meta.documents_at(source)
            if (v := meta.current_version(d.doc_id)) is not None
        ]
        if not found_versions:
            return _fail(ctx, job_id, f"no searchable document with source {source!r}")
        chunks = 0
        with ctx.writer_lock():
            for doc_id, version in found_versions:
                items = meta.version_items(doc_id, version)
                chunks += len(items)
                for store in ctx.rag.stores.derived.values():
                    store.upsert(items)
                    store.flush()
        for doc_id, version in found_versions:
            ctx.events.publish(IndexEvent("indexed", doc_id, version))
        result = {
            "doc_id": found_versions[0][0],
            "doc_ids": [d for d, _ in found_versions],
            "chunks": chunks,
        }
    if job_id:
        meta.update_job(job_id, DONE, "")
    return {"job_id": job_id, "state": DONE, **result}


def sync_folders(ctx: TaskContext, job_id: str = "") -> dict[str, Any]:
    """The periodic incremental sync: changed files re-ingested, vanished ones removed."""
    folders = [Path(f) for f in ctx.sync_folders if Path(f).is_dir()]
    result = _ingest_paths(ctx, folders) if folders else {"files": 0}
    if job_id:
        ctx.rag.stores.metadata.update_job(job_id, DONE, "")
    return {"job_id": job_id, "state": DONE, **result}


TaskFn = Callable[..., dict[str, Any]]

# Task name -> function: the one list both runners dispatch on (read-only).
TASKS: Mapping[str, TaskFn] = MappingProxyType(
    {
        "ingest": ingest_version,
        "delete": delete_document,
        "sync": apply_outbox,
        "reindex": reindex,
        "sync_folders": sync_folders,
    }
)


def record_failure(ctx: TaskContext, job_id: str, exc: BaseException, attempts: int) -> None:
    """The last word on a job whose task raised: never silently dropped."""
    if not job_id:
        log.error("task without a job failed: %s", exc)
        return
    detail = f"{type(exc).__name__}: {exc}"
    reason = (
        f"gave up after {attempts} attempts: {detail}"
        if is_transient(exc)
        else f"internal error: {detail}"
    )
    try:
        ctx.rag.stores.metadata.update_job(job_id, FAILED, reason)
    except Exception:  # the store itself is down: the log is all that is left
        log.exception("could not record the failure of job %s (%s)", job_id, reason)


def backoff_s(attempt: int, base: float = 1.0, cap: float = 60.0) -> float:
    """Exponential backoff between retries: 1, 2, 4, ... seconds, capped."""
    return float(min(cap, base * 2**attempt))
