"""The agent loop: the model calls tools for at most `max_steps` rounds, then answers;
the answer's labels are checked against the passages the tools returned.

Per round the request is rebuilt from scratch: the system prompt (every round, so a
long transcript never pushes it out of a small model's attention), the conversation, the
older tool rounds as one-line summaries and the newest `keep_rounds` rounds whole, each
assistant `tool_calls` message followed by one `tool` message per call id.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.settings import AgentSettings
from core.types import Answer, Citation, Hit
from generation.agent.chat import (
    AssistantTurn,
    ChatMessage,
    ToolCall,
    ToolChatClient,
    tool_call_message,
)
from generation.agent.shapes import Comparison, comparison_of, is_chit_chat
from generation.agent.tools import ToolRegistry, ToolRun
from generation.citations import check_citations
from generation.language import DEFAULT_NOT_COVERED, LANGUAGE_NAME, Lang, language_of
from generation.llm import LLMError

SEARCH_TOOL = "search_documents"

SYSTEM_PROMPT = """\
You are Ragline, a research assistant that answers questions from the company's documents \
by calling tools.
Rules:
1. For any question about documents, facts, procedures, error codes, people, dates or \
numbers, call {search} first. Never answer such a question from memory.
2. Greetings and questions about yourself are answered directly, without tools.
3. To compare two documents or two things, search each side separately (one \
{search} call per side; put the document's name in `document`).
4. After each sentence that states a fact, cite the passage it comes from with its label \
exactly as the tool gave it, for example [Doc1a2b3c_p4]. Never invent a label.
5. If the tool says the material does not cover the question, reply with exactly this \
sentence and nothing else: {not_covered}
6. You have at most {max_steps} rounds of tool calls; then answer with what you found.
Answer in {language}, briefly."""


# The extractive answer over the passages the tools found, for when the model's answer
# cannot be kept; provided by the application (it knows the route and the answerer).
Fallback = Callable[[str, Sequence[Hit]], Awaitable[Answer]]


@dataclass(slots=True)
class Round:
    index: int
    content: str
    runs: list[ToolRun]
    ms: float


@dataclass(slots=True)
class AgentResult:
    question: str
    text: str
    covered: bool
    mode: str  # "agent" (checked LLM answer) | "chat" (no tools needed) | "extractive"
    citations: tuple[Citation, ...]
    hits: tuple[Hit, ...]
    rounds: list[Round]
    removed_labels: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    model: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    trace_id: str = ""

    def trace(self) -> list[dict[str, Any]]:
        return [
            {
                "round": r.index,
                "tool": run.name,
                "by": run.by,
                "call_id": run.call_id,
                "arguments_raw": run.raw_arguments,
                "arguments": run.arguments,
                "parse_mode": run.parse_mode,
                "notes": run.notes,
                "error": run.error,
                "result_items": run.output.items,
                "result_chars": len(run.result_json),
                "ms": round(run.ms, 2),
            }
            for r in self.rounds
            for run in r.runs
        ]


def summarise_round(r: Round) -> str:
    """One line per tool call: what was asked and what came back."""
    parts = []
    for run in r.runs:
        args = ", ".join(f"{k}={v!r}" for k, v in run.arguments.items())
        content = run.output.content
        if run.error:
            got = f"error: {run.error}"
        elif isinstance(content.get("results"), list):
            labels = [str(x.get("label", "")) for x in content["results"] if isinstance(x, dict)]
            got = f"{len(labels)} passages {' '.join(labels)}".strip()
            if content.get("note"):
                got += f" ({content['note']})"
        else:
            got = f"{run.output.items} items"
        parts.append(f"{run.name}({args}) -> {got}")
    return f"Round {r.index}: " + "; ".join(parts)


def compress(rounds: Sequence[Round], keep: int) -> list[ChatMessage]:
    """Older rounds as one assistant message of one-liners, the newest `keep` whole."""
    messages: list[ChatMessage] = []
    old, recent = (rounds[:-keep], rounds[-keep:]) if keep > 0 else (rounds, [])
    if old:
        lines = "\n".join(summarise_round(r) for r in old)
        messages.append(
            {"role": "assistant", "content": f"Earlier tool rounds (summarised):\n{lines}"}
        )
    for r in recent:
        calls = [ToolCall(run.call_id, run.name, run.raw_arguments) for run in r.runs]
        messages.append(tool_call_message(r.content, calls))
        messages.extend(
            {"role": "tool", "tool_call_id": run.call_id, "content": run.result_json}
            for run in r.runs
        )
    return messages


def _said_not_covered(text: str, messages: Mapping[Lang, str]) -> bool:
    squash = "".join(ch for ch in text.lower() if ch.isalnum())
    return any("".join(ch for ch in m.lower() if ch.isalnum()) in squash for m in messages.values())


class AgentLoop:
    def __init__(
        self,
        client: ToolChatClient,
        registry: ToolRegistry,
        settings: AgentSettings,
        fallback: Fallback,
        not_covered: Mapping[Lang, str] = DEFAULT_NOT_COVERED,
    ) -> None:
        self.client = client
        self.registry = registry
        self.settings = settings
        self.fallback = fallback
        self.not_covered = not_covered

    def system_prompt(self, question: str) -> str:
        lang = language_of(question)
        return SYSTEM_PROMPT.format(
            search=SEARCH_TOOL,
            not_covered=self.not_covered[lang],
            max_steps=self.settings.max_steps,
            language=LANGUAGE_NAME[lang],
        )

    def request(
        self, question: str, conversation: Sequence[ChatMessage], rounds: Sequence[Round]
    ) -> list[ChatMessage]:
        return [
            {"role": "system", "content": self.system_prompt(question)},
            *conversation,
            {"role": "user", "content": question},
            *compress(rounds, self.settings.keep_rounds),
        ]

    async def _run_calls(
        self, index: int, turn: AssistantTurn, extra: Sequence[tuple[str, dict[str, Any]]]
    ) -> Round:
        started = time.perf_counter()
        runs = [await self.registry.call(c.id, c.name, c.arguments) for c in turn.tool_calls]
        for name, args in extra:
            call_id = f"call_rl_{uuid.uuid4().hex[:12]}"
            runs.append(await self.registry.call(call_id, name, args, by="ragline"))
        return Round(index, turn.content, runs, (time.perf_counter() - started) * 1000)

    def _missing_searches(
        self, question: str, turn: AssistantTurn, rounds: Sequence[Round]
    ) -> list[tuple[str, dict[str, Any]]]:
        """Searches the loop adds itself: each side of a comparison the model did not
        search, or the question itself when the model tried to answer without looking."""
        if SEARCH_TOOL not in self.registry:
            return []
        searched = [
            " ".join(str(v) for v in run.arguments.values()).lower()
            for r in rounds
            for run in r.runs
            if run.name == SEARCH_TOOL
        ]
        searched += [
            str(c.arguments).lower() for c in turn.tool_calls if c.name.endswith(SEARCH_TOOL)
        ]
        comparison: Comparison | None = comparison_of(question)
        if comparison:
            return [
                (SEARCH_TOOL, {"query": comparison.topic or side, "document": side})
                for side in comparison.sides
                if not any(side.lower() in s for s in searched)
            ]
        if not searched and not turn.tool_calls:
            return [(SEARCH_TOOL, {"query": question})]
        return []

    async def run(
        self, question: str, conversation: Sequence[ChatMessage] = (), search_query: str = ""
    ) -> AgentResult:
        """`question` is the current turn; `conversation` the earlier turns (plain user
        and assistant messages); `search_query` what a search the loop adds itself runs
        on (the turn plus its focus), the question itself by default."""
        started = time.perf_counter()
        chit_chat = is_chit_chat(question)
        rounds: list[Round] = []
        warnings: list[str] = []
        text = ""
        llm_ms = 0.0
        for step in range(self.settings.max_steps + 1):
            offer_tools = not chit_chat and step < self.settings.max_steps
            t0 = time.perf_counter()
            try:
                turn = await self.client.complete(
                    self.request(question, conversation, rounds),
                    self.registry.specs() if offer_tools else (),
                )
            except LLMError as exc:
                warnings.append(f"LLM call failed, showing the extractive answer: {exc}")
                text = ""
                break
            finally:
                llm_ms += (time.perf_counter() - t0) * 1000
            extra = (
                self._missing_searches(search_query or question, turn, rounds)
                if (offer_tools and step == 0)
                else []
            )
            if offer_tools and (turn.tool_calls or extra):
                if extra and not turn.tool_calls:
                    warnings.append("the model answered without searching; Ragline searched")
                rounds.append(await self._run_calls(step + 1, turn, extra))
                continue
            if turn.tool_calls:
                warnings.append(
                    f"the model asked for tools after its {self.settings.max_steps} rounds; ignored"
                )
            text = turn.content
            break
        if not chit_chat and not rounds and SEARCH_TOOL in self.registry:
            # Nothing searched (the LLM failed, or answered at once): the answer must still
            # come from the material, so search once for the fallback to quote.
            no_call = AssistantTurn("", ())
            rounds.append(
                await self._run_calls(
                    1, no_call, [(SEARCH_TOOL, {"query": search_query or question})]
                )
            )
        result = await self._checked(question, text, rounds, chit_chat, warnings)
        result.timings_ms = {
            "llm": llm_ms,
            "tools": sum(r.ms for r in rounds),
            "total": (time.perf_counter() - started) * 1000,
        }
        result.model = self.client.model
        return result

    async def _checked(
        self,
        question: str,
        text: str,
        rounds: list[Round],
        chit_chat: bool,
        warnings: list[str],
    ) -> AgentResult:
        hits = _gathered_hits(rounds)
        if chit_chat and not rounds and text:
            chat = check_citations(text, [])  # no sources: any label is invented
            return AgentResult(
                question,
                chat.text,
                False,
                "chat",
                (),
                (),
                rounds,
                tuple(chat.removed_labels),
                tuple(warnings),
            )
        check = check_citations(text, hits) if text else None
        removed = tuple(check.removed_labels) if check else ()
        if check and check.citations:
            if removed:
                warnings.append(
                    f"removed citation labels not among the sources: {', '.join(removed)}"
                )
            return AgentResult(
                question,
                check.text,
                True,
                "agent",
                tuple(check.citations),
                tuple(hits),
                rounds,
                removed,
                tuple(warnings),
            )
        lang = language_of(question)
        if text and _said_not_covered(text, self.not_covered):
            return AgentResult(
                question,
                self.not_covered[lang],
                False,
                "agent",
                (),
                tuple(hits),
                rounds,
                removed,
                (*warnings, "the model found no answer in the material"),
            )
        if text:
            warnings.append(
                "the model's answer cited no passage the tools returned"
                + (f" (removed {', '.join(removed)})" if removed else "")
                + ", showing the extractive answer"
            )
        fallback = await self.fallback(question, hits)
        return AgentResult(
            question,
            fallback.text,
            fallback.covered,
            "extractive",
            fallback.citations,
            tuple(hits),
            rounds,
            removed,
            (*warnings, *fallback.warnings),
            trace_id=fallback.trace_id,
        )


def _gathered_hits(rounds: Sequence[Round]) -> list[Hit]:
    """Every passage any tool returned, best score first, each once."""
    seen: dict[str, Hit] = {}
    for r in rounds:
        for run in r.runs:
            for hit in run.output.hits:
                if hit.chunk.content_id not in seen:
                    seen[hit.chunk.content_id] = hit
    return sorted(seen.values(), key=lambda h: -h.score)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
