"""Thread sizing: BLAS/OpenMP threads set once per process from settings, pools per core."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from core.settings import Settings, ThreadSettings
from core.types import Principal
from ragline.app import Ragline
from ragline.threads import (
    answer_pool_size,
    blocking_pool_size,
    cores,
    lowered,
    retrieve_pool_size,
)
from ragline.worker.runner import InProcessRunner

ROOT = Path(__file__).resolve().parents[2]


def test_pools_are_sized_from_the_cores_unless_set() -> None:
    n = cores()
    assert retrieve_pool_size(ThreadSettings()) == max(3, 2 * n)
    assert blocking_pool_size(ThreadSettings()) == max(4, 4 * n)
    assert retrieve_pool_size(ThreadSettings(retrieve=5)) == 5
    assert blocking_pool_size(ThreadSettings(blocking=7)) == 7
    assert answer_pool_size(ThreadSettings()) == n
    assert answer_pool_size(ThreadSettings(answer=3)) == 3


def test_processes_sharing_the_cores_size_their_pools_from_their_share() -> None:
    """`serve --workers N`: each of N processes counts cores // N (at least one)."""
    n = cores()
    shared = ThreadSettings(processes=n)
    assert retrieve_pool_size(shared) == 3 and blocking_pool_size(shared) == 4
    assert answer_pool_size(shared) == 1
    assert retrieve_pool_size(ThreadSettings(processes=4 * n)) == 3  # never under one core


def test_a_ragline_process_runs_every_blas_library_on_the_configured_threads(
    tmp_path: Path,
) -> None:
    """numpy's and FAISS's BLAS and OpenMP start one thread per core; after Ragline is
    built they all run on RAGLINE_THREADS__BLAS (in a fresh process: the limit is global)."""
    code = (
        "import json\n"
        "from threadpoolctl import threadpool_info\n"
        "from core.settings import Settings\n"
        "from ragline.app import Ragline\n"
        f"rag = Ragline(Settings(data_dir={str(tmp_path)!r}))\n"
        "print(json.dumps([i['num_threads'] for i in threadpool_info()]))\n"
        "rag.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAGLINE_THREADS__BLAS": "1"}
    env.pop("OMP_NUM_THREADS", None)
    env.pop("OPENBLAS_NUM_THREADS", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    threads = json.loads(out.stdout.strip().splitlines()[-1])
    assert threads  # numpy's OpenBLAS at least
    assert set(threads) == {1}


@pytest.mark.parametrize("pool", [1, 2])
def test_answers_are_composed_in_the_answer_pool_only(tmp_path: Path, pool: int) -> None:
    """Concurrent asks compose their answers in RAGLINE_THREADS__ANSWER threads at most
    (the composition is CPU: more threads would only queue the event loop for the GIL).
    Each composition here also sleeps 50 ms, so that a larger pool would run them
    together."""
    doc = tmp_path / "docs" / "budget.md"
    doc.parent.mkdir()
    doc.write_text("# Budget\n\nThe zephyrine merger budget is 42 million yuan.\n", "utf-8")
    rag = Ragline(Settings(data_dir=tmp_path / "data", threads=ThreadSettings(answer=pool)))
    lock = threading.Lock()
    inside: list[int] = [0]
    most: list[int] = [0]
    names: set[str] = set()
    compose = rag._answer_documents

    def counted(*args: Any) -> Any:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            names.add(threading.current_thread().name)
        time.sleep(0.05)
        try:
            return compose(*args)
        finally:
            with lock:
                inside[0] -= 1

    rag._answer_documents = counted  # type: ignore[method-assign]

    async def ask_all() -> list[Any]:
        question = "What is the zephyrine merger budget?"
        return await asyncio.gather(*(rag.aask(question, Principal("amy")) for _ in range(6)))

    try:
        rag.ingest([doc.parent])
        answers = asyncio.run(ask_all())
    finally:
        rag.close()
    assert all(a.covered and "42 million" in a.text for a in answers)
    assert most[0] == pool
    assert names and all(n.startswith("answer") for n in names)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness: Linux")
def test_pool_threads_run_below_the_event_loop_when_nice_is_set(tmp_path: Path) -> None:
    """RAGLINE_THREADS__NICE lowers the priority of the threads that retrieve and compose
    answers, and only theirs: the thread that accepts and refuses requests keeps its own.
    (Linux applies niceness per thread; raising it needs no privilege.)"""
    doc = tmp_path / "docs" / "budget.md"
    doc.parent.mkdir()
    doc.write_text("# Budget\n\nThe zephyrine merger budget is 42 million yuan.\n", "utf-8")
    base = os.getpriority(os.PRIO_PROCESS, 0)  # 0: the calling thread
    rag = Ragline(Settings(data_dir=tmp_path / "data", threads=ThreadSettings(nice=5)))
    seen: list[int] = []
    compose = rag._answer_documents

    def noted(*args: Any) -> Any:
        seen.append(os.getpriority(os.PRIO_PROCESS, 0))
        return compose(*args)

    rag._answer_documents = noted  # type: ignore[method-assign]
    try:
        rag.ingest([doc.parent])
        answer = rag.ask("What is the zephyrine merger budget?", Principal("amy"))
        retrieving = rag._executor.submit(os.getpriority, os.PRIO_PROCESS, 0).result()
        here = os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        rag.close()
    assert answer.covered and "42 million" in answer.text
    assert seen == [min(19, base + 5)]
    assert retrieving == min(19, base + 5)
    assert here == base


def test_pool_threads_keep_the_process_priority_when_nice_is_0() -> None:
    assert lowered(ThreadSettings(nice=0)) is None
    assert lowered(ThreadSettings(nice=3)) is not None
    assert lowered(ThreadSettings()) is not None  # 10 by default


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness: Linux")
def test_in_process_ingestion_runs_at_the_query_pools_priority(tmp_path: Path) -> None:
    """`ragline serve` without a broker ingests on its own thread: lowered like the query
    pools, so it does not outrank answers, and the event loop outranks both."""
    from ragline.api.app import _runner
    from ragline.events import make_event_bus

    settings = Settings(data_dir=tmp_path, threads=ThreadSettings(nice=4))
    rag = Ragline(settings)
    events = make_event_bus(settings, "test")
    runner = _runner(settings, rag, events, "default")
    try:
        assert isinstance(runner, InProcessRunner)
        ingesting = runner._pool.submit(os.getpriority, os.PRIO_PROCESS, 0).result()
    finally:
        runner.close()
        events.close()
        rag.close()
    assert ingesting == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 4)
