"""The tools Ragline offers its agent loop, for one principal.

Every tool runs through `Ragline` with the caller's principal and filter, so the model can
never see more than the caller. Adding a tool is one `registry.register(Tool(...))`; the
gateway's `query_rows` / `lookup_status` (methods on `Ragline`, issue 10) plug in through
`register_method` once they exist.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from core.ids import readable_source
from core.settings import AgentSettings
from core.text import query_terms
from core.types import Document, Hit, Principal, QueryFilter
from fusion.rerank import SignalWeights
from generation.agent.tools import Tool, ToolFailure, ToolOutput, ToolRegistry

if TYPE_CHECKING:
    from ragline.app import Ragline

SEARCH_DESCRIPTION = (
    "Search the company documents the caller may see. Returns JSON: `results`, best "
    "first, each with `document` (name), `doc_id`, `label` (cite it exactly, like "
    "[Doc1a2b3c_p4]), `page`, `snippet` and `score` (0..1). When `covered` is false the "
    "material does not cover the query: say so instead of guessing. To compare two "
    "documents, call this once per document with its name in `document`."
)
META_DESCRIPTION = (
    "Metadata of one document: title, file, format, modified date, pages, versions. "
    "`doc_id` is a doc_id, a citation label like [Doc1a2b3c_p4], or a document name."
)

_HANDLE = re.compile(r"\[?Doc([0-9a-f]{6})(?:_p\d+)?\]?", re.IGNORECASE)


def score_scale(weights: SignalWeights) -> float:
    """The reranker score a passage perfect on every signal would get (no cross-encoder:
    it is optional, and a normalised score must mean the same with or without it)."""
    skip = {"cross_encoder", "trust"}
    return sum(getattr(weights, f.name) for f in fields(weights) if f.name not in skip)


def relevance(hit: Hit, scale: float) -> float:
    """The reranker's score on a 0..1 scale."""
    return max(0.0, min(1.0, hit.score / scale)) if scale > 0 else 0.0


