"""POST /v1/search and POST /v1/ask: the CLI's search and ask, as JSON."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from core.types import Principal
from ragline.api.auth import Caller
from ragline.api.context import ApiContext, Ctx
from ragline.api.schemas import QueryRequest, QueryStreamRequest
from ragline.api.sse import error_payload, event, pieces, refused, sse_response

router = APIRouter(prefix="/v1", tags=["query"])
log = logging.getLogger("ragline.api")


@router.post("/search", summary="Ranked passages with route decision and timings")
async def search(
    req: QueryRequest,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    return await _query(req, principal, ctx, ask=False)


@router.post(
    "/ask",
    summary="A cited answer built only from retrieved text",
    description="With `stream: true` (or `Accept: text/event-stream`) the answer comes as "
    "Server-Sent Events: `status`, then `delta` events with the checked answer text, then "
    "`answer` (the same object as the JSON response), then `done`.",
    # A model (Any: no validation), so FastAPI writes the JSON with pydantic-core; without
    # one it walked the answer in Python (jsonable_encoder, then json.dumps), ~7 % of a
    # serving process's time under load. A StreamingResponse is still returned as is.
    response_model=Any,
)
async def ask(
    req: QueryStreamRequest,
    request: Request,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any] | StreamingResponse:
    if req.stream or "text/event-stream" in request.headers.get("accept", ""):
        # Bad input is refused before the stream opens, as it is without one.
        ctx.queries.checked(
            req.question, req.top_k, req.task, req.context, req.filters, req.doc_types
        )
        return sse_response(_ask_events(req, principal, ctx))
    return await _query(req, principal, ctx, ask=True)


async def _query(
    req: QueryRequest, principal: Principal, ctx: ApiContext, ask: bool
) -> dict[str, Any]:
    return await ctx.queries.run(
        principal,
        req.question,
        top_k=req.top_k,
        doc_types=req.doc_types,
        task=req.task,
        ask=ask,
        context=req.context,
        filters=req.filters,
    )


async def _ask_events(
    req: QueryRequest, principal: Principal, ctx: ApiContext
) -> AsyncIterator[str]:
    yield event({"stage": "answering", "question": req.question}, "status")
    try:
        view = await _query(req, principal, ctx, ask=True)
    except Exception as exc:
        if not refused(exc):
            log.exception("streamed ask failed")
        yield event(error_payload(exc), "error")
        return
    for piece in pieces(view["answer"]):
        yield event({"text": piece}, "delta")
    yield event(view, "answer")
    yield event({"trace_id": view.get("trace_id")}, "done")
