"""SQLAlchemy 2 models of the metadata store: the source of truth, on SQLite (embedded)
and PostgreSQL (production) alike. Portable column types only."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class DocumentRow(Base):
    __tablename__ = "documents"

    doc_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    # Not unique: an upload key can hold several documents, one per writer who could not
    # see the others there (ragline.writes.upload_target; README "Permissions").
    source: Mapped[str] = mapped_column(Text, index=True)
    title: Mapped[str] = mapped_column(Text, default="")
    doc_type: Mapped[str] = mapped_column(String(32), default="")
    acl_tags: Mapped[str] = mapped_column(Text, default="[]")  # JSON list, sorted
    department: Mapped[str] = mapped_column(String(128), default="")
    source_trust: Mapped[float] = mapped_column(Float, default=1.0)
    modified: Mapped[date | None] = mapped_column(Date, nullable=True)
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    # The title was given by a writer, not parsed (None in rows made before it: parsed).
    title_stated: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


class DeploymentSecretRow(Base):
    """Secrets this deployment makes for itself on first use and keeps in the truth, so
    every process (API, workers, CLI) shares them: e.g. the key of upload document ids."""

    __tablename__ = "deployment_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class VersionRow(Base):
    __tablename__ = "versions"

    doc_id: Mapped[str] = mapped_column(ForeignKey("documents.doc_id"), primary_key=True)
    version: Mapped[str] = mapped_column(String(64), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    page_count: Mapped[int] = mapped_column(Integer, default=0)
    lineage: Mapped[str] = mapped_column(Text, default="{}")  # JSON: parser, chunker, embedder
    created_at: Mapped[datetime] = mapped_column(DateTime)
    promoted_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class ChunkRow(Base):
    __tablename__ = "chunks"
    __table_args__ = (Index("ix_chunks_doc_version", "doc_id", "version"),)

    content_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(32))
    version: Mapped[str] = mapped_column(String(64))
    ordinal: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(8))
    text: Mapped[str] = mapped_column(Text)
    page_start: Mapped[int] = mapped_column(Integer)
    page_end: Mapped[int] = mapped_column(Integer)
    line_start: Mapped[int] = mapped_column(Integer)
    line_end: Mapped[int] = mapped_column(Integer)
    section_path: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    table_id: Mapped[str] = mapped_column(String(64), default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    entities: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    # Table chunks: JSON {"header": [...], "rows": [[...], ...]}; "" for text chunks.
    table_json: Mapped[str] = mapped_column(Text, default="")
    # Source (page, first line, last line) per line of the chunk text: JSON list; "" unknown.
    line_map: Mapped[str] = mapped_column(Text, default="")
    # The embedding lives with the truth, so derived indexes rebuild without the model.
    vector: Mapped[bytes] = mapped_column(LargeBinary)


class OutboxRow(Base):
    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_pending", "store", "done"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    store: Mapped[str] = mapped_column(String(16))
    op: Mapped[str] = mapped_column(String(8))  # upsert | delete
    doc_id: Mapped[str] = mapped_column(String(32))
    version: Mapped[str] = mapped_column(String(64))
    done: Mapped[bool] = mapped_column(Boolean, default=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime)
    done_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class IngestLogRow(Base):
    __tablename__ = "ingest_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(Text, index=True)
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    doc_id: Mapped[str] = mapped_column(String(32), default="")
    version: Mapped[str] = mapped_column(String(64), default="")
    at: Mapped[datetime] = mapped_column(DateTime)


class QueryLogRow(Base):
    __tablename__ = "query_log"

    trace_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user: Mapped[str] = mapped_column(String(128))
    question: Mapped[str] = mapped_column(Text)
    payload: Mapped[str] = mapped_column(Text)  # JSON: route, hits, citations, timings
    at: Mapped[datetime] = mapped_column(DateTime)


class JobRow(Base):
    """Progress of one asynchronous task (an upload's ingestion, a delete, a reindex):
    what a caller polls until its document is searchable, or failed with a reason."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_batch", "batch_id"), Index("ix_jobs_doc", "doc_id"))

    job_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), default="ingest")
    doc_id: Mapped[str] = mapped_column(String(32), default="")
    version: Mapped[str] = mapped_column(String(64), default="")
    batch_id: Mapped[str] = mapped_column(String(64), default="")
    source: Mapped[str] = mapped_column(Text, default="")
    owner: Mapped[str] = mapped_column(String(128), default="")
    state: Mapped[str] = mapped_column(String(16), index=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    # An in-process runner's job: the task it runs (JSON) and the process holding it, so
    # that its work is taken up again when that process stops or dies (Celery's broker
    # keeps its own: NULL).
    task: Mapped[str | None] = mapped_column(Text, nullable=True)
    runner: Mapped[str | None] = mapped_column(String(128), nullable=True)


class GatewayAuditRow(Base):
    """One execution through the knowledge gateway: every SQL template run (and every
    status lookup), who ran it, with what, how many rows, how long, under which trace."""

    __tablename__ = "gateway_audit"
    __table_args__ = (Index("ix_gateway_audit_trace", "trace_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    trace_id: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime] = mapped_column(DateTime, index=True)
    principal: Mapped[str] = mapped_column(String(128))
    source_id: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))  # rows | status
    template: Mapped[str] = mapped_column(String(64), default="")
    params: Mapped[str] = mapped_column(Text, default="{}")  # JSON
    row_count: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[float] = mapped_column(Float, default=0.0)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str] = mapped_column(Text, default="")


