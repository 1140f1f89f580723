"""GET /v1/jobs/{id} and GET /v1/jobs?batch_id=: where an upload (or delete) stands."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query

from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.jobs import batch_view, job_view

router = APIRouter(prefix="/v1", tags=["jobs"])


@router.get("/jobs/{job_id}", summary="One job's state (queued .. searchable | failed)")
async def get_job(
    job_id: str,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    return job_view(await asyncio.to_thread(ctx.documents.job, principal, job_id))


@router.get("/jobs", summary="Jobs of a batch (or the caller's latest), with counts per state")
async def list_jobs(
    principal: Caller,
    ctx: Ctx,
    batch_id: Annotated[str, Query(max_length=64)] = "",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    jobs = await asyncio.to_thread(ctx.documents.jobs, principal, batch_id, limit)
    return batch_view(batch_id, jobs)
