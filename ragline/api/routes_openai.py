"""OpenAI-compatible chat completions, so agents that speak OpenAI can call Ragline.

Model "ragline"; the last user message is the question; the assistant message is the
cited answer followed by its sources; the full answer (citations, hits, route) rides in a
`ragline` extension field that OpenAI clients ignore.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from fastapi import APIRouter

from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.api.errors import ApiError
from ragline.api.query import run_query
from ragline.api.schemas import ChatRequest

MODEL = "ragline"
router = APIRouter(prefix="/v1", tags=["openai"])


def _with_sources(view: dict[str, Any]) -> str:
    lines = [view["answer"]]
    if view["citations"]:
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
    if view.get("reason"):
        lines += ["", f"Note: {view['reason']}"]
    return "\n".join(lines)


@router.get("/models", summary="The one model this server offers")
async def models(principal: Caller) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "ragline"}],
    }


@router.post("/chat/completions", summary="OpenAI-compatible: the last user message is asked")
async def chat_completions(
    req: ChatRequest,
    principal: Caller,
    ctx: Ctx,
) -> dict[str, Any]:
    if req.model != MODEL:
        raise ApiError(404, f"model {req.model!r} not found; this server offers {MODEL!r}")
    if req.stream:
        raise ApiError(400, "streaming is not supported; send stream=false")
    question = next((m.text() for m in reversed(req.messages) if m.role == "user"), "")
    if not question.strip():
        raise ApiError(422, "no user message with text content to answer")
    view = await run_query(
        ctx,
        principal,
        question,
        top_k=req.ragline.top_k,
        doc_types=req.ragline.doc_types,
        task=req.ragline.task,
        ask=True,
    )
    content = _with_sources(view)
    return {
        "id": f"chatcmpl-{view.get('trace_id') or uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        # Token counts are not measured; rough word counts keep clients that sum them happy.
        "usage": {
            "prompt_tokens": len(question.split()),
            "completion_tokens": len(content.split()),
            "total_tokens": len(question.split()) + len(content.split()),
        },
        "ragline": view,
    }
