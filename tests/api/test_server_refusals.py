"""Requests over the in-flight bound are refused by the HTTP protocol itself (httptools),
with the application's gate and response, before uvicorn makes a task for them; h11 leaves
them to the middleware. Either way the caller gets the same 429, on a connection that
stays usable, and never ahead of a response still under way on it."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from core.settings import ApiSettings
from ragline.api.backpressure import IN_FLIGHT_STATE, InFlight, InFlightLimit
from ragline.api.server import uvicorn_options
from tests.served import serving

BODY_TIMEOUT_S = 1.0


@dataclass
class Served:
    port: int
    protocol: str
    gate: InFlight
    release: threading.Event
    refused: list[str] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # paths that reached the application


def _app(served: Served) -> ASGIApp:
    async def search(request: Request) -> JSONResponse:
        body = await request.body()
        if request.query_params.get("hold"):
            while not served.release.is_set():
                await asyncio.sleep(0.01)
        return JSONResponse({"read": len(body)})

    async def health(_request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[dict[str, Any]]:
        yield {IN_FLIGHT_STATE: served.gate}

    inner = Starlette(
        routes=[Route("/v1/search", search, methods=["GET", "POST"]), Route("/healthz", health)],
        lifespan=lifespan,
    )
    limited = InFlightLimit(inner, served.gate)

    async def recorder(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            served.seen.append(scope["path"])
        await limited(scope, receive, send)

    return recorder


@pytest.fixture(scope="module", params=["httptools", "h11"])
def server(request: pytest.FixtureRequest) -> Iterator[Served]:
    refused: list[str] = []
    gate = InFlight(1, retry_after_s=3, on_refuse=refused.append)
    served = Served(0, request.param, gate, threading.Event(), refused)
    api = ApiSettings(http=request.param, body_timeout_s=BODY_TIMEOUT_S)
    with serving(_app(served), **uvicorn_options(api)) as (srv, _):
        served.port = srv.config.port
        yield served


@pytest.fixture
def saturated(server: Served) -> Iterator[Served]:
    """The gate at its bound, as if one request were being served."""
    server.gate.active = server.gate.limit
    server.refused.clear()
    server.seen.clear()
    server.release.clear()
    yield server
    server.gate.active = 0


def _responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Split a stream of HTTP/1.1 responses with Content-Length bodies."""
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        size = int(headers["content-length"])
        if len(rest) < size:
            raise ValueError("a body cut short")
        out.append((int(lines[0].split()[1]), headers, rest[:size]))
        data = rest[size:]
    return out


def _read(
    sock: socket.socket, count: int, wait_s: float = 5.0
) -> list[tuple[int, dict[str, str], bytes]]:
    sock.settimeout(wait_s)
    data = b""
    while not _complete(data, count):
        block = sock.recv(65536)
        if not block:
            break
        data += block
    return _responses(data)


def _complete(data: bytes, count: int) -> bool:
    try:
        return len(_responses(data)) >= count
    except (ValueError, KeyError, IndexError):
        return False


def _post(path: str = "/v1/search", body: bytes = b'{"question": "x"}', extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    ).encode() + body


def _settled(gate: InFlight) -> None:
    """Wait for the served requests to leave the gate: a request is counted out after
    its response is sent, so after the caller has read it."""
    deadline = time.monotonic() + 5
    while gate.active:
        assert time.monotonic() < deadline, gate.active
        time.sleep(0.01)


def _connect(served: Served) -> socket.socket:
    return socket.create_connection(("127.0.0.1", served.port), timeout=5)


def test_a_refusal_is_the_applications_429_and_httptools_answers_it_alone(
    saturated: Served,
) -> None:
    with _connect(saturated) as sock:
        sock.sendall(_post())
        [(status, headers, body)] = _read(sock, 1)
    assert status == 429
    assert headers["content-type"] == "application/json"
    assert headers["retry-after"] == "3" and "date" in headers
    assert json.loads(body) == json.loads(saturated.gate.busy.body)
    assert saturated.refused == ["in_flight"]
    # httptools refuses before the application is called; h11 through the middleware.
    assert saturated.seen == ([] if saturated.protocol == "httptools" else ["/v1/search"])


