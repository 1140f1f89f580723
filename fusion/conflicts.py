"""Conflict detection: top passages from different documents that state different values
for the same thing (a parameter, a clause, an entity's limit or date).

Two kinds of evidence, both read from the passages only:

* statements: the question's best sentence in each passage, with its values (numbers with
  units, dates, Chinese numerals) masked. Two sentences from different documents that say
  the same thing once masked (character-bigram Jaccard >= `similarity`) but carry different
  values disagree: the typical case of two versions or edited copies of one text.
* fields: `name: value` / `name = value` lines and table cells (row key + column header);
  the same field, named by the question, with different values in different documents.

Each conflict names the side to prefer: the more authoritative source class first
(settings.fusion.authority), then the newer document, then the more trusted one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache
from typing import Any

from core.han_script import fold_han, read_folded
from core.text import char_bigrams, has_han, query_terms, split_sentences
from core.types import Answer, Chunk, Citation, Hit
from fusion.trust import TrustPolicy

_NUM = r"(?:\d+(?:[.,]\d+)*|[零〇一二三四五六七八九十百千万亿两]+)"
_VALUE = re.compile(
    r"\d{4}\s*年\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*日)?"
    r"|\d{4}-\d{2}-\d{2}"
    r"|" + _NUM + r"\s*(?:%|％|[A-Za-z]{1,6}\b|[个条项日天年月周岁元万亿小时分钟秒次倍核]+)?",
)
_FIELD = re.compile(r"^\s*([^\n:：=]{2,60}?)\s*[:：=]\s*([^\n]{1,80})$", re.MULTILINE)
_HAS_DIGIT = re.compile(r"[\d零〇一二三四五六七八九十百千万亿两]")
# Clause numbers and section numbers are names, not values.
_CLAUSE = re.compile(r"第[零〇一二三四五六七八九十百千\d]+[条章节款项]|\b\d+(?:\.\d+){1,}\b")


# A masked sentence this long names what it is about; a shorter one ("体长可达#公分")
# could be said of anything.
_SELF_NAMING_CHARS = 30


@dataclass(frozen=True, slots=True)
class _Claim:
    hit: Hit
    subject: str  # what the value is of: masked sentence or field name
    value: str
    text: str  # the sentence or line that states it
    kind: str  # "statement" | "field"


def _norm_value(value: str) -> str:
    return re.sub(r"\s+", "", value).lower().rstrip(".,;。；")


# The values and the masked form of a sentence, by its text: the top passages repeat
# question after question, and these are regular expressions tried at every character.
_SENTENCES_MEMO = 8192


@lru_cache(maxsize=_SENTENCES_MEMO)
def _values(sentence: str) -> tuple[str, ...]:
    without_names = _CLAUSE.sub(" ", sentence)
    vals = [_norm_value(m.group(0)) for m in _VALUE.finditer(without_names)]
    return tuple(v for v in vals if v and _HAS_DIGIT.search(v))


@lru_cache(maxsize=_SENTENCES_MEMO)
def _masked(sentence: str) -> str:
    """The sentence with its values replaced by '#', clause numbers kept (they name it)."""
    out, last = [], 0
    for m in _CLAUSE.finditer(sentence):
        out.append(_VALUE.sub("#", sentence[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_VALUE.sub("#", sentence[last:]))
    return "".join(out)


# A numbered clause opening a statement ("第六条", "Article 6", "§ 6"), and how alike two
# versions of it must still read once their values are masked.
_OPENING_CLAUSE = re.compile(
    r"\s*(?:第[一二三四五六七八九十百零〇\d]+条|article\s+\d+|§\s*\d+)", re.IGNORECASE
)
_REWORDED = 0.45


def _jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _term_hits(terms: Sequence[str], text: str, lowered: str | None = None) -> int:
    """How many of the terms the text holds (`lowered`: the text in lower case, if known)."""
    return sum(map((text.lower() if lowered is None else lowered).__contains__, terms))


# A passage's sentences and `name: value` lines, by its text: the same top passages come
# back question after question, and splitting one (a regular expression tried at every
# character) cost more than the rest of what a conflict check does with it.
_PASSAGES_MEMO = 2048


@lru_cache(maxsize=_PASSAGES_MEMO)
def _sentences(text: str) -> tuple[tuple[str, str, str, bool], ...]:
    """(sentence, in lower case, also read as simplified Chinese, whether it has a digit:
    a sentence with none states no value) of each sentence."""
    out = []
    for s in split_sentences(text):
        lowered = s.lower()
        out.append((s, lowered, fold_han(lowered), _HAS_DIGIT.search(s) is not None))
    return tuple(out)


@lru_cache(maxsize=_PASSAGES_MEMO)
def _field_lines(text: str) -> tuple[tuple[str, str, str], ...]:
    """(name, value, line) of each `name: value` / `name = value` line."""
    return tuple(
        (m.group(1).strip(), m.group(2).strip(), m.group(0).strip()) for m in _FIELD.finditer(text)
    )


def _statement(hit: Hit, terms: Sequence[str]) -> _Claim | None:
    if hit.chunk.kind == "table":  # rows are compared cell by cell, as fields
        return None
    text = hit.chunk.text
    if not _HAS_DIGIT.search(text):  # no sentence of it states a value
        return None
    best: tuple[int, str, tuple[str, ...]] | None = None
    folded = read_folded(terms)
    for sentence, lowered, simplified, digit in _sentences(text):
        # Only a sentence with a digit states a value; then the question's words first:
        # most sentences hold none, and finding values costs more than looking for words.
        n = digit and _term_hits(terms, sentence, simplified if folded else lowered)
        if n and (best is None or n > best[0]) and (values := _values(sentence)):
            best = (n, sentence, values)
    if best is None:
        return None
    _, sentence, values = best
    # (The same sentence in traditional and in simplified characters is one statement.)
    return _Claim(hit, fold_han(_masked(sentence)), "|".join(values), sentence, "statement")


def _fields(hit: Hit, terms: Sequence[str]) -> list[_Claim]:
    out: list[_Claim] = []
    chunk = hit.chunk
    read = fold_han if read_folded(terms) else str  # (as the terms were cut)
    for name, value, line in _field_lines(chunk.text):
        if _term_hits(terms, read(name)) and (values := _values(value)):
            out.append(_Claim(hit, fold_han(name.lower()), "|".join(values), line, "field"))
    if chunk.kind == "table" and chunk.table_header:
        for row in chunk.table_rows:
            if not row:
                continue
            for header, cell in zip(chunk.table_header[1:], row[1:], strict=False):
                name = f"{row[0]} / {header}"
                if _term_hits(terms, read(name)) and (values := _values(cell)):
                    subject = fold_han(name.lower())
                    out.append(_Claim(hit, subject, "|".join(values), f"{name}: {cell}", "field"))
    return out


class ConflictDetector:
    def __init__(self, policy: TrustPolicy, similarity: float = 0.6, top_hits: int = 6) -> None:
        self.policy = policy
        self.similarity = similarity
        self.top_hits = top_hits

    def _same_thing(self, a: _Claim, b: _Claim) -> bool:
        """Two statements say the same thing of the same subject: the sentences match once
        their values are masked, and either they are long enough to name their subject
        or their documents are about the same thing (similar titles: two versions of one
        statute). "体长可达#公分" in two articles about two fishes is no conflict."""
        alike = _jaccard(char_bigrams(a.subject), char_bigrams(b.subject))
        titles = char_bigrams(a.hit.chunk.title), char_bigrams(b.hit.chunk.title)
        same_title = _jaccard(*titles) >= self.similarity
        # One numbered clause of two versions of a document (第六条 of each), reworded
        # around its number ("30天内" / "15个工作日内通过OA系统…"), is the same thing too.
        clause = _OPENING_CLAUSE.match(a.subject)
        if clause and same_title and b.subject.startswith(clause.group(0)):
            return alike >= _REWORDED
        if alike < self.similarity:
            return False
        return min(len(a.subject), len(b.subject)) >= _SELF_NAMING_CHARS or same_title

    def _prefer_key(self, chunk: Chunk) -> tuple[int, int, float]:
        standing = self.policy.standing(chunk)
        newer = -(chunk.modified or date.min).toordinal()
        return (self.policy.authority_rank(standing.source_class), newer, -standing.trust)

    def _why(self, chosen: Chunk, others: Sequence[Chunk]) -> str:
        rank = self.policy.authority_rank
        mine = self.policy.standing(chosen)
        if any(
            rank(self.policy.standing(o).source_class) > rank(mine.source_class) for o in others
        ):
            return f"more authoritative source ({mine.source_class})"
        if chosen.modified and all(
            o.modified is None or o.modified < chosen.modified for o in others
        ):
            return f"newer ({chosen.modified.isoformat()})"
        if any(self.policy.standing(o).trust < mine.trust for o in others):
            return f"more trusted source (trust {mine.trust:g})"
        return "ranked first"

    def _conflict(self, subject: str, claims: Sequence[_Claim]) -> dict[str, Any]:
        ordered = sorted(claims, key=lambda c: self._prefer_key(c.hit.chunk))
        chosen = ordered[0].hit.chunk
        values = []
        for c in ordered:
            ch = c.hit.chunk
            values.append(
                {
                    "value": c.value.replace("|", ", "),
                    "text": c.text,
                    "label": ch.label,
                    "content_id": ch.content_id,
                    "doc_id": ch.doc_id,
                    "title": ch.title,
                    "source": ch.source,
                    "source_class": self.policy.standing(ch).source_class,
                    "modified": ch.modified.isoformat() if ch.modified else None,
                }
            )
        return {
            "subject": subject,
            "kind": claims[0].kind,
            "values": values,
            "preferred": chosen.label,
            "preferred_content_id": chosen.content_id,
            "reason": self._why(chosen, [c.hit.chunk for c in ordered[1:]]),
        }

    def detect(self, question: str, hits: Sequence[Hit]) -> list[dict[str, Any]]:
        terms = [t for t in query_terms(question) if len(t) > 1 or ord(t[0]) > 0x2E80]
        if not terms:
            return []
        top = list(hits[: self.top_hits])
        found: list[dict[str, Any]] = []
        seen_docs: set[frozenset[str]] = set()
        # Statements: the same sentence, different values, different documents.
        claims = [c for h in top if (c := _statement(h, terms)) is not None]
        for i, a in enumerate(claims):
            group = [a]
            for b in claims[i + 1 :]:
                if b.hit.chunk.doc_id in {g.hit.chunk.doc_id for g in group}:
                    continue
                if b.value != a.value and self._same_thing(a, b):
                    group.append(b)
            docs = frozenset(g.hit.chunk.doc_id for g in group)
            if len(group) > 1 and docs not in seen_docs:
                seen_docs.add(docs)
                found.append(self._conflict(group[0].text, group))
        # Fields: the same named field, different values, different documents.
        by_field: dict[str, list[_Claim]] = {}
        for h in top:
            for c in _fields(h, terms):
                by_field.setdefault(c.subject, []).append(c)
        for name, group in by_field.items():
            first_per_doc: dict[str, _Claim] = {}
            for c in group:
                first_per_doc.setdefault(c.hit.chunk.doc_id, c)
            distinct = list(first_per_doc.values())
            if len(distinct) > 1 and len({c.value for c in distinct}) > 1:
                docs = frozenset(first_per_doc)
                if docs not in seen_docs:
                    seen_docs.add(docs)
                    found.append(self._conflict(name, distinct))
        return found


def conflict_note(conflicts: Sequence[dict[str, Any]], chinese: bool) -> str:
    """The sentence(s) the answer adds: the sources disagree, both cited, one preferred."""
    lines = []
    for c in conflicts:
        sides = [f"{v['value']} {v['label']}" for v in c["values"]]
        if chinese:
            lines.append(
                f"注意：来源之间不一致（{'；'.join(sides)}），"
                f"以 {c['preferred']} 为准（{c['reason']}）。"
            )
        else:
            lines.append(
                f"Note: the sources disagree ({'; '.join(sides)}); {c['preferred']} is preferred "
                f"({c['reason']})."
            )
    return "\n".join(lines)


def with_conflicts(answer: Answer, conflicts: Sequence[dict[str, Any]]) -> Answer:
    """The answer, saying the sources disagree: the note appended to its text, both sides
    cited (added to the citations when the answer did not cite them yet), and the
    structured `conflicts` attached. Nothing else about the answer changes."""
    if not conflicts:
        return answer
    chunks = {h.chunk.content_id: h.chunk for h in answer.hits}
    cited = {c.content_id for c in answer.citations}
    extra = []
    for c in conflicts:
        for v in c["values"]:
            cid = v["content_id"]
            if cid not in cited and cid in chunks:
                cited.add(cid)
                extra.append(Citation.of(chunks[cid]))
    note = conflict_note(conflicts, has_han(answer.question))
    return replace(
        answer,
        text=f"{answer.text}\n\n{note}" if answer.text else note,
        citations=(*answer.citations, *extra),
        conflicts=tuple(conflicts),
    )
