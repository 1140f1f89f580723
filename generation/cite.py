"""Exact citations: each answer sentence names the passage(s) it came from, at its lines.

A sentence's source is a passage (chunk) plus the range of the chunk's text lines that
hold it; the chunk's `line_map` turns those into the page and source lines an auditor
opens. Labels are `[DocX_pY]`; when one answer cites two passages of the same page, each
gets a passage number, `[DocX_pY.1]`, `[DocX_pY.2]`, so every label resolves to exactly
one passage (`core.ids`). One `Citation` per label, its span covering the sentences cited
under it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.ids import citation_label
from core.text import char_bigrams
from core.types import AnswerSentence, Chunk, Citation

_SPACE = re.compile(r"\s+")
# A quoted table row: "Header: value | Header: value".
_PAIR_SEP = " | "


@dataclass(frozen=True, slots=True)
class Source:
    """Where a sentence was found: a chunk and its text lines `first`..`last` (0-based)."""

    chunk: Chunk
    first: int
    last: int
    page: int = 0  # the page a reader named (an LLM's label), used when lines are unknown


@dataclass(frozen=True, slots=True)
class Quote:
    """One answer sentence and the passages it was taken from (best first)."""

    text: str
    sources: tuple[Source, ...]
    supported: bool = True


@dataclass(frozen=True, slots=True)
class Span:
    page_start: int
    page_end: int
    line_start: int
    line_end: int
    label_page: int = 0  # the page the label names: where the sentence starts


def squash(text: str) -> str:
    """Whitespace removed and lower-cased: PDF text re-flows spaces, so containment
    checks compare letters and punctuation only."""
    return _SPACE.sub("", text).lower()


def source_span(chunk: Chunk, first: int, last: int, page: int = 0) -> Span:
    """Page and source lines of chunk text lines `first`..`last`; the chunk's own span
    when the chunk has no line map (indexed before it existed) or the lines have none
    (then the label names `page` when it lies in the chunk)."""
    entries = [e for e in chunk.line_map[first : last + 1] if e[1] > 0]
    if not chunk.line_map or not entries:
        named = page if chunk.page_start <= page <= chunk.page_end else chunk.page_start
        return Span(chunk.page_start, chunk.page_end, chunk.line_start, chunk.line_end, named)
    pages = [p for p, _, _ in entries]
    first_page, last_page = min(pages), max(pages)
    starts = [a for p, a, _ in entries if p == first_page]
    ends = [b for p, _, b in entries if p == last_page]
    return Span(first_page, last_page, min(starts), max(ends), first_page)


def span_lines(chunk: Chunk, span: Span) -> str:
    """The chunk text lines that fall inside a reported span (all of them without a line
    map): what an auditor following the citation reads."""
    lines = chunk.text.split("\n")
    if not chunk.line_map or len(chunk.line_map) != len(lines):
        return chunk.text
    keep = []
    for line, (page, a, b) in zip(lines, chunk.line_map, strict=True):
        if a == 0 or not span.page_start <= page <= span.page_end:
            continue
        lo = span.line_start if page == span.page_start else 1
        hi = span.line_end if page == span.page_end else 10**9
        if a <= hi and b >= lo:
            keep.append(line)
    return "\n".join(keep)


def table_values(text: str) -> list[str] | None:
    """The cell values of a quoted table row ("H: v | H: v") or Markdown table, else None."""
    if text.lstrip().startswith("|"):
        values: list[str] = []
        # The header line names the columns (checked against the table's header, not its
        # rows); the values are the body cells.
        for line in text.split("\n")[1:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(set(c) <= set("-: ") for c in cells):
                continue
            values.extend(c for c in cells if c)
        return values or None
    pairs = text.split(_PAIR_SEP)
    if ": " not in text and len(pairs) < 2:
        return None
    # Cells under an empty header are quoted as bare values ("1.5.0 | 华山版").
    values = [p.split(": ", 1)[1] if ": " in p else p for p in pairs]
    return values if len(pairs) > 1 or ": " in pairs[0] else None


def supports(sentence: str, passage: str) -> bool:
    """Whether the passage text holds the sentence: verbatim (whitespace aside) or, for a
    quoted table row, every cell value."""
    # A Markdown table escapes a pipe inside a cell as "\|"; the quoted cell has "|".
    s, p = squash(sentence), squash(passage.replace("\\|", "|"))
    if s and s in p:
        return True
    values = table_values(sentence)
    return values is not None and all(squash(v) in p for v in values)


def label_quotes(quotes: Sequence[Quote]) -> tuple[list[list[str]], list[Citation]]:
    """The labels of each quote (one per source) and one citation per label; passages of
    one page get numbered labels when more than one of them is cited."""
    per_page: dict[tuple[str, int], list[str]] = {}
    spans: list[list[tuple[Source, Span]]] = []
    for q in quotes:
        located = [
            (src, source_span(src.chunk, src.first, src.last, src.page)) for src in q.sources
        ]
        spans.append(located)
        for src, span in located:
            ids = per_page.setdefault((src.chunk.doc_id, span.label_page), [])
            if src.chunk.content_id not in ids:
                ids.append(src.chunk.content_id)

    def label_of(chunk: Chunk, page: int) -> str:
        ids = per_page[(chunk.doc_id, page)]
        part = ids.index(chunk.content_id) + 1 if len(ids) > 1 else 0
        return citation_label(chunk.doc_id, page, part)

    citations: dict[str, Citation] = {}
    all_labels: list[list[str]] = []
    for located in spans:
        labels: list[str] = []
        for src, span in located:
            label = label_of(src.chunk, span.label_page)
            if label not in labels:
                labels.append(label)
            c = citations.get(label)
            if c is None:
                base = Citation.of(src.chunk)
                citations[label] = Citation(
                    label,
                    base.content_id,
                    base.source,
                    base.title,
                    span.page_start,
                    span.page_end,
                    span.line_start,
                    span.line_end,
                    base.chunk_page_start,
                    base.chunk_page_end,
                    base.chunk_line_start,
                    base.chunk_line_end,
                )
            else:
                citations[label] = _widen(c, span)
        all_labels.append(labels)
    return all_labels, list(citations.values())


def assemble(quotes: Sequence[Quote]) -> tuple[str, list[Citation], list[AnswerSentence]]:
    """Answer text with its labels after each sentence, the citations behind those
    labels, and the sentences with their labels."""
    labels, citations = label_quotes(quotes)
    parts = [
        f"{q.text} {''.join(ls)}" if ls else q.text for q, ls in zip(quotes, labels, strict=True)
    ]
    sentences = [
        AnswerSentence(q.text, tuple(ls), q.supported) for q, ls in zip(quotes, labels, strict=True)
    ]
    return " ".join(parts), citations, sentences


def _widen(c: Citation, span: Span) -> Citation:
    """The citation's span grown to cover one more sentence of the same passage."""
    if (span.page_start, span.line_start) < (c.page_start, c.line_start):
        start = (span.page_start, span.line_start)
    else:
        start = (c.page_start, c.line_start)
    if (span.page_end, span.line_end) > (c.page_end, c.line_end):
        end = (span.page_end, span.line_end)
    else:
        end = (c.page_end, c.line_end)
    return Citation(
        c.label,
        c.content_id,
        c.source,
        c.title,
        start[0],
        end[0],
        start[1],
        end[1],
        c.chunk_page_start,
        c.chunk_page_end,
        c.chunk_line_start,
        c.chunk_line_end,
    )


