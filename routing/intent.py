"""Explicit query intent: cheap, deterministic cues read off the question itself."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Identifiers users look up verbatim: versions, error codes, clause numbers, config keys.
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:[A-Za-z]+[-_]?\d[\w.\-]*|\d+(?:\.\d+){2,}|[a-z]+_[a-z_]+|"
    r"[A-Za-z]+\.[A-Za-z]\w*(?:\.\w+)*)"
    r"|第[一二三四五六七八九十百零〇\d]+[条章节款]"
)
_QUOTED = re.compile(r"[\"“「『《]([^\"”」』》]{2,40})[\"”」』》]")
_NUMERIC = re.compile(
    r"多少|几[个次年月天人条项]|how (?:many|much|long|old)|what (?:number|percentage|amount)"
    r"|数量|金额|比例|百分之|\b(?:maximum|minimum|max|min)\b|\blength\b|\bhow long\b",
    re.IGNORECASE,
)
_DEFINITION = re.compile(
    r"什么是|是什么|指的是|定义|\bwhat (?:is|are|does)\b|\bdefin", re.IGNORECASE
)
_RELATION = re.compile(
    r"关系|区别|相比|比较|影响|依赖|\bcompare|\bdifference|\brelat|\bdepend", re.IGNORECASE
)
_TABLE = re.compile(r"表格|表中|\btable\b|\bcolumn\b|\brow\b|列出", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?:年|\b)")


@dataclass(frozen=True, slots=True)
class Intent:
    name: str  # lookup | numeric | definition | relation | table | general
    identifiers: tuple[str, ...] = ()
    quoted: tuple[str, ...] = ()
    years: tuple[int, ...] = ()

    @property
    def entities(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.identifiers + self.quoted))


def detect_intent(question: str) -> Intent:
    identifiers = tuple(dict.fromkeys(m.group(0) for m in _IDENTIFIER.finditer(question)))
    quoted = tuple(dict.fromkeys(m.group(1).strip() for m in _QUOTED.finditer(question)))
    years = tuple(sorted({int(y) for y in _YEAR.findall(question)}))
    if _RELATION.search(question):
        name = "relation"
    elif _TABLE.search(question):
        name = "table"
    elif _NUMERIC.search(question):
        name = "numeric"
    elif identifiers or quoted:
        name = "lookup"
    elif _DEFINITION.search(question):
        name = "definition"
    else:
        name = "general"
    return Intent(name, identifiers, quoted, years)
