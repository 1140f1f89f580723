"""The scheduler on a short interval against a real store, posting transitions to a
webhook served by a stdlib HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from alert_rows import add_outbox

from indexing.stores.sql_metadata import SqlMetadataStore
from monitoring.alert_scheduler import AlertScheduler
from monitoring.alert_source import StoreAlertSource
from monitoring.alerts import AlertEvaluator, AlertRule
from monitoring.metrics import Metrics

RULES = [
    AlertRule("outbox_failures", "outbox_failures", 0, "critical", min_attempts=3),
    AlertRule("failed_ingestion", "failed_jobs", 5),
]


class Hook:
    def __init__(self, status: int) -> None:
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.received.put(json.loads(body))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def next(self, timeout_s: float = 5.0) -> dict[str, Any]:
        return self.received.get(timeout=timeout_s)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    h = Hook(200)
    yield h
    h.close()


def _gauge(metrics: Metrics, alert: str, severity: str) -> float | None:
    return metrics.registry.get_sample_value(
        "ragline_alerts_firing", {"alert": alert, "severity": severity}
    )


def test_firing_then_resolved_reach_the_webhook_and_the_gauge(
    store: SqlMetadataStore, hook: Hook
) -> None:
    entry = add_outbox(store, "keyword", attempts=3, error="es: 503")
    metrics = Metrics()
    scheduler = AlertScheduler(
        AlertEvaluator(RULES),
        StoreAlertSource(store, ["dense", "keyword", "graph"]),
        interval_s=0.2,
        metrics=metrics,
        webhook_url=hook.url,
        webhook_timeout_s=2.0,
    )
    scheduler.start()
    try:
        fired = hook.next()
        assert fired["source"] == "ragline"
        ((alert),) = fired["alerts"]
        assert (alert["status"], alert["name"], alert["subject"], alert["value"]) == (
            "firing",
            "outbox_failures",
            "keyword",
            1,
        )
        assert _gauge(metrics, "outbox_failures", "critical") == 1
        assert _gauge(metrics, "failed_ingestion", "warning") == 0
        # Still firing on the next runs: no repeated notification.
        time.sleep(0.5)
        assert hook.received.empty()
        store.mark_done([entry])  # the store caught up
        (resolved,) = hook.next()["alerts"]
        assert (resolved["status"], resolved["name"]) == ("resolved", "outbox_failures")
        assert _gauge(metrics, "outbox_failures", "critical") == 0
        assert scheduler.firing == []
    finally:
        scheduler.stop()
    time.sleep(0.5)  # stopped: no more runs, so no more notifications
    add_outbox(store, "dense", attempts=4)
    time.sleep(0.5)
    assert hook.received.empty()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_broken_webhook_or_store_never_raises(
    store: SqlMetadataStore, caplog: pytest.LogCaptureFixture
) -> None:
    add_outbox(store, "dense", attempts=3)
    failing_hook = Hook(500)
    try:
        for url in (f"http://127.0.0.1:{_closed_port()}/", failing_hook.url):
            scheduler = AlertScheduler(
                AlertEvaluator(RULES),
                StoreAlertSource(store, ["dense"]),
                interval_s=60,
                webhook_url=url,
                webhook_timeout_s=1.0,
            )
            with caplog.at_level(logging.WARNING, logger="ragline.alerts"):
                assert [a.name for a in scheduler.tick()] == ["outbox_failures"]
            assert "alert webhook" in caplog.text
            caplog.clear()
        assert failing_hook.next(1.0)["alerts"][0]["status"] == "firing"
    finally:
        failing_hook.close()
    # The store is unreachable: the rules fire as unreadable, and nothing raises.
    down: Any = _Down()
    scheduler = AlertScheduler(AlertEvaluator(RULES), down, interval_s=60)
    fired = scheduler.tick()
    assert {a.name for a in fired} == {"outbox_failures", "failed_ingestion"}
    assert all(a.value is None and "unreachable" in a.message for a in fired)


class _Down:
    """A source whose every read fails, like a metadata store that is down."""

    def __getattr__(self, name: str) -> Any:
        raise ConnectionError("metadata store unreachable")


def test_interval_must_be_positive(store: SqlMetadataStore) -> None:
    with pytest.raises(ValueError):
        AlertScheduler(AlertEvaluator(RULES), StoreAlertSource(store, []), interval_s=0)


class _Action:
    """Counts what it was asked to do."""

    def __init__(self, name: str, per_process: bool) -> None:
        self.name, self.per_process = name, per_process
        self.applied = self.reverted = 0

    def apply(self, alert: Any) -> str:
        self.applied += 1
        return f"{self.name} applied"

    def revert(self, alert: Any) -> str:
        self.reverted += 1
        return f"{self.name} reverted"


# A rule whose action is a switch of each process's own, and one whose action is a job.
ACTING_RULES = [
    AlertRule("outbox_failures", "outbox_failures", 0, "critical", action="degrade_routing"),
    AlertRule("stuck", "outbox_failures", 0, "warning", action="incremental_sync"),
]


def _process(
    store: SqlMetadataStore, meta: SqlMetadataStore, hook: Hook, **kw: Any
) -> tuple[AlertScheduler, dict[str, _Action]]:
    """One serving process's scheduler over `meta`, recording to `store`."""
    actions = {
        "degrade_routing": _Action("degrade_routing", True),
        "incremental_sync": _Action("incremental_sync", False),
    }
    scheduler = AlertScheduler(
        AlertEvaluator(ACTING_RULES),
        StoreAlertSource(meta, ["keyword"]),
        interval_s=60,
        webhook_url=hook.url,
        actions=actions,
        record=store.record_alert_event,
        **kw,
    )
    return scheduler, actions


