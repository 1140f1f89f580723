"""`create_app(settings)`: the FastAPI application, everything built in its lifespan.

Without a broker (the embedded default) tasks run on a thread of this process and events
are in-process callbacks; with `settings.worker.broker_url` tasks go to Celery workers
and their "indexed" events arrive over Redis pub/sub.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from core.settings import Settings
from monitoring.metrics import Metrics
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
from ragline.api.backpressure import IN_FLIGHT_STATE, InFlight, InFlightLimit
from ragline.api.buckets import bucket_store
from ragline.api.context import ApiContext
from ragline.api.errors import install_error_handlers
from ragline.api.middleware import (
    FORM_OVERHEAD,
    HeaderSizeGuard,
    KeyGate,
    Observe,
    RequestMetrics,
    UploadSizeGuard,
)
from ragline.app import Ragline
from ragline.events import EventBus, make_event_bus
from ragline.limits import max_upload_bytes
from ragline.monitor import start_alert_scheduler
from ragline.query_cache import QueryCache
from ragline.threads import blocking_pool_size, lowered
from ragline.web import routes as web
from ragline.worker.celery_app import DEFAULT_QUEUE, CeleryRunner, create_celery, events_channel
from ragline.worker.runner import InProcessRunner, TaskRunner
from ragline.worker.tasks import TaskContext

log = logging.getLogger("ragline.api")


def _runner(settings: Settings, rag: Ragline, events: EventBus, queue: str) -> TaskRunner:
    if settings.worker.broker_url:
        return CeleryRunner(create_celery(settings, queue), queue)
    ctx = TaskContext(
        rag=rag,
        events=events,
        max_attempts=settings.worker.max_retries + 1,
        sync_folders=list(settings.worker.sync_folders),
    )
    # Ingestion at the query pools' priority: below the event loop, level with answers.
    return InProcessRunner(ctx, settings.worker.max_retries, initializer=lowered(settings.threads))


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
        keys=KeyRing(settings.api.keys, settings.api.rate_per_s, bucket_store(settings)),
        broker_url=settings.worker.broker_url,
    )
    events.subscribe(ctx.on_event)
    if not len(ctx.keys):
        log.warning("no API keys configured (RAGLINE_API__KEYS): every request gets 401")
    return ctx


def close_context(ctx: ApiContext) -> None:
    ctx.keys.close()
    ctx.runner.close()
    ctx.events.close()
    ctx.rag.close()


def _warm_up(rag: Ragline) -> None:
    try:
        rag.warm_up()
    except Exception as exc:  # the first query then says what is wrong, with its error
        log.warning("warm-up failed: %s", exc)


def freeze_heap() -> int:
    """Collect, then exempt every object alive now from later cyclic collections; they
    are still freed by reference counting. Returns how many were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def request_observer(metrics: Metrics) -> Observe:
    """What RequestMetrics calls once per request: counts and latency per endpoint; a 403
    also counts as an ACL denial."""

    def observe(endpoint: str, method: str, status: int, seconds: float) -> None:
        metrics.http_requests.labels(endpoint=endpoint, method=method, status=str(status)).inc()
        metrics.http_seconds.labels(endpoint=endpoint).observe(seconds)
        if status == 403:
            metrics.acl_denials.labels(endpoint=endpoint, reason="forbidden").inc()

    return observe


def create_app(
    settings: Settings,
    *,
    queue: str = DEFAULT_QUEUE,
    cache_ttl_s: float | None = None,
    runner: TaskRunner | None = None,
) -> FastAPI:
    def count_refusal(reason: str) -> None:
        ctx = getattr(app.state, "ctx", None)
        if ctx is not None:
            ctx.rag.metrics.refused.labels(reason=reason).inc()

    in_flight = InFlight(
        settings.api.max_in_flight, settings.api.retry_after_s, on_refuse=count_refusal
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        # Blocking work of handlers (asyncio.to_thread) runs here: sized per core, not
        # Python's default, and closed with the app.
        blocking = ThreadPoolExecutor(
            blocking_pool_size(settings.threads),
            thread_name_prefix="blocking",
            initializer=lowered(settings.threads),
        )
        asyncio.get_running_loop().set_default_executor(blocking)
        ctx = build_context(settings, queue=queue, cache_ttl_s=cache_ttl_s, runner=runner)
        app.state.ctx = ctx
        app.state.observe_request = request_observer(ctx.rag.metrics)
        if settings.api.warm_up:
            # Before listening: the first questions do not pay for the models and tables
            # (seconds, e.g. jieba's IDF table), and a worker that is not warm is not ready.
            await asyncio.to_thread(_warm_up, ctx.rag)
        if settings.api.gc_freeze:
            log.info("%d objects loaded at start left out of garbage collection", freeze_heap())
        # Jobs a stopped or killed server had accepted and not finished: taken up now.
        if resumed := await asyncio.to_thread(ctx.runner.resume):
            log.info("took up %d unfinished job(s) of a server that stopped", resumed)
        # None when monitoring.interval_s is 0
        alerts = start_alert_scheduler(settings, ctx.rag, ctx.runner.submit)
        app.state.alerts = alerts
        try:
            # The lifespan state reaches the HTTP protocol too, which refuses with it.
            yield {IN_FLIGHT_STATE: in_flight}
        finally:
            if alerts is not None:
                alerts.stop()  # before the stores it reads are closed
            await ctx.rag.close_llm_connections()
            close_context(ctx)
            blocking.shutdown(wait=False)

    app = FastAPI(
        title="Ragline",
        version="0.1.0",
        summary="Cited, permission-checked, fresh answers from a company's documents.",
        lifespan=lifespan,
    )
    app.add_middleware(
        KeyGate, context=lambda: getattr(app.state, "ctx", None), writes=("/v1/documents",)
    )
    app.add_middleware(RequestMetrics, observer=lambda: getattr(app.state, "observe_request", None))
    app.add_middleware(UploadSizeGuard, max_bytes=max_upload_bytes(settings.api) + FORM_OVERHEAD)
    app.add_middleware(HeaderSizeGuard, max_bytes=int(settings.api.max_header_kb * 1024))

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

    # Added last = outermost: a refused request costs no other middleware's work (not
    # even the console's CSRF guard, which web.install adds).
    app.add_middleware(InFlightLimit, gate=in_flight)
    return app
