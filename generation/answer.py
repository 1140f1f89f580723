"""Turn a question and its fused hits into an `Answer`: not covered, extractive, or LLM.

The LLM answer is only kept when, after every label has been checked against the hits, at
least one valid citation remains; otherwise (and whenever the LLM call fails) the reader
gets the extractive answer and a warning saying why.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import unquote

from core.han_script import in_script_of
from core.text import query_terms
from core.types import Answer, AnswerSentence, Citation, Hit, Route
from generation.answer_type import has_answer_type
from generation.answerable import Verdict, judge, unmet_in_documents
from generation.citations import check_citations
from generation.cite import assemble
from generation.confidence import (
    CALIBRATION,
    AnswerEvidence,
    Calibration,
    answer_confidence,
    refusal_kind,
    weak_refusal_confidence,
)
from generation.extractive import TOP_HITS, Extract, Scored, extract
from generation.language import DEFAULT_NOT_COVERED, Lang, language_of
from generation.llm import LLMError, Message, OpenAICompatibleClient
from generation.prompt import DEFAULT_BUDGET_CHARS, build_messages
from generation.similarity import Similarity, TimedSimilarity
from generation.slots import mentioned

# Characters of the best passage read to tell its script (traditional or simplified).
_SCRIPT_SAMPLE = 400
_LABEL_LIKE = re.compile(r"\[Doc[0-9a-z]+_p\d+(?:\.\d+)?\]")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class _Draft:
    text: str
    covered: bool
    mode: str
    citations: tuple[Citation, ...] = ()
    removed_labels: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    confidence: float = 0.0
    reason: str = ""
    sentences: tuple[AnswerSentence, ...] = ()
    model_ms: float = 0.0  # in the sentence embeddings (`embed_sentences`)


def _coverage(hits: Sequence[Hit]) -> float:
    """The retrieval coverage signal of the best of the top hits (0 when not computed)."""
    return max((h.signals.get("coverage", 0.0) for h in hits[:5]), default=0.0)


def _term_share(question: str, ex: Extract) -> float:
    """Share of the question's content words found in the best quote's passage (its
    title and file name included)."""
    terms = query_terms(question)
    if not terms or not ex.chosen:
        return 0.0
    chunk = ex.chosen[0].chunk
    text = f"{chunk.title} {unquote(chunk.source)} {chunk.text}".lower()
    return sum(t in text for t in terms) / len(terms)


def _evidence(
    question: str,
    hits: Sequence[Hit],
    ex: Extract,
    verdict: Verdict,
    text: str,
    citations: Sequence[Citation],
    meaning: float | None = None,
) -> AnswerEvidence:
    relevance = [h.signals.get("relevance", h.score) for h in hits[:2]]
    first = relevance[0] if relevance else 0.0
    second = relevance[1] if len(relevance) > 1 else 0.0
    cited = {c.content_id for c in citations}
    quoted = next((h for h in hits if h.chunk.content_id in cited), None)
    return AnswerEvidence(
        coverage=_coverage(hits),
        term_share=_term_share(question, ex),
        pinned=verdict.constraints > 0,
        runner_up=second / first if first > 0 else 1.0,
        rare_bigrams=hits[0].signals.get("bigrams_idf", 0.0) if hits else 0.0,
        top_quoted=bool(hits) and hits[0].chunk.content_id in cited,
        length=len(text) / 300,
        margin=ex.margin,
        quote_coverage=quoted.signals.get("coverage", 0.0) if quoted is not None else 0.0,
        meaning=meaning,
    )


def _best_doc(ex: Extract) -> str:
    return ex.quotes[0].sources[0].chunk.doc_id if ex.quotes and ex.quotes[0].sources else ""


# Verdicts failed for want of the kind of thing asked: a time, a count of a unit, a number.
_TYPE_FAILED = ("time", "unit", "quantity")
_DIGIT = re.compile(r"\d")
# ... among the sentences matching the question's words at least this share as well as the
# best one does (a sentence about something else holds a number too).
_STATING_SHARE = 0.4


def _states_asked(text: str, verdict: Verdict, question: str) -> bool:
    """Whether a sentence could state what the failed verdict missed: a time, else a
    number (the judge decides whether it does)."""
    if verdict.failed == "time":
        return has_answer_type(text, "time", question)
    return _DIGIT.search(text) is not None


def _keys_row(rows: Sequence[Sequence[str]], key: str) -> bool:
    """Whether a table has a row keyed (first cell) by `key`, in any case."""
    key = key.lower()
    return any(row and row[0].strip().lower() == key for row in rows)


def _judge(
    question: str,
    intent: str,
    ex: Extract,
    hits: Sequence[Hit],
    synonyms: Mapping[str, Sequence[str]] | None = None,
    similarity: Similarity | None = None,
) -> tuple[Verdict, Extract]:
    """The answer stands on one quote of the best quote's document: the question's
    constraints must all be met by it, its passage's declared scope and its document (a
    year found in another document's sentence is not; a padding line that happens to name
    the thing asked does not make another line about something else an answer). The
    quotes are tried in order; the one that answers leads."""
    retrieved = [h.chunk for h in hits]
    if not ex.quotes:
        return judge(question, intent, [], [], retrieved, synonyms, similarity), ex
    best_doc = _best_doc(ex)
    groups = ex.groups if len(ex.groups) == len(ex.quotes) else [ex.chosen] * len(ex.quotes)
    first: Verdict | None = None
    answering = len(ex.quotes) - ex.notes  # (the notes after them only explain them)
    for k, (quote, group) in enumerate(zip(ex.quotes[:answering], groups[:answering], strict=True)):
        if not quote.sources or quote.sources[0].chunk.doc_id != best_doc:
            continue
        beside = [
            c
            for i, other in enumerate(groups)
            if i != k
            for c in other
            if c.chunk.doc_id == best_doc and c not in group
        ]
        verdict = judge(
            question, intent, [quote.text], group, retrieved, synonyms, similarity, beside
        )
        if verdict.final:
            first = first or verdict
            break
        if verdict.covered:
            if k == 0:
                return verdict, ex
            order = [k, *(i for i in range(len(ex.quotes)) if i != k)]
            return verdict, replace(
                ex,
                quotes=[ex.quotes[i] for i in order],
                groups=[groups[i] for i in order],
            )
        first = first or verdict
    if first is None:  # no quote names its passage: judge the first as it stands
        first = judge(
            question, intent, [ex.quotes[0].text], groups[0], retrieved, synonyms, similarity
        )
    return first, ex


def _other_docs(hits: Sequence[Hit], ex: Extract) -> list[str]:
    """The documents of the top hits other than the one the answer was quoted from, in
    retrieval order."""
    tried = _best_doc(ex)
    return [d for d in dict.fromkeys(h.chunk.doc_id for h in hits[:TOP_HITS]) if d != tried]


def _mentions(ex: Extract, word: str) -> bool:
    """Whether the passages quoted mention the word (any word, when it is "")."""
    return not word or mentioned(word, " ".join(c.chunk.text for c in ex.chosen))


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
        similarity: Similarity | None = None,
        semantic_candidates: int = 16,
        semantic_window: float = 0.2,
        min_confidence: float = 0.25,
        calibration: Calibration = CALIBRATION,
    ) -> None:
        self.llm = llm
        self.min_confidence = min_confidence
        self.calibration = calibration
        self.similarity = similarity
        self.semantic_candidates = semantic_candidates
        self.semantic_window = semantic_window
        self.max_sentences = max_sentences
        self.not_covered = not_covered
        self.prompt_budget_chars = prompt_budget_chars

    def messages(self, question: str, hits: Sequence[Hit]) -> list[Message]:
        lang = language_of(question)
        return build_messages(
            question, hits, self.not_covered[lang], lang, self.prompt_budget_chars
        )

    def _not_covered(
        self,
        question: str,
        *warnings: str,
        reason: str = "",
        confidence: float = 0.0,
        mode: str = "extractive",
    ) -> _Draft:
        lang = language_of(question)
        # (A traditional Chinese question is told so in traditional characters.)
        said = self.not_covered[lang]
        return _Draft(
            in_script_of(said, question) if lang == "zh" else said,
            False,
            mode,
            warnings=warnings,
            confidence=confidence,
            reason=reason,
        )

    def _refusal(
        self,
        question: str,
        verdict: Verdict | None,
        reason: str,
        hits: Sequence[Hit],
        *warnings: str,
    ) -> _Draft:
        conf = self.calibration.refusal_confidence(refusal_kind(verdict), _coverage(hits))
        return self._not_covered(question, *warnings, reason, reason=reason, confidence=conf)

    def _extract(
        self,
        question: str,
        hits: Sequence[Hit],
        synonyms: Mapping[str, Sequence[str]] | None,
        similarity: Similarity | None,
        by_words: Sequence[Scored] = (),
    ) -> Extract:
        return extract(
            question,
            hits,
            self.max_sentences,
            similarity,
            self.semantic_candidates,
            self.semantic_window,
            synonyms,
            by_words=by_words,
        )

    def _alternatives(
        self,
        question: str,
        hits: Sequence[Hit],
        ex: Extract,
        verdict: Verdict,
        synonyms: Mapping[str, Sequence[str]] | None,
        similarity: Similarity | None,
    ) -> Iterator[Extract]:
        """Other quotes to try when the best one fails the question's constraints; the
        first that meets them all answers, else the first reason stands.

        - From the retrieved tables with a row keyed by what was asked, when the quote is
          another row ("bearerFormat" quoted, "servers" asked).
        - Chosen by word overlap alone: similarity of meaning may have preferred a sentence
          that lacks what the question pins down (the number, the unit asked).
        - From another retrieved document, when the quote's document does not mention a
          name or identifier the question gives (the quote is about another product), or
          the quote is about a sibling of what was asked (国际空间站 for 天宫空间站);
          only these when the quote's document excludes what is asked (`Verdict.final`).
        """
        if verdict.covered:
            return
        if verdict.failed == "row" and verdict.asked:  # first: the row asked, if retrieved
            keyed = [h for h in hits if _keys_row(h.chunk.table_rows, verdict.asked)]
            if keyed:
                yield self._extract(question, keyed, synonyms, similarity)
        if similarity is not None and self.semantic_candidates > 0 and not verdict.final:
            yield extract(
                question,
                hits,
                self.max_sentences,
                semantic_candidates=self.semantic_candidates,
                synonyms=synonyms,
                by_words=ex.by_words,
            )
        if verdict.failed in _TYPE_FAILED and ex.by_words:
            # The best sentences that state what was asked (a date, a number): a table row
            # naming the question's words may outrank the sentence giving the answer
            # ("Trigger: End of financial year" over "The financial year ends on 31 December").
            best = max(s.relevance for s in ex.by_words)
            stating = [
                s
                for s in ex.by_words
                if s.relevance >= _STATING_SHARE * best
                and _states_asked(s.cand.text, verdict, question)
            ]
            if stating and len(stating) < len(ex.by_words):
                yield self._extract(question, hits, synonyms, similarity, by_words=stating)
        if verdict.failed in ("name", "subject"):
            for doc in _other_docs(hits, ex):
                same_doc = [h for h in hits if h.chunk.doc_id == doc]
                yield self._extract(question, same_doc, synonyms, similarity)

    def _extractive(
        self,
        question: str,
        hits: Sequence[Hit],
        *warnings: str,
        intent: str = "general",
        synonyms: Mapping[str, Sequence[str]] | None = None,
    ) -> _Draft:
        """The answer quoted from the hits, with the time its sentence embeddings took."""
        timed = TimedSimilarity(self.similarity) if self.similarity is not None else None
        draft = self._quote(question, hits, warnings, intent, synonyms, timed)
        return replace(draft, model_ms=timed.seconds * 1000) if timed else draft

    def _quote(
        self,
        question: str,
        hits: Sequence[Hit],
        warnings: tuple[str, ...],
        intent: str,
        synonyms: Mapping[str, Sequence[str]] | None,
        similarity: Similarity | None,
    ) -> _Draft:
        ex = self._extract(question, hits, synonyms, similarity)
        if not ex.quotes:
            return self._refusal(question, None, "no retrieved text to quote", hits, *warnings)
        verdict, ex = _judge(question, intent, ex, hits, synonyms, similarity)
        for alt in self._alternatives(question, hits, ex, verdict, synonyms, similarity):
            if not alt.quotes or not _mentions(alt, verdict.asked):
                continue
            alt_verdict, alt = _judge(question, intent, alt, hits, synonyms, similarity)
            if alt_verdict.covered:
                ex, verdict = alt, alt_verdict
                break
        if not verdict.covered:
            return self._refusal(question, verdict, verdict.reason, hits, *warnings)
        text, citations, sentences = assemble(ex.quotes)
        # How close in meaning the first quote is to the question, where its sentences were
        # re-read by meaning (no model call of its own); else the model without it decides.
        meaning = ex.meaning() if self.calibration.meaning is not None else None
        evidence = _evidence(question, hits, ex, verdict, text, citations, meaning)
        # The confidence floor, for a question that pins nothing down (no name, period,
        # identifier or given number the rules checked in the quote; a quantity asked is
        # met by any number): there the fitted probability alone speaks, and below the
        # floor the quote is more likely a near miss than an answer. A partial answer is
        # judged on its evidence too.
        p = self.calibration.probability(evidence)
        if not verdict.pins and p < self.min_confidence:
            why = (
                f"the best quote answers the question only weakly "
                f"(confidence {p:.2f}, below the floor {self.min_confidence:.2f})"
            )
            return self._not_covered(
                question, *warnings, why, reason=why, confidence=weak_refusal_confidence(p)
            )
        notes = (*warnings, verdict.reason) if verdict.reason else warnings
        return _Draft(
            text,
            True,
            "extractive",
            tuple(citations),
            warnings=notes,
            confidence=answer_confidence(verdict, evidence, self.calibration),
            reason=verdict.reason,
            sentences=tuple(sentences),
        )

    def _from_llm(
        self,
        question: str,
        hits: Sequence[Hit],
        reply: str | LLMError,
        route: Route,
    ) -> _Draft:
        if isinstance(reply, LLMError):
            return self._extractive(
                question, hits, f"LLM call failed, showing the extractive answer: {reply}"
            )
        check = check_citations(reply, hits)
        removed = tuple(check.removed_labels)
        said_not_covered = any(_squash(msg) in _squash(reply) for msg in self.not_covered.values())
        if said_not_covered and not check.citations:
            # The model found nothing in the sources: trust that, and say it our way.
            why = "the LLM found no answer in the sources"
            draft = self._not_covered(
                question,
                why,
                reason=why,
                mode="llm",
                confidence=self.calibration.refusal_confidence("llm", _coverage(hits)),
            )
            return _Draft(
                draft.text,
                False,
                "llm",
                (),
                removed,
                draft.warnings,
                draft.confidence,
                draft.reason,
            )
        if not check.citations:
            draft = self._extractive(
                question,
                hits,
                "LLM answer cited no retrieved source"
                + (f" (removed {', '.join(removed)})" if removed else "")
                + ", showing the extractive answer",
            )
            return _Draft(
                draft.text,
                draft.covered,
                draft.mode,
                draft.citations,
                removed,
                draft.warnings,
                draft.confidence,
                draft.reason,
                draft.sentences,
            )
        # What the question names must be in a cited document, as for an extractive quote:
        # a fluent answer from a passage about another person or product is not one.
        by_id = {h.chunk.content_id: h.chunk for h in hits}
        cited = [by_id[c.content_id] for c in check.citations if c.content_id in by_id]
        synonyms = route.synonyms_applied
        unmet = unmet_in_documents(question, cited, [h.chunk for h in hits], synonyms)
        if unmet and not said_not_covered:
            what = ", ".join(repr(t) for t in unmet)
            draft = self._extractive(
                question,
                hits,
                f"no passage the LLM cited mentions {what}, showing the extractive answer",
                intent=route.intent,
                synonyms=synonyms,
            )
            return replace(draft, removed_labels=removed)
        warnings = []
        if removed:
            warnings.append(f"removed citation labels not among the sources: {', '.join(removed)}")
        if check.unsupported:
            warnings.append(
                "no cited passage supports: " + "; ".join(repr(s[:80]) for s in check.unsupported)
            )
        uncited = [s.text for s in check.sentences if not s.labels]
        if uncited:
            warnings.append(
                "sentences without a citation: " + "; ".join(repr(s[:80]) for s in uncited)
            )
        if said_not_covered:
            warnings.append("the LLM said the sources do not cover part of the question")
        checked = [s for s in check.sentences if s.labels]
        supported = sum(s.supported for s in checked) / len(checked) if checked else 0.0
        confidence = round(
            min(0.95, 0.25 + 0.6 * supported + 0.1 * _coverage(hits))
            * (0.6 if said_not_covered else 1.0),
            3,
        )
        reason = (
            "partial: the LLM said the sources do not cover part of the question"
            if (said_not_covered)
            else ""
        )
        return _Draft(
            check.text,
            True,
            "llm",
            tuple(check.citations),
            removed,
            tuple(warnings),
            confidence,
            reason,
            tuple(check.sentences),
        )

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
        if draft.model_ms:
            timings["embed_sentences"] = draft.model_ms  # the model's part of "generate"
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
            confidence=draft.confidence,
            reason=draft.reason,
            sentences=draft.sentences,
        )

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
        return self.complete(question, hits, covered, route, reply, timings_ms, trace_id, started)

    async def reply(
        self, question: str, hits: Sequence[Hit], covered: bool
    ) -> str | LLMError | None:
        """The LLM's reply, when the answer is to be generated (None: extractive, or a
        refusal), without blocking the event loop."""
        if not self._needs_llm(hits, covered):
            return None
        assert self.llm is not None
        try:
            return await self.llm.achat(self.messages(question, hits))
        except LLMError as exc:
            return exc

    def complete(
        self,
        question: str,
        hits: Sequence[Hit],
        covered: bool,
        route: Route,
        reply: str | LLMError | None,
        timings_ms: Mapping[str, float],
        trace_id: str,
        started: float,
    ) -> Answer:
        """The answer from `reply`: sentence scoring and the citation checks (CPU, for a
        worker thread; a caller with more CPU work on the answer does it in the same one)."""
        if not hits:
            draft = self._refusal(question, None, "nothing retrieved", hits)
        elif not covered:
            draft = self._refusal(
                question, None, "no retrieved passage matches enough of the question", hits
            )
        else:
            # Checked in the script of the passages quoted from: a traditional question of
            # simplified passages is read simplified (and the other way round).
            asked = in_script_of(question, hits[0].chunk.text[:_SCRIPT_SAMPLE])
            if reply is None:
                draft = self._extractive(
                    asked, hits, intent=route.intent, synonyms=route.synonyms_applied
                )
            else:
                draft = self._from_llm(asked, hits, reply, route)
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
        """`answer` for asyncio callers: the LLM call does not block the event loop, and
        the rest runs in a worker thread."""
        started = time.perf_counter()
        reply = await self.reply(question, hits, covered)
        return await asyncio.to_thread(
            self.complete, question, hits, covered, route, reply, timings_ms, trace_id, started
        )
