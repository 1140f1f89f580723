"""GET /healthz (the process answers) and GET /readyz (every configured store answers,
and the broker when one is configured). Both unauthenticated, for load balancers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from core.errors import StoreError
from core.types import QueryFilter
from indexing.protocols import DenseIndex
from ragline.api.context import ApiContext, Ctx

router = APIRouter(tags=["health"])

_CHECK_TIMEOUT_S = 3.0
_PROBE = QueryFilter(access_tokens=None)


@router.get("/metrics", summary="Prometheus metrics", include_in_schema=False)
async def metrics(ctx: Ctx) -> Response:
    # Counters only (no document content), so scraping needs no API key, like /healthz.
    return Response(ctx.rag.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz", summary="Liveness")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


def _checks(ctx: ApiContext) -> dict[str, Callable[[], Any]]:
    stores = ctx.rag.stores
    checks: dict[str, Callable[[], Any]] = {
        "metadata": lambda: stores.metadata.job("readyz-probe") and None,
        "keyword": lambda: len(stores.keyword.search("ragline", 1, _PROBE)),
        "dense": lambda: _dense_count(stores.dense),
        "graph": lambda: len(stores.graph.search(["ragline"], 1, _PROBE)),
    }
    if ctx.broker_url:
        checks["broker"] = _broker_check(ctx)
    return checks


def _dense_count(dense: DenseIndex) -> int:
    """Vectors held; a FAISS index whose vectors were dropped (its file damaged under the
    process) is not ready, and says why."""
    if getattr(dense, "lost", False):
        raise StoreError(getattr(dense, "damage", "") or "dense index unavailable")
    return len(dense.content_ids())


def _broker_check(ctx: ApiContext) -> Callable[[], Any]:
    def ping() -> Any:
        error = ctx.runner.ping()
        if error:
            raise ConnectionError(error)
        return "pong"

    return ping


async def _run(check: Callable[[], Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        value = await asyncio.wait_for(asyncio.to_thread(check), _CHECK_TIMEOUT_S)
        out: dict[str, Any] = {"ok": True}
        if value is not None:
            out["value"] = value
    except TimeoutError:
        out = {"ok": False, "error": f"no answer within {_CHECK_TIMEOUT_S:g}s"}
    except Exception as exc:
        # The exception's class and message, never a trace: enough to act on.
        out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    out["ms"] = round((time.perf_counter() - t0) * 1000, 2)
    return out


@router.get("/readyz", summary="Readiness: each configured store, and the broker")
async def readyz(ctx: Ctx) -> JSONResponse:
    await ctx.before_query()  # a dense index changed on disk is (re)loaded or reported
    checks = _checks(ctx)
    results = await asyncio.gather(*(_run(c) for c in checks.values()))
    report = dict(zip(checks, results, strict=True))
    damage = getattr(ctx.rag.stores.dense, "damage", "")
    if damage and report["dense"]["ok"]:  # serving what it loaded; the disk needs repair
        report["dense"]["warning"] = damage[:300]
    ready = all(r["ok"] for r in report.values())
    return JSONResponse(
        {"status": "ready" if ready else "unavailable", "checks": report},
        status_code=200 if ready else 503,
    )
