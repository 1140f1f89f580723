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

from core.settings import Settings
from ragline.api import (
    routes_alerts,
    routes_audit,
    routes_documents,
    routes_health,
    routes_jobs,
    routes_openai,
    routes_query,
    routes_viewer,
)
from ragline.api.auth import KeyRing
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
    cache_ttl_s: float = 60.0,
    runner: TaskRunner | None = None,
) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        rag = Ragline(settings)
        events = make_event_bus(settings, events_channel(queue))
        ctx = ApiContext(
            settings=settings,
            rag=rag,
            runner=runner or _runner(settings, rag, events, queue),
            events=events,
            cache=QueryCache(cache_ttl_s),
            keys=KeyRing(settings.api.keys),
            upload_dir=upload_dir(settings),
            broker_url=settings.worker.broker_url,
        )
        events.subscribe(ctx.on_event)
        app.state.ctx = ctx
        if not len(ctx.keys):
            log.warning("no API keys configured (RAGLINE_API__KEYS): every request gets 401")
        # None when monitoring.interval_s is 0
        alerts = start_alert_scheduler(settings, rag, ctx.runner.submit)
        app.state.alerts = alerts
        try:
            yield
        finally:
            if alerts is not None:
                alerts.stop()  # before the stores it reads are closed
            ctx.runner.close()
            events.close()
            rag.close()

    app = FastAPI(
        title="Ragline",
        version="0.1.0",
        summary="Cited, permission-checked, fresh answers from a company's documents.",
        lifespan=lifespan,
    )
    app.add_middleware(RequestMetrics)
    app.add_middleware(UploadSizeGuard, max_bytes=max_upload_bytes(settings.api) + _FORM_OVERHEAD)
    install_error_handlers(app)
    for module in (routes_health, routes_query, routes_documents, routes_jobs, routes_openai):
        app.include_router(module.router)
    for module in (routes_alerts, routes_audit, routes_viewer):
        app.include_router(module.router)
    web.install(app)  # the console at /, its static files, CSRF for browser writes
    return app
