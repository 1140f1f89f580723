"""Check every citation label in an LLM's answer against the hits it was shown.

A label `[DocX_pY]` (or `[DocX_pY.N]`, as the prompt numbers passages that share a page)
is valid when some retrieved chunk belongs to a document with handle X and spans page Y.
Anything else (a made-up handle, a page outside every retrieved chunk of that document)
is removed from the text and reported, so no answer cites what the reader cannot open.
Sloppy formatting is normalised to the canonical label first.

Then each cited sentence (the text since the previous label group) is attached to the
passage that supports it: among the passages its labels can mean, the one holding most of
its content, at the lines that hold it. Labels are rewritten so each resolves to exactly
one passage, and a sentence no cited passage supports is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.ids import citation_label
from core.types import AnswerSentence, Chunk, Citation, Hit
from generation.cite import Quote, Source, best_lines, label_quotes, support_score

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
    r"\s*[_\s,，:-]*\s*(?:p|pp|pg|page)\s*\.?\s*(\d+)(?:\.(\d+))?"
    r"(?:\s*[-–~]\s*(?:p\s*)?(\d+))?",
    re.IGNORECASE,
)
# What may sit between labels inside one bracket group.
_SEPARATORS = re.compile(r"^[\s,，;；、/&]*(?:(?:and|和|及)[\s,，;；、/&]*)*$", re.IGNORECASE)
# A bare label with no brackets at all.
_BARE = re.compile(r"(?<![\w\[])Doc([0-9a-zA-Z]{1,16})_[pP](\d+)(\.\d+)?\b")
_CANONICAL = re.compile(r"\[Doc([0-9a-z]{1,16})_p(\d+)(?:\.(\d+))?\]")
_GROUP_OF_LABELS = re.compile(r"(?:\[Doc[0-9a-z]{1,16}_p\d+(?:\.\d+)?\]\s*)+")
# A sentence keeps its label when this much of its content is found in the passage.
SUPPORT_MIN = 0.5


@dataclass(frozen=True, slots=True)
class CitationCheck:
    text: str  # the answer with unknown labels removed
    citations: list[Citation] = field(default_factory=list)  # one per valid label, in order
    removed_labels: list[str] = field(default_factory=list)  # canonical form, in order
    sentences: list[AnswerSentence] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)  # cited sentences nothing supports


def prompt_labels(hits: Sequence[Hit]) -> list[str]:
    """The label each hit is shown under in a prompt: its page label, numbered `.N` (in
    rank order) when several hits start on the same page of one document."""
    base = [h.chunk.label for h in hits]
    counts: dict[str, int] = {}
    for b in base:
        counts[b] = counts.get(b, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for h, b in zip(hits, base, strict=True):
        if counts[b] == 1:
            out.append(b)
            continue
        seen[b] = seen.get(b, 0) + 1
        out.append(citation_label(h.chunk.doc_id, h.chunk.page_start, seen[b]))
    return out


def _canonical(match: re.Match[str]) -> str:
    handle, first, part, last = (
        match.group(1).lower(),
        int(match.group(2)),
        match.group(3),
        match.group(4),
    )
    if part is not None:
        return f"[Doc{handle}_p{first}.{int(part)}]"
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
    text = _BARE.sub(lambda m: f"[Doc{m.group(1).lower()}_p{m.group(2)}{m.group(3) or ''}]", text)
    # "[DocX_p3][DocX_p3]" says nothing the first one does not.
    return re.sub(r"(\[Doc[0-9a-z]+_p\d+(?:\.\d+)?\])(?:\s*\1)+", r"\1", text)


def _resolve(
    handle: str, page: int, part: int, hits: Sequence[Hit], shown: Sequence[str]
) -> list[Chunk]:
    """The passages a label can mean, best-ranked first: exactly one for a numbered label
    shown in the prompt, every retrieved passage of that page for a plain one."""
    if part:
        label = f"[Doc{handle}_p{page}.{part}]"
        return [h.chunk for h, s in zip(hits, shown, strict=True) if s == label]
    return [
        h.chunk
        for h in hits
        if h.chunk.handle == handle and h.chunk.page_start <= page <= h.chunk.page_end
    ]


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"[ \t]+([,.;:!?，。；：！？])", r"\1", text)
    return re.sub(r"[ \t]+\n", "\n", text).strip()


def check_citations(text: str, hits: Sequence[Hit]) -> CitationCheck:
    shown = prompt_labels(hits)
    removed: dict[str, None] = {}
    text = normalise_labels(text)

    # Pass 1: which passages each label group can mean; unknown labels are removed.
    groups: list[tuple[int, int, str, list[tuple[list[Chunk], int]]]] = []
    cursor = 0
    for m in _GROUP_OF_LABELS.finditer(text):
        options: list[tuple[list[Chunk], int]] = []
        for lab in _CANONICAL.finditer(m.group(0)):
            handle, page = lab.group(1), int(lab.group(2))
            part = int(lab.group(3)) if lab.group(3) else 0
            chunks = _resolve(handle, page, part, hits, shown)
            if chunks:
                options.append((chunks, page))
            else:
                removed[lab.group(0)] = None
        # Punctuation right after a label ends the sentence before it.
        sentence = _LABEL_OR_SPACE.sub(" ", text[cursor : m.start()]).strip().lstrip(_TRAIL)
        sentence = sentence.strip()
        groups.append((m.start(), m.end(), sentence, options))
        cursor = m.end()

    # Pass 2: attach each cited sentence to the passage(s) that support it.
    quotes: list[Quote] = []
    unsupported: list[str] = []
    for _, _, sentence, options in groups:
        sources: list[Source] = []
        supported = bool(options)
        for chunks, page in options:
            scored = [(support_score(sentence, c.text), -k, c) for k, c in enumerate(chunks)]
            score, _, chunk = max(scored, key=lambda t: (t[0], t[1]))
            if score < SUPPORT_MIN:
                supported = False
            first, last = best_lines(sentence, chunk)
            # Without a line map only the label says which page: keep each page named.
            if all(
                src.chunk.content_id != chunk.content_id
                or (not chunk.line_map and src.page != page)
                for src in sources
            ):
                sources.append(Source(chunk, first, last, page))
        if options and not supported and sentence:
            unsupported.append(sentence)
        quotes.append(Quote(sentence, tuple(sources), supported))
    labels, citations = label_quotes(quotes)

    # Pass 3: the text with every label group rewritten to its exact labels.
    out: list[str] = []
    cursor = 0
    for (start, end, _, _), ls in zip(groups, labels, strict=True):
        out.append(text[cursor:start])
        trailing = " " if text[start:end].endswith((" ", "\n")) and ls else ""
        out.append("".join(ls) + trailing)
        cursor = end
    out.append(text[cursor:])
    sentences = [
        AnswerSentence(q.text, tuple(ls), q.supported)
        for q, ls in zip(quotes, labels, strict=True)
        if q.text
    ]
    tail = _LABEL_OR_SPACE.sub(" ", text[cursor:]).strip().lstrip(_TRAIL).strip()
    if _has_words(tail):
        sentences.append(AnswerSentence(tail, (), False))
    return CitationCheck(_tidy("".join(out)), citations, list(removed), sentences, unsupported)


_LABEL_OR_SPACE = re.compile(r"\[Doc[0-9a-z]{1,16}_p\d+(?:\.\d+)?\]|\s+")
_WORDS = re.compile(r"[\w\u3400-\u9fff]{2,}")
_TRAIL = " .。;；,，!！?？:：)）"


def _has_words(text: str) -> bool:
    return bool(_WORDS.search(text))
