"""Several processes opening one new embedded database at once (`ragline serve
--workers N` on a fresh data directory) all come up: the schema is created once, not
raced ("table documents already exists" stopped a worker, and uvicorn the server)."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from indexing.stores.sql_metadata import SqlMetadataStore

PROCESSES = 4


def _open(url: str, start: object, errors: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    try:
        SqlMetadataStore(url).close()
    except Exception as exc:  # reported to the parent
        errors.put(f"{type(exc).__name__}: {exc}")  # type: ignore[attr-defined]


def test_processes_opening_a_new_database_at_once_all_start(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    for attempt in range(3):
        url = f"sqlite:///{tmp_path / f'meta{attempt}.db'}"
        start, errors = ctx.Barrier(PROCESSES), ctx.Queue()
        procs = [ctx.Process(target=_open, args=(url, start, errors)) for _ in range(PROCESSES)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        failures = []
        while not errors.empty():
            failures.append(errors.get())
        assert not failures, failures
        assert all(p.exitcode == 0 for p in procs)
