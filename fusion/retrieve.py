"""Fan out to every source of a route at once, each under its own timeout and breaker.

Store calls are blocking (SQLite, FAISS, HTTP clients), so each runs in the shared thread
pool; a source that times out, fails or has its breaker open contributes nothing and the
request goes on with the others.

What comes after retrieval (fusion, the serve-check, the rerank) runs in the thread of the
source that answers last, so the rankings need no hand-over to a thread of their own: a
search crosses threads twice (the event loop to the sources, the last source back to the
loop) instead of four times (bench/RESULTS.md, session 31). A source's deadline is a timer
on the event loop; when a deadline closes the last open source, the rest runs in a worker
thread instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from core.types import Route, ScoredId, SourceSpec
from fusion.breaker import CircuitBreaker

# A retriever takes top_k and returns that source's ranking for the request at hand.
Retriever = Callable[[int], Sequence[ScoredId]]
B = TypeVar("B")  # what runs beside the sources returns
T = TypeVar("T")  # what runs after them returns


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    name: str
    status: str  # ok | timeout | error | open | missing
    hits: tuple[ScoredId, ...]
    ms: float
    error: str = ""


_BESIDE = ""  # the slot of the work beside the sources (no source is named "")


class _FanIn(Generic[B, T]):
    """One request's open slots (its running sources and the work beside them), each
    closed once, under a lock: by the thread that ran it, or by the event loop at its
    deadline. Whoever closes the last one runs `then`."""

    def __init__(
        self,
        route: Route,
        then: Callable[[list[SourceOutcome], B | None], T],
        breakers: Mapping[str, CircuitBreaker],
        grace_s: float,
    ) -> None:
        self.start = time.perf_counter()
        self._names = [s.name for s in route.sources]
        self._then = then
        self._breakers = breakers
        self._grace_s = grace_s
        self._loop = asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._open: set[str] = set()  # every slot is opened before any work starts
        self._sources_open = 0
        self._futures: dict[str, Future[None]] = {}
        self.outcomes: dict[str, SourceOutcome] = {}
        self._beside: B | None = None
        # Set on the loop: ("done", result) by the thread that ran `then`, or ("run", None)
        # when the loop closed the last slot (a deadline) and `then` is still to run.
        self.settled: asyncio.Future[tuple[str, object]] = self._loop.create_future()
        self.timers: list[asyncio.TimerHandle] = []

    def start_all(
        self,
        sources: Sequence[tuple[SourceSpec, Retriever]],
        beside: Callable[[], B] | None,
        executor: Executor,
    ) -> None:
        """Open every slot, then start the work: each source under a deadline timer."""
        self._open = {s.name for s, _ in sources} | ({_BESIDE} if beside else set())
        self._sources_open = len(sources)
        for spec, retriever in sources:
            self.timers.append(self._loop.call_later(spec.timeout_s, self._expire, spec))
            self._futures[spec.name] = executor.submit(self._source, spec, retriever)
        if beside is not None:
            executor.submit(self._run_beside, beside)
            if not sources:
                self._arm_grace()

    def _source(self, spec: SourceSpec, retriever: Retriever) -> None:
        try:
            hits = tuple(retriever(spec.top_k))
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
            outcome = SourceOutcome(spec.name, "error", (), self._ms(), why)
        else:
            outcome = SourceOutcome(spec.name, "ok", hits, self._ms())
        self._close(spec.name, outcome, None, here=True)

    def _expire(self, spec: SourceSpec) -> None:
        """The source's deadline passed (on the loop): withdrawn if it has not started."""
        why = f"no answer within {spec.timeout_s}s"
        outcome = SourceOutcome(spec.name, "timeout", (), self._ms(), why)
        if self._close(spec.name, outcome, None, here=False):
            self._futures[spec.name].cancel()

    def _run_beside(self, beside: Callable[[], B]) -> None:
        try:
            value: B | None = beside()
        except Exception:  # the work beside is optional: the rest goes on without it
            value = None
        self._close(_BESIDE, None, value, here=True)

    def _arm_grace(self) -> None:
        self.timers.append(
            self._loop.call_later(self._grace_s, self._close, _BESIDE, None, None, False)
        )

    def _ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000

    def _close(self, slot: str, outcome: SourceOutcome | None, value: B | None, here: bool) -> bool:
        """Close a slot (False: it was closed already, and a late answer is not used);
        `here` is False on the loop. The last slot closed runs `then`; once every source is
        in, the work beside gets `grace_s` more."""
        with self._lock:
            if slot not in self._open:
                return False
            self._open.discard(slot)
            if outcome is None:
                self._beside = value
            else:
                self.outcomes[slot] = outcome
                self._sources_open -= 1
                breaker = self._breakers[slot]
                if outcome.status == "ok":
                    breaker.record_success()
                else:
                    breaker.record_failure()
            last = not self._open
            wait_beside = not last and self._sources_open == 0 and outcome is not None
        if last and here:
            self._run_then_here()
        elif last:
            self.settled.set_result(("run", None))
        elif wait_beside:
            if here:
                self._loop.call_soon_threadsafe(self._arm_grace)
            else:
                self._arm_grace()
        return True

    def finish(self) -> T:
        return self._then([self.outcomes[n] for n in self._names], self._beside)

    def _run_then_here(self) -> None:
        """Run `then` in this thread and hand its result (or error) to the loop."""
        try:
            result: tuple[str, object] | BaseException = ("done", self.finish())
        except BaseException as exc:  # raised where the caller awaits
            result = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            self._loop.call_soon_threadsafe(_deliver, self.settled, result)


def _deliver(future: asyncio.Future[tuple[str, object]], result: object) -> None:
    if future.done():  # the caller was cancelled
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)  # type: ignore[arg-type]


async def retrieve_then(
    route: Route,
    retrievers: Mapping[str, Retriever],
    breakers: Mapping[str, CircuitBreaker],
    executor: Executor,
    then: Callable[[list[SourceOutcome], B | None], T],
    beside: Callable[[], B] | None = None,
    grace_s: float = 0.05,
) -> T:
    """`then(every source's outcome in the route's order, what `beside` returned)`.

    Every source runs at once and is waited for until its own deadline (its timeout,
    counted from the start of all). `beside` runs with them; it may fail (None), and once
    every source is in it gets `grace_s` more, then counts as None. `then` runs in the
    thread that closes the last of them, or in a worker thread when a deadline does."""
    fan: _FanIn[B, T] = _FanIn(route, then, breakers, grace_s)
    running: list[tuple[SourceSpec, Retriever]] = []
    for s in route.sources:
        retriever = retrievers.get(s.name)
        if retriever is None:
            fan.outcomes[s.name] = SourceOutcome(
                s.name, "missing", (), 0.0, "source not configured"
            )
        elif not breakers[s.name].allow():
            fan.outcomes[s.name] = SourceOutcome(
                s.name, "open", (), 0.0, "circuit open after repeated failures"
            )
        else:
            running.append((s, retriever))
    if not running and beside is None:  # nothing runs: nothing to wait for
        return await asyncio.to_thread(fan.finish)
    fan.start_all(running, beside, executor)
    try:
        how, result = await fan.settled
    finally:
        for timer in fan.timers:
            timer.cancel()
    if how == "run":
        return await asyncio.to_thread(fan.finish)
    return result  # type: ignore[return-value]
