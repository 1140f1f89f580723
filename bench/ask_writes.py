"""The writes every ask makes (audit record, trace, knowledge gap), from concurrent
threads, with the group commit (`indexing/stores/group_commit.py`) against one
transaction per write, the same statements, in the same run:

    .venv/bin/python bench/ask_writes.py --url sqlite
    .venv/bin/python bench/ask_writes.py --url "$RAGLINE_TEST_PG_URL"   # a scratch database

Prints the wall time and the process CPU per ask for 1 and 8 writer threads, per round.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine

from connectors.records import GatewayRecords, Trace
from indexing.migrate import scratch_database
from indexing.stores.group_commit import GroupCommit
from indexing.stores.sql_metadata import SqlMetadataStore

_PAYLOAD = json.dumps({"route": "x" * 3000})


class OwnTransactions:
    """The baseline: every write in its own transaction, as before the group commit."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def run(self, work: Callable[[Connection], Any]) -> Any:
        with self._engine.begin() as conn:
            return work(conn)


def _asks(store: SqlMetadataStore, records: GatewayRecords, threads: int, per: int) -> tuple:
    def writer() -> None:
        for _ in range(per):
            trace_id = uuid.uuid4().hex
            store.log_query(trace_id, "load", "which port?", _PAYLOAD)
            trace = Trace(trace_id, "load", "ask", "which port?")
            trace.add("route", detail="x" * 300)
            records.save_trace(trace)
            store.record_gap(
                uuid.uuid4().hex[:16], "which port", "which port?", ["staff"], [], "not covered", 0
            )

    workers = [threading.Thread(target=writer) for _ in range(threads)]
    cpu, wall = time.process_time(), time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    n = threads * per
    return (time.perf_counter() - wall) * 1000 / n, (time.process_time() - cpu) * 1000 / n


@contextmanager
def _database(url: str) -> Iterator[str]:
    if url == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{tmp}/meta.db"
    else:
        with scratch_database(url) as scratch:
            yield scratch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="sqlite", help="sqlite, or a PostgreSQL server URL")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--asks", type=int, default=480, help="asks per measurement")
    args = ap.parse_args()
    with _database(args.url) as url:
        store = SqlMetadataStore(url)
        grouped = store.writes
        for r in range(args.rounds):
            for name, writes in (("own", OwnTransactions(store.engine)), ("group", grouped)):
                store.writes = writes  # type: ignore[assignment]
                records = GatewayRecords(store.engine, writes)  # type: ignore[arg-type]
                for threads in (1, 8):
                    wall, cpu = _asks(store, records, threads, args.asks // threads)
                    extra = ""
                    if isinstance(writes, GroupCommit):
                        extra = f" (so far {writes.works} writes in {writes.transactions} commits)"
                    print(
                        f"round {r + 1} {name:5s} {threads} thread(s): {wall:.3f} ms wall, "
                        f"{cpu:.3f} ms CPU per ask{extra}",
                        flush=True,
                    )
        store.close()


if __name__ == "__main__":
    main()
