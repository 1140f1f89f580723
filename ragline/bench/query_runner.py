"""One side of `ragline bench query`, run in its own process against one source tree.

Self-contained on purpose: `ragline bench query --baseline-ref REF` runs this same file with
an older tree first on the import path, so it may use only what every version of Ragline
has (`Ragline(settings)`, `aask`/`asearch`, `stores`, `embedder`), and looks up the rest
(`records`, `warm_up`, the answerers) before using it.

Protocol (JSON lines): the first stdin line is the job (data_dir, mode, warm-up
questions); the runner warms up and prints {"ready": true}; then every stdin line is one
question, answered with one result line. The driver alternates two runners question by
question, so both see the same machine load.

What it measures, per question, asked one at a time after a warm-up:
- `cpu_ms`: the process's CPU time for the whole call (time.process_time), all threads;
- `stores_ms`: CPU time spent inside store calls and model inference, each measured on the
  calling thread (time.thread_time) by wrapping the stores, the embedder, the answerers'
  sentence embeddings (`embed_sentences`), their LLM calls (`llm`: the HTTP client's own
  work while the server generates) and the writes the ask path makes; models and
  FAISS run single-threaded here (settings), so the calling thread is where their work
  happens;
- `around_ms` = cpu_ms - stores_ms: the query path's own work (routing, fusion, rerank,
  answer, audit, bookkeeping) -- what issue 13 asks to cut;
- `wall_ms` and the response's own stage timings (wall clock).
CPU time, not wall time, because the machine is shared: another process's load inflates
wall time, not this process's CPU time. Like `ragline serve` (settings.api.gc_freeze), the
runner freezes the heap after its warm-up.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STORE_CALLS = {
    "keyword": ("search",),
    "dense": ("search",),
    "graph": ("search",),
    "embed": ("embed_query",),
    "writes": ("log_query", "record_gap", "save_trace"),
}


class Meter:
    """CPU time of the calling thread inside metered calls, per kind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cpu: dict[str, float] = {}

    def wrap(self, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def metered(*args: Any, **kwargs: Any) -> Any:
            c0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self._add(kind, time.thread_time() - c0)

        return metered

    def wrap_async(self, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The same for a coroutine function, run on the event loop's thread: questions
        are asked one at a time, so while it is awaited that thread runs nothing else."""

        async def metered(*args: Any, **kwargs: Any) -> Any:
            c0 = time.thread_time()
            try:
                return await fn(*args, **kwargs)
            finally:
                self._add(kind, time.thread_time() - c0)

        return metered

    def _add(self, kind: str, seconds: float) -> None:
        with self._lock:
            self.cpu[kind] = self.cpu.get(kind, 0.0) + seconds

    def take(self) -> dict[str, float]:
        with self._lock:
            out, self.cpu = self.cpu, {}
        return {k: v * 1000 for k, v in out.items()}


class _Proxy:
    """Everything passes through to `target`; the named methods are metered."""

    def __init__(self, target: Any, meter: Meter, kind: str, methods: tuple[str, ...]) -> None:
        self._target = target
        for name in methods:
            if hasattr(target, name):
                setattr(self, name, meter.wrap(kind, getattr(target, name)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def instrument(rag: Any, meter: Meter) -> None:
    stores = rag.stores
    stores.keyword = _Proxy(stores.keyword, meter, "keyword", STORE_CALLS["keyword"])
    stores.dense = _Proxy(stores.dense, meter, "dense", STORE_CALLS["dense"])
    stores.graph = _Proxy(stores.graph, meter, "graph", STORE_CALLS["graph"])
    rag.embedder = _Proxy(rag.embedder, meter, "embed", STORE_CALLS["embed"])
    stores.metadata = _Proxy(stores.metadata, meter, "writes", ("log_query", "record_gap"))
    records = getattr(rag, "records", None)  # (trees before the gateway keep no traces)
    if records is not None:
        records.save_trace = meter.wrap("writes", records.save_trace)
    # Sentence embeddings of extractive answers (model inference): each answerer holds its
    # own similarity function, bound to the embedder before it was wrapped above.
    answerers = [getattr(rag, "answerer", None), getattr(rag, "extractive", None)]
    answerers += list(getattr(rag, "_answerers", {}).values())
    seen: set[int] = set()
    for answerer in answerers:
        if answerer is None or id(answerer) in seen:
            continue
        seen.add(id(answerer))
        similarity = getattr(answerer, "similarity", None)
        if similarity is not None:
            answerer.similarity = meter.wrap("embed_sentences", similarity)
        # An LLM's answer (model inference over HTTP): the client's own CPU.
        llm = getattr(answerer, "llm", None)
        if llm is not None and id(llm) not in seen:
            seen.add(id(llm))
            llm.chat = meter.wrap("llm", llm.chat)
            llm.achat = meter.wrap_async("llm", llm.achat)
    # The serve-check: the pipeline holds the metadata store's bound method.
    pipeline = rag.pipeline
    serving = getattr(pipeline, "_serving", None)
    if serving is not None:
        pipeline._serving = meter.wrap("serving", serving)
    # The keyword store's term statistics for the rare-term signal (a store call too).
    frequencies = getattr(pipeline, "_frequencies", None)
    if frequencies is not None:
        pipeline._frequencies = meter.wrap("keyword", frequencies)


async def _run(job: dict[str, Any]) -> None:
    from core.settings import Settings
    from core.types import Principal
    from indexing.entities import query_entities
    from ragline.app import Ragline

    settings = Settings(data_dir=Path(job["data_dir"]))
    rag = Ragline(settings)
    try:
        warm_up = getattr(rag, "warm_up", None)
        if warm_up is not None:
            warm_up()
        query_entities("Warm up the English keyword tables")  # both trees load them lazily
        if getattr(settings.api, "gc_freeze", False):
            # As `ragline serve` does after its warm-up: what was loaded at start (~120k
            # objects) is left out of full collections, which would otherwise cost the
            # measured questions ~0.2 ms each, amortised, on both sides.
            gc.collect()
            gc.freeze()
        principal = Principal(user="bench-query", superuser=True)
        call = rag.aask if job["mode"] == "ask" else rag.asearch
        for q in job["warmup"]:
            await call(q, principal)
        meter = Meter()
        instrument(rag, meter)
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            q = json.loads(line)["question"]
            meter.take()
            c0, w0 = time.process_time(), time.perf_counter()
            result = await call(q, principal)
            cpu = (time.process_time() - c0) * 1000
            wall = (time.perf_counter() - w0) * 1000
            stores = meter.take()
            spent = sum(stores.values())
            row = {
                "cpu_ms": cpu,
                "stores_ms": spent,
                "around_ms": cpu - spent,
                "wall_ms": wall,
                "stores": stores,
                "stages": dict(result.timings_ms),
            }
            print(json.dumps(row), flush=True)
    finally:
        rag.close()


def main() -> None:
    asyncio.run(_run(json.loads(sys.stdin.readline())))


if __name__ == "__main__":
    main()
