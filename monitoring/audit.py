"""Audit export: the query log (and the ingest log) as CSV, for a time range and a user.

The CSV is meant to be opened in a spreadsheet by an auditor, and every text cell holds
something a user or a document supplied (a question, a file name, a parser's error), so
cells are neutralised against formula injection before they are written.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TextIO

from core.times import naive_utc
from indexing.protocols import AlertEventRecord, IngestRecord, JobRecord, QueryLogRecord

QUERY_COLUMNS: tuple[str, ...] = (
    "trace_id",
    "at",
    "user",
    "question",
    "covered",
    "mode",
    "route_rule",
    "citations",
    "removed_labels",
    "total_ms",
)
INGEST_COLUMNS: tuple[str, ...] = ("at", "source", "status", "reason", "doc_id", "version")

# A spreadsheet evaluates a cell starting with one of these as a formula (OWASP "CSV
# injection"); tab and carriage return also start one in some of them.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class AuditSource(Protocol):
    """The part of the metadata store an export reads."""

    def query_log(
        self,
        since: datetime | None = None,
        until: datetime | None = None,
        user: str | None = None,
        limit: int = 1000,
        trace_id: str | None = None,
        mentions: str | None = None,
    ) -> list[QueryLogRecord]: ...

    def ingest_log(
        self, limit: int = 1000, since: datetime | None = None, until: datetime | None = None
    ) -> list[IngestRecord]: ...


def safe_cell(value: object) -> object:
    """A text cell a spreadsheet shows as text: a leading formula character gets a quote.
    Numbers and booleans are our own values, written as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _iso(at: datetime) -> str:
    return at.replace(tzinfo=UTC).isoformat(timespec="milliseconds")


def total_ms(timings: Mapping[str, Any]) -> float | str:
    """End-to-end latency of one logged answer. Per-source timings run in parallel inside
    the "retrieve" stage, so only the sequential stages add up."""
    if "total" in timings:
        return round(float(timings["total"]), 2)
    stages = [float(v) for k, v in timings.items() if not k.startswith("source_")]
    return round(sum(stages), 2) if stages else ""


def _joined(values: Any) -> str:
    return ";".join(str(v) for v in values) if isinstance(values, list) else ""


def query_row(record: QueryLogRecord) -> dict[str, object]:
    p = record.payload
    route = p.get("route")
    timings = p.get("timings_ms")
    covered = p.get("covered")
    return {
        "trace_id": record.trace_id,
        "at": _iso(record.at),
        "user": record.user,
        "question": record.question,
        "covered": "" if covered is None else str(bool(covered)).lower(),
        "mode": str(p.get("mode", "")),
        "route_rule": str(route.get("rule", "")) if isinstance(route, dict) else "",
        "citations": _joined(p.get("citations")),
        "removed_labels": _joined(p.get("removed_labels")),
        "total_ms": total_ms(timings) if isinstance(timings, dict) else "",
    }


def ingest_row(record: IngestRecord) -> dict[str, object]:
    return {
        "at": _iso(record.at),
        "source": record.source,
        "status": record.status,
        "reason": record.reason,
        "doc_id": record.doc_id,
        "version": record.version,
    }