class GatewayTraceRow(Base):
    """Everything one request did, in order: route decision, permission checks, per-source
    timings, counts, truncation. What `GET /v1/trace/{id}` shows an operator."""

    __tablename__ = "gateway_traces"

    trace_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime, index=True)
    principal: Mapped[str] = mapped_column(String(128))
    operation: Mapped[str] = mapped_column(String(32))
    question: Mapped[str] = mapped_column(Text, default="")
    events: Mapped[str] = mapped_column(Text, default="[]")  # JSON list


class MemoryRow(Base):
    """Notes and preferences an agent asked Ragline to remember: kept apart from the
    knowledge, never searched as a source, never cited."""

    __tablename__ = "memory"
    __table_args__ = (Index("ix_memory_owner", "owner"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(16))  # note | preference
    key: Mapped[str] = mapped_column(String(128), default="")
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class AlertEventRow(Base):
    """One step in an alert's life: it fired, its automatic action ran (or failed), it
    recovered and the action was reversed, a notification went out. The audit trail of
    what the monitoring did on its own."""

    __tablename__ = "alert_events"
    __table_args__ = (Index("ix_alert_events_at", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime)
    alert: Mapped[str] = mapped_column(String(128))
    subject: Mapped[str] = mapped_column(String(128), default="")
    event: Mapped[str] = mapped_column(String(32))
    severity: Mapped[str] = mapped_column(String(16), default="")
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    message: Mapped[str] = mapped_column(Text, default="")
    detail: Mapped[str] = mapped_column(Text, default="{}")  # JSON


class KnowledgeGapRow(Base):
    """A question the documents did not answer (or only weakly), deduplicated by its
    normalised form: what knowledge administrators should write or upload next."""

    __tablename__ = "knowledge_gaps"
    __table_args__ = (Index("ix_gaps_status_last", "status", "last_at"),)

    key: Mapped[str] = mapped_column(String(40), primary_key=True)  # hash of `normalised`
    normalised: Mapped[str] = mapped_column(Text)
    question: Mapped[str] = mapped_column(Text)  # the latest phrasing asked
    count: Mapped[int] = mapped_column(Integer, default=1)
    first_at: Mapped[datetime] = mapped_column(DateTime)
    last_at: Mapped[datetime] = mapped_column(DateTime)
    roles: Mapped[str] = mapped_column(Text, default="[]")  # JSON list of asking roles
    near_misses: Mapped[str] = mapped_column(Text, default="[]")  # JSON: best documents
    reason: Mapped[str] = mapped_column(Text, default="")
    best_coverage: Mapped[float] = mapped_column(Float, default=0.0)
    status: Mapped[str] = mapped_column(String(16), default="open")  # open | closed
    closed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    closed_by: Mapped[str] = mapped_column(Text, default="")  # doc_id that answered it


class OriginalPartRow(Base):
    """An upload's bytes, in parts, by its content-addressed name (sha256 + suffix): in
    production the truth keeps the originals, so an upload accepted by one API host can be
    ingested by a worker on another and served by any (indexing/stores/sql_originals.py)."""

    __tablename__ = "original_parts"

    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    # When these bytes were last accepted (UTC, naive): bytes nothing needs any more are
    # removed, but not while an upload that just brought them has yet to queue its job.
    # NULL: kept before the time was recorded.
    accepted_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
