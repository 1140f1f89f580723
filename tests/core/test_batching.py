"""Batcher: callers waiting behind a running call share the next; a caller's several items
come back in order even when they span calls; a failed call fails only its callers.
(QueryBatcher's tests, tests/indexing/test_query_batch.py, cover it through the encoder.)"""

from __future__ import annotations

import threading
import time

from core.batching import Batcher


class Gated:
    """Doubles each item; the first call blocks until released, so callers pile up."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.calls: list[list[int]] = []

    def __call__(self, items: list[int]) -> list[int]:
        self.calls.append(items)
        if len(self.calls) == 1:
            self.entered.set()
            assert self.gate.wait(5)
        if -1 in items:
            raise ValueError("bad item")
        return [2 * i for i in items]


def _queued(batcher: Batcher[int, int], n: int) -> None:
    deadline = time.monotonic() + 5
    while len(batcher.queue) < n:
        assert time.monotonic() < deadline, "callers did not queue"
        time.sleep(0.001)


def test_a_lone_caller_runs_its_items_in_one_call_at_once() -> None:
    run = Gated()
    run.gate.set()
    batcher = Batcher(run)
    assert batcher.submit_many([1, 2, 3]) == [2, 4, 6]
    assert batcher.submit(5) == 10
    assert run.calls == [[1, 2, 3], [5]]


def test_items_of_several_callers_share_calls_and_each_gets_its_own_back() -> None:
    run = Gated()
    batcher = Batcher(run, max_batch=4)
    out: dict[str, object] = {}

    def call(name: str, items: list[int]) -> None:
        try:
            out[name] = batcher.submit_many(items)
        except ValueError as exc:
            out[name] = exc

    first = threading.Thread(target=call, args=("first", [0]))
    first.start()
    assert run.entered.wait(5)
    a = threading.Thread(target=call, args=("a", [1, 2, 3]))
    a.start()
    _queued(batcher, 3)
    b = threading.Thread(target=call, args=("b", [4, 5, 6]))
    b.start()
    _queued(batcher, 6)
    c = threading.Thread(target=call, args=("c", [-1]))
    c.start()
    _queued(batcher, 7)
    run.gate.set()
    for t in (first, a, b, c):
        t.join(5)
    assert run.calls == [[0], [1, 2, 3, 4], [5, 6, -1]]  # FIFO, max_batch at a time
    assert out["first"] == [0]
    assert out["a"] == [2, 4, 6]
    assert isinstance(out["b"], ValueError)  # item 6 shared the failed call with -1
    assert isinstance(out["c"], ValueError)
    assert batcher.submit_many([7]) == [14]  # and it recovers
    assert (batcher.calls, batcher.items) == (4, 9)
