"""The knowledge gateway over HTTP: rows, status, text, the catalogue, traces, memory.

Thin: each handler checks the request's shape and calls one `Ragline` method; the
permissions, parameter checks and audit live in the gateway itself."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import Field, StrictInt

from core.blocks import GatewayResult
from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.api.errors import ApiError
from ragline.api.schemas import RequestBody
from ragline.app import NotAllowed
from ragline.limits import (
    MAX_GATEWAY_NAME,
    MAX_GATEWAY_QUESTION,
    check_question,
    check_top_k,
)
from ragline.render import block_view, gateway_view

router = APIRouter(prefix="/v1", tags=["gateway"])

Scalar = str | int | float | bool | None


class RowsRequest(RequestBody):
    template: str = Field(
        default="", max_length=MAX_GATEWAY_NAME, description="Template name (catalogue)."
    )
    params: dict[str, Scalar] = Field(default_factory=dict, description="Template parameters.")
    question: str = Field(
        default="", max_length=MAX_GATEWAY_QUESTION, description="Or: pick by rules."
    )


class StatusRequest(RequestBody):
    source: str = Field(
        default="", max_length=MAX_GATEWAY_NAME, description="Status source id (catalogue)."
    )
    params: dict[str, Scalar] = Field(default_factory=dict)
    question: str = Field(
        default="", max_length=MAX_GATEWAY_QUESTION, description="Or: find the identifier."
    )


class TextRequest(RequestBody):
    question: str = Field(min_length=1)
    top_k: StrictInt | None = Field(default=None, ge=1)


class MemoryRequest(RequestBody):
    text: str = Field(min_length=1, max_length=4000)
    kind: Literal["note", "preference"] = "note"
    key: str = Field(default="", max_length=128)


def _view(result: GatewayResult) -> dict[str, Any]:
    """A refused call is an HTTP error (403 denied, 422 invalid) with the trace id; a source
    that is down is a degraded result (200, status "unavailable"), so an agent moves on."""
    if result.status in ("denied", "invalid"):
        status = 403 if result.status == "denied" else 422
        raise ApiError(status, result.message, {"trace_id": result.trace_id})
    return gateway_view(result)


def _need_one(name: str, value: str, question: str) -> None:
    if not value and not question.strip():
        raise ApiError(422, f"give `{name}` (see GET /v1/gateway/catalogue) or a `question`")


@router.post("/rows", summary="Rows from a declared SQL template, as a content block")
async def query_rows(req: RowsRequest, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    _need_one("template", req.template, req.question)
    result = await ctx.rag.query_rows(
        principal, req.template, dict(req.params), question=req.question
    )
    return _view(result)


@router.post("/status", summary="Live state from a declared HTTP status source")
async def lookup_status(req: StatusRequest, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    _need_one("source", req.source, req.question)
    result = await ctx.rag.lookup_status(
        principal, req.source, {k: str(v) for k, v in req.params.items()}, question=req.question
    )
    return _view(result)


@router.post("/text", summary="Document passages as content blocks")
async def query_text(req: TextRequest, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    question = check_question(req.question, ctx.settings.api)
    top_k = check_top_k(req.top_k, ctx.settings.api)
    await ctx.before_query()
    return gateway_view(await ctx.rag.query_text(question, principal, top_k=top_k))


@router.get("/gateway/catalogue", summary="Templates and status sources this key may use")
async def catalogue(principal: Caller, ctx: Ctx) -> dict[str, Any]:
    return ctx.rag.gateway_catalogue(principal)


@router.get("/trace/{trace_id}", summary="Everything one request did (operators)")
async def get_trace(trace_id: str, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    try:
        record = await asyncio.to_thread(ctx.rag.trace, trace_id, principal)
    except NotAllowed as e:
        raise ApiError(403, str(e)) from None
    if record is None:
        raise ApiError(404, f"no trace {trace_id}")
    audit = await asyncio.to_thread(ctx.rag.records.audit_log, trace_id)
    return {
        **asdict(record),
        "at": record.at.isoformat(),
        "audit": [{**asdict(a), "at": a.at.isoformat()} for a in reversed(audit)],
    }


@router.post("/memory", summary="Remember a note or preference (not a knowledge source)")
async def remember(req: MemoryRequest, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    try:
        item = await asyncio.to_thread(ctx.rag.remember, principal, req.text, req.kind, req.key)
    except NotAllowed as e:
        raise ApiError(403, str(e)) from None
    return {
        "stored": {**asdict(item), "created_at": item.created_at.isoformat()},
        "message": f"remembered {item.kind} #{item.id} for {item.owner}: {item.text!r} "
        "(kept apart from the knowledge sources; never cited)",
    }


@router.get("/memory", summary="This key's notes and preferences, labelled as memory")
async def recall(principal: Caller, ctx: Ctx) -> dict[str, Any]:
    blocks = await asyncio.to_thread(ctx.rag.recall, principal)
    return {"memory": [block_view(b) for b in blocks], "authoritative": False}
