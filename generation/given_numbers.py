"""Numbers a question gives to pick out one thing: "NIST SP 800-53", "issue 9999",
"第75条", "不满十六周岁", "三级公路", "三线城市", "第四次违规", "B级供应商", "日文入門（二）".
A quote that states another one ("SP 800-207", "第七十五条" for 第八十条, "十四周岁",
"一级公路", "二线", "日文入門（一）") answers a question about a sibling, and a confident
answer from it is wrong; so each given number must be met by the quoted sentences (or their
declared scope), in digits or in Chinese numerals.

What is not a given number: years and dates (`names.periods` checks those), digits
inside identifiers ("P12.1.2", "IPv6": `names.identifiers`), a number after a
comparison ("more than 10,000", "超过 100": a bound, not a name), and one-digit numbers
written alone in a sentence ("the 3 approaches": text writes those as words)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.text import HAN_NUMERALS, chinese_numeral, han_number, han_quantity_in

# "800-53", "2018-23-51": digits joined into one designation.
_JOINED = re.compile(r"(?<![\w.\-/])\d+(?:[-/]\d+)+(?![\w\-/])")
# Two digits or more, standing alone (not in a word, an identifier, a decimal or a clock
# time: "home at 20:15" is when, not which).
_DIGITS = re.compile(r"(?<![\w.,\-/])(?<!\d:)(?:\d{1,3}(?:,\d{3})+|\d{2,})(?![\w\-/]|[.,]\d|:\d)")
# "第75条", "第八十条": a clause or chapter by its number; "第四次": an occurrence.
_CLAUSE = re.compile(rf"第\s*([{HAN_NUMERALS}\d]+)\s*([条章节款项编篇次])")
# "三级" (公路): a grade, which its row or heading writes with its unit ("一级公路");
# "十六周岁", "14 岁", "第 9 号": an age, or a number by which something is filed, which
# the text may write otherwise ("十四周岁" for 14 岁, a bare "issues/9").
# "三线" (城市): a tier, like a grade.
_NUMBERED = re.compile(
    rf"(?<![{HAN_NUMERALS}\d])(第\s*)?([{HAN_NUMERALS}\d]+)\s*(周岁|岁|级|号|线)"
)
_WITH_UNIT = frozenset({"级", "线"})
# "B级" (供应商): a grade by its letter.
_LETTER_GRADE = re.compile(r"(?<![A-Za-z])([A-Ea-e])\s*级")
_AGE = frozenset({"周岁", "岁"})
# "日文入門（二）", "Level (2)": a part or level of a name by its number in brackets, a
# sibling of "（一）", "(1)".
_BRACKETED = re.compile(rf"(?<=[^\W\d_])\s?[（(]([{HAN_NUMERALS}]{{1,3}}|\d{{1,2}})[)）]")
_COMPARED = re.compile(
    r"(?:than|over|under|above|below|least|most|exceed\w*|beyond|up to|"
    r"超过|不到|不足|至少|最多|多于|少于|高于|低于|大于|小于|以上|以下)\s*$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"^(1[6-9]\d\d|20\d\d)$")
_DASHES = re.compile("[\u2010-\u2015\u2212]")


@dataclass(frozen=True, slots=True)
class GivenNumber:
    text: str  # as the question writes it
    value: int | None  # its value (None for a joined designation such as "800-53")
    unit: str = ""  # the word that must follow it ("级"), or "第…条" with `clause`
    clause: bool = False
    # A clause, a grade or an age picks out one passage, row or rule: met by the quote
    # alone. A plain number may name the document's subject ("Boeing 737 MAX"), stated
    # in another of its passages.
    picks_out: bool = False

    def found(self, text: str) -> bool:
        """Whether `text` (normalised: lower case) states this number."""
        if self.value is None:  # typeset text may join with a dash ("737–8")
            plain = _DASHES.sub("-", text)
            return re.search(rf"(?<![\d]){re.escape(self.text)}(?![\d])", plain) is not None
        squashed = re.sub(r"\s+", "", text).replace("）", ")")
        forms = (str(self.value), _han(self.value))
        if self.clause:
            return any(f"第{f}{self.unit}" in squashed for f in forms if f)
        if self.unit:
            return any(_standing(f, f"{f}{self.unit}", squashed) for f in forms if f)
        return _value_in(self.value, text)


def _han(value: int) -> str:
    """The value in Chinese numerals, "" past what `chinese_numeral` writes."""
    return chinese_numeral(value) if value < 100000 else ""


def _standing(numeral: str, written: str, text: str) -> bool:
    """`written` (a numeral and its unit) in `text`, its numeral not the tail of a longer
    one in the same script ("十六周岁" is not in "二十六周岁", "2级" not in "12级"; "二级" is
    in "6.2二级", a clause number squashed against it)."""
    longer = HAN_NUMERALS if numeral[0] in HAN_NUMERALS else "0123456789"
    start = text.find(written)
    while start >= 0:
        if text[start - 1 : start] not in longer or start == 0:
            return True
        start = text.find(written, start + 1)
    return False


def _value_in(value: int, text: str) -> bool:
    """The number in digits ("1,000" as 1000) standing alone, or in Chinese numerals."""
    plain = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    if re.search(rf"(?<![\d]){value}(?![\d]|\.\d)", plain):
        return True
    numeral = _han(value)
    return bool(numeral) and han_quantity_in(numeral, text)  # "第十六条" is no sixteen


# A band of counts a table writes in a column or key ("Price each 10-49", "50+"), not a
# piece of a longer chain of numbers ("02-2345-6789") or a clock time.
_COUNT_BAND = re.compile(
    r"(?<![\d.,:/\-–—])(\d{1,5})\s*(?:[-–—]\s*(\d{1,5})(?![\d.,/\-–—]|:\d)|\+(?![\d£$€]))"
)


def in_count_band(value: int, text: str) -> bool:
    """Whether `text` writes a band of counts that holds `value`: the count a question
    gives ("20 glossy prints") is met by the column of its band ("Price each 10-49")."""
    for m in _COUNT_BAND.finditer(text):
        lo, hi = int(m.group(1)), m.group(2)
        if (hi is None and value >= lo) or (
            hi is not None and lo <= value <= int(hi) and lo < int(hi)
        ):
            return True
    return False


@lru_cache(maxsize=1024)
def given_numbers(question: str) -> tuple[GivenNumber, ...]:
    """The numbers `question` gives to name one thing (see the module's docstring).
    Memoised: extraction and every quote's check read the same question."""
    out: dict[tuple[int | None, str, str], GivenNumber] = {}
    taken: list[tuple[int, int]] = []

    def add(found: GivenNumber, span: tuple[int, int]) -> None:
        if _COMPARED.search(question[: span[0]]) or any(a <= span[0] < b for a, b in taken):
            return
        taken.append(span)
        out.setdefault((found.value, found.unit, found.text), found)

    for m in _CLAUSE.finditer(question):
        # (The first time is written 首次, 首播, 初次 as often: no number to meet.)
        if (value := han_number(m.group(1))) is not None and (value, m.group(2)) != (1, "次"):
            add(GivenNumber(m.group(0), value, m.group(2), True, True), m.span())
    for m in _NUMBERED.finditer(question):
        if (value := han_number(m.group(2))) is not None:
            unit = m.group(3) if m.group(3) in _WITH_UNIT else ""
            strict = bool(unit) or m.group(3) in _AGE
            add(GivenNumber(m.group(0), value, unit, picks_out=strict), m.span())
    for m in _BRACKETED.finditer(question):
        if (value := han_number(m.group(1))) is not None:
            add(GivenNumber(m.group(0).strip(), value, ")", picks_out=True), m.span())
    for m in _LETTER_GRADE.finditer(question):
        add(GivenNumber(f"{m.group(1).lower()}级", None, picks_out=True), m.span())
    for m in _JOINED.finditer(question):
        add(GivenNumber(m.group(0), None), m.span())
    for m in _DIGITS.finditer(question):
        digits = m.group(0).replace(",", "")
        if digits.startswith("0") and len(digits) > 1:
            add(GivenNumber(m.group(0), None), m.span())  # a code ("tipo 00", "0800"): as written
        elif not _YEAR.match(digits):
            add(GivenNumber(m.group(0), int(digits)), m.span())
    return tuple(out.values())
