"""The load bench's observer: sparse calls beside the load, each on a new connection."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from ragline.bench.observer import Observer, percentile


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 0.5) == 10.0
    assert percentile(values, 0.95) == 19.0
    assert percentile(values, 1.0) == 20.0
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) is None


class _Server(BaseHTTPRequestHandler):
    """Answers in turn: 200, 429, 200, 429, 500 ...; the refusals after 30 ms."""

    calls: ClassVar[list[tuple[str, dict[str, str], str]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        n = len(self.calls)
        self.calls.append((self.path, dict(self.headers), body))
        status = (200, 429, 200, 429, 500)[n % 5]
        if status == 429:
            time.sleep(0.03)
        payload = json.dumps({"n": n}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Server.calls = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_observer_times_served_and_refused_calls_apart(server: str) -> None:
    observer = Observer(
        f"{server}/v1/search",
        {"X-API-Key": "k"},
        ({"question": q} for q in ("a", "b")),
        interval_s=0.01,
    )
    observer.start()
    deadline = time.monotonic() + 10
    while len(_Server.calls) < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    observer.stop()
    got = observer.summary()
    calls = len(_Server.calls)
    assert calls >= 10
    assert got["calls"] == calls
    assert got["served"] + got["refused_429"] + got["errors"] == calls
    assert got["errors"] == calls // 5 and got["first_errors"][0] == "HTTP 500"
    assert got["refused_429"] >= 4 and got["served"] >= 4
    # Timed from before the connection to the last byte: a refusal took the 30 ms the
    # server spent on it.
    assert 30.0 <= got["refused_p50_ms"] <= got["refused_p95_ms"] <= got["refused_max_ms"]
    assert got["served_p50_ms"] < got["refused_p50_ms"]
    # The payloads in turn, with the headers given, to the URL given.
    assert [json.loads(b)["question"] for _, _, b in _Server.calls[:4]] == ["a", "b", "a", "b"]
    assert {p for p, _, _ in _Server.calls} == {"/v1/search"}
    assert all(h.get("X-API-Key") == "k" for _, h, _ in _Server.calls)


def test_an_unreachable_server_is_counted_as_errors() -> None:
    observer = Observer("http://127.0.0.1:9/v1/search", {}, [{"question": "q"}], interval_s=0.01)
    observer.start()
    time.sleep(0.1)
    observer.stop()
    got = observer.summary()
    assert got["calls"] == got["errors"] > 0 and got["served"] == got["refused_429"] == 0
    assert got["refused_p95_ms"] is None and "ConnectError" in got["first_errors"][0]


def test_each_call_comes_on_a_new_connection() -> None:
    # A keep-alive server would serve every call on one connection if the observer kept it.
    connections: list[int] = []

    class KeepAlive(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            connections.append(1)
            super().setup()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *_args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), KeepAlive)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1/search"
        observer = Observer(url, {}, [{"question": "q"}], interval_s=0.01)
        observer.start()
        time.sleep(0.3)
        observer.stop()
    finally:
        httpd.shutdown()
        httpd.server_close()
    got = observer.summary()
    assert got["served"] >= 5 and len(connections) == got["calls"]


def test_stop_is_safe_before_start_and_twice() -> None:
    observer = Observer("http://127.0.0.1:9/x", {}, [{"question": "q"}])
    observer.stop()  # never started: nothing to wait for
    observer.stop()
    assert observer.summary()["calls"] == 0
