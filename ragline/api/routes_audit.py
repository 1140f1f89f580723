"""GET /v1/audit: the per-passage audit trail (one row per cited passage per answer), as
JSON or CSV, filtered by time range, user and document.

Auditors (keys with the role "auditor" or "admin") see every user's rows; anyone else sees
only their own questions, and only passages of documents they may read."""

from __future__ import annotations

import asyncio
import io
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from core.types import Principal
from monitoring.audit import PASSAGE_COLUMNS, naive_utc, passage_rows, write_csv
from ragline.api.auth import Caller
from ragline.api.context import ApiContext, Ctx

router = APIRouter(prefix="/v1", tags=["audit"])
AUDIT_ROLES = frozenset({"auditor", "admin"})


def is_auditor(principal: Principal) -> bool:
    return principal.superuser or bool(AUDIT_ROLES & principal.roles)


def _rows(
    ctx: ApiContext,
    principal: Principal,
    since: datetime | None,
    until: datetime | None,
    user: str | None,
    doc_id: str | None,
    limit: int,
) -> list[dict[str, object]]:
    meta = ctx.rag.stores.metadata
    auditor = is_auditor(principal)
    if not auditor:
        user = principal.user
    records = meta.query_log(naive_utc(since), naive_utc(until), user, limit)
    rows = list(passage_rows(reversed(records), meta, doc_id))
    if auditor:
        return rows
    visible: dict[str, bool] = {}
    out = []
    for row in rows:
        d = str(row["doc_id"])
        if d not in visible:
            doc = meta.document(d)
            visible[d] = doc is not None and principal.can_see(doc.acl_tags)
        if visible[d]:
            out.append(row)
    return out


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
    limit: Annotated[int, Query(ge=1, le=100_000, description="Answers read")] = 1000,
) -> Any:
    rows = await asyncio.to_thread(_rows, ctx, principal, since, until, user, doc_id, limit)
    if trace_id:
        rows = [r for r in rows if r["trace_id"] == trace_id]
    if format == "csv":
        buf = io.StringIO()
        write_csv(buf, PASSAGE_COLUMNS, rows)
        return Response(
            buf.getvalue(),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="ragline-audit.csv"'},
        )
    return {"columns": list(PASSAGE_COLUMNS), "rows": rows}
