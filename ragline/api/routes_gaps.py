"""GET /v1/gaps: the knowledge gaps, for knowledge administrators (keys with can_write)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import PlainTextResponse, Response

from monitoring.gaps import gap_view, gaps_csv
from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.oversight import Oversight

router = APIRouter(prefix="/v1", tags=["gaps"])


@router.get(
    "/gaps", summary="Questions the documents do not answer, most asked first", response_model=None
)
async def list_gaps(
    principal: Caller,
    ctx: Ctx,
    since: Annotated[datetime | None, Query(description="Last asked at or after (ISO).")] = None,
    status: Literal["open", "closed", "all"] = "open",
    format: Literal["json", "csv"] = "json",
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> Response | dict[str, Any]:
    rows = await asyncio.to_thread(
        Oversight(ctx.rag).gaps, principal, since, None if status == "all" else status, limit
    )
    if format == "csv":
        return PlainTextResponse(gaps_csv(rows), media_type="text/csv")
    return {"gaps": [gap_view(g) for g in rows], "count": len(rows)}
