"""Fan out to every source of a route at once, each under its own timeout and breaker.

Store calls are blocking (SQLite, FAISS, HTTP clients), so each runs in the shared thread
pool; a source that times out, fails or has its breaker open contributes nothing and the
request goes on with the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from core.types import Route, ScoredId
from fusion.breaker import CircuitBreaker

# A retriever takes top_k and returns that source's ranking for the request at hand.
Retriever = Callable[[int], Sequence[ScoredId]]


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    name: str
    status: str  # ok | timeout | error | open | missing
    hits: tuple[ScoredId, ...]
    ms: float
    error: str = ""


async def _one(
    name: str,
    retriever: Retriever | None,
    top_k: int,
    timeout_s: float,
    breaker: CircuitBreaker,
    executor: Executor | None,
) -> SourceOutcome:
    if retriever is None:
        return SourceOutcome(name, "missing", (), 0.0, "source not configured")
    if not breaker.allow():
        return SourceOutcome(name, "open", (), 0.0, "circuit open after repeated failures")
    loop = asyncio.get_running_loop()
    start = time.perf_counter()
    try:
        hits = await asyncio.wait_for(
            loop.run_in_executor(executor, retriever, top_k), timeout=timeout_s
        )
    except TimeoutError:
        breaker.record_failure()
        ms = (time.perf_counter() - start) * 1000
        return SourceOutcome(name, "timeout", (), ms, f"no answer within {timeout_s}s")
    except Exception as exc:
        breaker.record_failure()
        ms = (time.perf_counter() - start) * 1000
        return SourceOutcome(name, "error", (), ms, f"{type(exc).__name__}: {exc}")
    breaker.record_success()
    return SourceOutcome(name, "ok", tuple(hits), (time.perf_counter() - start) * 1000)


async def retrieve_all(
    route: Route,
    retrievers: Mapping[str, Retriever],
    breakers: Mapping[str, CircuitBreaker],
    executor: Executor | None = None,
) -> list[SourceOutcome]:
    return list(
        await asyncio.gather(
            *(
                _one(
                    s.name, retrievers.get(s.name), s.top_k, s.timeout_s, breakers[s.name], executor
                )
                for s in route.sources
            )
        )
    )
