"""Search and ask for one principal, through the query cache. Shared by /v1/search,
/v1/ask and /v1/chat/completions, so all three see the same limits and permissions."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from core.errors import InvalidRequest
from core.types import Principal, QueryFilter
from ragline.api.cache import cache_key
from ragline.api.context import ApiContext
from ragline.api.errors import ApiError
from ragline.api.limits import check_query, check_top_k
from ragline.render import answer_view, search_view
from routing.instruction import TaskContext


async def run_query(
    ctx: ApiContext,
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
    api = ctx.settings.api
    task_context = task_context_of(task, context, filters)
    question = check_query(question, task_context, api)
    top_k = check_top_k(top_k, api)
    await ctx.before_query()
    options = {
        "top_k": top_k,
        "doc_types": sorted(set(doc_types)),
        "task": task,
        "context": repr(task_context),
    }
    key = cache_key(principal, "ask" if ask else "search", question, options)
    if (cached := ctx.cache.get(key)) is not None:
        if ask:  # every answer served is audited, cached or not
            await asyncio.to_thread(_audit_cached, ctx, principal, question, cached)
        return {**cached, "cached": True}
    generation = ctx.cache.generation
    # The principal alone decides the ACL filter; the request only narrows further.
    where = QueryFilter.for_principal(principal, doc_types=frozenset(doc_types))
    try:
        if ask:
            answer = await ctx.rag.aask(
                question, principal, where=where, top_k=top_k, context=task_context
            )
            view = answer_view(answer)
        else:
            result = await ctx.rag.asearch(
                question, principal, where=where, top_k=top_k, context=task_context
            )
            view = search_view(result)
    except InvalidRequest as exc:
        raise ApiError(422, str(exc)) from exc
    if view.get("knowledge", {}).get("answered_by") != "status":  # live: never cached
        ctx.cache.put(key, view, generation)
    return {**view, "cached": False}


def task_context_of(
    task: str, context: dict[str, Any] | None, filters: dict[str, Any] | None
) -> TaskContext:
    """The request's task, context and filters as one checked TaskContext (422 if bad)."""
    data = {**(context or {}), **(filters or {})}
    try:
        return TaskContext.parse(data, task)
    except InvalidRequest as exc:
        raise ApiError(422, str(exc)) from exc


def _audit_cached(
    ctx: ApiContext, principal: Principal, question: str, view: dict[str, Any]
) -> None:
    """A cached answer is audited like a fresh one: the passages it cites are the same
    current chunks (the cache is dropped whenever a version changes)."""
    cited_views = view.get("citations", [])
    chunks = ctx.rag.stores.metadata.serving([c["content_id"] for c in cited_views])
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
    ctx.rag.stores.metadata.log_query(
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
