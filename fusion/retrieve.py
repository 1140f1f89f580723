"""Fan out to every source of a route at once, each under its own timeout and breaker.

Store calls are blocking (SQLite, FAISS, HTTP clients), so each runs in the shared thread
pool; a source that times out, fails or has its breaker open contributes nothing and the
request goes on with the others.

The caller is itself a worker thread (the pipeline ranks there too): handing work between
threads through `concurrent.futures` costs ~25 us a source, against ~90 us through the event
loop (a wake-up through its self-pipe for each), so a search spends a thread hop less and
~0.3 ms less CPU (bench/RESULTS.md, session 29).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, wait
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


def _timed(retriever: Retriever, top_k: int) -> tuple[Sequence[ScoredId], float]:
    """The ranking and when it was done (a source is timed to its own end, not to when
    the caller looked)."""
    hits = retriever(top_k)
    return hits, time.perf_counter()


def retrieve_all(
    route: Route,
    retrievers: Mapping[str, Retriever],
    breakers: Mapping[str, CircuitBreaker],
    executor: Executor,
) -> list[SourceOutcome]:
    """Every source's outcome, in the route's order; blocks the calling thread until each
    source has answered or passed its timeout (counted from the start of all)."""
    start = time.perf_counter()
    out: dict[str, SourceOutcome] = {}
    running: list[tuple[str, float, Future[tuple[Sequence[ScoredId], float]]]] = []
    for s in route.sources:
        retriever = retrievers.get(s.name)
        if retriever is None:
            out[s.name] = SourceOutcome(s.name, "missing", (), 0.0, "source not configured")
        elif not breakers[s.name].allow():
            out[s.name] = SourceOutcome(
                s.name, "open", (), 0.0, "circuit open after repeated failures"
            )
        else:
            running.append((s.name, s.timeout_s, executor.submit(_timed, retriever, s.top_k)))
    # Soonest deadline first: each source is waited for until its own deadline, and no
    # longer, whatever the others take. The thread sleeps until all have answered or that
    # deadline passes, so it is woken once, not once for each source still running.
    unfinished = {future for _, _, future in running}
    for name, timeout_s, future in sorted(running, key=lambda r: r[1]):
        if not future.done():
            wait(unfinished, timeout=max(0.0, start + timeout_s - time.perf_counter()))
        unfinished.discard(future)
        breaker = breakers[name]
        try:
            hits, done = future.result(timeout=0)
        except TimeoutError:
            future.cancel()  # not started yet (a busy pool): it need not run at all
            breaker.record_failure()
            ms = (time.perf_counter() - start) * 1000
            out[name] = SourceOutcome(name, "timeout", (), ms, f"no answer within {timeout_s}s")
            continue
        except Exception as exc:
            breaker.record_failure()
            ms = (time.perf_counter() - start) * 1000
            out[name] = SourceOutcome(name, "error", (), ms, f"{type(exc).__name__}: {exc}")
            continue
        breaker.record_success()
        out[name] = SourceOutcome(name, "ok", tuple(hits), (done - start) * 1000)
    return [out[s.name] for s in route.sources]
