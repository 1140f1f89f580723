"""Question shapes the loop treats specially: chit-chat (no tools) and comparisons
(one search per side)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generation.conversation import focus_terms

_CHIT_CHAT = re.compile(
    r"^\W*(?:(?:hi|hello|hey|good (?:morning|afternoon|evening)|greetings|thanks|thank you|"
    r"thx|bye|goodbye|ok(?:ay)?|cool|great|nice)\b[\s\W]*)*"
    r"(?:(?:who|what) are you|what can you do|how are you|what(?:'s| is) your name|"
    r"are you (?:a bot|an ai|human)|introduce yourself|help)?\W*$"
    r"|^\W*(?:你好|您好|嗨|谢谢|再见|你是谁|你能做什么|你叫什么)\W*$",
    re.IGNORECASE,
)
_COMPARE = re.compile(
    r"\b(?:compare|comparison|differ(?:ence|ent|s)?|same (?:way|as|thing)|versus|vs\.?|"
    r"agree|contradict|consistent|both)\b|区别|不同|相同|一致|对比|比较",
    re.IGNORECASE,
)
_SIDE_END = (
    r"(?=\s+(?:define|describe|say|state|handle|treat|differ|have|use|agree|regard|"
    r"mean|explain|specify|document|list|the same|both|on|for|about|in how)\b|[?,.;]|$)"
)
# "between A and B", "compare A with B", "documents A and B ...", "do A and B ...": the
# most specific lead-in first.
_SIDES = [
    re.compile(
        rf"(?:{lead})\s+(?P<a>.+?)\s+(?:and|vs\.?|versus|with|to)\s+(?P<b>.+?){_SIDE_END}",
        re.IGNORECASE,
    )
    for lead in ("between|compare", "documents?|docs?|files?", "do|does|are|is")
] + [
    re.compile(r"(?P<a>[^，,。？?]+?)(?:和|与|跟)(?P<b>[^，,。？?]+?)(?:对|的|在|是否|有什么|关于)")
]
_FILLER = re.compile(r"^(?:the|a|an|documents?|docs?|files?)\s+", re.IGNORECASE)


def is_chit_chat(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and len(stripped) <= 80 and bool(_CHIT_CHAT.match(stripped))


@dataclass(frozen=True, slots=True)
class Comparison:
    sides: tuple[str, str]
    topic: str  # what is compared: the question's focus outside the two sides


def comparison_of(question: str) -> Comparison | None:
    if not _COMPARE.search(question):
        return None
    for pattern in _SIDES:
        m = pattern.search(question)
        if not m:
            continue
        a, b = (_FILLER.sub("", m.group(g).strip(" \"'“”")) for g in ("a", "b"))
        if a and b and a.lower() != b.lower() and len(a) <= 80 and len(b) <= 80:
            rest = question[: m.start("a")] + " " + question[m.end("b") :]
            terms = [t for t in focus_terms(rest) if t.lower() not in (a.lower(), b.lower())]
            topic = " ".join(terms) or _topic_words(rest)
            return Comparison((a, b), topic)
    return None


def _topic_words(text: str) -> str:
    drop = set(
        [
            "do",
            "does",
            "the",
            "same",
            "way",
            "define",
            "documents",
            "and",
            "is",
            "are",
            "differ",
            "different",
            "difference",
            "how",
            "what",
            "compare",
            "between",
            "in",
            "of",
            "both",
        ]
    )
    words = [w for w in re.findall(r"\w+", text) if w.lower() not in drop]
    return " ".join(words[:8])
