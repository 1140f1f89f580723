"""Crafted rows in a real metadata store: outbox entries with attempts, jobs that failed
at a given time, logged queries at a given time. Rows whose timestamps matter are written
through the store's own models, since its public methods stamp "now"."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import update
from sqlalchemy.orm import Session

from indexing.models import JobRow, OutboxRow, QueryLogRow
from indexing.protocols import JobRecord
from indexing.stores.sql_metadata import SqlMetadataStore


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def ago(**kw: float) -> datetime:
    return now() - timedelta(**kw)


def add_outbox(
    store: SqlMetadataStore,
    name: str,
    *,
    attempts: int = 0,
    done: bool = False,
    error: str = "",
) -> int:
    with Session(store.engine) as s, s.begin():
        row = OutboxRow(
            store=name,
            op="upsert",
            doc_id=uuid.uuid4().hex,
            version="v1",
            done=done,
            attempts=0,
            last_error="",
            created_at=now(),
        )
        s.add(row)
        s.flush()
        entry_id = row.id
    for _ in range(attempts):  # the applier's own path for a failed apply
        store.mark_failed(entry_id, error or f"{name} refused the write")
    return entry_id


def add_job(store: SqlMetadataStore, state: str, at: datetime | None = None) -> str:
    job_id = uuid.uuid4().hex
    store.create_job(JobRecord(job_id=job_id, kind="ingest", state="queued"))
    store.update_job(job_id, state, "crafted" if state == "failed" else "")
    if at is not None:
        with Session(store.engine) as s, s.begin():
            s.execute(update(JobRow).where(JobRow.job_id == job_id).values(updated_at=at))
    return job_id


def add_query(
    store: SqlMetadataStore,
    *,
    at: datetime | None = None,
    user: str = "amy",
    question: str = "what is the retention period?",
    covered: bool = True,
    citations: tuple[str, ...] = ("c1",),
    removed: tuple[str, ...] = (),
    timings: dict[str, float] | None = None,
    extra: dict[str, object] | None = None,
) -> str:
    """A row shaped like what `Ragline.aask` logs."""
    trace_id = uuid.uuid4().hex
    payload = {
        "route": {"strategy": "hybrid", "rule": "default", "sources": []},
        "covered": covered,
        "hits": list(citations),
        "citations": list(citations),
        "removed_labels": list(removed),
        "timings_ms": timings if timings is not None else {"route": 1.0, "retrieve": 10.0},
        **(extra or {}),
    }
    with Session(store.engine) as s, s.begin():
        s.add(
            QueryLogRow(
                trace_id=trace_id,
                user=user,
                question=question,
                payload=json.dumps(payload),
                at=at or now(),
            )
        )
    return trace_id