def test_of_several_serving_processes_one_speaks_for_the_deployment(
    store: SqlMetadataStore, hook: Hook
) -> None:
    """`serve --workers 2`: both processes evaluate and flip their own switches; the one
    holding the alerts role alone records the events, calls the webhook and opens jobs.
    When it is gone, the other takes over on its next run."""
    entry = add_outbox(store, "keyword", attempts=3, error="es: 503")
    procs = []
    for _ in range(2):
        meta = SqlMetadataStore(store.url)
        scheduler, actions = _process(
            store,
            meta,
            hook,
            leader=lambda meta=meta: meta.claim("alerts"),  # type: ignore[misc]
        )
        procs.append((meta, scheduler, actions))
    try:
        for _, scheduler, _ in procs:
            assert {a.name for a in scheduler.tick()} == {"outbox_failures", "stuck"}
        (lead_meta, _, lead), (_, second, other) = procs
        assert [a.applied for a in lead.values()] == [1, 1]
        assert [a.applied for a in other.values()] == [1, 0]  # its own switch only
        assert len(hook.next()["alerts"]) == 2
        time.sleep(0.3)
        assert hook.received.empty()  # one notification, not one per process
        events = Counter((e.alert, e.event) for e in store.alert_events())
        assert events == {  # once each, though two processes saw it fire
            (name, event): 1
            for name in ("outbox_failures", "stuck")
            for event in ("firing", "action", "notified")
        }
        lead_meta.close()  # the leading process ends
        second.tick()
        assert other["incremental_sync"].applied == 1  # the job, opened by the new leader
        store.mark_done([entry])
        second.tick()
        assert [a.reverted for a in other.values()] == [1, 1]
        recorded = {(e.alert, e.event) for e in store.alert_events()}
        assert ("outbox_failures", "recovered") in recorded
    finally:
        for meta, _, _ in procs:
            meta.close()


def test_a_restart_takes_up_where_the_deployment_left_off(
    store: SqlMetadataStore, hook: Hook
) -> None:
    """A new process (a restart of `serve`) while a rule fires: no second firing event or
    notification, no second job; its own switch is set again (a new process starts
    without it); the recovery afterwards is recorded and reverts both."""
    entry = add_outbox(store, "keyword", attempts=3, error="es: 503")

    def process() -> tuple[AlertScheduler, dict[str, _Action]]:
        return _process(store, store, hook, history=lambda: store.alert_events(limit=5000))

    first, first_actions = process()
    first.tick()
    assert [a.applied for a in first_actions.values()] == [1, 1]
    assert len(hook.next()["alerts"]) == 2
    before = Counter((e.alert, e.event) for e in store.alert_events())

    restarted, actions = process()  # the first one is gone; the rule still fires
    assert {a.name for a in restarted.tick()} == {"outbox_failures", "stuck"}
    assert actions["incremental_sync"].applied == 0  # the job was opened already
    assert actions["degrade_routing"].applied == 1  # this process's own switch, set again
    time.sleep(0.3)
    assert hook.received.empty()  # not notified again
    after = Counter((e.alert, e.event) for e in store.alert_events())
    assert after - before == Counter({("outbox_failures", "action"): 1})
    assert {a.action for a in restarted.active_actions} == {"degrade_routing", "incremental_sync"}

    store.mark_done([entry])
    restarted.tick()
    assert [a.reverted for a in actions.values()] == [1, 1]
    assert [a["status"] for a in hook.next()["alerts"]] == ["resolved", "resolved"]
    recorded = Counter((e.alert, e.event) for e in store.alert_events())
    assert recorded[("outbox_failures", "recovered")] == recorded[("stuck", "recovered")] == 1
