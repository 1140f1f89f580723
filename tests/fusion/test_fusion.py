import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from core.types import Route, ScoredId, SourceSpec
from fusion.breaker import CircuitBreaker
from fusion.retrieve import retrieve_all
from fusion.rrf import weighted_rrf


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
