"""Run the alert rules on a schedule (APScheduler, one background thread) and act on
changes: log a firing or resolved alert, keep `ragline_alerts_firing` current, and POST
the change to a webhook. Nothing here raises into the scheduler: a broken store or an
unreachable webhook is logged, and the next run tries again."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

import httpx
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from monitoring.alerts import Alert, AlertEvaluator, AlertSource
from monitoring.metrics import Metrics

log = logging.getLogger("ragline.alerts")
_JOB_ID = "ragline-alerts"


def utcnow() -> datetime:
    """Naive UTC, the metadata store's convention."""
    return datetime.now(UTC).replace(tzinfo=None)


class AlertScheduler:
    def __init__(
        self,
        evaluator: AlertEvaluator,
        source: AlertSource,
        *,
        interval_s: float,
        metrics: Metrics | None = None,
        webhook_url: str = "",
        webhook_timeout_s: float = 5.0,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self._evaluator = evaluator
        self._source = source
        self._interval_s = interval_s
        self._metrics = metrics
        self._webhook_url = webhook_url
        self._webhook_timeout_s = webhook_timeout_s
        self._clock = clock
        self._firing: dict[tuple[str, str], Alert] = {}
        self._lock = threading.Lock()  # tick() may also be called directly (tests, CLI)
        self._scheduler = BackgroundScheduler(daemon=True, timezone=UTC)

    @property
    def firing(self) -> list[Alert]:
        with self._lock:
            return list(self._firing.values())

    def start(self) -> None:
        self._scheduler.add_job(
            self.tick,
            IntervalTrigger(seconds=self._interval_s, timezone=UTC),
            id=_JOB_ID,
            next_run_time=datetime.now(UTC),  # a first verdict at start, not one period later
            max_instances=1,  # a slow evaluation delays the next, never overlaps it
            coalesce=True,
            misfire_grace_time=None,
        )
        self._scheduler.start()

    def stop(self) -> None:
        # Wait for a running evaluation: the stores it reads are closed right after this.
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)

    def tick(self) -> list[Alert]:
        """One evaluation and its consequences; returns what fires. Never raises."""
        try:
            return self._tick()
        except Exception:
            log.exception("alert evaluation failed")
            return self.firing

    def _tick(self) -> list[Alert]:
        now = self._clock()
        current = {a.key: a for a in self._evaluator.evaluate(self._source, now)}
        with self._lock:
            started = [a for k, a in current.items() if k not in self._firing]
            resolved = [a for k, a in self._firing.items() if k not in current]
            self._firing = current
        for alert in started:
            log.warning("alert firing: [%s] %s", alert.severity, alert.message)
        for alert in resolved:
            log.info("alert resolved: %s", alert.message)
        self._set_gauge(current.values())
        if started or resolved:
            self._notify(now, started, resolved)
        return list(current.values())

    def _set_gauge(self, firing: Iterable[Alert]) -> None:
        if self._metrics is None:
            return
        counts = {(r.name, r.severity): 0 for r in self._evaluator.rules}
        for alert in firing:
            key = (alert.name, alert.severity)
            counts[key] = counts.get(key, 0) + 1
        for (name, severity), n in counts.items():
            self._metrics.alerts_firing.labels(alert=name, severity=severity).set(n)

    def _notify(self, now: datetime, started: list[Alert], resolved: list[Alert]) -> None:
        if not self._webhook_url:
            return
        at = now.replace(tzinfo=UTC).isoformat()
        body = {
            "source": "ragline",
            "alerts": [{**a.as_dict(), "status": "firing", "at": at} for a in started]
            + [{**a.as_dict(), "status": "resolved", "at": at} for a in resolved],
        }
        try:
            response = httpx.post(self._webhook_url, json=body, timeout=self._webhook_timeout_s)
            response.raise_for_status()
        except Exception as exc:  # the alert is already logged; the hook must not kill us
            log.warning("alert webhook %s failed: %s: %s", self._webhook_url,
                        type(exc).__name__, exc)
