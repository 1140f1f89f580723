import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor

import pytest

from core.types import Route, ScoredId, SourceSpec
from fusion.breaker import CircuitBreaker
from fusion.retrieve import Retriever, SourceOutcome, retrieve_then
from fusion.rrf import weighted_rrf


def retrieve_all(
    route: Route,
    retrievers: Mapping[str, Retriever],
    breakers: Mapping[str, CircuitBreaker],
    pool: Executor,
) -> list[SourceOutcome]:
    """Every source's outcome, as `then` receives them."""
    return asyncio.run(retrieve_then(route, retrievers, breakers, pool, lambda out, _: out))


def _ids(*names: str) -> list[ScoredId]:
    """A ranking: scores fall with the place."""
    return [ScoredId(n, 1.0 / i) for i, n in enumerate(names, start=1)]


def test_weighted_rrf_prefers_heavier_source_and_agreement() -> None:
    fused = weighted_rrf(
        {"keyword": _ids("a", "b", "c"), "dense": _ids("c", "b", "a")},
        {"keyword": 1.0, "dense": 0.25},
        k=1.0,
    )
    assert fused[0].content_id == "a"
    assert fused[0].ranks == {"keyword": 1, "dense": 3}
    even = weighted_rrf({"x": _ids("a", "b"), "y": _ids("b", "a")}, {"x": 1, "y": 1}, k=60)
    assert abs(even[0].score - even[1].score) < 1e-12


def test_equal_scores_share_the_best_place() -> None:
    """A source that scores two hits the same cannot order them: the id tie-break of its
    list must not give one a better place in the fusion."""
    tied = [ScoredId("a", 2.0), ScoredId("b", 1.0), ScoredId("c", 1.0), ScoredId("d", 0.5)]
    fused = {f.content_id: f for f in weighted_rrf({"graph": tied}, {"graph": 1.0}, k=5.0)}
    assert [fused[n].ranks["graph"] for n in "abcd"] == [1, 2, 2, 4]
    assert fused["b"].score == fused["c"].score


def test_breaker_opens_and_half_opens() -> None:
    now = [0.0]
    b = CircuitBreaker(failures_to_open=2, cooldown_s=10, clock=lambda: now[0])
    b.record_failure()
    assert b.allow()
    b.record_failure()
    assert b.state == "open" and not b.allow()
    now[0] = 11
    assert b.state == "half-open" and b.allow()
    b.record_failure()  # the trial call failed: open again
    assert not b.allow()
    now[0] = 22
    b.record_success()
    assert b.state == "closed"


def test_retrieve_all_isolates_slow_and_failing_sources() -> None:
    def fast(k: int) -> Sequence[ScoredId]:
        return _ids("a", "b")[:k]

    def slow(k: int) -> Sequence[ScoredId]:
        time.sleep(1.0)
        return _ids("z")

    def broken(k: int) -> Sequence[ScoredId]:
        raise RuntimeError("connection refused")

    route = Route(
        strategy="hybrid",
        rule="t",
        sources=(
            SourceSpec("keyword", 1.0, 0.5, 5),
            SourceSpec("dense", 1.0, 0.1, 5),
            SourceSpec("graph", 1.0, 0.5, 5),
        ),
    )
    breakers = {n: CircuitBreaker(1, 60) for n in ("keyword", "dense", "graph")}
    pool = ThreadPoolExecutor(4)
    start = time.perf_counter()
    out = retrieve_all(route, {"keyword": fast, "dense": slow, "graph": broken}, breakers, pool)
    assert time.perf_counter() - start < 0.9  # did not wait for the slow source
    status = {o.name: o.status for o in out}
    assert status == {"keyword": "ok", "dense": "timeout", "graph": "error"}
    assert "connection refused" in next(o.error for o in out if o.name == "graph")
    # Breakers for the failed sources are now open: they are skipped without a call.
    out = retrieve_all(route, {"keyword": fast, "dense": slow, "graph": broken}, breakers, pool)
    pool.shutdown(wait=False)
    assert {o.name: o.status for o in out} == {"keyword": "ok", "dense": "open", "graph": "open"}


def test_a_source_timed_out_before_it_started_never_runs() -> None:
    ran: list[str] = []

    def busy(k: int) -> Sequence[ScoredId]:
        time.sleep(0.4)
        ran.append("keyword")
        return _ids("a")

    def queued(k: int) -> Sequence[ScoredId]:
        ran.append("dense")
        return _ids("b")

    route = Route(
        strategy="hybrid",
        rule="t",
        sources=(SourceSpec("keyword", 1.0, 1.0, 5), SourceSpec("dense", 1.0, 0.1, 5)),
    )
    breakers = {n: CircuitBreaker(3, 60) for n in ("keyword", "dense")}
    pool = ThreadPoolExecutor(1)  # one thread, busy with the first source
    out = retrieve_all(route, {"keyword": busy, "dense": queued}, breakers, pool)
    pool.shutdown(wait=True)
    assert [(o.name, o.status) for o in out] == [("keyword", "ok"), ("dense", "timeout")]
    assert ran == ["keyword"]  # the queued source was withdrawn, not run late


