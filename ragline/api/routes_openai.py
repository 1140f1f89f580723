"""OpenAI-compatible chat completions, so agents that speak OpenAI can call Ragline.

Model "ragline". The whole message list is read: the last user message is the question,
and earlier turns lend it their focus (error codes, names) when it leans on them. The
assistant message is the cited answer followed by its sources; the full answer
(citations, hits, route, focus, tool trace) rides in a `ragline` extension field that
OpenAI clients ignore. `stream: true` answers as OpenAI chunk events; `tools` sent by the
caller are accepted and never called (Ragline answers from documents);
`"ragline": {"mode": "agent"}` runs Ragline's own tool-calling loop.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from core.blocks import params_text
from core.types import Principal, QueryFilter
from generation.conversation import Focus, Turn
from ragline.agent import chat_focus
from ragline.api.auth import Caller
from ragline.api.context import ApiContext, Ctx
from ragline.api.errors import ApiError
from ragline.api.schemas import ChatMessage, ChatOptions, ChatRequest
from ragline.api.sse import error_payload, event, pieces, refused, sse_response
from ragline.limits import check_question
from ragline.render import answer_view

MODEL = "ragline"
router = APIRouter(prefix="/v1", tags=["openai"])
log = logging.getLogger("ragline.api")


def with_sources(view: dict[str, Any]) -> str:
    lines = [view["answer"]]
    # Rows and status blocks have no document citation: their labels ([DB_...], [API_...])
    # resolve through these lines for a client that reads only the message.
    gateway = [
        b for b in view.get("blocks", ()) if b.get("label") and b["source_kind"] != "document"
    ]
    if view["citations"] or gateway:
        lines += ["", "Sources:"]
        for c in view["citations"]:
            pages = (
                f"p{c['page_start']}"
                if c["page_start"] == c["page_end"]
                else f"p{c['page_start']}-{c['page_end']}"
            )
            lines.append(
                f"{c['label']} {c['title']} ({c['source']}, {pages}, "
                f"lines {c['line_start']}-{c['line_end']})"
            )
        for b in gateway:
            params = b["locator"].get("params") or {}
            given = params_text(params, given_only=True)
            where = b["locator"].get("template") or b["locator"].get("path") or ""
            detail = "; ".join(x for x in (f"{where} {given}".strip(), b["freshness"]["note"]) if x)
            lines.append(
                f"{b['label']} {b['title']} ({b['source_kind']} {b['source_id']}"
                + (f", {detail})" if detail else ")")
            )
    if view.get("reason"):
        lines += ["", f"Note: {view['reason']}"]
    return "\n".join(lines)


def asked(messages: list[ChatMessage], ctx: ApiContext, opts: ChatOptions) -> None:
    """Refuse, before any answer or stream, a conversation with no question to answer: its
    last user or assistant message must be a user's with a question within the limits
    (blank: "question is empty", as on every door; an earlier question is not answered
    again), and the options must pass the checks of /v1/ask."""
    last = next((m for m in reversed(messages) if m.role in ("user", "assistant")), None)
    if last is None or last.role != "user":
        raise ApiError(422, "the last message with text must be a user message to answer")
    question = check_question(last.text(), ctx.settings.api)
    ctx.queries.checked(question, opts.top_k, opts.task, doc_types=opts.doc_types)


def turns_of(messages: list[ChatMessage]) -> list[Turn]:
    """User and assistant text turns; system prompts, tool results and empty assistant
    tool-call messages carry no question and no focus."""
    return [
        Turn(m.role, m.text())
        for m in messages
        if m.role in ("user", "assistant") and m.text().strip()
    ]


def _check_tools(req: ChatRequest) -> None:
    choice = req.tool_choice
    forced = choice == "required" or (isinstance(choice, dict) and choice.get("type"))
    if req.tools and forced:
        raise ApiError(
            400,
            "Ragline answers from documents and does not call caller-defined tools; "
            "send tool_choice 'auto' or 'none' (the answer is a normal assistant message)",
        )
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        raise ApiError(422, f"tool_choice {choice!r} must be 'auto', 'none' or 'required'")


def focus_view(focus: Focus) -> dict[str, Any]:
    return {
        "terms": list(focus.terms),
        "carried": list(focus.carried),
        "query": focus.query,
        "source": focus.source,
    }


async def answer_turns(
    turns: list[Turn], opts: ChatOptions, principal: Principal, ctx: ApiContext
) -> dict[str, Any]:
    """The answer view for the last user turn: the agent loop, or ask with its focus."""
    if opts.mode == "agent":
        await ctx.before_query()
        where = QueryFilter.for_principal(principal, doc_types=frozenset(opts.doc_types))
        task = opts.task if opts.task != "qa" else "agent"
        reply = await ctx.rag.aagent(turns, principal, where, task=task)
        view = answer_view(reply.answer)
        view.update(trace=reply.trace, rounds=reply.rounds, cached=False)
        view["focus"] = focus_view(reply.focus)
        return view
    focus = await chat_focus(ctx.rag, turns)
    view = await ctx.queries.run(
        principal,
        focus.query,
        top_k=opts.top_k,
        doc_types=opts.doc_types,
        task=opts.task,
        ask=True,
    )
    view["question"] = focus.question
    view["focus"] = focus_view(focus)
    return view


def _usage(question: str, content: str) -> dict[str, int]:
    # Token counts are not measured; rough word counts keep clients that sum them happy.
    q, c = len(question.split()), len(content.split())
    return {"prompt_tokens": q, "completion_tokens": c, "total_tokens": q + c}


@router.get("/models", summary="The one model this server offers")
async def models(principal: Caller) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "ragline"}],
    }


@router.post(
    "/chat/completions",
    summary="OpenAI-compatible: the conversation's last user turn, answered with citations",
    response_model=Any,  # written by pydantic-core, as /v1/ask (see there)
)
async def chat_completions(
    req: ChatRequest,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any] | StreamingResponse:
    if req.model != MODEL:
        raise ApiError(404, f"model {req.model!r} not found; this server offers {MODEL!r}")
    _check_tools(req)
    asked(req.messages, ctx, req.ragline)
    turns = turns_of(req.messages)
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    if req.stream:
        include_usage = bool(req.stream_options and req.stream_options.include_usage)
        return sse_response(_stream(req, principal, ctx, completion_id, created, include_usage))
    view = await answer_turns(turns_of(req.messages), req.ragline, principal, ctx)
    content = with_sources(view)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(turns[-1].text, content),
        "ragline": view,
    }


async def _stream(
    req: ChatRequest,
    principal: Principal,
    ctx: ApiContext,
    completion_id: str,
    created: int,
    include_usage: bool,
) -> AsyncIterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        return event(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    try:
        view = await answer_turns(turns_of(req.messages), req.ragline, principal, ctx)
    except Exception as exc:  # the stream is open: report in-band, as OpenAI does
        if not refused(exc):
            log.exception("streamed chat completion failed")
        yield event(error_payload(exc))
        yield event("[DONE]")
        return
    content = with_sources(view)
    for piece in pieces(content):
        yield chunk({"content": piece})
    # The references ride in the last chunk's extension field.
    yield chunk({}, "stop", ragline=view)
    if include_usage:
        yield event(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL,
                "choices": [],
                "usage": _usage(view["question"], content),
            }
        )
    yield event("[DONE]")
