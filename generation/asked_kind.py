"""A question that asks *which* school, country, company... ("应当取得哪所学校的同意",
"which agency publishes it") is answered only by a quote that names one. The quote that
repeats the question's words but names something else ("父母或者其他监护人的同意") is a near
miss, however well it matches.

The check is deliberately generous, since wrongly refusing a right answer costs more than
letting a near miss through: a kind is named when the quote has the kind's word itself or
a word ending like one of its members (南开*大学*, 上海*市*, 国家网信*部门*), any proper name
jieba tags (person, place, organisation, other proper noun), a 《title》, or, in English, a
capitalised word or acronym inside the sentence.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.text import has_han, tagged_words

# Kind asked for -> endings of the words that name one. Only kinds whose members are
# recognisable by their form or by jieba's tags: company and organisation names ("盛大")
# are too often ordinary words to tell.
_ENDINGS: dict[str, tuple[str, ...]] = {
    "学校": ("学校", "大学", "学院", "中学", "小学", "学堂", "书院", "校"),
    "大学": ("大学", "学院", "学校", "校"),
    "学院": ("学院", "大学", "学校", "校"),
    "部门": ("部门", "机关", "机构", "委员会", "局", "部", "院", "署", "厅", "办"),
    "国家": ("国家", "国"),
    "城市": ("城市", "市", "城", "都", "州", "县", "镇"),
    "省份": ("省份", "省", "区"),
    "球队": ("球队", "队", "俱乐部"),
    "俱乐部": ("俱乐部", "队"),
    "医院": ("医院", "院"),
    "报纸": ("报纸", "报", "刊"),
    "报社": ("报社", "报"),
    "电视台": ("电视台", "台"),
    "出版社": ("出版社", "社"),
    "乐队": ("乐队", "乐团", "组合"),
    "政党": ("政党", "党"),
    "朝代": ("朝代", "朝", "代"),
}
_QUESTION = re.compile(
    r"(?:哪|什么)(?:一|个|所|家|支|座|位|间|国)?("
    + "|".join(sorted(_ENDINGS, key=len, reverse=True))
    + ")"
)
_ENGLISH = re.compile(
    r"\b(?:which|what)\s+(school|university|college|company|firm|agency|organi[sz]ation|"
    r"country|nation|city|province|team|club|hospital|newspaper|publisher|party|"
    r"department|ministry|bank)\b",
    re.IGNORECASE,
)
_PROPER = frozenset({"nr", "ns", "nt", "nz", "nrt", "nrfg"})
_TITLE = re.compile(r"《[^》]+》")
# A capitalised word or an acronym after the first word of a sentence.
_EN_NAME = re.compile(r"(?<=\S)\s+(?:[A-Z][a-z]+|[A-Z]{2,})\b")


def asked_kind(question: str) -> str:
    """The kind a which-question asks for ("学校", "country"), or ""."""
    if has_han(question):
        m = _QUESTION.search(question)
        return m.group(1) if m else ""
    m = _ENGLISH.search(question)
    return m.group(1).lower() if m else ""


@lru_cache(maxsize=4096)
def _han_names(text: str) -> tuple[tuple[str, str], ...]:
    return tagged_words(text)


def names_kind(kind: str, text: str) -> bool:
    """Whether `text` names something of the kind (generously: see the module doc)."""
    if not kind:
        return True
    if not has_han(kind):
        return bool(_EN_NAME.search(text)) or kind in text.lower()
    if kind in text or _TITLE.search(text) or re.search(r"[A-Z][A-Za-z]+", text):
        return True
    endings = _ENDINGS[kind]
    for word, flag in _han_names(text):
        if flag in _PROPER or (len(word) >= 2 and word.endswith(endings)):
            return True
    return False