def test_a_kept_alive_connection_goes_on_after_refusals(saturated: Served) -> None:
    with _connect(saturated) as sock:
        for _ in range(3):
            sock.sendall(_post())
            assert [r[0] for r in _read(sock, 1)] == [429]
        whole = _post(body=b'{"question": "split body"}')  # the body in two pieces
        sock.sendall(whole[:-5])
        time.sleep(0.05)
        sock.sendall(whole[-5:])
        assert [r[0] for r in _read(sock, 1)] == [429]
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # probes are never refused
        assert [r[0] for r in _read(sock, 1)] == [200]
        saturated.gate.active = 0
        sock.sendall(_post())
        [(status, _, body)] = _read(sock, 1)
    _settled(saturated.gate)
    assert status == 200 and json.loads(body) == {"read": len(b'{"question": "x"}')}
    assert len(saturated.refused) == 4


def test_a_refused_head_request_gets_no_body(saturated: Served) -> None:
    """A response to HEAD carries its headers only; a body would be read as the start of
    the next response on the connection."""
    with _connect(saturated) as sock:
        sock.sendall(b"HEAD /v1/search HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        data = b""
        while data.count(b"HTTP/1.1 ") < 2 or not data.endswith(b'{"status":"ok"}'):
            data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 429") and b"content-length:" in head.lower()
    assert rest.startswith(b"HTTP/1.1 200"), rest[:80]


def test_pipelined_refusals_are_answered_in_order(saturated: Served) -> None:
    with _connect(saturated) as sock:
        sock.sendall(
            _post()
            + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
            + b"GET /v1/search HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        statuses = [r[0] for r in _read(sock, 3)]
    assert statuses == [429, 200, 429]


def test_a_refusal_never_overtakes_a_response_under_way(server: Served) -> None:
    """The first request is served and holds the only place; the second, pipelined behind
    it, must not be answered first. It waits its turn and, the place free by then, is
    served too."""
    server.release.clear()
    server.gate.active = 0
    with _connect(server) as sock:
        sock.sendall(_post("/v1/search?hold=1"))
        deadline = time.monotonic() + 5
        while server.gate.active < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        sock.sendall(_post())  # arrives with the gate at its bound
        time.sleep(0.1)
        sock.settimeout(0.2)
        with pytest.raises(TimeoutError):
            sock.recv(65536)  # nothing may come before the first response
        server.release.set()
        statuses = [r[0] for r in _read(sock, 2)]
    _settled(server.gate)
    assert statuses == [200, 200]


def test_a_percent_encoded_probe_is_left_to_the_application(saturated: Served) -> None:
    with _connect(saturated) as sock:
        sock.sendall(b"GET /health%7A HTTP/1.1\r\nHost: x\r\n\r\n")
        assert [r[0] for r in _read(sock, 1)] == [200]
    assert saturated.refused == []


def test_connection_close_is_honoured(saturated: Served) -> None:
    with _connect(saturated) as sock:
        sock.sendall(_post(extra="Connection: close\r\n"))
        data = b""
        while block := sock.recv(65536):
            data += block
    [(status, headers, _)] = _responses(data)
    assert status == 429 and headers["connection"] == "close"


def test_a_refused_body_that_stops_arriving_closes_the_connection(saturated: Served) -> None:
    started = time.monotonic()
    with _connect(saturated) as sock:
        sock.sendall(_post(body=b'{"question": "never ends"}')[:-8])
        sock.settimeout(BODY_TIMEOUT_S + 5)
        data = b""
        while block := sock.recv(65536):
            data += block
    assert [r[0] for r in _responses(data)] == [429]
    assert time.monotonic() - started < BODY_TIMEOUT_S + 4
