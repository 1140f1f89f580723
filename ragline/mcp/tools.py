"""What the MCP tools do and return, for one fixed principal.

Kept apart from the server wiring (`ragline.mcp.server`) so the result shapes and the
permission checks read in one place. Results are pydantic models: the SDK publishes their
JSON schema as each tool's output schema, so an agent knows the fields before calling.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from core.errors import InvalidRequest
from core.formats import FORMATS
from core.ids import readable_source
from core.types import Chunk, Citation, Principal, QueryFilter
from ragline.app import Ragline
from ragline.limits import check_query, check_top_k
from ragline.reading import DocumentReader
from ragline.render import block_view, route_view
from routing.instruction import TaskContext

log = logging.getLogger("ragline.mcp")

MAX_LIST = 500  # list_documents: one answer an agent can still read

SEARCH_DESCRIPTION = f"""\
Search the company documents this caller may see; returns the best-matching passages,
best first. Each hit has the exact passage `text`, its citation `label` (like
[Docab12cd_p7]), the `doc_id`, the `file` and `source` it came from, `title`, `page_start`/
`page_end`, `line_start`/`line_end` and `content_id`. Quote a passage with its label.
`covered`: false means the passages found do not cover the question (do not treat them as an
answer). `doc_types` narrows to formats: {", ".join(FORMATS)}."""

ASK_DESCRIPTION = """\
Answer a question from the company documents this caller may see. The `answer` is built
only from retrieved text, every sentence followed by its citation label like
[Docab12cd_p7] ([Docab12cd_p7.2] when two passages of one page are cited: each label names
exactly one passage); `citations` resolves each label to `file`, `source`, `title`,
`page_start`/`page_end` and `line_start`/`line_end` of the quoted sentences (the whole
passage's span in `chunk_*`), `doc_id` and `content_id`. `sentences` lists each answer
sentence with its labels and whether a cited passage supports it. `confidence` (0-1) says
how likely the answer is right; `covered`: false means the material does not cover the
question: the answer then says so, cites nothing and `reason` says why, so do not guess an
answer from it. A `reason` starting "partial:" on a covered answer names what it lacks.
Labels an LLM invented are removed and listed in `removed_labels`."""

META_DESCRIPTION = """\
Metadata of one document by `doc_id` (from a search hit or citation): title, file/source,
format, modified date, page count of the current version, and every version with its
status, chunk and page counts and when it was staged and became searchable. A document
this caller may not see is reported exactly like one that does not exist."""

LIST_DESCRIPTION = """\
The documents this caller may see, by title: doc_id, title, file/source, format, modified
date and `current_version` (null while a document is not yet searchable). `total` counts
all visible documents; `truncated` says whether more exist than `limit` returned."""


# -- result shapes ---------------------------------------------------------------------
class Passage(BaseModel):
    label: str = Field(description="Citation label, e.g. [Docab12cd_p7].")
    doc_id: str
    content_id: str = Field(description="Stable id of this passage in every store.")
    title: str
    file: str = Field(description="Local path of the file, or the upload name.")
    source: str = Field(description="Source URI: file:///... or upload:NAME.")
    page_start: int
    page_end: int
    line_start: int
    line_end: int
    section: list[str] = Field(description="Heading path of the passage.")
    score: float
    text: str


class SearchResult(BaseModel):
    question: str
    covered: bool = Field(description="False: the passages do not cover the question.")
    hits: list[Passage]
    warnings: list[str]
    route: dict[str, Any] = Field(
        default_factory=dict,
        description="Routing decision: rule, strategy, sources (name, weight, timeout_ms), "
        "filters, synonyms_applied, fallback.",
    )


class CitedSource(BaseModel):
    label: str
    doc_id: str
    content_id: str
    title: str
    file: str
    source: str
    page_start: int
    page_end: int
    line_start: int = Field(description="First source line of the quoted sentences.")
    line_end: int = Field(description="Last source line of the quoted sentences.")
    chunk_page_start: int
    chunk_page_end: int
    chunk_line_start: int = Field(description="First source line of the whole passage.")
    chunk_line_end: int


class CitedSentence(BaseModel):
    text: str = Field(description="The sentence, labels removed.")
    labels: list[str]
    supported: bool = Field(description="False: no cited passage holds this sentence.")


class CitedAnswer(BaseModel):
    question: str
    answer: str = Field(description="Answer text; each sentence ends with its label.")
    covered: bool = Field(description="False: the material does not cover the question.")
    confidence: float = Field(description="0-1: how likely the answer is right.")
    reason: str = Field(description="Why not covered, or what a partial answer lacks.")
    mode: str = Field(description="extractive (quoted sentences) or llm.")
    citations: list[CitedSource]
    sentences: list[CitedSentence]
    removed_labels: list[str]
    warnings: list[str]
    trace_id: str
    answered_by: str = Field(
        default="documents", description="documents | rows | status: which kind of source."
    )
    blocks: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The cited content blocks ([DocX_pY], [DB_<template>_<n>], "
        "[API_<source>_<n>]) with source_kind, content, freshness and permission_tags.",
    )
    route: dict[str, Any] = Field(default_factory=dict, description="Routing decision.")
    conflicts: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Passages that state different values for the same thing, with the "
        "preferred one (newer, more authoritative source).",
    )


class VersionInfo(BaseModel):
    version: str
    status: str
    chunks: int
    pages: int
    staged_at: str | None
    searchable_at: str | None


class DocumentMeta(BaseModel):
    doc_id: str
    title: str
    file: str
    source: str
    doc_type: str
    modified: str | None
    pages: int = Field(description="Pages of the current version (0 if none).")
    current_version: str | None
    versions: list[VersionInfo]


class DocumentSummary(BaseModel):
    doc_id: str
    title: str
    file: str
    source: str
    doc_type: str
    modified: str | None
    current_version: str | None


class DocumentList(BaseModel):
    documents: list[DocumentSummary]
    total: int
    truncated: bool


def _passage(chunk: Chunk, score: float) -> Passage:
    return Passage(
        label=chunk.label,
        doc_id=chunk.doc_id,
        content_id=chunk.content_id,
        title=chunk.title,
        file=readable_source(chunk.source),
        source=chunk.source,
        page_start=chunk.page_start,
        page_end=chunk.page_end,
        line_start=chunk.line_start,
        line_end=chunk.line_end,
        section=list(chunk.section_path),
        score=round(score, 6),
        text=chunk.text,
    )


def _cited(c: Citation, doc_ids: dict[str, str]) -> CitedSource:
    return CitedSource(
        label=c.label,
        doc_id=doc_ids.get(c.content_id, ""),
        content_id=c.content_id,
        title=c.title,
        file=readable_source(c.source),
        source=c.source,
        page_start=c.page_start,
        page_end=c.page_end,
        line_start=c.line_start,
        line_end=c.line_end,
        chunk_page_start=c.chunk_page_start,
        chunk_page_end=c.chunk_page_end,
        chunk_line_start=c.chunk_line_start,
        chunk_line_end=c.chunk_line_end,
    )


# -- the tools -------------------------------------------------------------------------
class RaglineTools:
    """The four tools for one principal. The principal is fixed when the server starts;
    no tool argument can widen what it sees."""

    def __init__(self, rag: Ragline, principal: Principal) -> None:
        self.rag = rag
        self.principal = principal
        self.reader = DocumentReader(rag)

    def _checked(self, question: str, top_k: int, context: TaskContext) -> tuple[str, int]:
        # The same limits as every other door into Ragline.
        api = self.rag.settings.api
        try:
            check_top_k(top_k, api)
            return check_query(question, context, api), top_k
        except InvalidRequest as exc:
            raise ToolError(str(exc)) from exc

    async def _refresh(self) -> None:
        # Another process (`ragline ingest`, a worker) may have flushed a newer dense
        # index; the stores read it here, so answers stay fresh in a long-lived server.
        refresh = getattr(self.rag.stores.dense, "refresh", None)
        if callable(refresh):
            try:
                await asyncio.to_thread(refresh)
            except Exception:  # a half-written index is retried on the next call
                log.exception("dense index refresh failed")

    @staticmethod
    def _context(task: str, context: dict[str, Any] | None) -> TaskContext:
        try:
            return TaskContext.parse(context or {}, task)
        except InvalidRequest as exc:
            raise ToolError(str(exc)) from exc

    async def search(
        self,
        question: str,
        top_k: int,
        doc_types: list[str],
        task: str = "qa",
        context: dict[str, Any] | None = None,
    ) -> SearchResult:
        task_context = self._context(task, context)
        question, top_k = self._checked(question, top_k, task_context)
        await self._refresh()
        try:
            where = QueryFilter.for_principal(self.principal, doc_types=doc_types)
        except InvalidRequest as exc:  # an unknown format
            raise ToolError(str(exc)) from exc
        result = await self.rag.asearch(
            question, self.principal, where=where, top_k=top_k, context=task_context
        )
        return SearchResult(
            question=result.question,
            covered=result.covered,
            hits=[_passage(h.chunk, h.score) for h in result.hits],
            warnings=list(result.warnings),
            route=route_view(result.route),
        )

    async def ask(
        self,
        question: str,
        top_k: int,
        task: str = "qa",
        context: dict[str, Any] | None = None,
    ) -> CitedAnswer:
        task_context = self._context(task, context)
        question, top_k = self._checked(question, top_k, task_context)
        await self._refresh()
        where = QueryFilter.for_principal(self.principal)
        answer = await self.rag.aask(
            question, self.principal, where=where, top_k=top_k, context=task_context
        )
        # Citations are drawn from the hits; their chunks know the doc_id a citation lacks.
        doc_ids = {h.chunk.content_id: h.chunk.doc_id for h in answer.hits}
        return CitedAnswer(
            question=answer.question,
            answer=answer.text,
            covered=answer.covered,
            confidence=answer.confidence,
            reason=answer.reason,
            mode=answer.mode,
            citations=[_cited(c, doc_ids) for c in answer.citations],
            sentences=[
                CitedSentence(text=s.text, labels=list(s.labels), supported=s.supported)
                for s in answer.sentences
            ],
            removed_labels=list(answer.removed_labels),
            warnings=list(answer.warnings),
            trace_id=answer.trace_id,
            answered_by=answer.knowledge.get("answered_by", "documents"),
            blocks=[block_view(b) for b in answer.blocks],
            route=route_view(answer.route),
            conflicts=list(answer.conflicts),
        )

    async def document_meta(self, doc_id: str) -> DocumentMeta:
        return await asyncio.to_thread(self._document_meta, doc_id.strip())

    def _document_meta(self, doc_id: str) -> DocumentMeta:
        found = self.rag.get_document_meta(doc_id, self.principal)
        if found is None:
            # The same message either way: a tagged document's id reveals nothing.
            raise ToolError(f"no document {doc_id}")
        return DocumentMeta(
            doc_id=found["doc_id"],
            title=found["title"],
            file=readable_source(found["source"]),
            source=found["source"],
            doc_type=found["doc_type"],
            modified=found["modified"],
            pages=found["pages"],
            current_version=found["current_version"],
            versions=[VersionInfo(**v) for v in found["versions"]],
        )

    async def list_documents(self, limit: int) -> DocumentList:
        if not 1 <= limit <= MAX_LIST:
            raise ToolError(f"limit must be between 1 and {MAX_LIST}")
        return await asyncio.to_thread(self._list_documents, limit)

    def _list_documents(self, limit: int) -> DocumentList:
        meta = self.rag.stores.metadata
        visible = sorted(
            self.reader.documents(self.principal), key=lambda d: (d.title.casefold(), d.doc_id)
        )
        return DocumentList(
            documents=[
                DocumentSummary(
                    doc_id=d.doc_id,
                    title=d.title,
                    file=readable_source(d.source),
                    source=d.source,
                    doc_type=d.doc_type,
                    modified=d.modified.isoformat() if d.modified else None,
                    current_version=meta.current_version(d.doc_id),
                )
                for d in visible[:limit]
            ],
            total=len(visible),
            truncated=len(visible) > limit,
        )
