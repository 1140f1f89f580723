"""Run the alert rules on a schedule (APScheduler, one background thread) and act on
changes: log a firing or recovered alert, run the rule's automatic action while it fires
and reverse it when it recovers, keep `ragline_alerts_firing` current, notify webhooks,
and write every step to the alert audit log. Nothing here raises into the scheduler: a
broken store, action or webhook is logged, and the next run tries again."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from indexing.protocols import AlertEventRecord
from monitoring.alerts import Alert, AlertEvaluator, AlertSource
from monitoring.metrics import Metrics
from monitoring.notify import Notifier, Transition

log = logging.getLogger("ragline.alerts")
_JOB_ID = "ragline-alerts"


def utcnow() -> datetime:
    """Naive UTC, the metadata store's convention."""
    return datetime.now(UTC).replace(tzinfo=None)


class AlertAction(Protocol):
    """What a rule's `action` does while it fires, and how it is undone on recovery.
    Both return a plain-text account of what was done, for the audit log and the hooks.
    `per_process`: it changes this process only (a switch the query path reads), so every
    process of `serve --workers N` applies it; otherwise (opening a job) only the process
    that leads the alerts does."""

    name: str
    per_process: bool

    def apply(self, alert: Alert) -> str: ...

    def revert(self, alert: Alert) -> str: ...


