"""Turn a question and its fused hits into an `Answer`: not covered, extractive, or LLM.

The LLM answer is only kept when, after every label has been checked against the hits, at
least one valid citation remains; otherwise (and whenever the LLM call fails) the reader
gets the extractive answer and a warning saying why.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.types import Answer, Citation, Hit, Route
from generation.answerable import unanswered_reason
from generation.citations import check_citations
from generation.extractive import extractive_answer
from generation.language import DEFAULT_NOT_COVERED, Lang, language_of
from generation.llm import LLMError, Message, OpenAICompatibleClient
from generation.prompt import DEFAULT_BUDGET_CHARS, build_messages

_LABEL_LIKE = re.compile(r"\[Doc[0-9a-z]+_p\d+\]")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class _Draft:
    text: str
    covered: bool
    mode: str
    citations: tuple[Citation, ...] = ()
    removed_labels: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def _squash(text: str) -> str:
    """Text reduced to its letters and digits, for "did it say that sentence" checks."""
    return _NOT_WORD.sub("", _LABEL_LIKE.sub("", text)).lower()


class AnswerGenerator:
    def __init__(
        self,
        llm: OpenAICompatibleClient | None = None,
        max_sentences: int = 3,
        not_covered: Mapping[Lang, str] = DEFAULT_NOT_COVERED,
        prompt_budget_chars: int = DEFAULT_BUDGET_CHARS,
    ) -> None:
        self.llm = llm
        self.max_sentences = max_sentences
        self.not_covered = not_covered
        self.prompt_budget_chars = prompt_budget_chars

    def messages(self, question: str, hits: Sequence[Hit]) -> list[Message]:
        lang = language_of(question)
        return build_messages(
            question, hits, self.not_covered[lang], lang, self.prompt_budget_chars
        )

    def _not_covered(self, question: str, *warnings: str) -> _Draft:
        return _Draft(
            self.not_covered[language_of(question)], False, "extractive", warnings=warnings
        )

    def _extractive(
        self, question: str, hits: Sequence[Hit], *warnings: str, intent: str = "general"
    ) -> _Draft:
        text, citations = extractive_answer(question, hits, self.max_sentences)
        if not text:
            return self._not_covered(question, *warnings, "no retrieved text to quote")
        cited = {c.content_id for c in citations}
        best = _LABEL_LIKE.split(text, maxsplit=1)[0]  # the top-scored sentence comes first
        why = unanswered_reason(
            question, intent, best, (h.chunk.text for h in hits if h.chunk.content_id in cited)
        )
        if why:
            return self._not_covered(question, *warnings, why)
        return _Draft(text, True, "extractive", tuple(citations), warnings=warnings)

    def _from_llm(self, question: str, hits: Sequence[Hit], reply: str | LLMError) -> _Draft:
        if isinstance(reply, LLMError):
            return self._extractive(
                question, hits, f"LLM call failed, showing the extractive answer: {reply}"
            )
        check = check_citations(reply, hits)
        removed = tuple(check.removed_labels)
        said_not_covered = any(_squash(msg) in _squash(reply) for msg in self.not_covered.values())
        if said_not_covered and not check.citations:
            # The model found nothing in the sources: trust that, and say it our way.
            draft = self._not_covered(question, "the LLM found no answer in the sources")
            return _Draft(draft.text, False, "llm", (), removed, draft.warnings)
        if not check.citations:
            draft = self._extractive(
                question,
                hits,
                "LLM answer cited no retrieved source"
                + (f" (removed {', '.join(removed)})" if removed else "")
                + ", showing the extractive answer",
            )
            return _Draft(
                draft.text, draft.covered, draft.mode, draft.citations, removed, draft.warnings
            )
        warnings = []
        if removed:
            warnings.append(f"removed citation labels not among the sources: {', '.join(removed)}")
        if said_not_covered:
            warnings.append("the LLM said the sources do not cover part of the question")
        return _Draft(check.text, True, "llm", tuple(check.citations), removed, tuple(warnings))

    def _package(
        self,
        draft: _Draft,
        question: str,
        hits: Sequence[Hit],
        route: Route,
        timings_ms: Mapping[str, float],
        trace_id: str,
        started: float,
    ) -> Answer:
        timings = {**timings_ms, "generate": (time.perf_counter() - started) * 1000}
        return Answer(
            question=question,
            text=draft.text,
            covered=draft.covered,
            mode=draft.mode,
            citations=draft.citations,
            hits=tuple(hits),
            route=route,
            timings_ms=timings,
            trace_id=trace_id,
            removed_labels=draft.removed_labels,
            warnings=draft.warnings,
        )

    def _draft(
        self,
        question: str,
        hits: Sequence[Hit],
        covered: bool,
        route: Route,
        reply: str | LLMError | None,
    ) -> _Draft:
        if not covered or not hits:
            return self._not_covered(question)
        if reply is None:
            return self._extractive(question, hits, intent=route.intent)
        return self._from_llm(question, hits, reply)

    def _needs_llm(self, hits: Sequence[Hit], covered: bool) -> bool:
        return self.llm is not None and covered and bool(hits)

    def answer(
        self,
        question: str,
        hits: Sequence[Hit],
        covered: bool,
        route: Route,
        timings_ms: Mapping[str, float],
        trace_id: str,
    ) -> Answer:
        started = time.perf_counter()
        reply: str | LLMError | None = None
        if self._needs_llm(hits, covered):
            assert self.llm is not None
            try:
                reply = self.llm.chat(self.messages(question, hits))
            except LLMError as exc:
                reply = exc
        draft = self._draft(question, hits, covered, route, reply)
        return self._package(draft, question, hits, route, timings_ms, trace_id, started)

    async def aanswer(
        self,
        question: str,
        hits: Sequence[Hit],
        covered: bool,
        route: Route,
        timings_ms: Mapping[str, float],
        trace_id: str,
    ) -> Answer:
        """`answer` for asyncio callers: the LLM call does not block the event loop."""
        started = time.perf_counter()
        reply: str | LLMError | None = None
        if self._needs_llm(hits, covered):
            assert self.llm is not None
            try:
                reply = await self.llm.achat(self.messages(question, hits))
            except LLMError as exc:
                reply = exc
        draft = self._draft(question, hits, covered, route, reply)
        return self._package(draft, question, hits, route, timings_ms, trace_id, started)
