"""GET /v1/jobs/{id} and GET /v1/jobs?batch_id=: where an upload (or delete) stands."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query

from core.types import Principal
from indexing.protocols import JobRecord
from ragline.api.auth import Caller
from ragline.api.context import ApiContext, Ctx
from ragline.api.errors import ApiError
from ragline.jobs import batch_view, job_view

router = APIRouter(prefix="/v1", tags=["jobs"])


def visible(ctx: ApiContext, principal: Principal, job: JobRecord) -> bool:
    """A caller sees its own jobs, and jobs of documents it may read."""
    if principal.superuser or job.owner == principal.user:
        return True
    doc = ctx.rag.stores.metadata.document(job.doc_id) if job.doc_id else None
    return doc is not None and principal.can_see(doc.acl_tags)


@router.get("/jobs/{job_id}", summary="One job's state (queued .. searchable | failed)")
async def get_job(
    job_id: str,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    job = await asyncio.to_thread(ctx.rag.stores.metadata.job, job_id)
    if job is None or not await asyncio.to_thread(visible, ctx, principal, job):
        raise ApiError(404, f"no job {job_id}")
    return job_view(job)


@router.get("/jobs", summary="Jobs of a batch (or the caller's latest), with counts per state")
async def list_jobs(
    principal: Caller,
    ctx: Ctx,
    batch_id: Annotated[str, Query(max_length=64)] = "",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    def load() -> list[JobRecord]:
        jobs = ctx.rag.stores.metadata.jobs(batch_id=batch_id, limit=limit)
        return [j for j in jobs if visible(ctx, principal, j)]

    return batch_view(batch_id, await asyncio.to_thread(load))
