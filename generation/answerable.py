"""Is the extracted evidence an answer at all? Cheap checks that turn a wrong answer into
an honest "not covered":

- a question that asks for a quantity (intent "numeric") needs a number in the evidence;
- a question about a named thing (TiProxy, operationId, P12.1.2) needs that name in a
  cited passage — matching every other word of the question is not enough.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# ASCII digits, or Chinese numerals used as a quantity (followed by a unit or measure word);
# 第N条/第N章 are references to a clause, not quantities.
_CLAUSE_REF = re.compile(r"第[零〇一二三四五六七八九十百千万\d]+[条章节款项编篇]")
_NUMBER = re.compile(
    r"(?:\d|[零〇一二三四五六七八九十百千万亿两]+\s*"
    r"[个年月日天周小时分钟秒次条款项名人元角倍岁%％家台件种类层级位])"
)
# Mixed-case names, all-caps-then-lower names, and letter+digit identifiers.
_KEY_TERM = re.compile(r"\b(?:[A-Za-z]*[a-z][A-Z]\w*|[A-Z]{2,}[a-z]+\w*|[A-Za-z]+\d[\w.\-]*)\b")


def key_terms(question: str) -> list[str]:
    return list(dict.fromkeys(_KEY_TERM.findall(question)))


def unanswered_reason(question: str, intent: str, evidence: str, cited_texts: Iterable[str]) -> str:
    """Why the evidence (the best sentence) does not answer the question, or "" when it
    may."""
    if intent == "numeric" and not _NUMBER.search(_CLAUSE_REF.sub("", evidence)):
        return "the question asks for a quantity and the best evidence states none"
    cited = " ".join(cited_texts).lower()
    missing = [t for t in key_terms(question) if t.lower() not in cited]
    if missing:
        return f"no cited passage mentions {', '.join(repr(t) for t in missing)}"
    return ""