def write_csv(out: TextIO, columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> int:
    """Write a header and the rows, every cell made safe; returns the number of rows."""
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    n = 0
    for row in rows:
        writer.writerow({k: safe_cell(v) for k, v in row.items()})
        n += 1
    return n


def export_queries(
    source: AuditSource,
    out: TextIO,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    user: str | None = None,
    limit: int = 100_000,
) -> int:
    """The query audit log in `[since, until)`, oldest first; returns rows written."""
    records = source.query_log(naive_utc(since), naive_utc(until), user, limit)
    return write_csv(out, QUERY_COLUMNS, (query_row(r) for r in reversed(records)))


def export_ingest(
    source: AuditSource,
    out: TextIO,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 100_000,
) -> int:
    """Ingestion outcomes in `[since, until)`, oldest first (the newest `limit` of them);
    the ingest log has no user."""
    records = source.ingest_log(limit, since, until)
    return write_csv(out, INGEST_COLUMNS, (ingest_row(r) for r in reversed(records)))


# -- per-passage audit trail ------------------------------------------------------------
# One row per cited passage per answer: "where did this conclusion come from", with the
# answer, the document version, the passage and how that version was processed.
PASSAGE_COLUMNS: tuple[str, ...] = (
    "trace_id",
    "at",
    "principal",
    "question",
    "route_rule",
    "strategy",
    "answer_mode",
    "model",
    "cached_from",
    "label",
    "content_id",
    "file",
    "title",
    "doc_id",
    "version",
    "uploaded_at",
    "uploaded_by",
    "page_start",
    "page_end",
    "line_start",
    "line_end",
    "section_path",
    "parser",
    "parser_version",
    "chunker",
    "embedder_model",
    "embedder_version",
    "rerank",
    "pii_rules",
)
ALERT_COLUMNS: tuple[str, ...] = (
    "at",
    "alert",
    "subject",
    "event",
    "severity",
    "value",
    "threshold",
    "message",
    "detail",
)


class PassageAuditSource(AuditSource, Protocol):
    """What the passage export joins: the version's lineage, staging time and uploader."""

    def version_lineage(self, doc_id: str, version: str) -> dict[str, Any]: ...

    def version_times(self, doc_id: str) -> dict[str, tuple[datetime, datetime | None]]: ...

    def jobs(
        self, *, batch_id: str = "", doc_id: str = "", state: str = "", limit: int = 100
    ) -> list[Any]: ...


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str) if value else ""


def uploaders(jobs: Iterable[JobRecord]) -> dict[str, str]:
    """Who uploaded each version: the owner of its first ingest job. A later upload of the
    same bytes (a new title, other tags) changes metadata, not who brought the version."""
    first: dict[str, tuple[datetime, str]] = {}
    for j in jobs:  # newest first, as stores list them: on a tie the older one wins
        if j.kind == "ingest" and j.version:
            at = j.created_at or datetime.min
            seen = first.get(j.version)
            if seen is None or at <= seen[0]:
                first[j.version] = (at, j.owner)
    return {version: owner for version, (_, owner) in first.items()}


class _VersionFacts:
    """Per (doc_id, version): lineage, upload time and uploader, read once per export."""

    def __init__(self, source: PassageAuditSource) -> None:
        self._source = source
        self._memo: dict[tuple[str, str], dict[str, object]] = {}

    def get(self, doc_id: str, version: str) -> dict[str, object]:
        key = (doc_id, version)
        if key not in self._memo:
            self._memo[key] = self._read(doc_id, version) if doc_id and version else {}
        return self._memo[key]

    def _read(self, doc_id: str, version: str) -> dict[str, object]:
        lineage = self._source.version_lineage(doc_id, version)
        staged = self._source.version_times(doc_id).get(version, (None, None))[0]
        uploader = uploaders(self._source.jobs(doc_id=doc_id, limit=1000)).get(version)
        embedder = lineage.get("embedder") or {}
        pii = lineage.get("pii") or {}
        return {
            "uploaded_at": _iso(staged) if staged else "",
            # An API upload records its key's user; a CLI/folder ingest has no uploader.
            "uploaded_by": uploader if uploader is not None else "(cli ingest)",
            "parser": str(lineage.get("parser", "")),
            "parser_version": str(lineage.get("ragline", "")),
            "chunker": _compact(lineage.get("chunker")),
            "embedder_model": str(embedder.get("model", "")),
            "embedder_version": str(embedder.get("package_version", "")),
            "pii_rules": _compact({k: v for k, v in pii.items() if v}) if pii else "",
        }


