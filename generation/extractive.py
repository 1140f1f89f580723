"""The no-LLM answer: the retrieved sentences that best answer the question, each cited.

Nothing here writes prose. Every sentence shown is (whitespace aside) a substring of a
retrieved chunk; table rows are shown as "Header: value" cells taken from the table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.ids import citation_label
from core.text import STOPWORDS, char_bigrams, has_han, index_tokens, query_terms
from core.types import Citation, Hit
from generation.passages import Candidate, candidates, normalise_ws, render_row, title_case

TOP_HITS = 5
# Sentences after the first must score at least this share of the best one: padding an
# answer with weak sentences makes it worse, not better.
RELATIVE_FLOOR = 0.45
# Two sentences this similar (char bigram / word Jaccard) say the same thing.
DUPLICATE_JACCARD = 0.7
# Wide table rows are cut to this many cells (key cell and matching columns first).
MAX_ROW_CELLS = 8
ROW_FLOOR = 0.8
IDENTIFIER_WEIGHT = 1.5
LONG_CHARS = 240

# Questions whose answer is a number, version, date, port, identifier...
_QUANTITY_QUESTION = re.compile(
    r"how (many|much|long|old|far|big|large|often|high|tall)|what (version|year|date|time|"
    r"number|percentage|port|size|amount|value|rate)|which (version|year|date|port|number)|"
    r"\bwhen\b|\bversion\b|多少|几|多大|多长|多久|多高|哪一?年|哪一?天|哪个端口|版本|端口|日期|"
    r"数量|比例|系数|百分",
    re.IGNORECASE,
)
_HAS_NUMBER = re.compile(r"\d")
# A leading section number ("3.2.1 ", "第三章 ") is structure, not an answer.
_SECTION_NUMBER = re.compile(r"^\s*(\d+(\.\d+)*\.?|第[一二三四五六七八九十百\d]+[章节条部分篇])\s*")
_BREADCRUMB = re.compile(r"\s(>|›|»|/)\s")


@dataclass(frozen=True, slots=True)
class _Scored:
    cand: Candidate
    score: float
    relevance: float  # the term/bigram overlap alone, before adjustments
    novel: bool  # says something beyond the question's own words


def _stem(word: str) -> str:
    # Plural "s" only: enough to match "checks"/"check" without a stemmer dependency.
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _matched_terms(terms: Sequence[str], text: str) -> set[str]:
    lowered = text.lower()
    tokens = {_stem(t) for t in index_tokens(text)}
    # Han terms match as substrings: jieba may segment the same words differently in
    # the question and in the passage.
    return {t for t in terms if (has_han(t) and t in lowered) or _stem(t) in tokens}


def _heading_like(cand: Candidate) -> bool:
    if cand.is_table_row:
        return False
    text = cand.text
    stripped = text.lstrip("#").strip()
    chunk = cand.chunk
    # The chunker starts every chunk with its breadcrumb ("Guide > Install").
    crumb = " > ".join(chunk.section_path)
    if text.startswith("#") or stripped in {chunk.title, crumb, *chunk.section_path}:
        return True
    if _BREADCRUMB.search(text) and not text.endswith(("。", ".", "!", "?", "！", "？")):
        return True
    if not cand.own_line:
        return False
    # A short line of its own in Title Case, or with no number in it, is a heading or a
    # caption ("NICS Firearm Background Checks November - 2015", "修订历史").
    body = _SECTION_NUMBER.sub("", text)
    return len(body) <= 80 and (title_case(body) or not _HAS_NUMBER.search(body))


def _novel(cand: Candidate, matched: set[str]) -> bool:
    """Whether the sentence says anything beyond the question's own words."""
    stems = {_stem(m) for m in matched}
    for token in index_tokens(cand.text):
        if token in STOPWORDS or _stem(token) in stems:
            continue
        if has_han(token) and any(token in m or m in token for m in matched if has_han(m)):
            continue
        return True
    return False


