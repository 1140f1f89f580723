"""The HTTP/1.1 server layer under the API: uvicorn's protocols with the errors that
happen before the application sees a request answered in the API's JSON error shape, and
with read timeouts uvicorn does not have.

- Request headers larger than `max_header_kb`: 431 JSON instead of "400 text/plain".
- Any other malformed request (bad request line, bad header syntax, bad framing): 400 JSON.
- Headers that do not arrive complete within `header_timeout_s` (slowloris), or a body
  that stops arriving for `body_timeout_s` (e.g. a Content-Length larger than what is
  sent): 408 JSON, and the connection is closed, instead of waiting forever.

Two parsers carry the same rules (`RAGLINE_API__HTTP`): httptools (llhttp, in C; the
default) and h11 (pure Python). A request refused for backpressure costs
the server about half the CPU with httptools (bench/RESULTS.md, session 41), which is what
a refusal storm is made of.

`serve()` runs the app with this protocol; `ragline serve` calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http
import json
import socket
from abc import abstractmethod
from typing import Any

import h11
import httptools
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from core.settings import ApiSettings, load_settings
from ragline.api.backpressure import IN_FLIGHT_STATE


def _error_response(status: int, kind: str, message: str) -> bytes:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class _ReadLimits(asyncio.Protocol):
    """The rules both protocols share: JSON errors, and the header and body read timers.
    Configured through class attributes: `protocol_class(api)` makes a subclass. Each
    protocol says when it is waiting for a request's headers (`_awaiting_headers`).
    Listed first among a protocol's bases, so its connection hooks wrap uvicorn's."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 15.0
    max_header_bytes: int = 32 * 1024

    # Set by uvicorn's protocol classes.
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any
    flow: Any
    _read_timer: asyncio.TimerHandle | None = None

    @abstractmethod
    def _awaiting_headers(self) -> bool:
        """Whether the connection waits for a request's headers (each protocol knows)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        _no_delay(transport)
        # A connection that sends nothing at all is also a request whose headers are late.
        self._arm(self.header_timeout_s, self._headers_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_read_timer()
        super().connection_lost(exc)

    def _send_error(self, status: int, kind: str, message: str) -> None:
        """Answer in the JSON error shape and close, unless a response is already under
        way (then only close: its status line has gone)."""
        self._cancel_read_timer()
        cycle = self.cycle
        if cycle is None or not cycle.response_started or cycle.response_complete:
            self.transport.write(_error_response(status, kind, message))
        self.transport.close()

    def _bad_request(self, too_large: bool) -> None:
        if too_large:
            self._send_error(
                431,
                "request_header_fields_too_large",
                f"request headers are larger than {self.max_header_bytes} bytes "
                "(RAGLINE_API__MAX_HEADER_KB)",
            )
        else:
            self._send_error(400, "bad_request", "malformed HTTP request")

    def _cancel_read_timer(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _arm(self, seconds: float, on_timeout: Any) -> None:
        self._cancel_read_timer()
        if seconds > 0:
            self._read_timer = self.loop.call_later(seconds, on_timeout)

    def _headers_timed_out(self) -> None:
        self._read_timer = None
        if not self.transport.is_closing() and self._awaiting_headers():
            self._send_error(
                408,
                "request_timeout",
                f"request headers not received within {self.header_timeout_s:g}s "
                "(RAGLINE_API__HEADER_TIMEOUT_S)",
            )

    def _body_timed_out(self) -> None:
        self._read_timer = None
        cycle = self.cycle
        if self.transport.is_closing() or cycle is None or not cycle.more_body:
            return
        if self.flow.read_paused:  # the application is not reading yet: not the client's fault
            self._arm(self.body_timeout_s, self._body_timed_out)
            return
        started = cycle.response_started
        # The application's receive() returns http.disconnect; its response is dropped.
        cycle.disconnected = True
        cycle.message_event.set()
        if started:
            self.transport.close()
            return
        self._send_error(
            408,
            "request_timeout",
            f"request body stopped arriving for {self.body_timeout_s:g}s before "
            "Content-Length bytes were received (RAGLINE_API__BODY_TIMEOUT_S)",
        )


class JsonErrorsH11Protocol(_ReadLimits, H11Protocol):
    """h11 with JSON errors and read timeouts. h11 buffers at most `max_header_bytes`
    while waiting for the end of the headers (`h11_max_incomplete_event_size`); headers
    that arrive complete are measured here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer = None

    def _awaiting_headers(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def send_400_response(self, msg: str) -> None:
        self._bad_request(len(self.conn.trailing_data[0]) > self.max_header_bytes)

    def _headers_over_limit(self, data: bytes) -> bool:
        """Whether the next request's headers, complete in what has arrived, are larger
        than the limit: h11 itself limits only headers still incomplete."""
        if self.conn.their_state is not h11.IDLE:
            return False
        buffered = self.conn.trailing_data[0]
        if len(buffered) + len(data) <= self.max_header_bytes:
            return False
        end = (bytes(buffered) + data).find(b"\r\n\r\n")
        return end > self.max_header_bytes

    def data_received(self, data: bytes) -> None:
        if self._headers_over_limit(data):
            self._bad_request(True)
            return
        super().data_received(data)
        if self.transport.is_closing():
            self._cancel_read_timer()
            return
        cycle = self.cycle
        # Also when answered before its body arrived (a refusal): a body that stops then
        # closes the connection instead of holding it until keep-alive runs out.
        reading_body = (
            cycle is not None and cycle.more_body and self.conn.their_state is h11.SEND_BODY
        )
        if reading_body:
            self._arm(self.body_timeout_s, self._body_timed_out)  # restarted per chunk
        elif self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            if self._read_timer is None:  # from the first byte of the headers on
                self._arm(self.header_timeout_s, self._headers_timed_out)
        elif self.conn.their_state is h11.IDLE and self._read_timer is not None:
            pass  # still waiting for the first byte: the connection's timer runs on
        else:
            self._cancel_read_timer()

    def on_response_complete(self) -> None:
        if self.conn.their_state is not h11.SEND_BODY:  # else the body timer runs on
            self._cancel_read_timer()
        super().on_response_complete()


class _HeadersTooLarge(Exception):
    """Raised in the parser's callback; httptools turns it into a parser error."""


class JsonErrorsHttpToolsProtocol(_ReadLimits, HttpToolsProtocol):
    """httptools with JSON errors and read timeouts. llhttp has no limit on header
    size: bytes of headers not yet complete are counted as they arrive, and complete
    headers are measured before the application is called."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer = None
        self._in_headers = False  # a message has begun; its headers are not complete
        self._in_body = False  # its headers are complete; its body is not
        self._header_bytes = 0
        self._too_large = False
        self._refused = False  # the message being read was refused at once

    def _awaiting_headers(self) -> bool:
        return self._in_headers or self.cycle is None

    def send_400_response(self, msg: str) -> None:
        self._bad_request(self._too_large or self._header_bytes > self.max_header_bytes)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            self._cancel_read_timer()
        elif self._in_headers:
            self._header_bytes += len(data)
            if self._header_bytes > self.max_header_bytes:
                self._bad_request(True)
            elif self._read_timer is None:  # from the first byte of the headers on
                self._arm(self.header_timeout_s, self._headers_timed_out)
        elif self._in_body:
            self._arm(self.body_timeout_s, self._body_timed_out)  # restarted per chunk
        else:
            self._cancel_read_timer()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_headers = True
        self._header_bytes = 0

    def on_headers_complete(self) -> None:
        self._in_headers = False
        size = len(self.url) + sum(len(n) + len(v) + 4 for n, v in self.headers)
        if size > self.max_header_bytes:
            self._too_large = True
            raise _HeadersTooLarge
        self._in_body = True
        if not self._refused_at_once():
            super().on_headers_complete()

    def _refused_at_once(self) -> bool:
        """Refuse a request over the in-flight bound here, with the application's own
        gate and response (`ragline.api.backpressure.InFlight`, from the lifespan state),
        before uvicorn makes a task, a scope and a response cycle for it: ~50 us of server
        CPU with the real application, against ~225 us through it on h11
        (bench/RESULTS.md, session 41). Only where the answer cannot overtake another: no
        response under way on this connection."""
        gate = self.app_state.get(IN_FLIGHT_STATE)
        if gate is None or gate.active < gate.limit or self.pipeline:
            return False
        if self.cycle is not None and not self.cycle.response_complete:
            return False
        if self.parser.should_upgrade():
            return False
        raw_path = httptools.parse_url(self.url).path
        if b"%" in raw_path:  # the application decodes it: let it judge
            return False
        refusal = gate.refusal(self.root_path + raw_path.decode("ascii"))
        if refusal is None:
            return False
        head = [STATUS_LINE[refusal.status_code]]
        for name, value in [*self.server_state.default_headers, *refusal.raw_headers]:
            head += [name, b": ", value, b"\r\n"]
        keep_alive = self.parser.get_http_version() == "1.1" and self.parser.should_keep_alive()
        if not keep_alive:
            head.append(b"connection: close\r\n")
        body = b"" if self.parser.get_method() == b"HEAD" else refusal.body
        self.transport.write(b"".join([*head, b"\r\n", body]))
        if not keep_alive:
            self.transport.close()
        self._refused = True  # its body, if any, is read and dropped
        return True

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self._in_body = False
        if self._refused:
            self._refused = False
            self.on_response_complete()  # keep-alive timer, the next pipelined request
        else:
            super().on_message_complete()

    def _body_timed_out(self) -> None:
        if self._refused:  # answered already: only its body stopped arriving
            self._read_timer = None
            self.transport.close()
        else:
            super()._body_timed_out()

    def on_response_complete(self) -> None:
        if not self._in_body:  # answered before its body came: the body timer runs on
            self._cancel_read_timer()
        super().on_response_complete()


def _no_delay(transport: asyncio.BaseTransport) -> None:
    """Send small writes at once (TCP_NODELAY). asyncio sets it only on sockets whose
    `proto` says TCP, and the listening socket `serve --workers N` hands its worker
    processes comes back with proto 0: without this, a response written as headers then
    body waited for the client's delayed ACK (~40 ms per request, measured)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


_PROTOCOLS: dict[str, type[_ReadLimits]] = {
    "httptools": JsonErrorsHttpToolsProtocol,
    "h11": JsonErrorsH11Protocol,
}


def protocol_class(api: ApiSettings) -> type[_ReadLimits]:
    return type(
        "Ragline" + _PROTOCOLS[api.http].__name__.removeprefix("JsonErrors"),
        (_PROTOCOLS[api.http],),
        {
            "header_timeout_s": api.header_timeout_s,
            "body_timeout_s": api.body_timeout_s,
            "max_header_bytes": int(api.max_header_kb * 1024),
        },
    )


@functools.cache
def _env_api() -> ApiSettings:
    return load_settings().api


def _limits_from_env(protocol: _ReadLimits) -> None:
    """The limits of `ragline serve --workers N`: uvicorn spawns the worker processes and
    hands them its configuration by pickling, which a class made at run time cannot
    survive. Each process reads the same limits from its environment instead
    (RAGLINE_API__*, and ragline.toml), once."""
    api = _env_api()
    protocol.header_timeout_s = api.header_timeout_s
    protocol.body_timeout_s = api.body_timeout_s
    protocol.max_header_bytes = int(api.max_header_kb * 1024)


class EnvH11Protocol(JsonErrorsH11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _limits_from_env(self)
        super().__init__(*args, **kwargs)


class EnvHttpToolsProtocol(JsonErrorsHttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _limits_from_env(self)
        super().__init__(*args, **kwargs)


def uvicorn_options(api: ApiSettings, workers: int = 1) -> dict[str, Any]:
    """Keyword arguments for uvicorn.run / uvicorn.Config."""
    by_name = "ragline.api.server:Env" + _PROTOCOLS[api.http].__name__.removeprefix("JsonErrors")
    return {
        "http": protocol_class(api) if workers == 1 else by_name,
        "h11_max_incomplete_event_size": int(api.max_header_kb * 1024),
        "timeout_keep_alive": api.keep_alive_s,
    }
