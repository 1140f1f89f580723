"""Search and ask for one principal, through the process's query cache: one way for every
door (/v1/search, /v1/ask, /v1/chat/completions, gRPC), so all see the same limits,
permissions, cache and audit."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from core.formats import doc_type_filter
from core.types import Principal, QueryFilter
from ragline.app import Ragline
from ragline.limits import check_query, check_top_k
from ragline.query_cache import QueryCache, cache_key
from ragline.render import answer_view, search_view
from routing.instruction import TaskContext


async def _nothing() -> None:
    return None


class Queries:
    """`rag`'s search and ask as views, cached in `cache`; `before` runs first (picking up
    a dense index another process flushed)."""

    def __init__(
        self,
        rag: Ragline,
        cache: QueryCache,
        before: Callable[[], Awaitable[None]] = _nothing,
    ) -> None:
        self.rag = rag
        self.cache = cache
        self.before = before

    def checked(
        self,
        question: str,
        top_k: int | None,
        task: str,
        context: dict[str, Any] | None = None,
        filters: dict[str, Any] | None = None,
        doc_types: Collection[str] = (),
    ) -> tuple[str, int | None, TaskContext]:
        """The question, top_k and task context of a query, checked against the limits
        (InvalidRequest if bad), and its doc_types: what `run` checks first, for a door
        that must refuse bad input before it answers in another way (a stream)."""
        api = self.rag.settings.api
        task_context = _task_context(task, context, filters)
        doc_type_filter(doc_types)
        return check_query(question, task_context, api), check_top_k(top_k, api), task_context

    async def run(
        self,
        principal: Principal,
        question: str,
        *,
        top_k: int | None,
        doc_types: list[str],
        task: str,
        ask: bool,
        context: dict[str, Any] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The search's or the answer's view (`ragline.render`), with `cached`. Bad input
        raises InvalidRequest before any work."""
        question, top_k, task_context = self.checked(
            question, top_k, task, context, filters, doc_types
        )
        await self.before()
        options = {
            "top_k": top_k,
            "doc_types": sorted(set(doc_types)),
            "task": task,
            "context": repr(task_context),
        }
        key = cache_key(principal, "ask" if ask else "search", question, options)
        if (cached := self.cache.get(key)) is not None:
            if ask:  # every answer served is audited, cached or not
                await asyncio.to_thread(self._audit_cached, principal, question, cached)
            return {**cached, "cached": True}
        generation = self.cache.generation
        # The principal alone decides the ACL filter; the request only narrows further.
        where = QueryFilter.for_principal(principal, doc_types=frozenset(doc_types))
        if ask:
            answer = await self.rag.aask(
                question, principal, where=where, top_k=top_k, context=task_context
            )
            view = answer_view(answer)
        else:
            result = await self.rag.asearch(
                question, principal, where=where, top_k=top_k, context=task_context
            )
            view = search_view(result)
        if view.get("knowledge", {}).get("answered_by") != "status":  # live: never cached
            self.cache.put(key, view, generation)
        return {**view, "cached": False}

    def _audit_cached(self, principal: Principal, question: str, view: dict[str, Any]) -> None:
        """A cached answer is audited like a fresh one: the passages it cites are the same
        current chunks (the cache is dropped whenever a version changes)."""
        cited_views = view.get("citations", [])
        chunks = self.rag.stores.metadata.serving([c["content_id"] for c in cited_views])
        cited = []
        for c in cited_views:
            chunk = chunks.get(c["content_id"])
            extra = (
                {
                    "doc_id": chunk.doc_id,
                    "version": chunk.version,
                    "section_path": list(chunk.section_path),
                    "kind": chunk.kind,
                }
                if chunk is not None
                else {}
            )
            cited.append({**c, **extra})
        self.rag.stores.metadata.log_query(
            uuid.uuid4().hex,
            principal.user,
            question,
            json.dumps(
                {
                    "cached_from": view.get("trace_id"),
                    "route": view.get("route"),
                    "mode": view.get("mode"),
                    "model": view.get("model", ""),
                    "citations": [c["content_id"] for c in cited_views],
                    "cited": cited,
                },
                default=str,
            ),
        )


def _task_context(
    task: str, context: dict[str, Any] | None, filters: dict[str, Any] | None
) -> TaskContext:
    """The request's task, context and filters as one checked TaskContext (InvalidRequest
    if bad)."""
    return TaskContext.parse({**(context or {}), **(filters or {})}, task)