def _score(question: str, cands: Sequence[Candidate]) -> list[_Scored]:
    terms = query_terms(question)
    matched = [_matched_terms(terms, f"{c.text} {c.context}") for c in cands]
    # Rarity across the candidates: a term in every sentence tells sentences apart less
    # than a term found in one. The same across the retrieved chunks: words found in most
    # of them (the document's name, which questions repeat to say where to look) pick no
    # sentence out. Terms with a digit ("V1.1", "2380", "P12.1.2") name one specific
    # thing, so they count for more.
    df = {t: sum(t in m for m in matched) for t in terms}
    chunk_df = {
        t: len({c.chunk.content_id for c, m in zip(cands, matched, strict=True) if t in m})
        for t in terms
    }
    n_chunks = len({c.chunk.content_id for c in cands})
    weight = {
        t: math.log(1 + len(cands) / n)
        * math.log(1 + n_chunks / chunk_df[t]) / math.log(1 + n_chunks)
        * (IDENTIFIER_WEIGHT if _HAS_NUMBER.search(t) else 1.0)
        for t, n in df.items()
        if n
    }
    total = sum(weight.values()) or 1.0
    q_grams = char_bigrams(question) if has_han(question) else set()
    quantity = bool(_QUANTITY_QUESTION.search(question))

    out = []
    for cand, hits in zip(cands, matched, strict=True):
        relevance = sum(weight[t] for t in hits) / total
        if q_grams:
            grams = char_bigrams(f"{cand.text} {cand.context}")
            relevance += 0.5 * len(q_grams & grams) / len(q_grams)
        score = relevance
        heading = _heading_like(cand)
        if heading:
            score *= 0.35
        novel = _novel(cand, hits)
        if not novel:
            score *= 0.3  # it only repeats the question
        if quantity and not heading and _HAS_NUMBER.search(_SECTION_NUMBER.sub("", cand.text)):
            score *= 1.4  # the question wants a number and this sentence has one
        # A long run of text matches many words by sheer size and reads badly as an
        # answer: damp it, gently. A table row is as long as its longest cell (wide rows
        # are cut for display anyway).
        size = max(len(v) for _, v in cand.cells) if cand.cells else len(cand.text)
        if size < 6 and not cand.cells:
            score *= 0.5
        elif size > LONG_CHARS:
            score *= (LONG_CHARS / size) ** 0.3
        score += 0.08 / (cand.hit_rank + 1) if relevance else 0.0
        out.append(_Scored(cand, score, relevance, novel))
    return out


def _similar(a: str, b: str) -> bool:
    if a == b or a in b or b in a:
        return True
    ga, gb = char_bigrams(a), char_bigrams(b)
    return bool(ga and gb) and len(ga & gb) / len(ga | gb) >= DUPLICATE_JACCARD


def _supplements(s: _Scored, best: _Scored) -> bool:
    """Whether `s` is worth showing after the best sentence."""
    if s.relevance <= 0 or not s.novel or _heading_like(s.cand):
        return False
    floor = RELATIVE_FLOOR
    if s.cand.is_table_row and best.cand.is_table_row:
        # Other rows of a table are alternatives to the best row, not more of the answer.
        floor = ROW_FLOOR
    return s.score >= floor * best.score


def _select(scored: list[_Scored], max_sentences: int) -> list[_Scored]:
    ranked = sorted(scored, key=lambda s: (-s.score, s.cand.hit_rank, s.cand.position))
    best = ranked[0]
    if best.relevance <= 0:
        # Retrieval judged the chunk relevant but no sentence shares a word with the
        # question (a paraphrase): show the top chunk's opening sentences.
        lead = [s for s in scored if s.cand.hit_rank == best.cand.hit_rank]
        lead.sort(key=lambda s: (_heading_like(s.cand), s.cand.position))
        ranked = lead
    else:
        # Prefer the rest of the answer from the same chunk as the best sentence.
        same = best.cand.chunk.content_id
        ranked = sorted(
            ranked,
            key=lambda s: (-(s.score + (0.05 if s.cand.chunk.content_id == same else 0.0)),
                           s.cand.hit_rank, s.cand.position),
        )
    chosen: list[_Scored] = []
    for s in ranked:
        if len(chosen) == max_sentences:
            break
        if chosen and best.relevance > 0 and not _supplements(s, best):
            continue
        if any(_similar(s.cand.text, c.cand.text) for c in chosen):
            continue
        chosen.append(s)
    return chosen


def _shown_text(cand: Candidate, terms: Sequence[str]) -> str:
    """The text to show: the sentence itself, or a wide table row cut to its key cells."""
    if len(cand.cells) <= MAX_ROW_CELLS:
        return cand.text
    # Priority: the first cell (it usually names the row, "Kentucky"), then the columns
    # the question mentions, then the rest in column order; shown in column order.
    matching = [i for i, (h, v) in enumerate(cand.cells) if _matched_terms(terms, f"{h} {v}")]
    priority = dict.fromkeys([0, *matching, *range(len(cand.cells))])
    keep = set(list(priority)[:MAX_ROW_CELLS])
    return render_row(tuple(c for i, c in enumerate(cand.cells) if i in keep))


def extractive_answer(
    question: str, hits: Sequence[Hit], max_sentences: int = 3
) -> tuple[str, list[Citation]]:
    """The best `max_sentences` retrieved sentences, each followed by its citation label.

    Returns ("", []) when there is nothing to quote.
    """
    cands = [c for rank, hit in enumerate(hits[:TOP_HITS]) for c in candidates(hit.chunk, rank)]
    if not cands or max_sentences < 1:
        return "", []
    terms = query_terms(question)
    parts: list[str] = []
    citations: dict[str, Citation] = {}
    for s in _select(_score(question, cands), max_sentences):
        chunk = s.cand.chunk
        label = citation_label(chunk.doc_id, s.cand.page)
        parts.append(f"{normalise_ws(_shown_text(s.cand, terms))} {label}")
        citations.setdefault(label, replace(Citation.of(chunk), label=label))
    return " ".join(parts), list(citations.values())
