"""Citation completeness of one answer: how many of its sentences carry a verified label.

Labels are read generically as bracketed tokens (`[DocX_pY]` or any disambiguated form);
a sentence counts as verified when one of its labels is among the answer's checked
citations. A label written after the sentence's full stop belongs to that sentence."""

from __future__ import annotations

import re
from collections.abc import Iterable

_TOKENS = re.compile(
    r"(?P<label>\[[^\[\]\n]{1,80}\])"
    r"|(?P<end>[.!?]+(?=\s|$|\[)|[。！？]+)"
    r"|(?P<nl>\n+)"
    r"|(?P<text>[^\[\n。！？.!?]+|[.!?\[])"
)
_WORDLIKE = re.compile(r"\w")


def sentence_citations(text: str) -> list[tuple[str, list[str]]]:
    """The answer's sentences, each with the labels written in or right after it."""
    sentences: list[tuple[str, list[str]]] = []
    body, labels, ended = "", [], False
    for m in _TOKENS.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind == "label":
            labels.append(tok)
        elif kind in ("end", "nl"):
            body += tok if kind == "end" else ""
            ended = True
        elif ended and _WORDLIKE.search(tok):
            if _WORDLIKE.search(body):
                sentences.append((body.strip(), labels))
            body, labels, ended = tok, [], False
        else:
            body += tok
    if _WORDLIKE.search(body):
        sentences.append((body.strip(), labels))
    return sentences


def completeness(text: str, verified_labels: Iterable[str]) -> tuple[int, int]:
    """(sentences, sentences with at least one verified label)."""
    known = set(verified_labels)
    found = sentence_citations(text)
    return len(found), sum(1 for _, labels in found if known.intersection(labels))
