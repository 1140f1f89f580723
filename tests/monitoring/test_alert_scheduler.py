"""The scheduler on a short interval against a real store, posting transitions to a
webhook served by a stdlib HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
import time
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
