"""Backpressure: a bounded number of requests in flight per API process, and per-key
token-bucket rate limits shared by every process. An overloaded Ragline answers "busy"
(429 + Retry-After, in the API's JSON error shape) in microseconds instead of queueing
every caller for seconds.

Both are objects owned by one app instance (no module-level state).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Collection

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ragline.api.buckets import BucketStore, BucketsUnavailable
from ragline.api.buckets.process import ProcessBuckets
from ragline.api.errors import error_response

log = logging.getLogger("ragline.api")
# A store that stays down warns this often, not on every request.
_WARN_EVERY_S = 60.0
# After a failed take the shared store is left alone this long: a store that times out
# (up to 0.5 s) must not cost every limited request that much.
_RETRY_STORE_S = 5.0

# Probes and scrapes must answer while the API is saturated: that is when they matter.
EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class InFlight:
    """The requests this process is serving, and the refusal of one over `limit`. Shared
    by the middleware below, which counts and refuses requests that reach the application,
    and by the HTTP protocol (`ragline.api.server`), which finds it in the lifespan state
    under `IN_FLIGHT_STATE` and refuses there, before an ASGI task is made: the same rule
    and the same response, at under a quarter of the CPU it costs through the application
    on h11 (bench/RESULTS.md, session 41).

    Touched only on the event loop thread, so it needs no lock.
    """

    def __init__(
        self,
        limit: int,
        retry_after_s: int = 1,
        exempt: Collection[str] = EXEMPT_PATHS,
        on_refuse: Callable[[str], None] | None = None,
    ) -> None:
        self.limit = limit
        self.retry_after_s = max(1, retry_after_s)
        self.exempt = frozenset(exempt)
        self.on_refuse = on_refuse
        self.active = 0
        # One response for every refusal: it says nothing of the request.
        self.busy = error_response(
            429,
            f"server busy: {limit} requests already in flight in this process "
            f"(RAGLINE_API__MAX_IN_FLIGHT); retry after {self.retry_after_s} s",
            headers={"Retry-After": str(self.retry_after_s)},
        )

    def counts(self, path: str) -> bool:
        """Whether a request to `path` is bounded (probes and scrapes never are)."""
        return self.limit > 0 and path not in self.exempt

    def refusal(self, path: str) -> JSONResponse | None:
        """The response refusing a request to `path` now, counted as refused; None when it
        may be served."""
        if self.active < self.limit or not self.counts(path):
            return None
        if self.on_refuse is not None:
            self.on_refuse("in_flight")
        return self.busy


# Where the application's lifespan state holds its `InFlight` for the HTTP protocol.
IN_FLIGHT_STATE = "ragline.in_flight"


class InFlightLimit:
    """Pure ASGI middleware (no per-request task or body wrapping): counts requests being
    served by this process and refuses the one over the gate's limit before any work is
    done."""

    def __init__(self, app: ASGIApp, gate: InFlight) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gate = self.gate
        if scope["type"] != "http" or not gate.counts(scope["path"]):
            await self.app(scope, receive, send)
            return
        refusal = gate.refusal(scope["path"])
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        gate.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            gate.active -= 1


class RateLimiter:
    """Per-key token-bucket limits over a bucket store (`ragline.api.buckets`), shared by
    every process that serves the keys. While the shared store cannot be reached, a key is
    limited by this process's own bucket, the store is tried again every few seconds, and
    a warning says so (once a minute)."""

    def __init__(
        self, store: BucketStore | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._local = ProcessBuckets(clock)
        self._store: BucketStore = store or self._local
        self._clock = clock
        self._warned_at: float | None = None
        self._store_down_until = 0.0

    def wait_s(self, bucket: str, rate: float, burst: int) -> float:
        """Seconds the caller must wait (0 = admitted). `rate` 0 means unlimited; `burst`
        0 means two seconds' worth (at least one request)."""
        if rate <= 0:
            return 0.0
        depth = float(burst) if burst > 0 else max(1.0, 2.0 * rate)
        if self._clock() >= self._store_down_until:
            try:
                return self._store.take(bucket, rate, depth)
            except BucketsUnavailable as exc:
                now = self._clock()
                self._store_down_until = now + _RETRY_STORE_S
                if self._warned_at is None or now - self._warned_at >= _WARN_EVERY_S:
                    self._warned_at = now
                    log.warning("rate limits are per process until the store is back: %s", exc)
        return self._local.take(bucket, rate, depth)

    def close(self) -> None:
        self._store.close()


def retry_after(wait_s: float) -> str:
    """Retry-After takes whole seconds; never 0 for a refused request."""
    return str(max(1, math.ceil(wait_s)))
