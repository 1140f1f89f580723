"""POST /v1/search and POST /v1/ask: the CLI's search and ask, as JSON."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.api.query import run_query
from ragline.api.schemas import QueryRequest

router = APIRouter(prefix="/v1", tags=["query"])


@router.post("/search", summary="Ranked passages with route decision and timings")
async def search(
    req: QueryRequest,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    return await run_query(
        ctx,
        principal,
        req.question,
        top_k=req.top_k,
        doc_types=req.doc_types,
        task=req.task,
        ask=False,
    )


@router.post("/ask", summary="A cited answer built only from retrieved text")
async def ask(
    req: QueryRequest,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    return await run_query(
        ctx,
        principal,
        req.question,
        top_k=req.top_k,
        doc_types=req.doc_types,
        task=req.task,
        ask=True,
    )
