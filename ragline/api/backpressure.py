"""Backpressure: a bounded number of requests in flight per API process, and per-key
token-bucket rate limits. An overloaded Ragline answers "busy" (429 + Retry-After, in the
API's JSON error shape) in microseconds instead of queueing every caller for seconds.

Both are objects owned by one app instance (no module-level state).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from ragline.api.errors import error_response

# Probes and scrapes must answer while the API is saturated: that is when they matter.
EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class InFlightLimit:
    """Pure ASGI middleware (no per-request task or body wrapping): counts requests being
    served by this process and refuses the one over `limit` before any work is done.

    The counter is touched only on the event loop thread, so it needs no lock.
    """

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        retry_after_s: int = 1,
        exempt: Collection[str] = EXEMPT_PATHS,
        on_refuse: Callable[[str], None] | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.retry_after_s = max(1, retry_after_s)
        self.exempt = frozenset(exempt)
        self.on_refuse = on_refuse
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.limit <= 0 or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit:
            if self.on_refuse is not None:
                self.on_refuse("in_flight")
            response = error_response(
                429,
                f"server busy: {self.limit} requests already in flight in this process "
                f"(RAGLINE_API__MAX_IN_FLIGHT); retry after {self.retry_after_s} s",
                headers={"Retry-After": str(self.retry_after_s)},
            )
            await response(scope, receive, send)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


@dataclass
class TokenBucket:
    """`rate` tokens per second, at most `burst` saved up; one token per request."""

    rate: float
    burst: float
    tokens: float
    stamp: float

    @classmethod
    def full(cls, rate: float, burst: int, now: float) -> TokenBucket:
        depth = float(burst) if burst > 0 else max(1.0, 2.0 * rate)
        return cls(rate=rate, burst=depth, tokens=depth, stamp=now)

    def take(self, now: float) -> float:
        """0 when the request may go; else the seconds until a token is there."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class RateLimiter:
    """Per-key token buckets (keys are identified by their position in the key ring).
    Handlers run on a thread pool, so the buckets are guarded by a lock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[int, TokenBucket] = {}

    def wait_s(self, key_id: int, rate: float, burst: int) -> float:
        """Seconds the caller must wait (0 = admitted). `rate` 0 means unlimited."""
        if rate <= 0:
            return 0.0
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key_id)
            if bucket is None:
                bucket = self._buckets[key_id] = TokenBucket.full(rate, burst, now)
            return bucket.take(now)


def retry_after(wait_s: float) -> str:
    """Retry-After takes whole seconds; never 0 for a refused request."""
    return str(max(1, math.ceil(wait_s)))
