"""Check every citation label in an LLM's answer against the hits it was shown.

A label `[DocX_pY]` is valid when some retrieved chunk belongs to a document with handle X
and spans page Y. Anything else (a made-up handle, a page outside every retrieved chunk of
that document) is removed from the text and reported, so no answer cites what the
reader cannot open. Sloppy formatting is normalised to the canonical label first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from core.types import Chunk, Citation, Hit

# Brackets LLMs use around labels: ASCII, full-width, lenticular, parentheses.
_OPEN, _CLOSE = "[【［〔(（", "]】］〕)）"
_GROUP = re.compile(
    rf"[{re.escape(_OPEN)}]([^{re.escape(_OPEN + _CLOSE)}\n]{{1,300}})[{re.escape(_CLOSE)}]"
)
# One label, however written: "Docab12cd_p3", "Doc ab12cd p3", "DocAB12CD_P3", "Docab12cd,
# page 3", "Docab12cd_p3-4" (a page range). The handle is a real-looking one (six hex
# digits) or any word with a digit in it, so a made-up handle is caught and removed while
# ordinary words ("document page 3") are left alone.
_LOOSE = re.compile(
    r"\bDoc\s*[:#]?\s*([0-9a-f]{6}|(?=[0-9a-z]{0,15}\d)[0-9a-z]{1,16})(?![0-9a-z])"
    r"\s*[_\s,，:-]*\s*(?:p|pp|pg|page)\s*\.?\s*(\d+)(?:\s*[-–~]\s*(?:p\s*)?(\d+))?",
    re.IGNORECASE,
)
# What may sit between labels inside one bracket group.
_SEPARATORS = re.compile(r"^[\s,，;；、/&]*(?:(?:and|和|及)[\s,，;；、/&]*)*$", re.IGNORECASE)
# A bare label with no brackets at all.
_BARE = re.compile(r"(?<![\w\[])Doc([0-9a-zA-Z]{1,16})_[pP](\d+)\b")
_CANONICAL = re.compile(r"\[Doc([0-9a-z]{1,16})_p(\d+)\]")


@dataclass(frozen=True, slots=True)
class CitationCheck:
    text: str  # the answer with unknown labels removed
    citations: list[Citation] = field(default_factory=list)  # one per valid label, in order
    removed_labels: list[str] = field(default_factory=list)  # canonical form, in order


def _canonical(match: re.Match[str]) -> str:
    handle, first, last = match.group(1).lower(), int(match.group(2)), match.group(3)
    pages = [first] if last is None or int(last) <= first else [first, int(last)]
    return "".join(f"[Doc{handle}_p{p}]" for p in pages)


def _normalise_group(match: re.Match[str]) -> str:
    content = match.group(1)
    labels = list(_LOOSE.finditer(content))
    if not labels:
        return match.group(0)
    if _SEPARATORS.match(_LOOSE.sub("", content)):
        # The bracket holds only labels: it becomes those labels, back to back.
        return "".join(_canonical(m) for m in labels)
    # Labels inside other words ("(see Docab12cd_p3)"): fix the labels, keep the words.
    return match.group(0)[0] + _LOOSE.sub(_canonical, content) + match.group(0)[-1]


def normalise_labels(text: str) -> str:
    """Rewrite every label-like mention as a canonical `[DocX_pY]` label."""
    text = _GROUP.sub(_normalise_group, text)
    text = _BARE.sub(lambda m: f"[Doc{m.group(1).lower()}_p{m.group(2)}]", text)
    # "[DocX_p3][DocX_p3]" says nothing the first one does not.
    return re.sub(r"(\[Doc[0-9a-z]+_p\d+\])(?:\s*\1)+", r"\1", text)


def _resolve(handle: str, page: int, hits: Sequence[Hit]) -> Chunk | None:
    for hit in hits:  # rank order: the best-ranked chunk holding that page answers for it
        chunk = hit.chunk
        if chunk.handle == handle and chunk.page_start <= page <= chunk.page_end:
            return chunk
    return None


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"[ \t]+([,.;:!?，。；：！？])", r"\1", text)
    return re.sub(r"[ \t]+\n", "\n", text).strip()


def check_citations(text: str, hits: Sequence[Hit]) -> CitationCheck:
    citations: dict[str, Citation] = {}
    removed: dict[str, None] = {}

    def keep_or_drop(match: re.Match[str]) -> str:
        handle, page = match.group(1), int(match.group(2))
        label = f"[Doc{handle}_p{page}]"  # not citation_label: that would cut a wrong handle
        chunk = _resolve(handle, page, hits)
        if chunk is None:
            removed[label] = None
            return ""
        citations.setdefault(label, replace(Citation.of(chunk), label=label))
        return match.group(0)

    cleaned = _CANONICAL.sub(keep_or_drop, normalise_labels(text))
    return CitationCheck(_tidy(cleaned), list(citations.values()), list(removed))
