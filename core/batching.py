"""Work of concurrent callers done in shared calls, without a timer (leader and followers).

A caller that finds the worker idle does everything queued at that moment (its own items
included) in one call; callers that arrive while it runs wait, and the first of them does
the next batch. A lone caller is served at once, and a batch grows only with callers that
are already waiting. Used where one call for many costs much less than many calls: an
encoder that streams its weights once per call (`indexing/query_batch.py`), a database
that commits once per transaction (`indexing/stores/group_commit.py`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(slots=True)
class _Slot(Generic[T, R]):
    item: T
    result: R | None = None
    error: BaseException | None = None
    done: bool = False


class Batcher(Generic[T, R]):
    """`run(items)` returns one result per item, in order; when it raises, every caller
    of that batch gets the error (and later batches go on)."""

    def __init__(self, run: Callable[[list[T]], Iterable[R]], max_batch: int = 32) -> None:
        self._run = run
        self.max_batch = max(1, max_batch)
        self._pid = os.getpid()
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self.queue: list[_Slot[T, R]] = []
        self._busy = False
        self.calls = 0  # calls made, and the items they held (for tests and benches)
        self.items = 0

    def submit(self, item: T) -> R:
        return self.submit_many([item])[0]

    def submit_many(self, items: Sequence[T]) -> list[R]:
        """One result per item; the items may be split over consecutive calls."""
        if self._pid != os.getpid():  # a forked worker must not wait on its parent's lock
            self._pid = os.getpid()
            self._reset()
        slots: list[_Slot[T, R]] = [_Slot(item) for item in items]
        with self._cond:
            self.queue.extend(slots)
        for slot in slots:
            while not slot.done:
                self._run_next(slot)
        out = []
        for slot in slots:
            if slot.error is not None:
                raise slot.error
            out.append(slot.result)
        return out  # type: ignore[return-value]  # every slot is done without error

    def _run_next(self, slot: _Slot[T, R]) -> None:
        """Wait until `slot` is done or the worker is idle; when idle, run the queue's
        first `max_batch` items (FIFO, so a long queue reaches `slot` in turn)."""
        with self._cond:
            while not slot.done and self._busy:
                self._cond.wait()
            if slot.done:
                return
            batch, self.queue = self.queue[: self.max_batch], self.queue[self.max_batch :]
            self._busy = True
        try:
            results = self._run([s.item for s in batch])
            for s, r in zip(batch, results, strict=True):
                s.result = r
        except BaseException as exc:  # every caller of the failed call gets the error
            for s in batch:
                s.error = exc
        finally:
            with self._cond:
                for s in batch:
                    s.done = True
                self.calls += 1
                self.items += len(batch)
                self._busy = False
                self._cond.notify_all()
