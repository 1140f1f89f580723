"""What kind of thing a question asks for, and whether a sentence holds one (English and
Chinese): a person ("who", "谁"), a place ("where", "哪里"), a time ("when", "哪一年").
Quantities are handled by the quantity check; definitions and lists by the sentence
choice. A sentence only counts when the thing it holds is not already in the question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal

from core.text import has_han, tagged_words

Kind = Literal["person", "place", "time"]

_PERSON_Q = re.compile(r"\bwho(m|se)?\b|谁|哪位|哪个人|什么人", re.IGNORECASE)
_PLACE_Q = re.compile(
    r"\bwhere\b|哪里|哪儿|何地|何处|在哪|什么地方|什么地区|哪些地区|"
    r"哪个(国家|城市|省|地区)|哪(国|省|市)",
    re.IGNORECASE,
)
# A calendar date or year asked for by name: the part of a time question that wants a date.
_CALENDAR_Q = r"what (year|date|day|month)s?\b|哪一?年|哪一?天|几月|哪个月|何年|日期"
_TIME_Q = re.compile(rf"\bwhen\b|which (year|date)s?\b|何时|什么时候|{_CALENDAR_Q}", re.IGNORECASE)
# Only a date asked for by name (not "when"/"何时": those are often answered by an event,
# "after the war", "高二的时候").
_DATE_Q = re.compile(rf"which (year|date|day|month)s?\b|{_CALENDAR_Q}", re.IGNORECASE)
# A day asked for by name ("哪一天", "几月几日", "what day", "on what date"): a year or a
# month alone does not answer it.
_DAY_Q = re.compile(r"哪一?天|几月几[日号]|几号(?!线)|\b(?:what|which) (?:day|date)\b", re.I)
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = re.compile(
    r"\d{1,2}\s*[日号]|[一二三四五六七八九十廿卅]+[日号]|初[一二三四五六七八九十]|"
    r"[次翌当同前后今明昨]一?[日天]|星期[一二三四五六日天]|周[一二三四五六日]|礼拜[一二三四五六日天]|"
    r"\b\d{4}[/.-]\d{1,2}[/.-]\d{1,2}\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b|"
    rf"\b{_MONTH_NAME}\.? \d{{1,2}}(?:st|nd|rd|th)?\b|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH_NAME}\b|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|"
    r"\b(?:next|following|same|previous|that) day\b|"
    # An ordinal day ("from the fourth consecutive day"): which day of a span.
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"\d{1,3}(?:st|nd|rd|th))(?: (?:consecutive|working|business|calendar))? day\b",
    re.IGNORECASE,
)
# An English month's name, to a case-insensitive pattern; "May" only capitalised: "Which
# artwork may have been influenced …", "it may erupt again" name no month.
MONTH_WORD = (
    r"(?:january|february|march|april|(?-i:May)|june|july|august|september|october|"
    r"november|december)"
)
_TIME = re.compile(
    r"\b(1[0-9]\d\d|20\d\d)s?\b|\d{1,4}\s*年|\d{1,2}\s*月|\d{1,2}\s*日|[一二三四五六七八九十〇零]+年|"
    rf"\b({MONTH_WORD})\b|世纪|朝|年代|时期|年间|[夏商周秦汉晋隋唐宋元明清]代|\bcentury\b|"
    # An era's year ("AD 79", "480 BC"): capitals only, "ad" is a word.
    r"(?-i:\b(?:AD|CE|BC|BCE) ?\d{1,4}\b|\b\d{1,4} ?(?:AD|CE|BC|BCE)\b)|"
    r"\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b",
    re.IGNORECASE,
)
_CAPITALISED = re.compile(r"(?<=\w[\s,;] )[A-Z][a-z]+")


@lru_cache(maxsize=1)
def _posseg() -> Any:
    import jieba.posseg as posseg

    return posseg


def answer_kind(question: str) -> Kind | None:
    if _TIME_Q.search(question):
        return "time"
    if _PERSON_Q.search(question):
        return "person"
    if _PLACE_Q.search(question):
        return "place"
    return None


def asks_date(question: str) -> bool:
    """Whether the question asks for a year, month or date by name."""
    return _DATE_Q.search(question) is not None


def asks_day(question: str) -> bool:
    """Whether the question asks for a day ("哪一天", "what date"), not only a year."""
    return _DAY_Q.search(question) is not None


def has_day(text: str, question: str) -> bool:
    """Whether the sentence names a day (a date, a weekday, "次日", "the next day") that
    the question does not already give."""
    return any(m.group(0) not in question for m in _DAY.finditer(text))


def _tagged_words(text: str) -> Iterator[tuple[str, str]]:
    """jieba's part-of-speech cut of the text's Han blocks, one block at a time (jieba
    tags each block on its own, and everything between blocks one character at a time:
    no name there), so a caller that stops at the first name tags no further."""
    for block in _posseg().re_han_internal.findall(text):
        yield from tagged_words(block)


def has_answer_type(text: str, kind: Kind, question: str) -> bool:
    """Whether the sentence holds a thing of that kind that the question does not name."""
    if kind == "time":
        return any(m.group(0) not in question for m in _TIME.finditer(text)) or has_day(
            text, question
        )
    if has_han(text):
        flags = {"person": ("nr", "nrt", "nrfg"), "place": ("ns", "nt")}[kind]
        return any(f in flags and len(w) >= 2 and w not in question for w, f in _tagged_words(text))
    return any(w not in question for w in _CAPITALISED.findall(text))
