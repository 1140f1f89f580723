"""A per-source circuit breaker: after N consecutive failures the source is skipped for a
cool-down, so one dead store cannot add its timeout to every request."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class CircuitBreaker:
    failures_to_open: int = 3
    cooldown_s: float = 30.0
    clock: Callable[[], float] = time.monotonic
    _failures: int = field(default=0, init=False)
    _opened_at: float | None = field(default=None, init=False)

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "half-open" if self.clock() - self._opened_at >= self.cooldown_s else "open"

    def allow(self) -> bool:
        """Closed: yes. Open: no. Half-open: yes, one trial call decides."""
        return self.state != "open"

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None

    def record_failure(self) -> None:
        self._failures += 1
        if self._failures >= self.failures_to_open or self.state == "half-open":
            self._opened_at = self.clock()
