"""Documents: upload (202, ingested asynchronously), read, history and delete.

A document a caller may not see is answered with 404, exactly like one that does not
exist, so ACL-tagged documents do not leak through their ids.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile
from fastapi.responses import JSONResponse

from core.errors import UnsupportedFormat
from core.ids import version_of_digest
from core.types import Document, Principal
from indexing.protocols import JobRecord
from ingestion.parse import ParseOptions, document_format
from ragline.api.auth import Caller, require_writer
from ragline.api.context import ApiContext, Ctx
from ragline.api.errors import ApiError
from ragline.api.limits import max_upload_bytes
from ragline.api.uploads import StoredUpload, UploadTooLarge, store_upload, upload_suffix
from ragline.jobs import DELETED, FAILED, INDEXING, QUEUED, SEARCHABLE, job_view, new_job_id
from ragline.worker.tasks import IngestSpec
from ragline.writes import authorize_write, principal_to_dict

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


def _visible_document(ctx: ApiContext, principal: Principal, doc_id: str) -> Document:
    doc = ctx.rag.stores.metadata.document(doc_id)
    if doc is not None and not principal.can_see(doc.acl_tags):
        ctx.rag.metrics.acl_denials.labels(endpoint="/v1/documents", reason="hidden").inc()
    if doc is None or not principal.can_see(doc.acl_tags):
        raise ApiError(404, f"no document {doc_id}")
    return doc


def _tags(raw: list[str]) -> list[str]:
    """Tags may come repeated or comma-separated."""
    return sorted({t.strip() for item in raw for t in item.split(",") if t.strip()})


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
    require_writer(principal)
    name = (key or file.filename or "").strip()
    if not name:
        raise ApiError(422, "the upload needs a file name or a 'key' form field")
    tags = None if acl_tags is None else _tags(acl_tags)
    source = f"upload:{name}"
    # Only documents the caller may see are candidates: seeing none at this key, it gets
    # a document of its own there, whatever hidden ones hold the key (no existence or
    # content oracle). Refusals below can only concern a document it may see.
    target = await asyncio.to_thread(ctx.rag.upload_target, principal, source)
    doc_id = target.doc_id
    await asyncio.to_thread(ctx.rag.check_write, principal, source, tags, doc_id)
    limit = max_upload_bytes(ctx.settings.api)
    suffix = upload_suffix(file.filename or "", doc_type)
    try:
        stored = await asyncio.to_thread(
            store_upload, file.file, ctx.rag.uploads.dir, suffix, limit
        )
    except UploadTooLarge as exc:
        raise ApiError(
            413,
            f"upload is larger than {ctx.settings.api.max_upload_mb:g} MB "
            "(RAGLINE_API__MAX_UPLOAD_MB)",
        ) from exc
    await asyncio.to_thread(_refuse_unusable, ctx, stored)
    await asyncio.to_thread(ctx.rag.uploads.keep, stored.path)  # for workers on other hosts
    version = version_of_digest(stored.sha256)
    spec = IngestSpec(
        path=str(stored.path),
        source=source,
        version=version,
        title=title,
        department=department or None,
        source_trust=source_trust,
        tags=tags,
        name=Path(name).name,
        modified=modified.isoformat() if modified else "",
        principal=principal_to_dict(principal),
        target=doc_id,
    )
    job = await asyncio.to_thread(_submit, ctx, principal, spec, doc_id, batch_id)
    return JSONResponse(
        {
            "doc_id": doc_id,
            "job_id": job.job_id,
            "version": version,
            "state": job.state,
            "reason": job.reason,
            "source": source,
            "batch_id": batch_id,
            "bytes": stored.size,
            "links": {"job": f"/v1/jobs/{job.job_id}", "document": f"/v1/documents/{doc_id}"},
        },
        status_code=202,
    )


def _refuse_unusable(ctx: ApiContext, stored: StoredUpload) -> None:
    """An empty file or one of a refused type is answered now, and its stored copy
    removed (no other upload can need it: the same bytes under the same suffix are
    refused the same way)."""
    if stored.size == 0:
        stored.path.unlink(missing_ok=True)
        raise ApiError(422, "the uploaded file is empty")
    with stored.path.open("rb") as fh:
        head = fh.read(4096)
    try:
        document_format(stored.path, head, ParseOptions.from_settings(ctx.settings.ingest))
    except UnsupportedFormat as exc:
        stored.path.unlink(missing_ok=True)
        raise ApiError(415, str(exc)) from exc


def _submit(
    ctx: ApiContext, principal: Principal, spec: IngestSpec, doc_id: str, batch_id: str
) -> JobRecord:
    meta = ctx.rag.stores.metadata
    record = JobRecord(
        job_id=new_job_id(),
        kind="ingest",
        state=QUEUED,
        doc_id=doc_id,
        version=spec.version,
        batch_id=batch_id,
        source=spec.source,
        owner=principal.user,
    )
    known = ctx.rag.ingest_known(
        Path(spec.path),
        spec.source,
        spec.version,
        doc_id,
        tags=spec.tags,
        department=spec.department,
        source_trust=spec.source_trust,
        title=spec.title or None,
        name=spec.name,
        modified=date.fromisoformat(spec.modified) if spec.modified else None,
        principal=principal,
    )
    if known is not None and known.status == "failed":
        raise ApiError(409, known.reason)
    if known is not None and known.status == "updated":
        # The truth already serves the new metadata; the task brings the derived stores
        # along and says "searchable" once they have it.
        ctx.cache.invalidate()
        record = JobRecord(**{**asdict(record), "state": INDEXING, "reason": known.reason})
    elif known is not None and meta.current_version(doc_id) == spec.version:
        # Same name, same bytes, same metadata: nothing to do, searchable right now.
        return meta.create_job(
            JobRecord(**{**asdict(record), "state": SEARCHABLE, "reason": "unchanged"})
        )
    job = meta.create_job(record)
    try:
        ctx.runner.submit("ingest", job.job_id, spec=spec.to_dict())
    except Exception as exc:
        meta.update_job(job.job_id, FAILED, f"could not queue the ingestion: {exc}")
        raise ApiError(503, "the task queue is unavailable; try again later") from exc
    return job


@router.get("/documents/{doc_id}", summary="A document and its current version")
async def get_document(
    doc_id: str,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    def load() -> dict[str, Any]:
        doc = _visible_document(ctx, principal, doc_id)
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
            _visible_document(ctx, principal, doc_id)  # 404, a hidden one's denial counted
            raise ApiError(404, f"no document {doc_id}")  # (visible now: created since)
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
    require_writer(principal)

    def run() -> JobRecord:
        doc = _visible_document(ctx, principal, doc_id)
        authorize_write(principal, doc, None, doc_id)
        meta = ctx.rag.stores.metadata
        # Truth first: once marked deleted nothing of it is served, whatever the derived
        # stores still hold; the task then removes it from them.
        meta.delete_document(doc_id, ctx.rag.stores.derived)
        ctx.cache.invalidate()
        job = meta.create_job(
            JobRecord(
                job_id=new_job_id(),
                kind="delete",
                state=QUEUED,
                doc_id=doc_id,
                source=doc.source,
                owner=principal.user,
            )
        )
        try:
            ctx.runner.submit(
                "delete", job.job_id, doc_id=doc_id, principal=principal_to_dict(principal)
            )
        except Exception as exc:  # the truth is already right; a later sync converges
            meta.update_job(job.job_id, DELETED, f"stores converge on the next sync ({exc})")
        return job

    job = await asyncio.to_thread(run)
    return JSONResponse({"doc_id": doc_id, **job_view(job)}, status_code=202)