def passage_rows(
    records: Iterable[QueryLogRecord], source: PassageAuditSource, doc_id: str | None = None
) -> Iterable[dict[str, object]]:
    """Rows for the cited passages of each logged answer (of one document if given)."""
    facts = _VersionFacts(source)
    for record in records:
        p = record.payload
        route = p.get("route") if isinstance(p.get("route"), dict) else {}
        assert isinstance(route, dict)
        for cited in p.get("cited") or []:
            if not isinstance(cited, dict):
                continue
            if doc_id is not None and cited.get("doc_id") != doc_id:
                continue
            section = cited.get("section_path") or []
            yield {
                "trace_id": record.trace_id,
                "at": _iso(record.at),
                "principal": record.user,
                "question": record.question,
                "route_rule": str(route.get("rule", "")),
                "strategy": str(route.get("strategy", "")),
                "answer_mode": str(p.get("mode", "")),
                "model": str(p.get("model", "")),
                "cached_from": str(p.get("cached_from", "")),
                "label": str(cited.get("label", "")),
                "content_id": str(cited.get("content_id", "")),
                "file": str(cited.get("source", "")),
                "title": str(cited.get("title", "")),
                "doc_id": str(cited.get("doc_id", "")),
                "version": str(cited.get("version", "")),
                "page_start": cited.get("page_start", ""),
                "page_end": cited.get("page_end", ""),
                "line_start": cited.get("line_start", ""),
                "line_end": cited.get("line_end", ""),
                "section_path": " > ".join(str(s) for s in section),
                "rerank": _compact(p.get("rerank")),
                **facts.get(str(cited.get("doc_id", "")), str(cited.get("version", ""))),
            }


def export_passages(
    source: PassageAuditSource,
    out: TextIO,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    user: str | None = None,
    doc_id: str | None = None,
    limit: int = 100_000,
) -> int:
    """The per-passage audit trail in `[since, until)`, oldest answer first; `limit`
    answers at most (of those citing `doc_id` when given)."""
    records = source.query_log(naive_utc(since), naive_utc(until), user, limit, mentions=doc_id)
    return write_csv(out, PASSAGE_COLUMNS, passage_rows(reversed(records), source, doc_id))


def alert_row(e: AlertEventRecord) -> dict[str, object]:
    return {
        "at": _iso(e.at),
        "alert": e.alert,
        "subject": e.subject,
        "event": e.event,
        "severity": e.severity,
        "value": "" if e.value is None else e.value,
        "threshold": "" if e.threshold is None else e.threshold,
        "message": e.message,
        "detail": _compact(e.detail),
    }


GATEWAY_COLUMNS = (
    "trace_id",
    "at",
    "principal",
    "source_id",
    "kind",
    "template",
    "params",
    "row_count",
    "duration_ms",
    "status",
    "error",
)


class GatewayAuditRecord(Protocol):
    """One gateway execution (connectors.records.AuditRecord fits)."""

    @property
    def trace_id(self) -> str: ...

    @property
    def at(self) -> datetime: ...

    @property
    def principal(self) -> str: ...

    @property
    def source_id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def template(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...

    @property
    def row_count(self) -> int: ...

    @property
    def duration_ms(self) -> float: ...

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str: ...


def export_gateway(
    records: Iterable[GatewayAuditRecord],
    out: TextIO,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    user: str | None = None,
) -> int:
    """Every gateway execution (SQL template runs, status lookups, refusals) in
    `[since, until)`, oldest first, with its trace id."""
    lo, hi = naive_utc(since), naive_utc(until)
    kept = [
        r
        for r in records
        if (lo is None or r.at >= lo)
        and (hi is None or r.at < hi)
        and (user is None or r.principal == user)
    ]
    rows = (
        {
            "trace_id": r.trace_id,
            "at": _iso(r.at),
            "principal": r.principal,
            "source_id": r.source_id,
            "kind": r.kind,
            "template": r.template,
            "params": json.dumps(dict(r.params), ensure_ascii=False, sort_keys=True, default=str),
            "row_count": r.row_count,
            "duration_ms": round(r.duration_ms, 3),
            "status": r.status,
            "error": r.error,
        }
        for r in sorted(kept, key=lambda r: r.at)
    )
    return write_csv(out, GATEWAY_COLUMNS, rows)
