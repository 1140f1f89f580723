"""Asks (or searches) with N in flight in one process, no HTTP: process CPU and wall time
per call, and how many calls the query encoder made for how many texts.

    .venv/bin/python bench/ask_concurrency.py --data-dir DIR \
        --questions ../shared/data/cmrc2018/trial.json --in-flight 8 --asks 200 [--search]

`RAGLINE_THREADS__PROCESSES=2` sizes the pools as each process of `serve --workers 2` does.

DIR holds an ingested corpus (`ragline ingest ... --data-dir DIR`). For an older tree of
this repository, put its sources first: `PYTHONPATH=<worktree> .venv/bin/python ...`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.bench.load import load_questions


async def _asks(rag: Ragline, questions: list[str], in_flight: int, search: bool) -> None:
    principal = Principal(user="bench-concurrency", superuser=True)
    gate = asyncio.Semaphore(in_flight)
    call = rag.asearch if search else rag.aask

    async def one(question: str) -> None:
        async with gate:
            await call(question, principal)

    await asyncio.gather(*(one(q) for q in questions))


async def _measure(
    rag: Ragline, warm: list[str], chosen: list[str], in_flight: int, search: bool
) -> str:
    await _asks(rag, warm, in_flight, search)
    queries = getattr(rag.embedder, "_queries", None)  # the query batcher, where there is one
    calls, texts = (queries.calls, queries.texts) if queries is not None else (0, 0)
    cpu, wall = time.process_time(), time.perf_counter()
    await _asks(rag, chosen, in_flight, search)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    n, kind, kinds = len(chosen), *(("search", "searches") if search else ("ask", "asks"))
    line = f"{n} {kinds}, {in_flight} in flight: CPU {cpu * 1000 / n:.2f} ms per {kind}, "
    line += f"wall {wall * 1000 / n:.2f} ms per {kind}"
    if queries is not None:
        line += f"; encoder calls {queries.calls - calls} for {queries.texts - texts} texts"
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--in-flight", type=int, default=8)
    ap.add_argument("--asks", type=int, default=200)
    ap.add_argument("--warm-up", type=int, default=20)
    ap.add_argument("--search", action="store_true", help="searches instead of asks")
    args = ap.parse_args()
    questions = load_questions(args.questions)
    rag = Ragline(Settings(data_dir=args.data_dir))
    try:
        rag.warm_up()
        warm = questions[: args.warm_up]
        chosen = questions[args.warm_up : args.warm_up + args.asks]
        print(asyncio.run(_measure(rag, warm, chosen, args.in_flight, args.search)))
    finally:
        rag.close()


if __name__ == "__main__":
    main()
