"""Traces: a new trace is inserted, saving it again replaces its events, and another
Trace object of the same id updates the row instead of failing."""

from __future__ import annotations

from pathlib import Path

from connectors.records import GatewayRecords, Trace
from indexing.stores.sql_metadata import SqlMetadataStore


def _records(tmp_path: Path) -> GatewayRecords:
    store = SqlMetadataStore(f"sqlite:///{tmp_path / 'meta.db'}")
    return GatewayRecords(store.engine, store.writes)


def test_a_trace_saved_again_keeps_one_row_with_every_event(tmp_path: Path) -> None:
    records = _records(tmp_path)
    trace = Trace("t1", "ana", "ask", "which port?")
    trace.add("route", kind="documents")
    records.save_trace(trace)
    assert trace.saved
    trace.add("answer", covered=True)
    records.save_trace(trace)
    stored = records.trace("t1")
    assert stored is not None
    assert [e["event"] for e in stored.events] == ["route", "answer"]
    assert (stored.principal, stored.operation, stored.question) == ("ana", "ask", "which port?")


def test_another_trace_object_of_the_same_id_updates_the_row(tmp_path: Path) -> None:
    records = _records(tmp_path)
    first = Trace("t2", "ana", "rows")
    first.add("query")
    records.save_trace(first)
    second = Trace("t2", "ana", "rows")  # not saved through this object before
    second.add("query")
    second.add("rows", count=3)
    records.save_trace(second)
    stored = records.trace("t2")
    assert stored is not None and [e["event"] for e in stored.events] == ["query", "rows"]
