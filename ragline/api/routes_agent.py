"""POST /v1/agent: Ragline's tool-calling loop against the configured LLM.

The model searches the documents (and reads document metadata) through tools that run as
the caller; the final answer's labels are checked like /v1/ask's, and the response
carries the tool trace. Without an LLM the answer is extractive, with a warning.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ragline.api.auth import Caller
from ragline.api.context import Ctx
from ragline.api.errors import ApiError
from ragline.api.routes_openai import answer_turns, asked, turns_of
from ragline.api.schemas import AgentRequest, ChatMessage, ChatOptions

router = APIRouter(prefix="/v1", tags=["query"])


@router.post("/agent", summary="A cited answer from the tool-calling agent loop, with its trace")
async def agent(req: AgentRequest, principal: Caller, ctx: Ctx) -> dict[str, Any]:
    if (req.question is None) == (req.messages is None):
        raise ApiError(422, "send either `question` or `messages`")
    messages = req.messages or [ChatMessage(role="user", content=req.question)]
    opts = ChatOptions(doc_types=req.doc_types, task=req.task, mode="agent")
    asked(messages, ctx, opts)
    return await answer_turns(turns_of(messages), opts, principal, ctx)