def snippet(text: str, query: str, limit: int) -> str:
    """`limit` characters of the passage around the first query term it contains."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    low = flat.lower()
    positions = [p for t in query_terms(query) if (p := low.find(t)) >= 0]
    start = max(0, min(positions) - limit // 4) if positions else 0
    start = min(start, len(flat) - limit)
    cut = flat[start : start + limit]
    return ("…" if start else "") + cut + ("…" if start + limit < len(flat) else "")


class AgentTools:
    def __init__(
        self, rag: Ragline, principal: Principal, where: QueryFilter, settings: AgentSettings
    ) -> None:
        self.rag = rag
        self.principal = principal
        self.where = where
        self.settings = settings
        self.scale = score_scale(rag.reranker.weights)

    def registry(self) -> ToolRegistry:
        registry = self._document_tools()
        self._register_gateway(registry)
        return registry

    def _register_gateway(self, registry: ToolRegistry) -> None:
        """The knowledge gateway's operations, for the templates and status sources this
        principal may use (none configured or allowed: no tool, the model never sees it)."""
        from ragline.render import gateway_view

        catalogue = self.rag.gateway_catalogue(self.principal)
        if catalogue.get("templates"):
            names = ", ".join(f"{t['name']} ({t['description']})" for t in catalogue["templates"])

            async def rows(template: str = "", params: Any = None, question: str = "") -> Any:
                result = await self.rag.query_rows(
                    self.principal, template, dict(params or {}), question=question
                )
                return gateway_view(result)

            register_method(
                registry,
                "query_rows",
                "Rows from the company's databases, only through these declared templates: "
                f"{names}. Give `template` and its `params`, or a `question`. Cite the "
                "block's label (like [DB_template_1]) for every figure.",
                {
                    "type": "object",
                    "properties": {
                        "template": {"type": "string", "description": "Template name."},
                        "params": {"type": "object", "description": "Template parameters."},
                        "question": {"type": "string", "description": "Or: the question."},
                    },
                },
                rows,
                "question",
            )
        if catalogue.get("status_sources"):
            ids = ", ".join(f"{h['id']} ({h['description']})" for h in catalogue["status_sources"])

            async def status(source: str = "", params: Any = None, question: str = "") -> Any:
                result = await self.rag.lookup_status(
                    self.principal, source, dict(params or {}), question=question
                )
                return gateway_view(result)

            register_method(
                registry,
                "lookup_status",
                f"Live status from these sources: {ids}. Give `source` and its `params` "
                "(e.g. a ticket or order id), or a `question` naming the identifier. Cite the "
                "block's label (like [API_source_1]).",
                {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string", "description": "Status source id."},
                        "params": {"type": "object", "description": "Identifier parameters."},
                        "question": {"type": "string", "description": "Or: the question."},
                    },
                },
                status,
                "question",
            )

    def _document_tools(self) -> ToolRegistry:
        top = self.settings.default_top_k
        return ToolRegistry(
            [
                Tool(
                    "search_documents",
                    SEARCH_DESCRIPTION,
                    {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "description": "What to look for."},
                            "top_k": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": 5,
                                "default": top,
                                "description": f"Passages to return (1-5, default {top}).",
                            },
                            "document": {
                                "type": "string",
                                "description": "Optional: only search this document "
                                "(its name, file name or doc_id).",
                            },
                        },
                        "required": ["query"],
                    },
                    self.search_documents,
                    "query",
                ),
                Tool(
                    "get_document_meta",
                    META_DESCRIPTION,
                    {
                        "type": "object",
                        "properties": {"doc_id": {"type": "string"}},
                        "required": ["doc_id"],
                    },
                    self.get_document_meta,
                    "doc_id",
                ),
            ]
        )

    # -- documents this principal may see ------------------------------------------
    def _visible(self) -> list[Document]:
        return [
            d for d in self.rag.stores.metadata.documents() if self.principal.can_see(d.acl_tags)
        ]

    def _find_documents(self, name: str) -> list[Document]:
        """Documents a model's name for them refers to: doc_id, label/handle, title or
        file name (exact first, then containment either way)."""
        docs = self._visible()
        wanted = name.strip().strip("\"'").casefold()
        if not wanted:
            return []
        if m := _HANDLE.fullmatch(name.strip()):
            return [d for d in docs if d.handle == m.group(1).lower()]
        files = {d.doc_id: readable_source(d.source, name_only=True).casefold() for d in docs}
        exact = [
            d
            for d in docs
            if wanted in (d.doc_id, d.title.casefold(), files[d.doc_id])
            or wanted == files[d.doc_id].rsplit(".", 1)[0]
        ]
        if exact:
            return exact
        words = set(re.findall(r"\w+", wanted))
        scored = []
        for d in docs:
            names = f"{d.title} {files[d.doc_id]}".casefold()
            have = set(re.findall(r"\w+", names.replace("_", " ").replace("-", " ")))
            if wanted in names or (words and words <= have):
                scored.append(d)
        return scored

    # -- the tools -------------------------------------------------------------------
    async def search_documents(self, args: dict[str, Any]) -> ToolOutput:
        query = str(args.get("query", "")).strip()
        if not query:
            raise ToolFailure("query is empty")
        query = query[: self.rag.settings.api.max_query_chars]
        top_k = int(args.get("top_k") or self.settings.default_top_k)
        where, scope_note = self.where, ""
        if document := str(args.get("document", "") or "").strip():
            docs = await asyncio.to_thread(self._find_documents, document)
            if docs:
                where = replace(where, doc_ids=frozenset(d.doc_id for d in docs))
            else:
                scope_note = f"no document named {document!r}; searched all documents"
        result = await self.rag.asearch(query, self.principal, where=where, top_k=max(top_k, 5))
        scored = [(relevance(h, self.scale), h) for h in result.hits]
        best = scored[0][0] if scored else 0.0
        kept = [(s, h) for s, h in scored if s >= best - self.settings.drop_below_best][:top_k]
        content: dict[str, Any] = {"query": query}
        if document:
            content["document"] = document
        if not kept or best < self.settings.min_score:
            content.update(
                covered=False,
                results=[],
                note=(
                    "not in the material: no passage found"
                    if not kept
                    else f"not in the material: the best passage scores {best:.2f}, under "
                    f"the threshold {self.settings.min_score:.2f}"
                ),
            )
            if scope_note:
                content["scope"] = scope_note
            return ToolOutput(content, (), 0)
        content.update(
            covered=True,
            results=[
                {
                    "document": h.chunk.title or readable_source(h.chunk.source, name_only=True),
                    "doc_id": h.chunk.doc_id,
                    "label": h.chunk.label,
                    "page": h.chunk.page_start,
                    "snippet": snippet(h.chunk.text, query, self.settings.snippet_chars),
                    "score": round(s, 3),
                }
                for s, h in kept
            ],
            dropped=sum(1 for s, _ in scored[:top_k] if s < best - self.settings.drop_below_best),
        )
        if scope_note:
            content["scope"] = scope_note
        return ToolOutput(content, tuple(h for _, h in kept), len(kept))

    async def get_document_meta(self, args: dict[str, Any]) -> ToolOutput:
        name = str(args.get("doc_id", "")).strip()
        docs = await asyncio.to_thread(self._find_documents, name)
        if not docs:
            # The same answer for hidden and missing documents: ids leak nothing.
            raise ToolFailure(f"no document {name!r}")
        meta = self.rag.stores.metadata
        out = []
        for doc in docs[:3]:
            versions = await asyncio.to_thread(meta.versions, doc.doc_id)
            current = next((v for v in versions if v.status == "current"), None)
            out.append(
                {
                    "doc_id": doc.doc_id,
                    "title": doc.title,
                    "file": readable_source(doc.source, name_only=True),
                    "doc_type": doc.doc_type,
                    "department": doc.department,
                    "modified": doc.modified.isoformat() if doc.modified else None,
                    "pages": current.page_count if current else 0,
                    "current_version": current.version if current else None,
                    "versions": [
                        {"version": v.version, "status": v.status, "chunks": v.chunk_count}
                        for v in versions
                    ],
                }
            )
        content: dict[str, Any] = {"documents": out}
        if len(docs) > 3:
            content["note"] = f"{len(docs)} documents match; showing 3"
        return ToolOutput(content, (), len(out))


def register_method(
    registry: ToolRegistry,
    name: str,
    description: str,
    parameters: dict[str, Any],
    method: Callable[..., Awaitable[Any]],
    primary: str,
) -> None:
    """Expose an async `Ragline` method (e.g. the gateway's `query_rows`) as a tool: its
    keyword arguments are the tool's parameters, its JSON-able result the tool's result."""

    async def handler(args: dict[str, Any]) -> ToolOutput:
        try:
            value = await method(**args)
        except (TypeError, ValueError, LookupError) as exc:
            raise ToolFailure(str(exc)) from exc
        items = len(value) if isinstance(value, list | tuple | dict) else 1
        return ToolOutput(value if isinstance(value, dict) else {"result": value}, (), items)

    registry.register(Tool(name, description, parameters, handler, primary))
