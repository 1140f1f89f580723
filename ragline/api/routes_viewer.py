"""What the web console needs to show a document, all permission-checked like every read
(a document the caller may not see answers 404, as if it did not exist):

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
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from core.ids import path_from_uri, version_of
from core.types import Document, Principal
from ragline.api.auth import Caller
from ragline.api.context import ApiContext, Ctx
from ragline.api.errors import ApiError
from ragline.writes import original_denial

router = APIRouter(prefix="/v1", tags=["viewer"])
_MEDIA = {
    "pdf": "application/pdf",
    "md": "text/plain; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "html": "text/plain; charset=utf-8",  # never rendered as a page of ours
}


def _doc(ctx: ApiContext, principal: Principal, doc_id: str) -> Document:
    doc = ctx.rag.visible_document(doc_id, principal)
    if doc is None:
        raise ApiError(404, f"no document {doc_id}")
    return doc


def _version(ctx: ApiContext, doc_id: str, version: str) -> str:
    meta = ctx.rag.stores.metadata
    if not version:
        current = meta.current_version(doc_id)
        if current is None:
            raise ApiError(404, f"document {doc_id} has no searchable version")
        return current
    if not meta.has_version(doc_id, version):
        raise ApiError(404, f"document {doc_id} has no version {version}")
    return version


@router.get("/catalog", summary="Documents the caller can see, with their current version")
async def catalog(
    principal: Caller, ctx: Ctx, limit: Annotated[int, Query(ge=1, le=10_000)] = 500
) -> dict[str, Any]:
    def load() -> list[dict[str, Any]]:
        meta = ctx.rag.stores.metadata
        out = []
        for doc in meta.documents():
            if not principal.can_see(doc.acl_tags):
                continue
            versions = meta.versions(doc.doc_id)
            out.append(
                {
                    "doc_id": doc.doc_id,
                    "title": doc.title,
                    "source": doc.source,
                    "doc_type": doc.doc_type,
                    "acl_tags": sorted(doc.acl_tags),
                    "current_version": meta.current_version(doc.doc_id),
                    "versions": len(versions),
                }
            )
            if len(out) >= limit:
                break
        return out

    return {"documents": await asyncio.to_thread(load)}


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
    def load() -> dict[str, Any]:
        doc = _doc(ctx, principal, doc_id)
        v = _version(ctx, doc_id, version)
        items = ctx.rag.stores.metadata.version_items(doc_id, v)
        pages: dict[int, list[dict[str, Any]]] = {}
        for item in sorted(items, key=lambda i: i.chunk.ordinal):
            c = item.chunk
            pages.setdefault(c.page_start, []).append(
                {
                    "content_id": c.content_id,
                    "label": c.label,
                    "kind": c.kind,
                    "page_start": c.page_start,
                    "page_end": c.page_end,
                    "line_start": c.line_start,
                    "line_end": c.line_end,
                    "section_path": list(c.section_path),
                    "text": c.text,
                    "header": list(c.table_header),
                    "rows": [list(r) for r in c.table_rows],
                }
            )
        return {
            "doc_id": doc_id,
            "version": v,
            "title": doc.title,
            "source": doc.source,
            "doc_type": doc.doc_type,
            # Whether this caller can fetch the original (it exists and is theirs to see).
            "has_file": _denial(ctx, principal, doc) is None and _has_original(ctx, doc, v),
            "pages": [{"page": p, "passages": pages[p]} for p in sorted(pages)],
        }

    return await asyncio.to_thread(load)


def _denial(ctx: ApiContext, principal: Principal, doc: Document) -> str | None:
    cfg = ctx.settings.originals
    return original_denial(principal, doc, cfg.readers, cfg.roles)


def _original(ctx: ApiContext, doc: Document, version: str) -> Path | None:
    """The original bytes of this version, if this server still has them: the
    content-addressed upload, or the source file while it still has these bytes."""
    if doc.source.startswith("upload:"):
        return ctx.rag.uploads.original(version)
    source = path_from_uri(doc.source) if doc.source.startswith("file:") else None
    if source is not None and source.is_file() and version_of(source.read_bytes()) == version:
        return source
    return None


def _has_original(ctx: ApiContext, doc: Document, version: str) -> bool:
    """Whether `_original` would find the bytes; an upload's are not fetched to say so."""
    if doc.source.startswith("upload:"):
        return ctx.rag.uploads.holds(version)
    return _original(ctx, doc, version) is not None


@router.get("/documents/{doc_id}/file", summary="A version's original bytes")
async def original(
    doc_id: str,
    principal: Caller,
    ctx: Ctx,
    version: Annotated[str, Query(max_length=64)] = "",
) -> FileResponse:
    def locate() -> tuple[Path, str]:
        doc = _doc(ctx, principal, doc_id)
        if (why := _denial(ctx, principal, doc)) is not None:
            ctx.rag.metrics.acl_denials.labels(
                endpoint="/v1/documents/file", reason="original"
            ).inc()
            raise ApiError(403, why)
        v = _version(ctx, doc_id, version)
        path = _original(ctx, doc, v)
        if path is None:
            raise ApiError(404, f"the original file of version {v} is not kept on this server")
        return path, doc.doc_type

    path, doc_type = await asyncio.to_thread(locate)
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
    def load() -> dict[str, Any]:
        meta = ctx.rag.stores.metadata
        chunk = meta.serving([content_id]).get(content_id)
        if chunk is None:  # a passage of a superseded version, still cited by old answers
            found = meta.items([content_id])
            chunk = found[0].chunk if found else None
        if chunk is None or not principal.can_see(chunk.acl_tags):
            raise ApiError(404, f"no passage {content_id}")
        return {
            "content_id": chunk.content_id,
            "doc_id": chunk.doc_id,
            "version": chunk.version,
            "label": chunk.label,
            "page_start": chunk.page_start,
            "page_end": chunk.page_end,
            "line_start": chunk.line_start,
            "line_end": chunk.line_end,
            "doc_type": chunk.doc_type,
            "source": chunk.source,
            "title": chunk.title,
        }

    return await asyncio.to_thread(load)
