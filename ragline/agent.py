"""Conversations and the agent loop, wired to the application's stores and models.

`chat_focus` turns a message list into what to retrieve for the current turn;
`run_agent` runs the tool-calling loop (generation.agent) with Ragline's tools for one
principal and packages the result as an `Answer` plus its tool trace. The conversation
itself is never written to any store: only the audit log records the question asked.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.types import Answer, Hit, Principal, QueryFilter
from generation.agent.loop import AgentLoop, AgentResult
from generation.conversation import Focus, Turn, extract_focus, focus_with_llm
from ragline.agent_tools import AgentTools
from routing.intent import detect_intent

if TYPE_CHECKING:
    from ragline.app import Ragline


@dataclass
class AgentReply:
    answer: Answer
    focus: Focus
    trace: list[dict[str, Any]] = field(default_factory=list)
    rounds: int = 0


async def chat_focus(rag: Ragline, turns: Sequence[Turn]) -> Focus:
    """The current turn's focus: rules always; the LLM's standalone rewrite when one is
    configured and the turn leans on earlier ones (kept only when it invents nothing)."""
    focus = extract_focus(turns)
    if rag.llm is not None and focus.carried:
        focus = await focus_with_llm(turns, rag.llm, focus)
    return focus


def _conversation(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """Earlier turns as plain chat messages (the current one is asked separately)."""
    last_user = max((i for i, t in enumerate(turns) if t.role == "user"), default=-1)
    return [
        {"role": t.role, "content": t.text}
        for t in turns[:last_user]
        if t.role in ("user", "assistant") and t.text.strip()
    ]


async def run_agent(
    rag: Ragline,
    turns: Sequence[Turn],
    principal: Principal,
    where: QueryFilter | None = None,
    task: str = "agent",
) -> AgentReply:
    started = time.perf_counter()
    where = where or QueryFilter.for_principal(principal)
    focus = extract_focus(turns)
    question = focus.question
    choice = rag.models.choose(question, task, detect_intent(question).name)
    if choice.tier == "none":
        answer = await rag.aask(focus.query, principal, where=where, task="qa")
        note = "no LLM configured (RAGLINE_LLM__BASE_URL): answered extractively, no tools"
        return AgentReply(replace(answer, warnings=(note, *answer.warnings)), focus)
    trace_id = uuid.uuid4().hex
    route, _ = rag.router.decide(question, principal, "qa")

    async def fallback(q: str, hits: Sequence[Hit]) -> Answer:
        return await rag.answerer_for("none").aanswer(q, hits, bool(hits), route, {}, trace_id)

    loop = AgentLoop(
        rag.tool_chats[choice.tier],
        AgentTools(rag, principal, where, rag.settings.agent).registry(),
        rag.settings.agent,
        fallback,
    )
    result: AgentResult = await loop.run(question, _conversation(turns), focus.query)
    answer = Answer(
        question=question,
        text=result.text,
        covered=result.covered,
        mode=result.mode,
        citations=result.citations,
        hits=result.hits,
        route=route,
        timings_ms={k: round(v, 2) for k, v in result.timings_ms.items()},
        trace_id=trace_id,
        removed_labels=result.removed_labels,
        warnings=result.warnings,
        model=choice,
    )
    trace = result.trace()
    rag.metrics.observe_answer(answer, (), time.perf_counter() - started)
    rag.metrics.observe_model(choice.tier, choice.model)
    rag.stores.metadata.log_query(
        trace_id,
        principal.user,
        question,
        json.dumps(
            {
                "mode": f"agent/{answer.mode}",
                "covered": answer.covered,
                "model": asdict(choice),
                "tools": [
                    {k: t[k] for k in ("tool", "by", "arguments", "result_items")} for t in trace
                ],
                "citations": [c.content_id for c in answer.citations],
                "removed_labels": list(answer.removed_labels),
            },
            default=str,
        ),
    )
    return AgentReply(answer, focus, trace, len(result.rounds))
