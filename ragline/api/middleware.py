"""The API's middleware, all pure ASGI: no per-request task, no body streaming through a
memory channel, no Request object unless a guard needs headers. (Starlette's
BaseHTTPMiddleware costs a task and a stream per request and layer; on the query path that
was measurable, see bench/RESULTS.md "Per-query cost".)"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragline.api.auth import ADMITTED, admit, presented_key
from ragline.api.errors import ApiError, error_response
from ragline.writes import WriteDenied, authorize_write

if TYPE_CHECKING:
    from ragline.api.context import ApiContext

# Multipart framing and the form fields around the file: allowed on top of the file limit.
FORM_OVERHEAD = 1 << 20

# (endpoint template, method, status, seconds) -> None
Observe = Callable[[str, str, int, float], None]


class RequestMetrics:
    """Requests, errors and latency per endpoint (the route template, never the raw path,
    so ids do not explode the label set). `observe` is looked up per request (None while
    the app is not started) and does the counting."""

    def __init__(self, app: ASGIApp, observer: Callable[[], Observe | None]) -> None:
        self.app = app
        self._observer = observer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the server sends when the app raises before answering

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            observe = self._observer()
            if observe is not None:
                # The router stores the matched route in the (shared) scope.
                endpoint = getattr(scope.get("route"), "path", "") or "unmatched"
                observe(endpoint, scope["method"], status, time.perf_counter() - started)


class KeyGate:
    """Requests that carry a body (POST, PUT, PATCH under /v1/) are authenticated from
    their headers before the body is read: a missing or unknown key gets 401, a key over
    its rate limit 429, and a key that may not write gets 403 on the `writes` paths
    (uploads), without the server receiving a byte of the body. FastAPI reads a request's
    body before it runs the handler's dependencies, so an unauthenticated upload used to be
    received and stored whole before its 401. The admitted caller is kept in the request's
    state; `authenticate` uses it instead of charging the rate limit again."""

    BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

    def __init__(
        self,
        app: ASGIApp,
        context: Callable[[], ApiContext | None],
        writes: Collection[str] = (),
    ) -> None:
        self.app = app
        self._context = context
        self._writes = frozenset(writes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ctx = None
        if (
            scope["type"] == "http"
            and scope["method"] in self.BODY_METHODS
            and scope["path"].startswith("/v1/")
        ):
            ctx = self._context()
        if ctx is None:
            await self.app(scope, receive, send)
            return
        try:
            principal = admit(ctx, presented_key(Headers(scope=scope)))
            if scope["path"] in self._writes:
                authorize_write(principal, None)
        except ApiError as exc:
            response = error_response(exc.status, exc.message, exc.details, exc.headers)
        except WriteDenied as exc:
            response = error_response(403, str(exc))
        else:
            scope.setdefault("state", {})[ADMITTED] = principal
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)


class UploadSizeGuard:
    """Refuse an oversized upload from its Content-Length, before the body is read (the
    handler still counts the bytes, for clients that send no length)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self._max = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            length = Headers(scope=scope).get("content-length", "")
            if length.isdigit() and int(length) > self._max:
                response = error_response(
                    413,
                    f"upload is larger than {self._max - FORM_OVERHEAD} bytes "
                    "(RAGLINE_API__MAX_UPLOAD_MB)",
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class HeaderSizeGuard:
    """Request headers over `max_bytes` in total get 431 in the JSON error shape. (Headers
    that arrive in pieces are stopped earlier, at the same size, by the h11 protocol of
    `ragline.api.server`; this covers headers that arrive in one read, and TestClient.)"""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self._max = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            size = sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))
            if size > self._max:
                response = error_response(
                    431,
                    f"request headers are larger than {self._max} bytes "
                    "(RAGLINE_API__MAX_HEADER_KB)",
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