def locate(sentence: str, chunk: Chunk) -> tuple[int, int] | None:
    """The chunk text lines (first, last) that hold the sentence, or None. A quoted table
    row is found by the line holding all its values."""
    lines = chunk.text.split("\n")
    target = squash(sentence)
    if target:
        joined = ""
        ends: list[int] = []
        for line in lines:
            joined += squash(line)
            ends.append(len(joined))
        at = joined.find(target)
        if at >= 0:
            first = next(i for i, e in enumerate(ends) if e > at)
            last = next(i for i, e in enumerate(ends) if e >= at + len(target))
            return first, last
    values = table_values(sentence)
    if values:
        rows = [i for i, line in enumerate(lines) if all(squash(v) in squash(line) for v in values)]
        if rows:
            return rows[0], rows[0]
        found = [
            i for i, line in enumerate(lines) if any(squash(v) in squash(line) for v in values)
        ]
        if found and supports(sentence, "\n".join(lines[found[0] : found[-1] + 1])):
            return found[0], found[-1]
    return None


def support_score(sentence: str, text: str) -> float:
    """Share of the sentence's content (Han character bigrams, Latin words) found in the
    text: 1.0 for a verbatim quote, lower for a paraphrase, near 0 for something else."""
    grams = char_bigrams(sentence)
    if not grams:
        return 0.0
    if squash(sentence) in squash(text):
        return 1.0
    return len(grams & char_bigrams(text)) / len(grams)


def best_lines(sentence: str, chunk: Chunk) -> tuple[int, int]:
    """The chunk text lines that hold the sentence: exact when it is quoted, else the
    lines sharing most of its content (first to last of them)."""
    exact = locate(sentence, chunk)
    if exact is not None:
        return exact
    grams = char_bigrams(sentence)
    lines = chunk.text.split("\n")
    scores = [len(grams & char_bigrams(line)) for line in lines]
    top = max(scores, default=0)
    if top == 0:
        return 0, len(lines) - 1
    keep = [i for i, sc in enumerate(scores) if sc >= 0.5 * top]
    return keep[0], keep[-1]
