"""`create_app(settings)`: the FastAPI application, everything built in its lifespan.

Without a broker (the embedded default) tasks run on a thread of this process and events
are in-process callbacks; with `settings.worker.broker_url` tasks go to Celery workers
and their "indexed" events arrive over Redis pub/sub.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request, Response
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.types import ASGIApp, Receive, Scope, Send

from core.settings import Settings
from ragline.api import (
    routes_agent,
    routes_alerts,
    routes_audit,
    routes_documents,
    routes_gaps,
    routes_gateway,
    routes_health,
    routes_jobs,
    routes_openai,
    routes_query,
    routes_viewer,
)
from ragline.api.auth import KeyRing
from ragline.api.backpressure import InFlightLimit
from ragline.api.cache import QueryCache
from ragline.api.context import ApiContext
from ragline.api.errors import error_response, install_error_handlers
from ragline.api.limits import max_upload_bytes
from ragline.app import Ragline
from ragline.events import EventBus, make_event_bus
from ragline.monitor import start_alert_scheduler
from ragline.web import routes as web
from ragline.worker.celery_app import DEFAULT_QUEUE, CeleryRunner, create_celery, events_channel
from ragline.worker.runner import InProcessRunner, TaskRunner
from ragline.worker.tasks import TaskContext

log = logging.getLogger("ragline.api")

# Multipart framing and the form fields around the file: allowed on top of the file limit.
_FORM_OVERHEAD = 1 << 20


def upload_dir(settings: Settings) -> Path:
    configured = settings.api.upload_dir
    return Path(configured) if configured else settings.data_dir / "uploads"


def _runner(settings: Settings, rag: Ragline, events: EventBus, queue: str) -> TaskRunner:
    if settings.worker.broker_url:
        return CeleryRunner(create_celery(settings, queue), queue)
    ctx = TaskContext(
        rag=rag,
        events=events,
        lock_path=settings.data_dir / "writer.lock",
        max_attempts=settings.worker.max_retries + 1,
        sync_folders=list(settings.worker.sync_folders),
    )
    return InProcessRunner(ctx, settings.worker.max_retries)


class UploadSizeGuard(BaseHTTPMiddleware):
    """Refuse an oversized upload from its Content-Length, before the body is read (the
    handler still counts the bytes, for clients that send no length)."""

    def __init__(self, app: object, max_bytes: int) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self._max = max_bytes

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        length = request.headers.get("content-length", "")
        if request.method == "POST" and length.isdigit() and int(length) > self._max:
            return error_response(
                413,
                f"upload is larger than {self._max - _FORM_OVERHEAD} bytes "
                "(RAGLINE_API__MAX_UPLOAD_MB)",
            )
        return await call_next(request)


class HeaderSizeGuard:
    """Request headers over `max_bytes` in total get 431 in the JSON error shape. (Headers
    that arrive in pieces are stopped earlier, at the same size, by the h11 protocol of
    `ragline.api.server`; this covers headers that arrive in one read, and TestClient.)"""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self._app = app
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
        await self._app(scope, receive, send)


def build_context(
    settings: Settings,
    *,
    queue: str = DEFAULT_QUEUE,
    cache_ttl_s: float | None = None,
    runner: TaskRunner | None = None,
) -> ApiContext:
    """Everything a request handler needs; shared by the HTTP API and the gRPC server, so
    both doors see the same keys, limits, cache and task runner. Close with
    `close_context`."""
    rag = Ragline(settings)
    events = make_event_bus(settings, events_channel(queue))
    ctx = ApiContext(
        settings=settings,
        rag=rag,
        runner=runner or _runner(settings, rag, events, queue),
        events=events,
        cache=QueryCache(settings.api.cache_ttl_s if cache_ttl_s is None else cache_ttl_s),
        keys=KeyRing(settings.api.keys, settings.api.rate_per_s),
        upload_dir=upload_dir(settings),
        broker_url=settings.worker.broker_url,
    )
    events.subscribe(ctx.on_event)
    if not len(ctx.keys):
        log.warning("no API keys configured (RAGLINE_API__KEYS): every request gets 401")
    return ctx


def close_context(ctx: ApiContext) -> None:
    ctx.runner.close()
    ctx.events.close()
    ctx.rag.close()


class RequestMetrics(BaseHTTPMiddleware):
    """Requests, errors and latency per endpoint (the route template, never the raw path,
    so ids do not explode the label set); a 403 also counts as an ACL denial."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        ctx = getattr(request.app.state, "ctx", None)
        if ctx is not None:
            route = request.scope.get("route")
            endpoint = getattr(route, "path", "") or "unmatched"
            metrics = ctx.rag.metrics
            metrics.http_requests.labels(
                endpoint=endpoint, method=request.method, status=str(response.status_code)
            ).inc()
            metrics.http_seconds.labels(endpoint=endpoint).observe(time.perf_counter() - started)
            if response.status_code == 403:
                metrics.acl_denials.labels(endpoint=endpoint, reason="forbidden").inc()
        return response


def create_app(
    settings: Settings,
    *,
    queue: str = DEFAULT_QUEUE,
    cache_ttl_s: float | None = None,
    runner: TaskRunner | None = None,
) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ctx = build_context(settings, queue=queue, cache_ttl_s=cache_ttl_s, runner=runner)
        app.state.ctx = ctx
        # None when monitoring.interval_s is 0
        alerts = start_alert_scheduler(settings, ctx.rag, ctx.runner.submit)
        app.state.alerts = alerts
        try:
            yield
        finally:
            if alerts is not None:
                alerts.stop()  # before the stores it reads are closed
            close_context(ctx)

    app = FastAPI(
        title="Ragline",
        version="0.1.0",
        summary="Cited, permission-checked, fresh answers from a company's documents.",
        lifespan=lifespan,
    )
    app.add_middleware(RequestMetrics)
    app.add_middleware(UploadSizeGuard, max_bytes=max_upload_bytes(settings.api) + _FORM_OVERHEAD)
    app.add_middleware(HeaderSizeGuard, max_bytes=int(settings.api.max_header_kb * 1024))

    def count_refusal(reason: str) -> None:
        ctx = getattr(app.state, "ctx", None)
        if ctx is not None:
            ctx.rag.metrics.refused.labels(reason=reason).inc()

    # Added last = outermost: a refused request costs no other middleware's work.
    app.add_middleware(
        InFlightLimit,
        limit=settings.api.max_in_flight,
        retry_after_s=settings.api.retry_after_s,
        on_refuse=count_refusal,
    )
    install_error_handlers(app)
    for module in (
        routes_health,
        routes_query,
        routes_agent,
        routes_documents,
        routes_jobs,
        routes_openai,
        routes_gateway,
        routes_gaps,
    ):
        app.include_router(module.router)
    for module in (routes_alerts, routes_audit, routes_viewer):
        app.include_router(module.router)
    web.install(app)  # the console at /, its static files, CSRF for browser writes
    return app
