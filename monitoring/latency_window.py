"""The newest retrieval latencies of this process, for the latency golden signal: a
bounded, thread-safe window (one per application, no module-level state)."""

from __future__ import annotations

import math
import threading
from collections import deque
from datetime import UTC, datetime


def _utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class LatencyWindow:
    def __init__(self, max_samples: int = 10_000) -> None:
        self._samples: deque[tuple[datetime, float]] = deque(maxlen=max(1, max_samples))
        self._lock = threading.Lock()

    def observe(self, ms: float, at: datetime | None = None) -> None:
        with self._lock:
            self._samples.append((at or _utcnow(), ms))

    def since(self, since: datetime) -> list[float]:
        """Latencies (ms) observed at or after `since` (naive UTC)."""
        with self._lock:
            return [ms for at, ms in self._samples if at >= since]


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile (the value at rank ceil(q*n)); `values` not empty."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered) - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]
