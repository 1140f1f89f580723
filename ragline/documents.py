"""Document writes that run as jobs, the same through every door (HTTP, gRPC): an upload
is stored, checked and queued for ingestion; a delete unserves the document at once and
queues the stores' convergence; a sync or a reindex is queued for whoever may ask it; a
job is shown to its owner and to whoever may read its document.

The rules live here; the doors translate their request into an `UploadForm` and the
errors below into their own statuses: `WriteDenied` (forbidden), `NotFound`, `Conflict`,
`TooLarge`, `UnsupportedFormat`, `InvalidRequest`, `Unavailable` (the task queue).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    TooLarge,
    Unavailable,
    UnsupportedFormat,
)
from core.ids import version_of_digest
from core.types import Principal
from indexing.protocols import JobRecord
from ingestion.parse import ParseOptions, document_format
from ragline.app import Ragline
from ragline.jobs import DELETED, FAILED, INDEXING, QUEUED, SEARCHABLE, UNFINISHED, new_job_id
from ragline.uploads import StoredUpload, upload_suffix
from ragline.worker.runner import TaskRunner
from ragline.worker.tasks import IngestSpec
from ragline.writes import WriteDenied, authorize_write, principal_to_dict

_HEAD_BYTES = 4096


def split_tags(raw: Iterable[str]) -> list[str]:
    """ACL tags as callers send them: repeated, comma-separated or both."""
    return sorted({t.strip() for item in raw for t in item.split(",") if t.strip()})


@dataclass(frozen=True, slots=True)
class UploadForm:
    """What a caller says about an upload besides its bytes."""

    filename: str  # the client's file name: its suffix picks the parser
    key: str = ""  # the source key; default: the file name
    title: str = ""  # default: the parsed title, else the file name
    department: str = ""
    doc_type: str = ""  # the format, for a name without a suffix
    # None: a new document is public and an existing one keeps its tags; []: public.
    tags: list[str] | None = None
    source_trust: float | None = None
    modified: date | None = None
    batch_id: str = ""


@dataclass(frozen=True, slots=True)
class UploadReceipt:
    doc_id: str
    job: JobRecord
    version: str
    source: str
    batch_id: str
    size: int


class DocumentJobs:
    """Document jobs for one serving process: `rag` holds the truth, `runner` queues the
    work, `on_change` drops whatever that process cached of the old state. Each method
    blocks (store and database I/O): call it off the event loop."""

    def __init__(
        self, rag: Ragline, runner: TaskRunner, on_change: Callable[[], None], max_bytes: int
    ) -> None:
        self.rag = rag
        self.runner = runner
        self.on_change = on_change
        self.max_bytes = max_bytes

    def upload(self, principal: Principal, form: UploadForm, content: BinaryIO) -> UploadReceipt:
        """Store the bytes and queue their ingestion (blocking: call it off the event
        loop). Refused before a byte is stored when the caller may not write there."""
        authorize_write(principal, None)  # a key that may write at all, first
        name = (form.key or form.filename).strip()
        if not name:
            raise InvalidRequest("the upload needs a file name or a 'key' form field")
        source = f"upload:{name}"
        # Only documents the caller may see are candidates: seeing none at this key, it
        # gets a document of its own there, whatever hidden ones hold the key (no
        # existence or content oracle). Refusals below concern a document it may see.
        doc_id = self.rag.upload_target(principal, source).doc_id
        self.rag.check_write(principal, source, form.tags, doc_id)
        uploads = self.rag.uploads
        try:
            stored = uploads.store(
                content, upload_suffix(form.filename, form.doc_type), self.max_bytes
            )
        except TooLarge as exc:
            mb = self.max_bytes / 2**20
            raise TooLarge(f"upload is larger than {mb:g} MB (RAGLINE_API__MAX_UPLOAD_MB)") from exc
        self._refuse_unusable(stored)
        uploads.keep(stored.path)  # for workers on other hosts
        spec = IngestSpec(
            path=str(stored.path),
            source=source,
            version=version_of_digest(stored.sha256),
            title=form.title,
            department=form.department or None,
            source_trust=form.source_trust,
            tags=form.tags,
            name=Path(name).name,
            modified=form.modified.isoformat() if form.modified else "",
            principal=principal_to_dict(principal),
            target=doc_id,
        )
        job = self._queue_ingest(spec, principal.user, form.batch_id)
        return UploadReceipt(doc_id, job, spec.version, source, form.batch_id, stored.size)

    def _refuse_unusable(self, stored: StoredUpload) -> None:
        """An empty file or one of a refused type is answered now, and its stored copy
        removed (no other upload can need it: the same bytes under the same suffix are
        refused the same way)."""
        if stored.size == 0:
            stored.path.unlink(missing_ok=True)
            raise InvalidRequest("the uploaded file is empty")
        with stored.path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES)
        try:
            document_format(stored.path, head, ParseOptions.from_settings(self.rag.settings.ingest))
        except UnsupportedFormat:
            stored.path.unlink(missing_ok=True)
            raise

    def _queue_ingest(self, spec: IngestSpec, owner: str, batch_id: str) -> JobRecord:
        """The upload's job: settled now when its bytes are known (a metadata update, or
        nothing to do), else queued."""
        meta = self.rag.stores.metadata
        record = _job(
            "ingest",
            owner,
            doc_id=spec.doc_id,
            version=spec.version,
            batch_id=batch_id,
            source=spec.source,
        )
        known = self.rag.ingest_known(
            Path(spec.path), spec.source, spec.version, spec.doc_id, **spec.write()
        )
        if known is not None and known.status == "failed":
            raise Conflict(known.reason)
        if known is not None and known.status == "updated":
            # The truth already serves the new metadata; the task brings the derived
            # stores along and says "searchable" once they have it.
            self.on_change()
            record = replace(record, state=INDEXING, reason=known.reason)
        elif known is not None and meta.current_version(spec.doc_id) == spec.version:
            # Same name, same bytes, same metadata: nothing to do, searchable right now.
            return meta.create_job(replace(record, state=SEARCHABLE, reason="unchanged"))
        return self._queue(record, spec=spec.to_dict())

    def _queue(self, record: JobRecord, **task: Any) -> JobRecord:
        """Record the job and queue its task (named as its kind); a queue that is down
        fails the job with the reason and answers Unavailable."""
        meta = self.rag.stores.metadata
        job = meta.create_job(record)
        try:
            self.runner.submit(record.kind, job.job_id, **task)
        except Exception as exc:
            meta.update_job(job.job_id, FAILED, f"could not queue the {record.kind}: {exc}")
            raise Unavailable("the task queue is unavailable; try again later") from exc
        return job

    def job(self, principal: Principal, job_id: str) -> JobRecord:
        """One job the principal may see; NotFound for any other (hidden or unknown)."""
        job = self.rag.stores.metadata.job(job_id)
        if job is None or not _may_see(principal, job, self.rag.sees_documents(principal)):
            raise NotFound(f"no job {job_id}")
        return job

    def jobs(self, principal: Principal, batch_id: str = "", limit: int = 100) -> list[JobRecord]:
        """The `limit` latest jobs (of a batch) that the principal may see: counted among
        those, so jobs it may not see neither take their places nor show by their count."""
        meta = self.rag.stores.metadata
        sees = self.rag.sees_documents(principal)
        size = max(limit, 100)  # jobs read per page
        out: list[JobRecord] = []
        offset = 0
        while len(out) < limit:
            page = meta.jobs(batch_id=batch_id, limit=size, offset=offset)
            out.extend(j for j in page if _may_see(principal, j, sees))
            if len(page) < size:
                break
            offset += len(page)
        return out[:limit]

    def sync(self, principal: Principal) -> JobRecord:
        """Apply the outbox now (what the derived stores have not yet applied)."""
        authorize_write(principal, None)
        return self._queue(_job("sync", principal.user))

    def reindex(self, principal: Principal, source: str) -> JobRecord:
        """Reindex the documents at `source` (a source key: never an arbitrary path on
        this server), or, with none, repair every store: that touches documents this
        caller may not see, so it is for admins (`ragline repair` for operators)."""
        authorize_write(principal, None)
        if not source and not principal.superuser and "admin" not in principal.roles:
            raise WriteDenied("a full repair needs an admin key; name a source to reindex")
        # (an upload key may hold several documents: one the caller sees is enough)
        at_key = self.rag.stores.metadata.documents_at(source) if source else []
        if source and not any(principal.can_see(d.acl_tags) for d in at_key):
            raise NotFound(f"no document with source {source!r}")
        return self._queue(_job("reindex", principal.user, source=source), source=source)

    def _cancel_uploads(self, principal: Principal, doc_id: str) -> JobRecord:
        """A delete of a document not indexed yet: the caller's own uploads of it still
        queued or being parsed are overtaken by this delete (accepted after them, it is the
        newest write: `newer_upload`), so none of them lands. Nothing of the caller's on
        its way: NotFound, as for any document it cannot see."""
        meta = self.rag.stores.metadata
        pending = _in_flight(meta.jobs(doc_id=doc_id, limit=100), principal.user)
        if not pending:
            raise NotFound(f"no document {doc_id}")
        return meta.create_job(
            replace(
                _job("delete", principal.user, doc_id=doc_id, source=pending[0].source),
                state=DELETED,
                reason=f"cancelled {len(pending)} upload(s) not yet indexed",
            )
        )

    def delete(self, principal: Principal, doc_id: str) -> JobRecord:
        """Unserve the document now (the truth marks it deleted) and queue the derived
        stores' convergence (blocking: call it off the event loop)."""
        authorize_write(principal, None)  # a key that may write at all, first
        meta = self.rag.stores.metadata
        doc = self.rag.visible_document(doc_id, principal)
        if doc is None:
            return self._cancel_uploads(principal, doc_id)
        authorize_write(principal, doc, None, doc_id)
        # Truth first: once marked deleted nothing of it is served, whatever the derived
        # stores still hold; the task then removes it from them.
        self.rag.unserve(doc, principal)
        self.on_change()
        job = meta.create_job(_job("delete", principal.user, doc_id=doc_id, source=doc.source))
        try:
            self.runner.submit(
                "delete", job.job_id, doc_id=doc_id, principal=principal_to_dict(principal)
            )
        except Exception as exc:  # the truth is already right; a later sync converges
            meta.update_job(job.job_id, DELETED, f"stores converge on the next sync ({exc})")
        return job


def _in_flight(jobs: Iterable[JobRecord], user: str) -> list[JobRecord]:
    """`user`'s uploads not yet ingested, among a document's jobs."""
    return [j for j in jobs if j.kind == "ingest" and j.owner == user and j.state in UNFINISHED]


def _may_see(principal: Principal, job: JobRecord, sees: Callable[[str], bool]) -> bool:
    """A caller sees its own jobs, and jobs of documents it may read (`sees`)."""
    if principal.superuser or job.owner == principal.user:
        return True
    return bool(job.doc_id) and sees(job.doc_id)


def _job(
    kind: str,
    owner: str,
    *,
    doc_id: str = "",
    version: str = "",
    batch_id: str = "",
    source: str = "",
) -> JobRecord:
    """A new job of this kind, queued."""
    return JobRecord(
        job_id=new_job_id(),
        kind=kind,
        state=QUEUED,
        doc_id=doc_id,
        version=version,
        batch_id=batch_id,
        source=source,
        owner=owner,
    )