@dataclass(frozen=True, slots=True)
class ActiveAction:
    alert: str
    subject: str
    action: str
    since: datetime
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "alert": self.alert,
            "subject": self.subject,
            "action": self.action,
            "since": self.since.replace(tzinfo=UTC).isoformat(),
            "detail": self.detail,
        }


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
        notifier: Notifier | None = None,
        actions: Mapping[str, AlertAction] | None = None,
        record: Callable[[AlertEventRecord], None] | None = None,
        clock: Callable[[], datetime] = utcnow,
        leader: Callable[[], bool] | None = None,
        history: Callable[[], Sequence[AlertEventRecord]] | None = None,
    ) -> None:
        """`history`: the alert audit log, newest first. The first run takes up where the
        deployment left off: what was firing is not announced (nor notified) again, and an
        action the deployment already took (a job) is not taken again; a switch of this
        process's own is set again, as a new process starts without it."""
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self._evaluator = evaluator
        self._source = source
        self._interval_s = interval_s
        self._metrics = metrics
        self._notifier = notifier or Notifier(
            [(webhook_url, "generic")] if webhook_url else [],
            timeout_s=webhook_timeout_s,
            dedupe_s=0.0,
        )
        self._actions = dict(actions or {})
        self._record = record
        self._clock = clock
        # Whether this process speaks for the deployment (the audit log, the webhooks, the
        # jobs it opens): one of the processes of `serve --workers N`, asked every run so
        # another takes over when it is gone. Every process evaluates and flips its own
        # switches. None: always (one process).
        self._leader = leader
        self._leading = True
        self._history = history
        self._firing: dict[tuple[str, str], Alert] = {}
        self._active: dict[tuple[str, str], ActiveAction] = {}
        self._lock = threading.Lock()  # tick() may also be called directly (tests, CLI)
        self._tick_lock = threading.Lock()  # one evaluation at a time, scheduled or not
        self._scheduler = BackgroundScheduler(daemon=True, timezone=UTC)

    @property
    def firing(self) -> list[Alert]:
        with self._lock:
            return list(self._firing.values())

    @property
    def active_actions(self) -> list[ActiveAction]:
        with self._lock:
            return list(self._active.values())

    @property
    def rules(self) -> list[Any]:
        return list(self._evaluator.rules)

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
            with self._tick_lock:
                return self._tick()
        except Exception:
            log.exception("alert evaluation failed")
            return self.firing

    def _tick(self) -> list[Alert]:
        now = self._clock()
        self._leading = self._leads()
        if self._history is not None:
            history, self._history = self._history, None
            self._resume(history())
        current = {a.key: a for a in self._evaluator.evaluate(self._source, now)}
        with self._lock:
            started = [a for k, a in current.items() if k not in self._firing]
            resolved = [a for k, a in self._firing.items() if k not in current]
            self._firing = current
        transitions: list[Transition] = []
        for alert in started:
            log.warning("alert firing: [%s] %s", alert.severity, alert.message)
            self._event(now, alert, "firing", alert.message)
        # An action runs once per firing; one that failed is tried again on the next run.
        for key, alert in current.items():
            if alert.action and key not in self._active and self._runs_here(alert.action):
                done = self._apply(now, alert)
                if alert in started:
                    transitions.append(Transition(alert, "firing", done))
            elif alert in started:
                transitions.append(Transition(alert, "firing"))
        for alert in resolved:
            log.info("alert recovered: %s", alert.message)
            undone = self._revert(now, alert)
            self._event(now, alert, "recovered", f"recovered: {alert.message}")
            transitions.append(Transition(alert, "resolved", undone))
        self._set_gauges(current.values())
        if transitions and self._notifier and self._leading:
            for d in self._notifier.send(transitions, now):
                for name, subject, status in d.keys:
                    self._record_raw(
                        now,
                        name,
                        subject,
                        d.outcome,
                        f"{status} -> {d.format} webhook" + (f": {d.error}" if d.error else ""),
                        {"url": d.url, "format": d.format, "status": status},
                    )
        return list(current.values())

    def _resume(self, events: Sequence[AlertEventRecord]) -> None:
        """Seed what fires and the actions in effect from the audit log (newest first): a
        key whose last firing came after its last recovery still fires, and an action
        recorded since that firing, not reverted, is in effect (unless this process must
        set it again itself)."""
        seen: set[tuple[str, str]] = set()
        applied: dict[tuple[str, str], AlertEventRecord] = {}
        undone: set[tuple[str, str]] = set()
        firing: dict[tuple[str, str], Alert] = {}
        active: dict[tuple[str, str], ActiveAction] = {}
        for e in events:
            key = (e.alert, e.subject)
            if key in seen:
                continue
            if e.event == "action_reverted":
                undone.add(key)
            elif e.event == "action" and key not in undone:
                applied.setdefault(key, e)
            elif e.event in ("firing", "recovered"):
                seen.add(key)
                if e.event == "firing":
                    firing[key] = _alert_of(e)
                    taken = applied.get(key)
                    name = str(taken.detail.get("action", "")) if taken else ""
                    known = self._actions.get(name)
                    if taken is not None and known is not None and not known.per_process:
                        active[key] = ActiveAction(
                            e.alert, e.subject, name, taken.at, taken.message
                        )
        with self._lock:
            self._firing.update(firing)
            self._active.update(active)
        if firing:
            log.info("alerts still firing at start: %s", ", ".join(sorted(n for n, _ in firing)))

    def _leads(self) -> bool:
        if self._leader is None:
            return True
        try:
            return self._leader()
        except Exception:
            log.exception("could not tell whether this process leads the alerts")
            return False

    def _runs_here(self, action: str) -> bool:
        """Whether this process applies the action (every process for one of its own
        switches; the leader alone for the rest). An unknown action is reported by the
        leader."""
        known = self._actions.get(action)
        return self._leading or (known is not None and known.per_process)

    def _apply(self, now: datetime, alert: Alert) -> str:
        action = self._actions.get(alert.action)
        if action is None:
            self._event(now, alert, "action_failed", f"no action {alert.action!r} is wired here")
            return ""
        try:
            done = action.apply(alert)
        except Exception as exc:
            log.exception("alert action %s failed", alert.action)
            why = f"{alert.action}: {type(exc).__name__}: {exc}"
            self._event(now, alert, "action_failed", why)
            return ""
        with self._lock:
            self._active[alert.key] = ActiveAction(
                alert.name, alert.subject, alert.action, now, done
            )
        self._event(now, alert, "action", done, {"action": alert.action})
        return done

    def _revert(self, now: datetime, alert: Alert) -> str:
        with self._lock:
            active = self._active.pop(alert.key, None)
        if active is None:
            return ""
        action = self._actions[active.action]
        try:
            undone = action.revert(alert)
        except Exception as exc:
            log.exception("reverting alert action %s failed", active.action)
            why = f"{active.action}: {type(exc).__name__}: {exc}"
            self._event(now, alert, "revert_failed", why)
            return ""
        self._event(now, alert, "action_reverted", undone, {"action": active.action})
        return undone

    def _event(
        self,
        now: datetime,
        alert: Alert,
        event: str,
        message: str,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        if self._record is None or not self._leading:
            return
        try:
            self._record(
                AlertEventRecord(
                    alert.name,
                    event,
                    now,
                    alert.subject,
                    alert.severity,
                    alert.value,
                    alert.threshold,
                    message,
                    {**dict(alert.detail), **dict(detail or {})},
                )
            )
        except Exception:
            log.exception("could not write the alert event %s of %s", event, alert.name)

    def _record_raw(
        self,
        now: datetime,
        name: str,
        subject: str,
        event: str,
        message: str,
        detail: Mapping[str, Any],
    ) -> None:
        if self._record is None or not self._leading:
            return
        try:
            self._record(
                AlertEventRecord(name, event, now, subject, message=message, detail=dict(detail))
            )
        except Exception:
            log.exception("could not write the alert event %s of %s", event, name)

    def _set_gauges(self, firing: Iterable[Alert]) -> None:
        if self._metrics is None:
            return
        counts = {(r.name, r.severity): 0 for r in self._evaluator.rules}
        for alert in firing:
            key = (alert.name, alert.severity)
            counts[key] = counts.get(key, 0) + 1
        for (name, severity), n in counts.items():
            self._metrics.alerts_firing.labels(alert=name, severity=severity).set(n)
        active = {a.action for a in self.active_actions}
        for name in self._actions:
            self._metrics.actions_active.labels(action=name).set(int(name in active))


def _alert_of(firing: AlertEventRecord) -> Alert:
    """The alert a recorded firing was about, as far as the record tells."""
    return Alert(
        firing.alert,
        firing.severity,
        firing.value,
        firing.threshold if firing.threshold is not None else 0.0,
        firing.message,
        firing.subject,
        detail=dict(firing.detail),
    )
