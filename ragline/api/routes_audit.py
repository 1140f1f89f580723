"""GET /v1/audit: the per-passage audit trail (one row per cited passage per answer), as
JSON or CSV, filtered by time range, user and document.

Auditors (keys with the role "auditor" or "admin") see every user's rows; anyone else sees
only their own questions, and only passages of documents they may read
(`ragline.oversight`)."""

from __future__ import annotations

import asyncio
import io
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from monitoring.audit import PASSAGE_COLUMNS, write_csv
from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.oversight import Oversight

router = APIRouter(prefix="/v1", tags=["audit"])


@router.get("/audit", summary="Per-passage audit trail: who asked, what was cited, from where")
async def audit(
    principal: Caller,
    ctx: Ctx,
    since: Annotated[datetime | None, Query(description="From (ISO, inclusive)")] = None,
    until: Annotated[datetime | None, Query(description="Until (ISO, exclusive)")] = None,
    user: Annotated[str | None, Query(max_length=128)] = None,
    doc_id: Annotated[str | None, Query(max_length=64)] = None,
    trace_id: Annotated[str | None, Query(max_length=64)] = None,
    format: Annotated[Literal["json", "csv"], Query()] = "json",
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=100_000,
            description="Answers read (of the trace, or citing the document, when given)",
        ),
    ] = 1000,
) -> Any:
    rows = await asyncio.to_thread(
        Oversight(ctx.rag).audit_rows, principal, since, until, user, doc_id, limit, trace_id
    )
    if format == "csv":
        buf = io.StringIO()
        write_csv(buf, PASSAGE_COLUMNS, rows)
        return Response(
            buf.getvalue(),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="ragline-audit.csv"'},
        )
    return {"columns": list(PASSAGE_COLUMNS), "rows": rows}
