"""What the web console needs to show a document, all permission-checked like every read
(a document the caller may not see answers 404, as if it did not exist; the rules are
`ragline.reading.DocumentReader`'s):

  GET /v1/catalog                          visible documents with their current version
  GET /v1/documents/{id}/lineage           every version: status, times, uploader, lineage
  GET /v1/documents/{id}/view?version=     a version's passages by page, with line spans
                                           (the indexed, PII-masked text; tables as cells)
  GET /v1/documents/{id}/file?version=     the version's original bytes (PDF.js renders it),
                                           not masked: only for keys that may write the
                                           document and admins (ragline.writes.original_denial);
                                           others get 403 and read /view
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.api.errors import ApiError

router = APIRouter(prefix="/v1", tags=["viewer"])
# By the document's format (core.formats.FORMATS); any other is a download.
_MEDIA = {
    "pdf": "application/pdf",
    "markdown": "text/plain; charset=utf-8",
    "text": "text/plain; charset=utf-8",
    "html": "text/plain; charset=utf-8",  # never rendered as a page of ours
}


@router.get("/catalog", summary="Documents the caller can see, with their current version")
async def catalog(
    principal: Caller, ctx: Ctx, limit: Annotated[int, Query(ge=1, le=10_000)] = 500
) -> dict[str, Any]:
    return {"documents": await asyncio.to_thread(ctx.reader.catalog, principal, limit)}


@router.get("/documents/{doc_id}/lineage", summary="Versions with times, uploader, lineage")
async def lineage(doc_id: str, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    def load() -> dict[str, Any]:
        found = ctx.rag.document_lineage(doc_id, principal)
        if found is None:
            raise ApiError(404, f"no document {doc_id}")
        return found

    return await asyncio.to_thread(load)


@router.get("/documents/{doc_id}/view", summary="A version's passages by page, for display")
async def view(
    doc_id: str,
    principal: Caller,
    ctx: Ctx,
    version: Annotated[str, Query(max_length=64)] = "",
) -> dict[str, Any]:
    return await asyncio.to_thread(ctx.reader.view, principal, doc_id, version)


@router.get("/documents/{doc_id}/file", summary="A version's original bytes")
async def original(
    doc_id: str,
    principal: Caller,
    ctx: Ctx,
    version: Annotated[str, Query(max_length=64)] = "",
) -> FileResponse:
    path, doc_type = await asyncio.to_thread(ctx.reader.original, principal, doc_id, version)
    return FileResponse(
        path,
        media_type=_MEDIA.get(doc_type, "application/octet-stream"),
        headers={
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
            "Cache-Control": "private, no-store",
        },
    )


@router.get("/passages/{content_id}", summary="Where a cited passage lives: document, version")
async def passage(content_id: str, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    return await asyncio.to_thread(ctx.reader.passage, principal, content_id)
