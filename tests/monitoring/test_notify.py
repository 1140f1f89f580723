"""Webhook message formats and deduplication, against a real HTTP receiver."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from monitoring.alerts import Alert
from monitoring.notify import Notifier, Transition, redacted, render

ALERT = Alert(
    "hit_rate",
    "warning",
    0.5,
    0.75,
    "hit rate 50% <b>x</b>",
    action="reindex_misses",
    fix="/v1/ops/reindex",
)
AT = datetime(2026, 12, 1, 3, 0, 0)


@pytest.fixture
def receiver() -> Iterator[tuple[str, queue.Queue[tuple[str, Any]]]]:
    got: queue.Queue[tuple[str, Any]] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.put((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            body = (
                b'{"errcode": 93000, "errmsg": "invalid webhook url"}'
                if "bad" in self.path
                else b'{"errcode": 0}'
            )
            self.send_response(500 if "boom" in self.path else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", got
    server.shutdown()
    server.server_close()


def test_formats_are_plain_text_with_the_fix_link() -> None:
    t = [Transition(ALERT, "firing", "opened 1 reindex job(s)")]
    base = "https://ops.example.com/"
    assert render("wecom", t, base, AT)["msgtype"] == "text"
    for fmt, text in (
        ("wecom", render("wecom", t, base, AT)["text"]["content"]),
        ("feishu", render("feishu", t, base, AT)["content"]["text"]),
        ("slack", render("slack", t, base, AT)["text"]),
    ):
        assert "[FIRING][warning] hit_rate" in text, fmt
        assert "Fix: https://ops.example.com/v1/ops/reindex" in text
        assert "Action: opened 1 reindex job(s)" in text
    generic = render("generic", t, base, AT)["alerts"][0]
    assert generic["fix_url"] == "https://ops.example.com/v1/ops/reindex"
    with pytest.raises(ValueError):
        render("teams", t, base, AT)


def test_same_transition_is_sent_once_per_dedupe_window(
    receiver: tuple[str, queue.Queue[tuple[str, Any]]],
) -> None:
    url, got = receiver
    notifier = Notifier([(url + "/slack", "slack"), (url + "/bad", "wecom")], dedupe_s=60)
    first = notifier.send([Transition(ALERT, "firing")], AT)
    assert [d.outcome for d in first] == ["notified", "notify_failed"]
    assert "93000" in first[1].error  # WeCom's error code in a 200 reply is a failure
    assert got.qsize() == 2
    # Flapping within the window: the slack hook is not sent again; the failed one retries.
    again = notifier.send([Transition(ALERT, "firing")], AT + timedelta(seconds=30))
    assert [d.outcome for d in again] == ["notify_suppressed", "notify_failed"]
    later = notifier.send([Transition(ALERT, "firing")], AT + timedelta(seconds=61))
    assert later[0].outcome == "notified"
    resolved = notifier.send([Transition(ALERT, "resolved")], AT + timedelta(seconds=62))
    assert resolved[0].outcome == "notified"  # a different transition is not a duplicate


def test_a_failed_webhook_is_reported_without_its_address(
    receiver: tuple[str, queue.Queue[tuple[str, Any]]],
) -> None:
    """A chat webhook's URL is its credential; the failure (audited, shown in /v1/alerts)
    names only its host."""
    url, _ = receiver
    hook = url + "/boom/T000/B000/secretWEBHOOKtoken"
    (delivery,) = Notifier([(hook, "slack")], dedupe_s=60).send([Transition(ALERT, "firing")], AT)
    assert delivery.outcome == "notify_failed"
    assert "500" in delivery.error and url in delivery.error
    assert "secretWEBHOOKtoken" not in delivery.error
    assert redacted(f"for url '{hook}' failed") == f"for url '{url}/…' failed"
