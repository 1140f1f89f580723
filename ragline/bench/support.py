"""`citation_support`: is each answer sentence really in the passage its label names, at
the lines the citation reports?

Measured from the answer as a reader gets it: the text is cut into sentences at its label
groups (a sentence is the text since the previous label group), and for each sentence
every label must resolve to a citation, and one of those passages, restricted to the
reported line span, must hold the sentence (labels removed, whitespace ignored; a quoted
table row counts when every quoted value is there). A sentence with no label counts as
unsupported. The note saying that sources disagree is not a quote and is not counted.
"""

from __future__ import annotations

import re

from core.text import has_han
from core.types import Answer
from fusion.conflicts import conflict_note
from generation.cite import Span, span_lines, supports

_GROUP = re.compile(r"(?:\[Doc[0-9a-z]+_p\d+(?:\.\d+)?\]\s*)+")
_LABEL = re.compile(r"\[Doc[0-9a-z]+_p\d+(?:\.\d+)?\]")
_WORDS = re.compile(r"[\w\u3400-\u9fff]{2,}")
# Punctuation right after a label ends the sentence before it.
_TRAIL = " .。;；,，!！?？:：)）"


def answer_sentences(text: str) -> list[tuple[str, list[str]]]:
    """(sentence, labels) pairs in order; trailing text without a label gets none."""
    out: list[tuple[str, list[str]]] = []
    cursor = 0
    for m in _GROUP.finditer(text):
        sentence = text[cursor : m.start()].strip().lstrip(_TRAIL).strip()
        out.append((sentence, _LABEL.findall(m.group(0))))
        cursor = m.end()
    tail = text[cursor:].strip().lstrip(_TRAIL).strip()
    if _WORDS.search(tail):
        out.append((tail, []))
    return [(s, labels) for s, labels in out if s]


def quoted_text(answer: Answer) -> str:
    """The answer's quoted sentences: the note saying that sources disagree (appended when
    conflicts were found) cites values, it quotes nothing."""
    if not answer.conflicts:
        return answer.text
    note = conflict_note(answer.conflicts, has_han(answer.question))
    return answer.text.removesuffix(note).rstrip()


def sentence_support(answer: Answer) -> tuple[int, int]:
    """(supported sentences, sentences) of a covered answer; (0, 0) when not covered."""
    if not answer.covered:
        return 0, 0
    chunks = {h.chunk.content_id: h.chunk for h in answer.hits}
    by_label = {c.label: c for c in answer.citations}
    ok = 0
    pairs = answer_sentences(quoted_text(answer))
    for sentence, labels in pairs:
        found = False
        for label in labels:
            c = by_label.get(label)
            chunk = chunks.get(c.content_id) if c else None
            if c is None or chunk is None:
                found = False  # a label that resolves to nothing fails the sentence
                break
            span = Span(c.page_start, c.page_end, c.line_start, c.line_end)
            found = found or supports(sentence, span_lines(chunk, span))
        ok += found
    return ok, len(pairs)
