"""GET /v1/alerts: what fires now, the automatic actions in effect, the switches the query
path reads, and the alert audit log; POST /v1/ops/sync and /v1/ops/reindex: the fixes the
alert notifications link to."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from indexing.protocols import AlertEventRecord
from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.api.schemas import RequestBody
from ragline.jobs import job_view
from ragline.oversight import is_auditor

router = APIRouter(prefix="/v1", tags=["alerts"])


# Events whose message is the outcome of an action or a delivery: it may name documents
# the reader may not see (the reindexed ones) or the webhook's address, a credential.
_TOLD_IN_FULL = frozenset({"action", "action_reverted", "notify_failed"})


def _event_view(e: AlertEventRecord, full: bool) -> dict[str, Any]:
    message = e.message
    if not full and e.event in _TOLD_IN_FULL:
        message = f"{e.event.replace('_', ' ')} (the outcome is shown to auditors and admins)"
    return {
        "at": e.at.isoformat() + "Z",
        "alert": e.alert,
        "subject": e.subject,
        "event": e.event,
        "severity": e.severity,
        "value": e.value,
        "threshold": e.threshold,
        "message": message,
        # Content ids and trace ids of other users' questions: for auditors and admins.
        "detail": e.detail if full else {},
    }


def _action_view(action: dict[str, Any], full: bool) -> dict[str, Any]:
    return action if full else {**action, "detail": ""}


@router.get("/alerts", summary="Firing alerts, automatic actions in effect, alert audit log")
async def alerts(
    request: Request,
    principal: Caller,
    ctx: Ctx,
    since: Annotated[datetime | None, Query(description="ISO time; events from then")] = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 200,
) -> dict[str, Any]:
    scheduler = getattr(request.app.state, "alerts", None)
    full = is_auditor(principal)
    events = await asyncio.to_thread(ctx.rag.stores.metadata.alert_events, since, None, limit)
    return {
        "scheduler": scheduler is not None,
        "interval_s": ctx.settings.monitoring.interval_s,
        "firing": [a.as_dict() for a in scheduler.firing] if scheduler else [],
        "actions": [_action_view(a.as_dict(), full) for a in scheduler.active_actions]
        if scheduler
        else [],
        "switches": [ctx.rag.fast_path.view(), ctx.rag.llm_paused.view()],
        "rules": [
            {
                "name": r.name,
                "kind": r.kind,
                "threshold": r.threshold,
                "below": r.below,
                "severity": r.severity,
                "action": r.action,
                "description": r.description,
            }
            for r in (scheduler.rules if scheduler else [])
        ],
        "events": [_event_view(e, full) for e in events],
    }


class ReindexRequest(RequestBody):
    source: str = Field(
        default="",
        max_length=4096,
        description="A document's source key or file/folder; empty = repair every store.",
    )


@router.post("/ops/sync", status_code=202, summary="Apply the outbox now (incremental sync)")
async def ops_sync(principal: Caller, ctx: Ctx) -> JSONResponse:
    job = await asyncio.to_thread(ctx.documents.sync, principal)
    return JSONResponse(job_view(job), status_code=202)


@router.post("/ops/reindex", status_code=202, summary="Reindex one document, or repair all")
async def ops_reindex(req: ReindexRequest, principal: Caller, ctx: Ctx) -> JSONResponse:
    job = await asyncio.to_thread(ctx.documents.reindex, principal, req.source)
    return JSONResponse(job_view(job), status_code=202)