def _route(*specs: tuple[str, float]) -> Route:
    return Route(
        strategy="hybrid",
        rule="t",
        sources=tuple(SourceSpec(name, 1.0, timeout, 5) for name, timeout in specs),
    )


def _breakers() -> dict[str, CircuitBreaker]:
    return {n: CircuitBreaker(3, 60) for n in ("keyword", "dense", "graph")}


def test_what_follows_retrieval_runs_in_the_thread_of_the_last_source() -> None:
    def source(delay: float) -> Retriever:
        def run(k: int) -> Sequence[ScoredId]:
            time.sleep(delay)
            return _ids(threading.current_thread().name)

        return run

    def then(out: list[SourceOutcome], beside: str | None) -> tuple[str, str, list[str]]:
        names = [o.hits[0].content_id for o in out]
        return threading.current_thread().name, beside or "", names

    async def main() -> tuple[str, str, list[str]]:
        with ThreadPoolExecutor(4, thread_name_prefix="retrieve") as pool:
            return await retrieve_then(
                _route(("keyword", 1.0), ("dense", 1.0)),
                {"keyword": source(0.0), "dense": source(0.2)},
                _breakers(),
                pool,
                then,
                beside=lambda: "stats",
            )

    ran_in, beside, names = asyncio.run(main())
    assert ran_in == names[1]  # dense answered last: its thread ranked, no hand-over
    assert beside == "stats"


def test_a_deadline_that_closes_the_last_source_hands_the_rest_to_a_worker() -> None:
    def slow(k: int) -> Sequence[ScoredId]:
        time.sleep(0.5)
        return _ids("late")

    breakers = _breakers()

    async def main() -> tuple[str, str, list[SourceOutcome]]:
        loop_thread = threading.current_thread().name
        with ThreadPoolExecutor(2, thread_name_prefix="retrieve") as pool:
            got = await retrieve_then(
                _route(("keyword", 1.0), ("dense", 0.1)),
                {"keyword": lambda k: _ids("a"), "dense": slow},
                breakers,
                pool,
                lambda out, _: (threading.current_thread().name, out),
            )
        return loop_thread, *got

    loop_thread, ran_in, out = asyncio.run(main())
    assert ran_in != loop_thread and not ran_in.startswith("retrieve")
    assert [(o.name, o.status) for o in out] == [("keyword", "ok"), ("dense", "timeout")]
    assert out[1].ms == pytest.approx(100, abs=80)
    # The late answer was not used, and did not count as a success.
    assert breakers["dense"]._failures == 1


def test_work_beside_the_sources_may_fail_or_be_late_and_is_then_left_out() -> None:
    def late() -> str:
        time.sleep(1.0)
        return "late"

    def failing() -> str:
        raise RuntimeError("keyword store down")

    def run(beside: Callable[[], str]) -> tuple[str | None, float]:
        async def main() -> tuple[str | None, float]:
            pool = ThreadPoolExecutor(4)
            start = time.perf_counter()
            got = await retrieve_then(
                _route(("keyword", 1.0)),
                {"keyword": lambda k: _ids("a")},
                _breakers(),
                pool,
                lambda out, got: got,
                beside=beside,
                grace_s=0.05,
            )
            pool.shutdown(wait=False)
            return got, time.perf_counter() - start

        return asyncio.run(main())

    assert run(lambda: "stats")[0] == "stats"
    assert run(failing)[0] is None
    got, took = run(late)
    assert got is None and took < 0.9  # a moment after the sources, not a second


def test_an_error_after_retrieval_reaches_the_caller() -> None:
    def then(out: list[SourceOutcome], _: None) -> None:
        raise ValueError("rank failed")

    async def main() -> None:
        with ThreadPoolExecutor(2) as pool:
            await retrieve_then(
                _route(("keyword", 1.0)), {"keyword": lambda k: _ids("a")}, _breakers(), pool, then
            )

    with pytest.raises(ValueError, match="rank failed"):
        asyncio.run(main())


def test_no_source_to_run_still_ranks() -> None:
    breakers = _breakers()
    for _ in range(3):
        breakers["keyword"].record_failure()
    out = retrieve_all(
        _route(("keyword", 1.0), ("graph", 1.0)),
        {"keyword": lambda k: _ids("a")},
        breakers,
        ThreadPoolExecutor(1),
    )
    assert [o.status for o in out] == ["open", "missing"]


def test_a_caller_that_stops_waiting_leaves_nothing_behind() -> None:
    # A client that disconnects cancels its search; the sources still finish in their
    # threads, and the ranking's result must find the loop without an error.
    def slow(k: int) -> Sequence[ScoredId]:
        time.sleep(0.2)
        return _ids("a")

    errors: list[dict[str, object]] = []
    ranked: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: errors.append(ctx))
        with ThreadPoolExecutor(2) as pool:
            task = asyncio.ensure_future(
                retrieve_then(
                    _route(("keyword", 1.0)),
                    {"keyword": slow},
                    _breakers(),
                    pool,
                    lambda out, _: ranked.append(out[0].status),
                )
            )
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.4)  # the source answers, ranks, and hands over

    asyncio.run(main())
    assert ranked == ["ok"] and errors == []
