"""Documents: upload (202, ingested asynchronously), read, history and delete.

A document a caller may not see is answered with 404, exactly like one that does not
exist, so ACL-tagged documents do not leak through their ids.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile
from fastapi.responses import JSONResponse

from core.types import Document
from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.api.errors import ApiError
from ragline.documents import UploadForm, split_tags
from ragline.jobs import job_view

router = APIRouter(prefix="/v1", tags=["documents"])

_MAX_KEY = 512


def _document_view(doc: Document, current: str | None) -> dict[str, Any]:
    return {
        **asdict(doc),
        "acl_tags": sorted(doc.acl_tags),
        "modified": doc.modified.isoformat() if doc.modified else None,
        "handle": doc.handle,
        "current_version": current,
    }


@router.post(
    "/documents",
    status_code=202,
    summary="Upload a file; it is ingested asynchronously (poll the job)",
)
async def upload(
    principal: Caller,
    ctx: Ctx,
    file: Annotated[UploadFile, File(description="The document's bytes.")],
    title: Annotated[
        str, Form(max_length=1000, description="Default: the parsed title, else the file name")
    ] = "",
    department: Annotated[str, Form(max_length=128)] = "",
    doc_type: Annotated[str, Form(max_length=16, description="Format if no suffix")] = "",
    acl_tags: Annotated[
        list[str] | None,
        Form(
            description="ACL tags (repeat or a,b). Omitted: a new document is public and "
            "an existing one keeps its tags; sent empty: public."
        ),
    ] = None,
    source_trust: Annotated[float | None, Form(ge=0.0, le=1.0)] = None,
    modified: Annotated[date | None, Form(description="The document's date (ISO)")] = None,
    key: Annotated[str, Form(max_length=_MAX_KEY, description="Source key (file name)")] = "",
    batch_id: Annotated[str, Form(max_length=64)] = "",
) -> JSONResponse:
    form = UploadForm(
        filename=file.filename or "",
        key=key,
        title=title,
        department=department,
        doc_type=doc_type,
        tags=None if acl_tags is None else split_tags(acl_tags),
        source_trust=source_trust,
        modified=modified,
        batch_id=batch_id,
    )
    receipt = await asyncio.to_thread(ctx.documents.upload, principal, form, file.file)
    job = receipt.job
    return JSONResponse(
        {
            "doc_id": receipt.doc_id,
            "job_id": job.job_id,
            "version": receipt.version,
            "state": job.state,
            "reason": job.reason,
            "source": receipt.source,
            "batch_id": receipt.batch_id,
            "bytes": receipt.size,
            "links": {
                "job": f"/v1/jobs/{job.job_id}",
                "document": f"/v1/documents/{receipt.doc_id}",
            },
        },
        status_code=202,
    )


@router.get("/documents/{doc_id}", summary="A document and its current version")
async def get_document(
    doc_id: str,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    def load() -> dict[str, Any]:
        doc = ctx.rag.require_document(doc_id, principal)
        return _document_view(doc, ctx.rag.stores.metadata.current_version(doc_id))

    return await asyncio.to_thread(load)


@router.get("/documents/{doc_id}/meta", summary="Title, versions with dates, pages")
async def document_meta(
    doc_id: str,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    def load() -> dict[str, Any]:
        found = ctx.rag.get_document_meta(doc_id, principal)
        if found is None:
            raise ApiError(404, f"no document {doc_id}")
        return found

    return await asyncio.to_thread(load)


@router.delete(
    "/documents/{doc_id}",
    status_code=202,
    summary="Delete everywhere: unserved at once, stores converge asynchronously",
)
async def delete_document(
    doc_id: str,
    principal: Caller,
    ctx: Ctx,
) -> JSONResponse:
    job = await asyncio.to_thread(ctx.documents.delete, principal, doc_id)
    return JSONResponse({"doc_id": doc_id, **job_view(job)}, status_code=202)
