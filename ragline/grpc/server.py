"""The Ragline gRPC service: protobuf in, the HTTP API's own services and queries, protobuf
out. No rules live here: keys resolve through the same KeyRing, questions through the same
`Queries` (limits, cache, audit), uploads through the same `DocumentJobs` and metadata
through `Ragline`, so both doors always agree on who may see and do what.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from core.blocks import GatewayResult
from core.errors import RaglineError
from core.settings import Settings
from core.types import Principal
from generation.conversation import Turn
from indexing.protocols import JobRecord
from ragline.agent import chat_focus
from ragline.api.app import build_context, close_context
from ragline.api.context import ApiContext
from ragline.api.errors import ApiError, status_of
from ragline.api.sse import pieces
from ragline.documents import UploadForm, split_tags
from ragline.grpc import ragline_pb2 as pb
from ragline.grpc import ragline_pb2_grpc as pb_grpc
from ragline.jobs import job_view
from ragline.limits import check_question
from ragline.render import gateway_view

log = logging.getLogger("ragline.grpc")
T = TypeVar("T")

_CODES = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.FAILED_PRECONDITION,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    415: grpc.StatusCode.INVALID_ARGUMENT,
    422: grpc.StatusCode.INVALID_ARGUMENT,
    503: grpc.StatusCode.UNAVAILABLE,
}


def _answer(view: dict[str, Any], retrieval_query: str = "") -> pb.Answer:
    model = view.get("model") or {}
    blocks = view.get("blocks") or []
    return pb.Answer(
        question=view["question"],
        answer=view["answer"],
        covered=view["covered"],
        mode=view["mode"],
        citations=[
            pb.Citation(
                **{k: c[k] for k in ("label", "content_id", "source", "title")},
                page_start=c["page_start"],
                page_end=c["page_end"],
                line_start=c["line_start"],
                line_end=c["line_end"],
            )
            for c in view["citations"]
        ],
        removed_labels=view["removed_labels"],
        warnings=view["warnings"],
        trace_id=view.get("trace_id") or "",
        model=pb.ModelUse(**model) if model else None,
        timings_ms=view.get("timings_ms", {}),
        retrieval_query=retrieval_query,
        reason=view.get("reason") or "",
        confidence=float(view.get("confidence") or 0.0),
        # The cited blocks as HTTP returns them: a gateway answer's [DB_...]/[API_...]
        # labels resolve here (it has no document citations).
        blocks_json=json.dumps(blocks, ensure_ascii=False, default=str),
        block_labels=[b["label"] for b in blocks if b.get("label")],
        answered_by=(view.get("knowledge") or {}).get("answered_by", "documents"),
    )


def _job(job: JobRecord) -> pb.Job:
    view = job_view(job)
    times = {k: view[k] or "" for k in ("created_at", "updated_at")}  # proto3: "" for none
    return pb.Job(**{**view, **times})


class RaglineService(pb_grpc.RaglineServicer):
    def __init__(self, ctx: ApiContext) -> None:
        self.ctx = ctx

    async def _principal(self, context: grpc.aio.ServicerContext) -> Principal:
        metadata = {k.lower(): v for k, v in (context.invocation_metadata() or ())}
        presented = str(metadata.get("authorization", "")).strip()
        if presented.lower().startswith("bearer "):
            presented = presented[7:].strip()
        presented = presented or str(metadata.get("x-api-key", "")).strip()
        if not presented:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "missing API key: send metadata 'authorization: Bearer <key>'",
            )
        try:
            principal = self.ctx.keys.admit(presented)  # the key's rate limit applies too
        except ApiError as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message)
            raise  # unreachable: abort raises
        if principal is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid API key")
        assert principal is not None
        return principal

    async def _call(self, context: grpc.aio.ServicerContext, work: Awaitable[T]) -> T:
        try:
            return await work
        except ApiError as exc:
            await context.abort(_CODES.get(exc.status, grpc.StatusCode.UNKNOWN), exc.message)
            raise  # unreachable: abort raises
        except RaglineError as exc:
            status = status_of(exc)
            if status is None:
                raise
            await context.abort(_CODES.get(status, grpc.StatusCode.UNKNOWN), str(exc))
            raise  # unreachable: abort raises

    async def Search(
        self, request: pb.SearchRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchResponse:
        principal = await self._principal(context)
        view = await self._call(
            context,
            self.ctx.queries.run(
                principal,
                request.question,
                top_k=request.top_k or None,
                doc_types=list(request.doc_types),
                task=request.task or "qa",
                ask=False,
            ),
        )
        return pb.SearchResponse(
            question=view["question"],
            covered=view["covered"],
            hits=[
                pb.Passage(
                    label=h["label"],
                    content_id=h["content_id"],
                    doc_id=h.get("doc_id", ""),
                    title=h["title"],
                    source=h["source"],
                    page_start=h["page_start"],
                    page_end=h["page_end"],
                    line_start=h["line_start"],
                    line_end=h["line_end"],
                    score=h["score"],
                    text=h["text"],
                    section=h["section_path"],
                )
                for h in view["hits"]
            ],
            warnings=view["warnings"],
            route_rule=view["route"]["rule"],
        )

    async def Ask(
        self, request: pb.AskRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.AskEvent]:
        principal = await self._principal(context)
        question = await self._call(
            context, asyncio.to_thread(check_question, request.question, self.ctx.settings.api)
        )
        yield pb.AskEvent(status=pb.Status(stage="answering"))
        turns = [
            Turn(role, t.content)
            for t in request.history
            if (role := t.role.strip().lower()) in ("user", "assistant")
        ]
        focus = await chat_focus(self.ctx.rag, [*turns, Turn("user", question)])
        view = await self._call(
            context,
            self.ctx.queries.run(
                principal,
                focus.query,
                top_k=request.top_k or None,
                doc_types=list(request.doc_types),
                task=request.task or "qa",
                ask=True,
            ),
        )
        view["question"] = question
        for piece in pieces(view["answer"]):
            yield pb.AskEvent(delta=piece)
        yield pb.AskEvent(answer=_answer(view, focus.query))

    async def GetDocumentMeta(
        self, request: pb.DocumentMetaRequest, context: grpc.aio.ServicerContext
    ) -> pb.DocumentMeta:
        principal = await self._principal(context)
        doc_id = request.doc_id.strip()
        meta = await asyncio.to_thread(self.ctx.rag.get_document_meta, doc_id, principal)
        if meta is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no document {doc_id}")
        assert meta is not None
        return pb.DocumentMeta(
            doc_id=meta["doc_id"],
            title=meta["title"],
            source=meta["source"],
            doc_type=meta["doc_type"],
            modified=meta["modified"] or "",
            pages=meta["pages"],
            current_version=meta["current_version"] or "",
            versions=[
                pb.VersionInfo(
                    version=v["version"],
                    status=v["status"],
                    chunks=v["chunks"],
                    pages=v["pages"],
                    staged_at=v["staged_at"] or "",
                    searchable_at=v["searchable_at"] or "",
                )
                for v in meta["versions"]
            ],
        )

    async def UploadDocument(
        self, request: pb.UploadRequest, context: grpc.aio.ServicerContext
    ) -> pb.UploadResponse:
        principal = await self._principal(context)
        trust = request.source_trust if request.HasField("source_trust") else None
        if trust is not None and not 0.0 <= trust <= 1.0:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "source_trust must be in 0..1")
        tags = split_tags(request.acl_tags)
        if tags and request.public:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "give acl_tags or public, not both"
            )
        form = UploadForm(
            filename=request.filename,
            title=request.title,
            department=request.department,
            doc_type=request.doc_type,
            # As HTTP's omitted field: no tags keeps an existing document's tags.
            tags=tags or ([] if request.public else None),
            source_trust=trust,
            batch_id=request.batch_id,
        )
        receipt = await self._call(
            context,
            asyncio.to_thread(
                self.ctx.documents.upload, principal, form, io.BytesIO(request.content)
            ),
        )
        return pb.UploadResponse(
            doc_id=receipt.doc_id,
            job_id=receipt.job.job_id,
            version=receipt.version,
            state=receipt.job.state,
            reason=receipt.job.reason or "",
            source=receipt.source,
        )

    async def GetJob(self, request: pb.JobRequest, context: grpc.aio.ServicerContext) -> pb.Job:
        principal = await self._principal(context)
        job = await self._call(
            context, asyncio.to_thread(self.ctx.documents.job, principal, request.job_id.strip())
        )
        return _job(job)

    async def DeleteDocument(
        self, request: pb.DeleteRequest, context: grpc.aio.ServicerContext
    ) -> pb.Job:
        principal = await self._principal(context)
        job = await self._call(
            context,
            asyncio.to_thread(self.ctx.documents.delete, principal, request.doc_id.strip()),
        )
        return _job(job)

    async def QueryRows(
        self, request: pb.GatewayRequest, context: grpc.aio.ServicerContext
    ) -> pb.GatewayResponse:
        principal = await self._principal(context)
        result = await self._call(
            context,
            self.ctx.rag.query_rows(
                principal, request.name, dict(request.params), question=request.question
            ),
        )
        return _gateway(result)

    async def LookupStatus(
        self, request: pb.GatewayRequest, context: grpc.aio.ServicerContext
    ) -> pb.GatewayResponse:
        principal = await self._principal(context)
        result = await self._call(
            context,
            self.ctx.rag.lookup_status(
                principal, request.name, dict(request.params), question=request.question
            ),
        )
        return _gateway(result)


def _gateway(result: GatewayResult) -> pb.GatewayResponse:
    view = gateway_view(result)
    return pb.GatewayResponse(
        trace_id=view["trace_id"],
        status=view["status"],
        message=view["message"],
        source_id=view["source_id"],
        labels=[b["label"] for b in view["blocks"] if b["label"]],
        blocks_json=json.dumps(view["blocks"], ensure_ascii=False, default=str),
    )


def create_server(
    ctx: ApiContext, address: str, max_message_mb: float, max_in_flight: int = 0
) -> grpc.aio.Server:
    """The server on `address`. Over `max_in_flight` calls at once (0: no bound), gRPC's
    core refuses the next with RESOURCE_EXHAUSTED before a handler runs."""
    size = int(max_message_mb * 2**20)
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", size),
            ("grpc.max_send_message_length", size),
        ],
        maximum_concurrent_rpcs=max_in_flight or None,
    )
    pb_grpc.add_RaglineServicer_to_server(RaglineService(ctx), server)
    server.add_insecure_port(address)
    return server


async def serve(settings: Settings, ready: Callable[[str], None] | None = None) -> None:
    """Run until cancelled. `ready` is told the address once it accepts calls."""
    ctx = build_context(settings)
    address = f"{settings.grpc.host}:{settings.grpc.port}"
    g = settings.grpc
    server = create_server(ctx, address, g.max_message_mb, g.max_in_flight)
    await server.start()
    log.info("gRPC listening on %s", address)
    if ready is not None:
        ready(address)
    try:
        await server.wait_for_termination()
    finally:
        await server.stop(grace=2)
        close_context(ctx)
