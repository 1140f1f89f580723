"""A day of the week that a question names ("on a Saturday afternoon") and a quote meets
without writing it: by a span of days that holds it ("Monday to Thursday"), or by a term
the document defines with that day, which the quote writes ("Peak: … all day on Saturdays"
and the quote's "Peak day entry"). English texts, normalised (lower case)."""

from __future__ import annotations

import re
from functools import lru_cache

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SHORT = tuple(d[:3] for d in _DAYS)
_DAY = r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?"
# "Monday to Friday", "Mon–Fri", "Sunday - Thursday", "Monday through Saturday"
_SPAN = re.compile(rf"\b{_DAY}\s*(?:to|until|through|thru|-|–|—)\s*{_DAY}")
# A term defined by what follows it, at the start of a sentence or list item: "peak:",
# "off-peak means", "weekend rates apply"
_DEFINED = re.compile(r"(?:^|[.;!?]\s|[-•*]\s|\)\s)\s*([a-z][a-z -]{1,30}?)\s*(?::|\bmeans\b)")
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)")


def day_of(name: str) -> int | None:
    """The day's index (Monday 0) of a question's name ("Saturday", "Saturdays"), or None."""
    word = name.lower()
    word = word if word in _DAYS else word.removesuffix("s")
    return _DAYS.index(word) if word in _DAYS else None


def in_span(day: int, text: str) -> bool:
    """Whether the text writes a span of days that holds the day ("Monday to Friday";
    "Sunday – Thursday" goes round the week's end)."""
    for m in _SPAN.finditer(text):
        first, last = _SHORT.index(m.group(1)), _SHORT.index(m.group(2))
        if first <= last and first <= day <= last:
            return True
        if first > last and (day >= first or day <= last):
            return True
    return False


def day_met(name: str, evidence: str, document: str) -> bool:
    """Whether the quote (`evidence`) meets the day the question names: by a span of days
    that holds it, or by writing a term that the document (`document`) defines with it."""
    day = day_of(name)
    if day is None:
        return False
    if in_span(day, evidence):
        return True
    return any(_term_in(term, evidence) for term in _defined_with(day, document))


@lru_cache(maxsize=256)
def _defined_with(day: int, document: str) -> tuple[str, ...]:
    """The terms the document defines in a sentence that names the day, or a span holding
    it ("peak: monday to friday from 16:00, and all day on saturdays" -> "peak")."""
    out: list[str] = []
    for m in _DEFINED.finditer(document):
        end = _SENTENCE_END.search(document, m.end())
        sentence = document[m.end() : end.start() if end else len(document)]
        if re.search(rf"\b{_DAYS[day]}", sentence) or in_span(day, sentence):
            out.append(m.group(1).strip())
    return tuple(dict.fromkeys(out))


def _term_in(term: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text) is not None
