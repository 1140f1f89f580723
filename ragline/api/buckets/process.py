"""Token buckets in this process's memory: the fallback while a shared store is down, and
the store of a key ring that no server shares (tests, one-shot tools)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ragline.api.buckets import refill_and_take


class ProcessBuckets:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()  # handlers may run on a thread pool
        self._state: dict[str, tuple[float, float]] = {}

    def take(self, bucket: str, rate: float, burst: float) -> float:
        now = self._clock()
        with self._lock:
            tokens, stamp = self._state.get(bucket, (burst, now))
            tokens, wait = refill_and_take(tokens, stamp, now, rate, burst)
            self._state[bucket] = (tokens, now)
        return wait

    def close(self) -> None:
        pass
