"""Where the gateway writes what it did: the audit of every execution, the trace of every
request, and the agent memory. Tables live in the metadata store's database (SQLite file
or PostgreSQL) and change through Alembic (migrations/versions/0004_gateway.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Connection, Engine, Table, bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from indexing.models import GatewayAuditRow, GatewayTraceRow, MemoryRow
from indexing.stores.group_commit import GroupCommit

_TRACES = cast(Table, GatewayTraceRow.__table__)
# Every ask writes a trace: its statements built once, not a cache-key walk per write.
_TRACE_INSERT = _TRACES.insert()
_TRACE_UPDATE = _TRACES.update().where(_TRACES.c.trace_id == bindparam("trace_key"))


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True, slots=True)
class AuditRecord:
    trace_id: str
    at: datetime
    principal: str
    source_id: str
    kind: str
    template: str
    params: dict[str, Any]
    row_count: int
    duration_ms: float
    status: str
    error: str = ""


@dataclass(frozen=True, slots=True)
class TraceRecord:
    trace_id: str
    at: datetime
    principal: str
    operation: str
    question: str
    events: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class MemoryItem:
    id: int
    owner: str
    kind: str
    key: str
    text: str
    created_at: datetime


@dataclass
class Trace:
    """The events of one request, in order, each with its offset in milliseconds."""

    trace_id: str
    principal: str
    operation: str
    question: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    saved: bool = False  # stored once already: saving again replaces its events

    def add(self, event: str, **details: Any) -> None:
        self.events.append(
            {"event": event, "ms": round((time.perf_counter() - self.started) * 1000, 2), **details}
        )


class GatewayRecords:
    def __init__(self, engine: Engine, writes: GroupCommit | None = None) -> None:
        self._engine = engine
        self._session = sessionmaker(engine, expire_on_commit=False)
        # The traces every query saves: in the metadata store's group commit when given
        # (one transaction with the audit records of the same moment).
        self._writes = writes or GroupCommit(engine)

    # -- audit --------------------------------------------------------------------------
    def audit(self, record: AuditRecord) -> None:
        with self._session.begin() as s:
            s.add(
                GatewayAuditRow(
                    trace_id=record.trace_id,
                    at=record.at.astimezone(UTC).replace(tzinfo=None)
                    if record.at.tzinfo
                    else record.at,
                    principal=record.principal[:128],
                    source_id=record.source_id,
                    kind=record.kind,
                    template=record.template,
                    params=json.dumps(record.params, default=str, sort_keys=True),
                    row_count=record.row_count,
                    duration_ms=record.duration_ms,
                    status=record.status,
                    error=record.error[:2000],
                )
            )

    def audit_log(
        self, trace_id: str | None = None, since: datetime | None = None, limit: int = 1000
    ) -> list[AuditRecord]:
        query = select(GatewayAuditRow)
        if trace_id:
            query = query.where(GatewayAuditRow.trace_id == trace_id)
        if since is not None:
            query = query.where(GatewayAuditRow.at >= since.astimezone(UTC).replace(tzinfo=None))
        query = query.order_by(GatewayAuditRow.id.desc()).limit(limit)
        with self._session() as s:
            return [
                AuditRecord(
                    r.trace_id,
                    r.at,
                    r.principal,
                    r.source_id,
                    r.kind,
                    r.template,
                    json.loads(r.params or "{}"),
                    r.row_count,
                    r.duration_ms,
                    r.status,
                    r.error,
                )
                for r in s.scalars(query)
            ]

    # -- traces -------------------------------------------------------------------------
    def save_trace(self, trace: Trace) -> None:
        # Core statements in one transaction (every ask saves one): the events of a trace
        # saved before are replaced, else the trace is inserted.
        events = json.dumps(trace.events, default=str, ensure_ascii=False)
        row = {
            "trace_id": trace.trace_id,
            "at": _now(),
            "principal": trace.principal[:128],
            "operation": trace.operation,
            "question": trace.question[:4000],
            "events": events,
        }

        def write(update: bool) -> Callable[[Connection], None]:
            def work(conn: Connection) -> None:
                if update:
                    done = conn.execute(
                        _TRACE_UPDATE, {"events": events, "trace_key": trace.trace_id}
                    )
                    if done.rowcount:
                        return
                conn.execute(_TRACE_INSERT, row)

            return work

        # A new trace (every ask's) is inserted with no update first; another Trace object
        # of the same id may have stored it already, and then it is updated.
        try:
            self._writes.run(write(update=trace.saved))
        except IntegrityError:
            if trace.saved:
                raise
            self._writes.run(write(update=True))
        trace.saved = True

    def trace(self, trace_id: str) -> TraceRecord | None:
        with self._session() as s:
            r = s.get(GatewayTraceRow, trace_id)
            if r is None:
                return None
            return TraceRecord(
                r.trace_id, r.at, r.principal, r.operation, r.question, json.loads(r.events)
            )

    # -- memory -------------------------------------------------------------------------
    def remember(self, owner: str, kind: str, key: str, text: str) -> MemoryItem:
        now = _now()
        with self._session.begin() as s:
            row = MemoryRow(owner=owner, kind=kind, key=key, text=text, created_at=now)
            s.add(row)
            s.flush()
            return MemoryItem(row.id, owner, kind, key, text, now)

    def recall(self, owner: str, limit: int = 50) -> list[MemoryItem]:
        query = (
            select(MemoryRow)
            .where(MemoryRow.owner == owner)
            .order_by(MemoryRow.id.desc())
            .limit(limit)
        )
        with self._session() as s:
            return [
                MemoryItem(r.id, r.owner, r.kind, r.key, r.text, r.created_at)
                for r in s.scalars(query)
            ]
