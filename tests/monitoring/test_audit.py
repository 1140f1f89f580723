"""The query log read (`query_log`) and the audit CSV export, on a real SQLite store."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta, timezone

from alert_rows import add_query, ago

from indexing.protocols import IngestRecord
from indexing.stores.sql_metadata import SqlMetadataStore
from monitoring.audit import QUERY_COLUMNS, export_ingest, export_queries, safe_cell


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_query_log_filters_by_range_and_user_newest_first(store: SqlMetadataStore) -> None:
    old = add_query(store, at=ago(days=3), user="amy")
    mid = add_query(store, at=ago(days=1), user="bob")
    new = add_query(store, at=ago(minutes=1), user="amy")
    assert [r.trace_id for r in store.query_log()] == [new, mid, old]
    assert [r.trace_id for r in store.query_log(since=ago(days=2))] == [new, mid]
    assert [r.trace_id for r in store.query_log(until=ago(hours=2))] == [mid, old]
    assert [r.trace_id for r in store.query_log(user="amy")] == [new, old]
    assert [r.trace_id for r in store.query_log(limit=1)] == [new]
    record = store.query_log(user="bob")[0]
    assert record.payload["covered"] is True and record.payload["route"]["rule"] == "default"


def test_query_log_bounds_are_inclusive_then_exclusive_and_zone_aware(
    store: SqlMetadataStore,
) -> None:
    at = datetime(2026, 5, 1, 12, 0, 0)
    t = add_query(store, at=at)
    assert [r.trace_id for r in store.query_log(since=at, until=at + timedelta(seconds=1))] == [t]
    assert store.query_log(since=at + timedelta(microseconds=1)) == []
    assert store.query_log(until=at) == []
    # 14:00 at UTC+2 is 12:00 UTC: an aware bound is compared in UTC, not as wall time.
    plus2 = timezone(timedelta(hours=2))
    assert [r.trace_id for r in store.query_log(since=at.replace(hour=14, tzinfo=plus2))] == [t]
    assert store.query_log(until=at.replace(hour=14, tzinfo=plus2)) == []


def test_export_columns_values_and_order(store: SqlMetadataStore) -> None:
    first = add_query(
        store,
        at=ago(hours=2),
        user="amy",
        question="retention?",
        covered=True,
        citations=("c1", "c2"),
        timings={"route": 1.5, "retrieve": 10.0, "source_dense": 9.0, "generate": 3.25},
    )
    second = add_query(
        store,
        at=ago(hours=1),
        user="bob",
        question="salary of the CEO?",
        covered=False,
        citations=(),
        removed=("[Docabc_p3]", "[Docdef_p1]"),
        extra={"mode": "llm"},
    )
    out = io.StringIO()
    assert export_queries(store, out) == 2
    text = out.getvalue()
    assert text.splitlines()[0] == ",".join(QUERY_COLUMNS)
    rows = _rows(text)
    assert [r["trace_id"] for r in rows] == [first, second]  # oldest first
    a, b = rows
    assert (a["user"], a["question"], a["covered"], a["route_rule"]) == (
        "amy",
        "retention?",
        "true",
        "default",
    )
    assert a["citations"] == "c1;c2"
    # Sources run in parallel inside "retrieve": only the sequential stages add up.
    assert float(a["total_ms"]) == 1.5 + 10.0 + 3.25
    assert a["mode"] == "" and b["mode"] == "llm"
    assert b["covered"] == "false" and b["citations"] == ""
    assert b["removed_labels"] == "[Docabc_p3];[Docdef_p1]"
    assert datetime.fromisoformat(a["at"]).tzinfo is not None  # explicit UTC


def test_export_range_and_user(store: SqlMetadataStore) -> None:
    add_query(store, at=ago(days=5), user="amy")
    keep = add_query(store, at=ago(days=1), user="amy")
    add_query(store, at=ago(days=1), user="bob")
    out = io.StringIO()
    n = export_queries(store, out, since=datetime.now(UTC) - timedelta(days=2), user="amy")
    assert n == 1
    assert [r["trace_id"] for r in _rows(out.getvalue())] == [keep]


def test_cells_that_start_a_formula_are_quoted(store: SqlMetadataStore) -> None:
    evil = {
        '=HYPERLINK("http://x","y")': '\'=HYPERLINK("http://x","y")',
        "+1+2": "'+1+2",
        "-2+3": "'-2+3",
        "@SUM(A1)": "'@SUM(A1)",
        "\t=1": "'\t=1",
    }
    for question in evil:
        add_query(store, question=question, user="=cmd|' /C calc'!A0")
    add_query(store, question="a plain question = fine", user="amy")
    out = io.StringIO()
    export_queries(store, out)
    rows = _rows(out.getvalue())
    questions = {r["question"] for r in rows}
    assert questions == {*evil.values(), "a plain question = fine"}
    assert {r["user"] for r in rows} == {"'=cmd|' /C calc'!A0", "amy"}
    # Numbers are ours, not user text: left as they are.
    assert safe_cell(-1.5) == -1.5 and safe_cell("-1.5") == "'-1.5"


def test_export_ingest_log_in_range(store: SqlMetadataStore) -> None:
    for status, at, source in (
        ("indexed", ago(days=3), "file:///a.pdf"),
        ("failed", ago(hours=1), "=file:///b.pdf"),
    ):
        store.record_ingest(IngestRecord(source, status, "why", "d", "v", at))
    out = io.StringIO()
    assert export_ingest(store, out, since=ago(days=1)) == 1
    (row,) = _rows(out.getvalue())
    assert (row["status"], row["source"]) == ("failed", "'=file:///b.pdf")


def test_export_ingest_limit_counts_rows_in_the_range(store: SqlMetadataStore) -> None:
    """`--limit` caps the rows of the range asked, newest of them, not the whole log's."""
    for hours, source in ((50, "file:///old1.md"), (49, "file:///old2.md"), (1, "file:///new.md")):
        store.record_ingest(IngestRecord(source, "indexed", "", "d", "v", ago(hours=hours)))
    out = io.StringIO()
    assert export_ingest(store, out, until=ago(hours=24), limit=1) == 1
    assert [r["source"] for r in _rows(out.getvalue())] == ["file:///old2.md"]
    out = io.StringIO()
    assert export_ingest(store, out, until=ago(hours=24), limit=5) == 2
