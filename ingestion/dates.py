"""A document's effective date, read from its own text: what timeliness decays from.

Looks near the start of the document (title page, front matter, preamble) for an explicit
effective / in-force / publication date, in Chinese or English. None when the text names
none: the caller then uses the file's modification time.

Only the document's own date counts: a commencement clause that stands as its own sentence
or article (`第七十四条 本法自2021年11月1日起施行。`), a labelled field (`施行日期：`,
`Effective date:`) or a sentence about this text (`This rule is effective …`). A date the
text reports in passing — `根据条约第七条的规定，本条约自1961年9月10日起生效`, `the treaty
became effective on …` — is about an event the text describes, not about the text; taking
it would make an encyclopaedia article about 1961 older than every undated document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from core.months import ENGLISH_MONTHS

_CN_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}  # fmt: skip

_ZH_NUM = r"([0-9一二三四五六七八九十]{1,3})"
_ZH_DATE = r"([0-9〇零一二三四五六七八九]{4})\s*年\s*" + _ZH_NUM + r"\s*月\s*" + _ZH_NUM + r"\s*日"
_EN_DATE = r"([A-Z][a-z]{2,8})\.?\s+(\d{1,2}),?\s+(\d{4})"
_ISO_DATE = r"(\d{4})-(\d{2})-(\d{2})"

_PUBLISHED = r"(?i:(?:published|issued|last updated|revised)(?: on| date)?)\s*:?\s*"

# Where a document states its own date: the start of a line or sentence, or right after
# an article number ("第七十四条 "); then optionally "本法" / "本办法" (this law, these rules).
_ZH_OWN = (
    r"(?:^|[。！？；]|第[0-9零〇一二三四五六七八九十百千]+条)"
    r"[ \t\u3000]*(?:本[\u4e00-\u9fff]{1,4})?"
)
# English: a label at the start of a line ("Effective date:", "DATES: ... effective"), or a
# sentence about this text ("This rule is effective", "These standards become effective").
_EN_OWN = (
    r"(?im:^[ \t]*(?:dates?:[^\n]{0,80}?)?effective(?:[ \t]+date)?[ \t]*(?::|on|as of)?"
    r"|\b(?:this|these)\s+(?:[a-z-]+\s+){1,3}(?:is|are|becomes?|shall\s+be|will\s+be)"
    r"\s+effective(?:\s+(?:on|as of))?)\s*"
)

# Strongest cues first: an effective / in-force date beats a publication date.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(_ZH_OWN + r"自\s*" + _ZH_DATE + r"\s*起\s*(?:施行|实施|生效)", re.M), "zh"),
    (re.compile(r"(?:施行|实施|生效)(?:日期|时间)\s*[:：]?\s*" + _ZH_DATE), "zh"),
    (re.compile(_EN_OWN + _EN_DATE), "en"),
    (re.compile(_EN_OWN + _ISO_DATE), "iso"),
    (re.compile(r"(?:发布|公布|修订|修正)(?:日期|时间)\s*[:：]?\s*" + _ZH_DATE), "zh"),
    (re.compile(_PUBLISHED + _EN_DATE), "en"),
    (re.compile(_PUBLISHED + _ISO_DATE), "iso"),
)  # fmt: skip


def _cn_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if len(text) == 4 or (all(c in _CN_DIGITS for c in text) and "十" not in text):
        return int("".join(str(_CN_DIGITS[c]) for c in text))
    tens, _, ones = text.partition("十")
    return (_CN_DIGITS.get(tens, 1) if tens else 1) * 10 + (_CN_DIGITS.get(ones, 0) if ones else 0)


def _to_date(groups: tuple[str, ...], kind: str) -> date | None:
    try:
        if kind == "zh":
            return date(_cn_number(groups[0]), _cn_number(groups[1]), _cn_number(groups[2]))
        if kind == "en":
            month = ENGLISH_MONTHS.get(groups[0].lower())
            return date(int(groups[2]), month, int(groups[1])) if month else None
        return date(int(groups[0]), int(groups[1]), int(groups[2]))
    except (ValueError, KeyError):
        return None


def effective_date(
    texts: Iterable[str], head_chars: int = 6000, tail_chars: int = 3000
) -> date | None:
    """The effective (else publication) date the document states near its start or its
    end (statutes name their commencement in the last article)."""
    full = "\n".join(texts)
    where = (
        full
        if len(full) <= head_chars + tail_chars
        else (full[:head_chars] + "\n" + full[-tail_chars:])
    )
    for pattern, kind in _PATTERNS:
        for match in pattern.finditer(where):
            found = _to_date(match.groups(), kind)
            if found is not None and 1900 <= found.year <= 2100:
                return found
    return None
