"""The HTTP/1.1 server layer under the API: uvicorn's h11 protocol with the errors that
happen before the application sees a request answered in the API's JSON error shape, and
with read timeouts uvicorn does not have.

- Request headers larger than `max_header_kb` (h11 buffers at most that much while
  waiting for the end of the headers): 431 JSON instead of "400 text/plain".
- Any other malformed request (bad request line, bad header syntax, bad framing): 400 JSON.
- Headers that do not arrive complete within `header_timeout_s` (slowloris), or a body
  that stops arriving for `body_timeout_s` (e.g. a Content-Length larger than what is
  sent): 408 JSON, and the connection is closed, instead of waiting forever.

`serve()` runs the app with this protocol; `ragline serve` calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from core.settings import ApiSettings, Settings


def _error_body(status: int, kind: str, message: str) -> bytes:
    return json.dumps({"error": {"type": kind, "message": message}}).encode("utf-8")


class JsonErrorsH11Protocol(H11Protocol):
    """h11 protocol with JSON errors and header/body read timeouts (see module doc).
    Configured through class attributes: `protocol_class(api)` makes a subclass."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 15.0
    max_header_bytes: int = 32 * 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer: asyncio.TimerHandle | None = None

    # -- errors before the application ----------------------------------------------------
    def send_400_response(self, msg: str) -> None:
        buffered = len(self.conn.trailing_data[0])
        if buffered > self.max_header_bytes:
            self._send_error(
                431,
                "request_header_fields_too_large",
                f"request headers are larger than {self.max_header_bytes} bytes "
                "(RAGLINE_API__MAX_HEADER_KB)",
            )
        else:
            self._send_error(400, "bad_request", "malformed HTTP request")

    def _send_error(self, status: int, kind: str, message: str) -> None:
        self._cancel_read_timer()
        body = _error_body(status, kind, message)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        try:
            out = self.conn.send(h11.Response(status_code=status, headers=headers))
            out = (out or b"") + (self.conn.send(h11.Data(data=body)) or b"")
            out += self.conn.send(h11.EndOfMessage()) or b""
            self.transport.write(out)
        except h11.LocalProtocolError:  # a response was already under way: just close
            pass
        self.transport.close()

    # -- read timeouts ----------------------------------------------------------------------
    def _cancel_read_timer(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _arm(self, seconds: float, on_timeout: Any) -> None:
        self._cancel_read_timer()
        if seconds > 0:
            self._read_timer = self.loop.call_later(seconds, on_timeout)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        _no_delay(transport)
        # A connection that sends nothing at all is also a request whose headers are late.
        self._arm(self.header_timeout_s, self._headers_timed_out)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            self._cancel_read_timer()
            return
        cycle = self.cycle
        reading_body = (
            cycle is not None
            and not cycle.response_complete
            and cycle.more_body
            and self.conn.their_state is h11.SEND_BODY
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

    def _headers_timed_out(self) -> None:
        self._read_timer = None
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
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

    def on_response_complete(self) -> None:
        self._cancel_read_timer()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_read_timer()
        super().connection_lost(exc)


def _no_delay(transport: asyncio.Transport) -> None:
    """Send small writes at once (TCP_NODELAY). asyncio sets it only on sockets whose
    `proto` says TCP, and the listening socket `serve --workers N` hands its worker
    processes comes back with proto 0: without this, a response written as headers then
    body waited for the client's delayed ACK (~40 ms per request, measured)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def protocol_class(api: ApiSettings) -> type[JsonErrorsH11Protocol]:
    return type(
        "RaglineH11Protocol",
        (JsonErrorsH11Protocol,),
        {
            "header_timeout_s": api.header_timeout_s,
            "body_timeout_s": api.body_timeout_s,
            "max_header_bytes": int(api.max_header_kb * 1024),
        },
    )


@functools.cache
def _env_api() -> ApiSettings:
    return Settings().api


class EnvH11Protocol(JsonErrorsH11Protocol):
    """The protocol of `ragline serve --workers N`: uvicorn spawns the worker processes and
    hands them its configuration by pickling, which a class made at run time cannot survive.
    Each process reads the same limits from its environment instead (RAGLINE_API__*, and
    ragline.toml), once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        api = _env_api()
        self.header_timeout_s = api.header_timeout_s
        self.body_timeout_s = api.body_timeout_s
        self.max_header_bytes = int(api.max_header_kb * 1024)
        super().__init__(*args, **kwargs)


def uvicorn_options(api: ApiSettings, workers: int = 1) -> dict[str, Any]:
    """Keyword arguments for uvicorn.run / uvicorn.Config."""
    return {
        "http": protocol_class(api) if workers == 1 else "ragline.api.server:EnvH11Protocol",
        "h11_max_incomplete_event_size": int(api.max_header_kb * 1024),
        "timeout_keep_alive": api.keep_alive_s,
    }
