"""One more agent beside the load: what a caller that is not the load generator sees.

Locust runs every simulated agent in one process. On a machine the server saturates, that
process is itself always busy, so the operating system runs it late and its timings grow
with its own backlog: in one 200-agent run Locust reported refusals at p95 410 ms, while
the server wrote them 29 ms (p95) after their first byte and curl, calling at the same
time on fresh connections, got them within 41 ms. The observer is that curl: sparse calls,
one at a time, each on a new connection, from the bench process (idle meanwhile), timed
from before the connection to the last byte. Both views are reported.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from monitoring.latency_window import quantile


def percentile(values: list[float], share: float) -> float | None:
    """The value `share` (0-1) of the way up the sorted values (nearest rank, as the
    latency alerts compute it), None without values."""
    return quantile(values, share) if values else None


class Observer:
    """Calls `url` with each payload in turn, every `interval_s`, from a thread, between
    `start` and `stop`; `summary()` gives the served and refused (429) latencies."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        payloads: Iterable[dict[str, Any]],
        interval_s: float = 0.2,
        timeout_s: float = 60.0,
    ) -> None:
        self._url = url
        self._headers = dict(headers)
        self._payloads = itertools.cycle(list(payloads))
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load-observer", daemon=True)
        self.served_ms: list[float] = []
        self.refused_ms: list[float] = []
        self.errors: list[str] = []

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ends the calls (waiting for the one under way); safe to call again, or before
        `start`."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        # One client, made before the first call (making one costs milliseconds), that
        # keeps no connection: each call connects anew, as a newly arriving agent.
        limits = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(timeout=self._timeout_s, limits=limits) as client:
            while not self._stop.is_set():
                started = time.perf_counter()
                self._call(client, next(self._payloads))
                self._stop.wait(max(0.0, self._interval_s - (time.perf_counter() - started)))

    def _call(self, client: httpx.Client, payload: dict[str, Any]) -> None:
        t0 = time.perf_counter()
        try:
            r = client.post(self._url, json=payload, headers=self._headers)
        except httpx.HTTPError as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return
        ms = (time.perf_counter() - t0) * 1000
        if r.status_code == 200:
            self.served_ms.append(ms)
        elif r.status_code == 429:
            self.refused_ms.append(ms)
        else:
            self.errors.append(f"HTTP {r.status_code}")

    def summary(self) -> dict[str, Any]:
        def ms(values: list[float], share: float) -> float | None:
            value = percentile(values, share)
            return None if value is None else round(value, 1)

        return {
            "calls": len(self.served_ms) + len(self.refused_ms) + len(self.errors),
            "served": len(self.served_ms),
            "refused_429": len(self.refused_ms),
            "errors": len(self.errors),
            "served_p50_ms": ms(self.served_ms, 0.5),
            "served_p95_ms": ms(self.served_ms, 0.95),
            "refused_p50_ms": ms(self.refused_ms, 0.5),
            "refused_p95_ms": ms(self.refused_ms, 0.95),
            "refused_max_ms": ms(self.refused_ms, 1.0),
            "first_errors": self.errors[:3],
        }
