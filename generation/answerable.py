"""Is the quoted evidence an answer to the question? Decided from what is quoted, not from
the passage it sits in, so a near miss (the words are there, the answer is not) becomes an
honest "not covered".

The question's key constraints are pulled out language-aware (English and Chinese):

- periods: years ("2015", "2015年") and months ("November", "11月"), a month of a year
  as one period — met by the quoted sentences, the scope their passage declares (title,
  headings, table caption and header) or the retrieved text of the same document;
- identifiers with digits ("P12.1.2", "V1.5", "3.1.0") and written names (mixed-case
  terms, capitalised names in English, 《titles》) — met by the quote or its scope, or by
  the quoted document's own name (title, file name, format: "the sample Word document");
  short acronyms in English questions ("FBI", "HR") are publishers more often than
  subjects and do not decide; Latin words in Chinese questions ("TiSpark", "HDD") must
  appear somewhere in the quoted document;
- what a Chinese question is about: the names jieba tags (张天霖, 西贡商信银行) and the
  subject that opens the asking clause (马来穿山甲, 羊水栓塞) — met somewhere in the quoted
  document, leniently (two characters of a name, half of a subject); left out where a
  Latin name, identifier or title of the question, or an earlier clause ("按…说明书的约束
  条件，"), is met there, which makes the document the one asked about;
- the attribute asked for: a question asking for a quantity needs a number in the quoted
  evidence (a clause number "第3条" or a section number is not a quantity), and one of the
  unit it asks for ("多少小时" needs 小时, "how many pages" needs pages).

The constraints are checked on the best quote's document only. When a question lists
several periods and only some are met, the answer is partial and says which ("the
documents give this for 2015 but not for 2016").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from core.lang import (
    function_word,
    has_hangul,
    has_kana,
    prefix_stem,
    stemmed_language,
    stopwords,
)
from core.text import (
    LATIN_WORD_END,
    STOPWORDS,
    content_terms,
    han_word,
    has_han,
    known_word,
    latin_words_at,
    query_terms,
    starts_latin_word,
    stem,
    tagged_words,
    word_frequency,
)
from core.types import Chunk
from generation.answer_type import MONTH_WORD, asks_date, asks_day, has_answer_type, has_day
from generation.asked_kind import asked_kind, names_kind
from generation.attribute import (
    checks_facet,
    facet_unmet,
    names_a_column,
    opposite_stated,
    other_rate_period,
    synonyms_of,
)
from generation.blocks import naming_column
from generation.given_numbers import given_numbers
from generation.passages import Candidate, candidates, normalise
from generation.ranges import (
    Amount,
    bands_written,
    fits,
    number_value,
    other_sizes,
    question_amounts,
)
from generation.scope import (
    asked_versions,
    band_left_open,
    excluded_item,
    left_to_another_rule,
    only_excluded,
    only_replaced,
    other_version,
    row_left_open,
    term_in,
    version_found,
)
from generation.similarity import Similarity
from generation.slots import SCAFFOLDING, cell_substitution, row_substitution, substitution
from generation.yes_no import YES_NO_HAN

# ASCII digits, or Chinese numerals used as a quantity (followed by a unit or measure word);
# 第N条/第N章 are references to a clause, not quantities.
_CLAUSE_REF = re.compile(r"第[零〇一二三四五六七八九十百千万\d]+[条章节款项编篇]")
_NUMBER = re.compile(
    r"(?:\d|[零〇一二三四五六七八九十百千万亿两]+\s*[多余来几]?"
    r"[个年月日天周小时分钟秒次条款项名人元角倍岁%％家台件种类层级位])"
)
_SECTION_NUMBER = re.compile(r"^\s*(\d+(\.\d+)*\.?|第[一二三四五六七八九十百\d]+[章节条部分篇])\s*")
# Questions whose answer is a number, version, date, port, amount...
# The English forms of a question asking for a number, a date, a version ("when" opening
# the question or asking "when did…", not "for when the indicators disagree"); shared by
# this check and the sentence scorer, which adds looser Chinese forms of its own.
# "When" asking for a time: opening the question or "when did/was …", not a leading
# "When …," clause before another question word, which is a condition ("When enum is
# defined for a server variable, where must the value exist?").
_WHEN_EN = (
    r"^\s*when\b(?![^,?]*,\s*(?:what|where|which|who|whom|whose|why|how|is|are|does|do|"
    r"did|can|should|must|will)\b)|"
    r"\bwhen (?:did|was|were|is|are|will|does|do|has|had|should|must|can)\b"
)
# "When" in German, French, Spanish, Italian/Portuguese, Dutch, Russian, Japanese, Korean.
_WHEN_OTHER = (
    # (French, Italian, Portuguese, Dutch and Russian write "when" as a conjunction too: "Qual
    # o valor do reembolso por km quando uso meu carro?" asks an amount. They ask a time at
    # the start of a sentence or clause, after a preposition if any: "Entro quando …?")
    r"(?:^|[.:;!?¿,]\s*)(?:(?:a partir de|até|desde|entro|da|fino a|depuis|jusqu.[àa]|"
    r"[àa] partir de|dès|tot|vanaf|с|до)\s+)?(?:quand|quando|wanneer|когда)\b|"
    r"\bwann\b|\bcuándo\b|いつ(?!も)|언제|"
    r"\bkiedy\b|\bkdy\b|\bnär\b|\bnår\b|\bne zaman\b|\bkhi nào\b|\bkapan\b|\bمتى\b|कब|"
    r"\bколи\b"
)
QUANTITY_QUESTION_EN = (
    r"how (many|much|long|old|far|big|large|often|high|tall)|what (version|year|date|time|"
    r"number|percentage|port|size|amount|value|rate)|"
    r"(?:maximum|minimum|max|min) (?:length|size|number|value|count|amount)|"
    r"which (version|year|date|port|number)|" + _WHEN_EN
)
# The same in other languages: German, French, Spanish, Italian, Portuguese, Dutch,
# Russian, Japanese, Korean (how many, how high, in which year, when).
QUANTITY_QUESTION_OTHER = (
    r"\bwie (?:viele?|hoch|lang|alt|groß|gross|weit|schwer|tief|breit)\b|\bwieviele?\b|"
    r"\bin welchem jahr\b|\bcombien\b|\ben quelle année\b|"
    r"\bcuánt[oa]s?\b|\ben qué año\b|\bquant[oiea]s?\b|\bin che anno\b|"
    r"\bem que ano\b|\bhoeveel\b|\bin welk jaar\b|"
    r"\bhoe (?:hoog|lang|oud|groot|ver)\b|\bсколько\b|\bв каком году\b|"
    # Japanese 何年/何人 only before kana: Chinese writes 何人/何年 too, not asking a number.
    r"何(?:人|年|メートル|キロ|個|回|歳|階|本|度|万|億|世紀|日|月|時間|分)(?=[\u3040-\u30ff])|"
    r"いくつ|どのくらい|どれくらい|몇|얼마|"
    # Polish, Czech, Swedish, Norwegian, Danish, Turkish, Vietnamese, Indonesian, Arabic,
    # Hindi, Ukrainian ("ile" alone is Turkish "with": only before a verb or a noun).
    r"\bile (?:jest|wynosi|ma|miał|miała|było|lat|razy|osób|mogę|można|dostanę|kosztuje|"
    r"kosztują|zapłacę|trwa|maksymalnie|dni|godzin)\b|\bw którym roku\b|"
    r"\bjak[aie]? jest (?:wartość|kwota|wysokość|stawka|cena|limit)\b|"
    r"\bjak (?:długi|długa|wysoki|wysoka|duży|duża)\b|\bkolik\b|\bkoľko\b|"
    r"\bhur (?:många|mycket|lång|hög|gammal|dyr|stor)\b|\bvilket år\b|\bvad kostar\b|"
    r"\bhvor (?:mange|mye|meget|lang|høy|høj|gammel)\b|\bhvilket år\b|"
    r"\bkaç\b|\bne kadar\b|\bhangi yıl|\bbao nhiêu\b|\bnăm nào\b|\bberapa\b|"
    r"\bكم\b|कितन[ाेी]|\bскільки\b|"
    # "what percentage": "какой процент", "qué porcentaje", "welk percentage", "ile procent"
    r"\bкакой процент\b|\bqu[ée] porcentaje\b|\bquel pourcentage\b|"
    r"\b(?:welcher prozentsatz|wie ?viel prozent)\b|\b(?:quale|che) percentuale\b|"
    r"\b(?:que|qual (?:é )?a) (?:percentagem|porcentagem)\b|\bwelk percentage\b|"
    r"\b(?:jaki procent|ile procent)\b|何割|" + _WHEN_OTHER
)
QUANTITY_QUESTION = re.compile(
    QUANTITY_QUESTION_EN
    + r"|多少|几[个年月天次种条项位名人]|多大|多长|多久|多高|哪一?年|哪一?天|哪个端口|"
    r"数量|比例|百分之?几|[几幾]成|" + QUANTITY_QUESTION_OTHER,
    re.IGNORECASE,
)
# Cues that only name a quantity ("数量", "minimum"): they ask for one unless the question
# asks for something else by its own question word ("规定数量的处理者应当指定谁",
# "数量为什么减少", "operators with a minimum equipment list would have to incorporate
# what"). The question words (多少, how many) always ask for one.
_NAMED_QUANTITY = re.compile(
    r"数量|金额|比例|百分之|系数|\b(?:maximum|minimum|max|min|length)\b", re.IGNORECASE
)
_ASKS_OTHER = re.compile(
    r"为什么|为何|怎么|怎样|如何|原因|谁|哪位|哪些|作用|是什么|什么时候|何时|"
    r"\b(?:why|who|whom|whose|where)\b|"
    r"\bhow\b(?!\s+(?:many|much|long|old|far|big|large|often|high|tall)\b)|"
    r"^\W*what\s+(?:would|do|does|did|should|must|can|could|will|shall)\b",
    re.IGNORECASE,
)
# A code of capitals, a hyphen and a number ("CH-3", "ERR-404", "EQ-106"): one thing, whose
# siblings differ in the number only ("CH-1"); matched whole, never word by word.
_CODE = re.compile(r"[A-Za-z]*[A-Z][A-Za-z]*-\d[\w\-]*(?<!-)", re.ASCII)
# Mixed-case names, all-caps-then-lower names, and letter+digit identifiers.
_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred|thousand|million|billion|dozen|half"
)
_NUMBER_WORD = re.compile(rf"\b({_NUMBER_WORDS}|once|twice)\b", re.IGNORECASE)
# "How many …?" answered by "no limit": 不限 / 无上限 / unlimited is the quantity (not
# 包括但不限于, "including but not limited to").
_NO_LIMIT = re.compile(
    r"不限(?![于於制])|无限制|无上限|不设上限|没有上限|\bunlimited\b|\bno (?:upper )?limit\b",
    re.IGNORECASE,
)
_SPELLED = re.compile(rf"\b({_NUMBER_WORDS})\b", re.IGNORECASE)  # "once" may be "when"
_KEY_TERM = re.compile(
    r"\b(?:[A-Za-z]*[a-z][A-Z]\w*|[A-Z]{2,}[a-z]+\w*|[A-Za-z]+\d[\w.\-]*)\b", re.ASCII
)
_YEAR = re.compile(r"(?<![\d.])(1[6-9]\d\d|20\d\d)(?![\d.])")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_EN = re.compile(rf"\b({MONTH_WORD})\b", re.IGNORECASE)
_MONTH_ZH = re.compile(r"(?<![\d])(1[0-2]|0?[1-9])月")
# Identifiers with a digit that name one thing: "P12.1.2", "7.5", "v3", "ERR-404".
_IDENT = re.compile(
    r"(?<![\w.])(?=[\w.\-]*\d)(?=[\w.\-]*[A-Za-z.])[A-Za-z0-9][\w\-]*(?:\.\w+)+"
    rf"|(?<![\w.])[A-Za-z]+\d[\w.\-]*|(?<![\w.\-]){_CODE.pattern}",
    re.ASCII,
)
# A capitalised word (or run of them) in an English question, not at its start.
# A run of capitalised words, with a one-letter or one-digit designator after it ("Plant
# B", "Appendix C", "Tier 3": it tells the thing from its siblings).
_CAPITALISED = re.compile(
    r"(?<=[\w,;:)] )([A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)*(?: [A-Z](?![\w\-])| \d(?![\w.,\-/]))?)"
)
_QUOTED = re.compile(r"[《“「\"]([^》”」\"]{2,40})[》”」\"]")
_LATIN_IN_HAN = re.compile(r"\d*[A-Za-z][A-Za-z0-9.+#\-]*[A-Za-z0-9+#]|[A-Za-z]{2,}")
# Capitalised words that are not names.
_NOT_NAMES = frozenset(
    {
        "i",
        "according",
        "based",
        "under",
        "in",
        "on",
        "at",
        "for",
        "of",
        "the",
        "a",
        "an",
        "what",
        "which",
        "who",
        "how",
        "when",
        "where",
        "why",
        "is",
        "are",
        "was",
        "were",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "would",
        "may",
        "might",
        "will",
    }
)


@dataclass(frozen=True, slots=True)
class Verdict:
    covered: bool
    reason: str = ""  # why not covered, or which part is not (partial)
    partial: bool = False
    constraints: int = 0  # how many key constraints the question has
    met: int = 0  # how many of them the quote meets
    # What failed: "quantity", "unit", "name" (an identifier or name the quote's document
    # does not mention), "row", "period", "subject" (the quote is about a sibling of the
    # thing asked), "time" (a date asked, none quoted); "" when covered.
    failed: str = ""
    # with "subject": the question's word the quote has another in place of, or which the
    # document puts outside its rules (another document that answers must name it)
    asked: str = ""
    # Constraints that pin one thing down (a name, identifier, period or given number):
    # `constraints` less a quantity asked, which any number in the quote meets.
    pins: int = 0
    # No other quote of the document can answer either: the best one names what is asked
    # as an item its rules exclude.
    final: bool = False


def key_terms(question: str) -> list[str]:
    return list(dict.fromkeys(_KEY_TERM.findall(question)))


def periods(question: str) -> list[str]:
    """Periods the question is about, as written: a year, a month, or a month of a year
    ("November 2015", "2015年11月", "2015-11" kept as one period: both must be met)."""
    spans: list[tuple[int, int]] = []
    for rx in (_YEAR, _MONTH_EN, _MONTH_ZH):
        spans += [(m.start(), m.end()) for m in rx.finditer(question)]
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        gap = question[merged[-1][1] : a] if merged else ""
        if merged and len(gap) <= 3 and not re.search(r"\w", gap.replace("年", "")):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return list(dict.fromkeys(question[a:b] for a, b in merged))


_LETTERS_THEN_DIGITS = re.compile(r"(?<=[a-z])(?=\d)")


def _period_parts(period: str) -> list[str]:
    parts = [m.group(1) for m in _YEAR.finditer(period)]
    parts += [m.group(1) for m in _MONTH_EN.finditer(period)]
    parts += [m.group(0) for m in _MONTH_ZH.finditer(period)]
    return parts or [period]


def _period_found(period: str, text: str) -> bool:
    """All parts of a period in the text: the year, and the month in any common form
    ("November", "Nov", "11月", "2015-11")."""
    for part in _period_parts(period):
        if _found(part, text):
            continue
        month = part.lower()
        if month in _MONTHS:
            number = _MONTHS.index(month) + 1
            forms = [month[:3], f"{number}月", f"-{number:02d}", f"/{number:02d}"]
            if any(_found(f, text) for f in forms):
                continue
        zh = _MONTH_ZH.fullmatch(part)
        if zh and _found(_MONTHS[int(zh.group(1)) - 1], text):
            continue
        return False
    return True


def identifiers(question: str) -> list[str]:
    years = set(_YEAR.findall(question))
    return [
        t
        for t in dict.fromkeys(m.group(0).rstrip(".-") for m in _IDENT.finditer(question))
        if t not in years
    ]


def tagged_names(question: str) -> list[str]:
    """Names in a Chinese question that are checked loosely (anywhere in the quoted
    document): Latin words ("TiSpark", "HDD"). (jieba's part-of-speech name tags were
    tried and dropped: they misfire on ordinary words, "入门" ns, "单元格" nr.)"""
    if not has_han(question):
        return []
    return [w for w in _LATIN_IN_HAN.findall(question) if len(w) > 1]


_UNIT_ZH = re.compile(
    r"(?:多少|几)\s*个?\s*(小时|分钟|秒钟?|天|日|周|个月|年|岁|周岁|人|名|次|元|万元|亿元|公里|千米|米|"
    r"公顷|平方公里|平方米|亩|公分|厘米|毫米|公尺|公斤|千克|克|吨|字节|字|行|页|倍|条|项|种|位|台|"
    r"件|家|座|层|级|核|GB|MB|TB|KB)"
)
_ACRONYM = re.compile(r"[A-Z]{2,5}")
# (past a hyphenated modifier: "how many full-time employees" counts employees)
_UNIT_EN = re.compile(
    r"\bhow many (?:[a-z]+-[a-z]+\s+(?!(?:are|is|were|was|do|does|did|can|will|have|has)\b))?"
    r"([a-z]+)",
    re.IGNORECASE,
)
# "How many X" in other spaced languages: the counted noun after the question word.
_COUNTED_NOUN = re.compile(
    r"(?:\b(?:cu[aá]nt[oa]s|quant[oa]s|quant[ie]|wie\s+viele|сколько)\s+"
    r"|\bcombien\s+d(?:e\s+|['’]))([^\W\d_]+)",
    re.IGNORECASE,
)
# Words after "сколько" that are no counted noun: it asks a price, a weight, a duration.
_NOT_COUNTED = frozenset(
    (
        *("стоит", "стоят", "стоил", "стоила", "стоило", "стоили", "весит", "весят"),
        *("длится", "длился", "длилась", "длилось", "нужно", "надо", "было", "будет", "есть"),
    )
)
# Japanese and Korean counters after 何 / 몇 (things, people, times: not durations or dates).
_COUNTER_JA = re.compile(
    r"何\s*(人|台|枚|個|冊|本|回|件|社|軒|匹|頭|羽|校|店|駅|か所|カ所|箇所|種類)"
)
_COUNTER_KO = re.compile(r"몇\s*(명|대|개|번|곳|권|마리|채|척|장|그루|가지|층|편|쌍)")


def asked_unit(question: str) -> str:
    """The unit or counted noun a quantity question asks in ("多少小时" -> "小时", "how
    many calories" -> "calorie"), or ""."""
    m = _UNIT_ZH.search(question)
    if m:
        return m.group(1)
    m = _UNIT_EN.search(question)
    if m and m.group(1).lower() not in STOPWORDS:
        word = m.group(1).lower()
        return word[:-1] if word.endswith("s") and len(word) > 3 else word
    # (何 counts only in Japanese: Chinese "何人所作" asks who.)
    m = (_COUNTER_JA.search(question) if has_kana(question) else None) or _COUNTER_KO.search(
        question
    )
    if m:
        return m.group(1)
    return ""


def counted_noun(question: str) -> str:
    """The noun a "how many" question of another spaced language counts ("¿Cuántos
    astrónomos …?" -> "astrónomo", "Combien de véhicules …" -> "véhicul"), cut to a stem
    that its other forms start with; "" when it asks no count ("Сколько стоит …?")."""
    m = _COUNTED_NOUN.search(question)
    if not m:
        return ""
    word, lang = m.group(1).lower(), stemmed_language(question)
    if word in _NOT_COUNTED or (lang and word in stopwords(lang)):
        return ""
    stem = prefix_stem(word, lang) if lang else word
    # A stem that is no prefix (an accent dropped: "astrónomos") leaves the word; its
    # plural ending still goes, so that the singular is found too.
    return stem[:-1] if stem == word and len(word) > 4 and word.endswith("s") else stem


# A year where the text says it is one: after a word of time ("en 2019", "seit 1964",
# "в 1948") or before a year word ("1958년", "1948 году"). A bare four-digit number may
# be a count ("1500 visiteurs") and is left alone.
_YEAR_SAID = re.compile(
    r"(?:\b(?:en|in|im|seit|desde|depuis|dal|nel|em|since|from|until|до|в|с|к|jahr|année|"
    r"año|ano|anno)\s+(?:(?:el|l'|le|la|dem|der|the)\s*)?(?:1[5-9]\d\d|20\d\d)"
    r"|(?:1[5-9]\d\d|20\d\d)\s*(?:年|년|г\.|года|году|год))(?![\d.,])",
    re.IGNORECASE,
)
# A number with what follows it: a unit of measure, money or time makes it a quantity of
# another kind than a count of things.
_MEASURED = re.compile(r"(\d[\d.,]*)\s*(km²|m²|[%°€$£]|[^\W\d_]+)")
_UNIT_SYMBOL = frozenset(
    "km² m² km2 m2 % ° € $ £ m km cm mm kg g t ha min h м км кг т га".split()  # noqa: SIM905
    # (years and days in short words: "16 ans", "3 år", "5 lat", "14 dni", "3 dias")
    + "an ans år lat dni dias".split()  # noqa: SIM905
)
_UNIT_WORD = re.compile(
    r"metro|mètre|meter|metr|kilom|kilog|tonn|tonel|hect|grad|euro|dólar|dollar|rubl|руб|"
    r"метр|килом|градус|процент|prozent|minut|hora|heure|stund|час|año|jahr|лет|год|día|"
    r"jour|tag|mes|mois|monat|месяц|semana|semaine|woche|недел|segund|sekund|секунд|минут"
)


def _states_count(text: str, question: str, noun: str) -> bool:
    """Whether the text states a count: a number that is not a year said to be one and
    not a measure, a sum of money or a span of time (unless that unit is the counted
    `noun` itself: "¿Cuántas horas …?" is answered by "3 horas")."""

    def other_kind(m: re.Match[str]) -> str:
        unit = m.group(2).lower().rstrip("²³")  # km², м³: their unit
        if noun and unit.startswith(noun[:4]):
            return m.group(0)
        if unit in _UNIT_SYMBOL or (len(unit) > 3 and _UNIT_WORD.match(unit)):
            return " "
        return m.group(0)

    return has_quantity(_MEASURED.sub(other_kind, _YEAR_SAID.sub(" ", text)), question)


# One unit written another way: a question asks 多少厘米, the text says "2cm".
_UNIT_FORMS = (
    ("厘米", "公分", "cm"),
    ("毫米", "mm"),
    ("米", "公尺", "m"),
    ("公里", "千米", "km"),
    ("千克", "公斤", "kg"),
    ("克", "g"),
    ("吨", "t"),
    ("小时", "钟头", "h", "hour"),
    ("分钟", "min", "minute"),
    ("秒", "秒钟", "s", "second"),
    ("天", "日", "工作日", "自然日", "day"),
    ("周", "星期", "week"),
    ("字节", "byte", "b"),
    ("平方公里", "km2", "km²"),
    ("平方米", "m2", "m²"),
    ("元", "人民币", "rmb", "cny"),
    ("岁", "周岁"),
    ("번", "회"),  # (times: "몇 번" answered by "1일 4회")
    ("回", "度"),
)


def unit_forms(unit: str) -> tuple[str, ...]:
    """The unit and the other ways it is written ("厘米": "公分", "cm")."""
    for forms in _UNIT_FORMS:
        if unit in forms:
            return forms
    return (unit,)


def _unit_found(unit: str, text: str) -> bool:
    """The unit in the text as asked, or in another of its forms; a Latin symbol only
    right after a number ("2cm", "3 km"), where it cannot be a word of its own; a Korean
    counter after its number ("5명")."""
    if has_hangul(unit):
        return any(_counted(form, text) for form in unit_forms(unit))
    if _found(unit, text):
        return True
    for form in unit_forms(unit):
        if form == unit:
            continue
        if has_han(form):
            if form in text:
                return True
        elif _symbol_after_number(form, text):
            return True
    return False


def _symbol_after_number(symbol: str, text: str) -> bool:
    """A Latin unit symbol right after a number ("2cm", "3 km"), where it cannot be a word
    of its own."""
    return re.search(rf"\d\s*{re.escape(symbol)}s?(?![a-z])", text, re.IGNORECASE) is not None


_HAN_COUNT = "零〇一二三四五六七八九十百千万亿两半几"
# A number written out: digits (with separators) or Han numerals, not the tail of a longer
# one, not an ordinal or a "last/next" ("第三年", "上一年度"); "多/余/来" may follow it
# ("100多年", "十余人"), and a measure word 个 ("三个小时").
_COUNT = rf"(?<![上下\d.,{_HAN_COUNT}])(?:\d[\d.,]*[万亿]?|[{_HAN_COUNT}]+)\s*[多余来]?\s*个?\s*"
_ORDINAL_Q = re.compile(r"第(?:几|多少)")
_KO_COUNT = r"\d[\d.,]*\s*[십백천만억]?|한|두|세|네|다섯|여섯|일곱|여덟|아홉|열|스무|수십|수백|수천"
# Han units that begin a longer word of another sense: 年度, 年级, 年代 are not years.
_NOT_THE_UNIT = {"年": "度级代龄纪初底末份中", "天": "然气空下堂津", "行": "业为政动人"}


def _counted(unit: str, text: str, ordinal: bool = False) -> bool:
    """A number of the unit in the text ("80 行", "三个小时", "2cm", "100多年"): a Han unit
    must follow a number, not merely appear somewhere ("上一年度" is no number of years);
    an ordinal ("第二位") only when the question asks for one (`ordinal`: "第几位")."""
    first = "" if ordinal else "(?<!第)"
    if has_hangul(unit):  # digits or a native numeral, then the counter ("5명", "두 대")
        return re.search(rf"(?:{_KO_COUNT})\s*{re.escape(unit)}", text) is not None
    for form in unit_forms(unit):
        if has_han(form):
            after = _NOT_THE_UNIT.get(form, "")
            tail = f"(?![{after}])" if after else ""
            if re.search(f"{first}{_COUNT}{re.escape(form)}{tail}", text):
                return True
        elif _symbol_after_number(form, text):
            return True
    return False


def names(question: str) -> list[str]:
    """Named things the question writes out (entities, products, titles)."""
    out: list[str] = key_terms(question)
    if has_han(question):
        out += [m.group(1) for m in _QUOTED.finditer(question)]
    else:
        out += [m.group(1) for m in _QUOTED.finditer(question)]
        if stemmed_language(question):  # capitals in German, Russian ...: `inflected_names`
            return [n for n in dict.fromkeys(out) if n.lower() not in STOPWORDS]
        for m in _CAPITALISED.finditer(question):
            *run, last = m.group(1).split()
            # A one-letter designator is part of the name, not the word "a" or "I".
            words = [w for w in run if w.lower() not in _NOT_NAMES]
            words += [last] if len(last) == 1 or last.lower() not in _NOT_NAMES else []
            if words and not (len(words) == 1 and _MONTH_EN.fullmatch(words[0])):
                out.append(" ".join(words))
    months = {m.lower() for m in _MONTHS}
    return [n for n in dict.fromkeys(out) if n.lower() not in STOPWORDS and n.lower() not in months]


# A word in any alphabet, and what may stand before a name that does not open a sentence.
_ANY_WORD = re.compile(r"[^\W\d_][\w'’\-]*")
_OPENS = re.compile(r"(?:^|[.!?¿¡«„“\"(\[:]\s*)$")


def inflected_names(question: str) -> list[tuple[str, tuple[str, ...]]]:
    """Capitalised words (runs of them) of a question in an inflected language other than
    English (German, French, Russian ...), not opening it, with the prefix stem of each
    word: ("Омска", ("омск",)). A name asked is then looked for in its other forms
    ("Новосибирска" in "Новосибирск"). Checked against the quoted document, not the quote
    alone. German capitalises every noun: there a capital is a name only where no article,
    determiner or adjective stands before it (`_german_noun`)."""
    lang = stemmed_language(question)
    if not lang:
        return []
    skip = stopwords(lang)
    runs: list[list[str]] = []
    last_end = -2
    before: list[str] = []  # the words so far, lower case
    for m in _ANY_WORD.finditer(question):
        word = m.group(0)
        previous, before = before, [*before, word.lower()]
        if not word[0].isupper() or _OPENS.search(question[: m.start()]):
            last_end = -2
            continue
        if word.lower() in skip or word.lower() in STOPWORDS:
            last_end = -2
            continue
        if lang == "de" and (last_end < 0 or not runs) and _german_noun(previous):
            last_end = -2
            continue
        if runs and question[last_end : m.start()] == " ":
            runs[-1].append(word)
        else:
            runs.append([word])
        last_end = m.end()
    return [
        (" ".join(run), tuple(prefix_stem(w.lower(), lang) for w in run))
        for run in dict.fromkeys(tuple(r) for r in runs)
    ]


# What stands before a German common noun: articles, determiners, quantifiers, numbers,
# prepositions ("in Betrieb", "für Sonnenenergie": a bare noun after one is common, a
# place after one too, and a wrong refusal costs more) and their contractions with an
# article.
_GERMAN_DETERMINER_TEXT = """
    der die das den dem des ein eine einen einem einer eines kein keine keinen keinem keiner
    keines dieser diese dieses diesen diesem jeder jede jedes jeden jedem welcher welche
    welches welchen welchem mein meine meinen meinem meiner sein seine seinen seinem seiner
    ihr ihre ihren ihrem ihrer unser unsere unseren euer eure viele vielen wenige einige
    einigen mehrere alle allen beide beiden zum zur im am vom beim ins ans aufs wie in an
    auf für mit bei nach von aus zu um über unter vor hinter neben zwischen seit als durch
    gegen ohne bis
"""
_GERMAN_DETERMINERS = frozenset(_GERMAN_DETERMINER_TEXT.split())


def _german_noun(before: list[str]) -> bool:
    """Whether a capitalised German word after `before` (the question's words so far, lower
    case) is a common noun: right after a determiner, a number or a capitalised word, or
    after an adjective that follows a determiner ("zum ersten Mal", "der höchste Berg")."""
    if not before:
        return True
    last = before[-1]
    if last in _GERMAN_DETERMINERS or last.isdigit():
        return True
    return len(before) > 1 and before[-2] in _GERMAN_DETERMINERS


_KANJI_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3005]{2,}")


def japanese_places(question: str) -> list[str]:
    """Place names of a Japanese question, as jieba tags them in its kanji runs (大阪, 松本):
    looked for in the quoted document, like the names of other languages. (jieba's other
    name tags misread Japanese kanji, 天守 as a person.)"""
    if not has_kana(question):
        return []
    return list(
        dict.fromkeys(
            w
            for run in _KANJI_RUN.findall(question)
            for w, flag in tagged_words(run)
            if flag == "ns" and len(w) >= 2
        )
    )


# jieba's tags for names: persons, places, organisations, other proper names.
_NAME_TAGS = frozenset({"nr", "ns", "nt", "nz", "nrt", "nrfg"})
# Characters that are words of their own (particles, copulas, pronouns, question words),
# simplified and traditional: jieba's guesses at unknown words often end in one
# ("巴利冈是", "锦地罗不"): cut off the ends of a name, and no one-character part of one.
_FUNCTION_HAN = frozenset(
    "的是了在和与與及或也都就才不会會有被把对對从從向为為以而之其这這那哪谁誰何么麼什吗嗎"
    "呢吧啊着著过過得地要能可将將于於个個们們并並所後"
)
_NAME_JOINS = frozenset("·・-－‧•")  # transliteration dots and hyphens inside a name
_TRIM = "".join(sorted(_NAME_JOINS | _FUNCTION_HAN))
# jieba's tags of single characters that join no name: numerals, measure words, times,
# places of direction, prepositions, conjunctions, particles, pronouns, adverbs.
_NOT_IN_NAMES = frozenset("mqtfpcurdy")
_NOT_IN_SUBJECTS = _NOT_IN_NAMES | {"v"}  # ... and verbs, in a subject
_HAN_CHARS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def han_names(question: str, within: Sequence[str] = ()) -> list[str]:
    """Names of a Chinese question (persons, places, organisations, other proper names) as
    jieba tags them, each widened over the name-tagged words, single characters and
    transliteration dots beside it ("蒂亚戈·蒙泰罗": jieba tags 蒂 and 亚戈 and 泰罗). jieba's
    tags misfire on ordinary words ("长度" as a place), which `han_name_found` is lenient
    for, and its guesses at unknown names swallow a particle ("巴利冈是"), which is cut off
    again."""
    if not has_han(question) or has_kana(question):
        return []
    out: list[str] = []
    run: list[str] = []
    named = False
    for word, flag in [*tagged_words(question), ("", "x")]:
        han = bool(_HAN_CHARS.fullmatch(word)) and word not in _FUNCTION_HAN
        tagged = han and flag in _NAME_TAGS
        single = han and len(word) == 1 and flag[:1] not in _NOT_IN_NAMES
        if tagged or single or (word in _NAME_JOINS and run):
            run.append(word)
            named = named or tagged
            continue
        if run and not known_word(run[0]):
            run[0] = run[0].lstrip(_TRIM)
        if run and not known_word(run[-1]):
            run[-1] = run[-1].rstrip(_TRIM)
        text = "".join(run).strip("".join(_NAME_JOINS))
        if named and _pairs(text) and not any(text in n for n in within):
            out.append(text)
        run, named = [], False
    return list(dict.fromkeys(out))


def _pairs(name: str) -> list[str]:
    """The name's two-character pieces."""
    return [name[i : i + 2] for i in range(len(name) - 1) if han_word(name[i : i + 2])]


def _pieces_in(name: str, text: str, share: float) -> bool:
    """The name in the text whole, or at least `share` of its two-character pieces (one at
    the least)."""
    if name in text:
        return True
    pairs = _pairs(name)
    return sum(p in text for p in pairs) >= max(1, share * len(pairs))


def han_name_found(name: str, text: str) -> bool:
    """Whether the text mentions a name of the question: whole, or two of its characters
    together — half of its two-character pieces for a name of several words, since
    transliterations share pieces ("威廉·狄尔泰" and "伏尔泰" share 尔泰). A document about
    another person or place shares none or few; one that writes the name a little
    differently ("西贡商业信用银行" for "西贡商信银行") shares most."""
    return _pieces_in(name, text, 0.0 if known_word(name) else 0.5)


# What a Chinese question asks with, the words that may open its clause before the subject
# (times, numbers, directions, conjunctions, adverbs), and the pronouns that stand for a
# subject named elsewhere ("该书", "此鱼").
_ASKS_HAN = re.compile(
    r"什么|什麼|哪|谁|誰|多少|几|幾|何|吗|嗎|怎|多长|多長|多大|多高|多久|多重|多远|多遠|多深|多宽|多寬"
)
_BEFORE_SUBJECT = frozenset("tmfcdx")
_DEMONSTRATIVES = frozenset("该此这那本其該這")
_WHAT_IS = (["何谓"], ["何謂"], ["何为"], ["何為"])
_COMMON_WORD = 2000  # jieba's dictionary count above which a word is an everyday one


def _noun_word(word: str, flag: str) -> bool:
    if not _HAN_CHARS.fullmatch(word) or _ASKS_HAN.search(word):
        return False
    noun = flag[:1] == "n" or flag in ("j", "s", "vn", "ng")
    # A single character tagged as a verb ends a subject; in a name it may be part of it
    # (jieba tags 让 and 蒙 of 让-皮埃尔 and 蒂亚戈·蒙泰罗 as verbs).
    single = len(word) == 1 and word not in _FUNCTION_HAN and flag[:1] not in _NOT_IN_SUBJECTS
    return noun or single


_Tagged = tuple[tuple[str, str], ...]


@lru_cache(maxsize=1024)
def _clauses(question: str) -> tuple[tuple[_Tagged, ...], _Tagged]:
    """The question's tagged words cut into clauses: those before the one that asks, and
    that one (empty when none asks). One tagging of the whole question serves all, and
    the name, subject and scope checks read the same clauses (memoised)."""
    clauses: list[_Tagged] = []
    clause: list[tuple[str, str]] = []
    for word, flag in [*tagged_words(question), ("，", "x")]:
        if word in "，,；;：:":
            if clause:
                clauses.append(tuple(clause))
            clause = []
        else:
            clause.append((word, flag))
    for i in range(len(clauses) - 1, -1, -1):
        if any(_ASKS_HAN.search(word) for word, _ in clauses[i]):
            return tuple(clauses[:i]), clauses[i]
    return tuple(clauses), ()


def han_subject(question: str) -> str:
    """The subject of a Chinese question: the nouns that open the clause that asks
    ("马来穿山甲的别称是什么？" -> "马来穿山甲", "黄鳍紫鱼体长多少？" -> "黄鳍紫鱼体长"), after a
    time or an adverb; "" where that clause opens otherwise (a preposition, a pronoun, a
    Latin word: "对人体有什么伤害", "该书讲述了什么") or the subject is one character."""
    if not has_han(question) or has_kana(question):
        return ""
    run: list[str] = []
    for word, flag in _clauses(question)[1]:
        if not run and flag[:1] in _BEFORE_SUBJECT and flag != "ns":
            continue
        if not _noun_word(word, flag):
            break
        run.append(word)
    subject = "".join(run)
    # One common word ("专家", "男子", "学校") names a kind of thing, not the one asked about.
    common = len(run) == 1 and word_frequency(subject) >= _COMMON_WORD
    return subject if len(subject) > 1 and subject[0] not in _DEMONSTRATIVES and not common else ""


def han_defined(question: str) -> str:
    """The term a Chinese question asks to define ("什么是暴发户？", "何谓冠夫姓？" ->
    "暴发户", "冠夫姓"), or "". A definition quotes the term itself."""
    if not has_han(question) or has_kana(question):
        return ""
    words = [w for w, _ in _clauses(question)[1]]
    asked = 2 if words[:2] in (["什么", "是"], ["什麼", "是"]) else int(words[:1] in _WHAT_IS)
    term = "".join(words[asked:]).rstrip("？?。呢") if asked else ""
    # "什么是藏霞精舍的宗旨？" asks for the aim, not a definition.
    return term if han_word(term) and "的" not in term else ""


def han_scope(question: str) -> list[str]:
    """What the clauses before the asking one name, in runs of nouns of three characters
    or more ("按南小二系统需求规格说明书的约束条件，项目代码用什么工具…" -> "规格说明书",
    "约束条件"): the document or part of one the question is asked within."""
    runs: list[str] = []
    for clause in _clauses(question)[0]:
        run = ""
        for word, flag in [*clause, ("", "x")]:
            if _noun_word(word, flag):
                run += word
                continue
            if len(run) > 2:
                runs.append(run)
            run = ""
    return runs


def han_subject_found(subject: str, text: str) -> bool:
    """The subject in the text, or at least half of its two-character pieces: the subject
    often runs into what is asked of it ("黄鳍紫鱼体长"), which the text writes apart."""
    return _pieces_in(subject, text, 0.5)


# The end of a number the question gives, standing alone: not inside a word, nor the
# start of a longer dotted number ("3.1" in "3.1.0").
_GIVEN_END = re.compile(rf"{LATIN_WORD_END}(?!\.\d)")


def _found(term: str, text: str) -> bool:
    t = normalise(term)
    if has_han(t) or not re.match(r"\w", t):
        return t in text
    # A word starts where a Latin letter or digit does not precede it ("2015" is not
    # found in "12015"); Han characters do ("截至2015年", "绝对SuperStar"). A plural or
    # possessive ending still matches ("Kentucky's").
    # An acronym is a whole word, or its plural: "PD" is not found in "PDF".
    return starts_latin_word(text, t, _ACRONYM_END if term.isupper() else None)


_ACRONYM_END = re.compile(rf"(?:'?s)?{LATIN_WORD_END}")


def has_quantity(text: str, given: str = "") -> bool:
    """Whether the text states a quantity; numbers the question itself gives (`given`:
    "OpenAPI 3.1.0", "in 2015") are not the quantity it asks for, and nor is a digit that
    is part of a Latin name ("SHA256", "IPv6", "mp3", "Safety4"), unless the name is a
    version ("v2", "P12.1.2")."""
    body = _CLAUSE_REF.sub("", _SECTION_NUMBER.sub("", _UNIT_DECLARED.sub(" ", text)))
    body = _IN_A_NAME.sub(_version_or_blank, body)
    for named in sorted(set(_GIVEN_NUMBER.findall(given)), key=len, reverse=True):
        body = _blank_given(body, named)
    return bool(_NUMBER.search(body) or _NUMBER_WORD.search(body) or _NO_LIMIT.search(body))


def _blank_given(body: str, named: str) -> str:
    r"""`body` with a space for each `named` that stands alone and not after a full stop:
    `re.sub(r"(?<!\.)" + LATIN_WORD_START + re.escape(named) + _GIVEN_END, " ", body)`
    without compiling that pattern for every number a question gives (~2 ms: its
    character classes span Unicode)."""
    starts = list(latin_words_at(body, named, _GIVEN_END, joiners="."))
    if not starts:
        return body
    pieces, last = [], 0
    for i in starts:
        pieces += [body[last:i], " "]
        last = i + len(named)
    return "".join(pieces) + body[last:]


_GIVEN_NUMBER = re.compile(r"\d+(?:[.,:\-/]\d+)*")
# A table's caption declaring its unit ("（单位：万元）", "(unit: USD thousand)"): no quantity.
_UNIT_DECLARED = re.compile(
    r"[（(]?\s*(?:单位|units?)\s*[:：]\s*[^）)\n]{1,16}[）)]?", re.IGNORECASE
)
# Digits written onto Latin letters, and the letters: a name, or a version.
_IN_A_NAME = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]+(\d+(?:\.\d+)*)[A-Za-z]*(?![A-Za-z0-9])")
_VERSION_NAME = re.compile(r"[vV]\d|[A-Za-z]+\d+\.\d")


def _version_or_blank(m: re.Match[str]) -> str:
    return m.group(0) if _VERSION_NAME.match(m.group(0)) else " "


# What people call a document by its format ("the Word document", "the Excel sheet").
_FORMAT_NAMES = {
    "docx": "Word document",
    "doc": "Word document",
    "xlsx": "Excel workbook spreadsheet",
    "xls": "Excel workbook spreadsheet",
    "csv": "spreadsheet",
    "pptx": "PowerPoint slides",
    "ppt": "PowerPoint slides",
    "pdf": "PDF",
    "md": "Markdown",
    "html": "HTML web page",
    "htm": "HTML web page",
    "eml": "e-mail email",
    "msg": "e-mail email Outlook",
}


def _file_name(source: str) -> str:
    """The file name of a source URI, as is and with words split ("en-wikipedia-duck" ->
    "en wikipedia duck"), and what its format is called: it often names the document."""
    name = unquote(source.rsplit("/", 1)[-1])
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return f"{name} {re.sub(r'[-_.]+', ' ', name)} {_FORMAT_NAMES.get(ext, '')}"


# Words naming the kind of place in a geographic name, which a text may leave out.
_DESIGNATOR_TEXT = """
    mount mt lake river state city island islands bay sea ocean province county mountains
    peninsula valley desert gulf cape strait
"""
_DESIGNATORS = frozenset(_DESIGNATOR_TEXT.split())
_NUMBERED_NAME = re.compile(r"[A-Za-z] \d$")


def _name_found(name: str, text: str) -> bool:
    """A name in the text: whole, or (Latin names of several words) word by word; Han and
    quoted titles compared without spaces and punctuation ("Java 开发手册（黄山版）")."""
    if _found(name, text):
        return True
    if _CODE.fullmatch(name):  # "CH-3" is not found in "CH-1 … 3 months"
        return False
    if has_han(name):
        squashed = re.sub(r"[\W_]+", "", name.lower())
        return bool(squashed) and squashed in re.sub(r"[\W_]+", "", text)
    if _NUMBERED_NAME.search(name):  # "Tier 3": its number beside it, not anywhere
        return False
    words = [w for w in re.split(r"[\s\-/]+", name) if w]
    # The kind of place a name spells out is often left out ("Vesuvius" for Mount
    # Vesuvius, "Washington" for Washington State): its other words are enough.
    own = [w for w in words if w.lower() not in _DESIGNATORS] or words
    # A compound joined by a hyphen ("Aluminium-Gussteile") is met by its parts' heads as
    # the text writes them ("Aluminium, Guss").
    compound = "-" in name
    return len(words) > 1 and all(
        _found(w, text) or (compound and _head_found(w, text)) for w in own
    )


_HEAD = 4  # letters of the shortest head of a compound word ("Guss" of "Gussteile")


def _head_found(word: str, text: str) -> bool:
    """Whether the text writes a word that is the head of the compound `word`: "Guss" for
    "Gussteile", "Normteile" for "Normteilerechnung"."""
    return any(_found(word[:k], text) for k in range(len(word) - 2, _HEAD - 1, -1))


# A question about what a row lacks ("Which city has no staff cap?") is answered by the row
# whose cell is empty.
_ASKS_ABSENCE = re.compile(r"\b(?:no|not|without|missing|empty|blank|lacks?)\b|没有|无|缺|空", re.I)
_HEADER_WORD = re.compile(r"[\u3400-\u9fff]{2,}|[^\W_]*[^\W\d_][^\W_]*")


def _empty_column_asked(question: str, row: Candidate) -> str:
    """The column the question asks for, which the quoted row leaves empty: asked for the
    staff's hotel cap in Chengdu, the Chengdu row has the manager's cap only. A word of
    an empty column's header names it when the question has it and the row's other
    headers and cells do not (a shared word, "Price (USD)" beside an empty "Price (EUR)",
    names neither), and the question does not use it inside the document's title
    ("员工差旅标准" is the policy, not the staff column). Not for questions about what a
    row lacks."""
    if not row.empty or _ASKS_ABSENCE.search(question):
        return ""
    lowered = question.lower()
    asked = {stem(w) for w in _HEADER_WORD.findall(lowered) if not has_han(w)}
    present = " ".join(f"{h} {v}" for h, v in row.cells).lower()
    held = {stem(w) for w in _HEADER_WORD.findall(present) if not has_han(w)}
    title = " ".join((row.chunk.title, *row.chunk.section_path)).lower()
    for header in row.empty:
        for word in _HEADER_WORD.findall(header.lower()):
            if has_han(word):  # by its character pairs: 存放 of 存放位置
                pairs = [word[i : i + 2] for i in range(len(word) - 1)]
                if not any(
                    p in lowered and p not in present and not _in_title_phrase(p, lowered, title)
                    for p in pairs
                ):
                    continue
            elif (
                len(word) < 2
                or word in STOPWORDS
                or function_word(word)  # "de" of "Faixa de peso"
                or stem(word) not in asked - held
            ):
                continue
            return f"the table gives no {header!r} for the row quoted"
    return ""


def _named_row_blank(question: str, chosen: Sequence[Candidate]) -> str:
    """A quoted table row that the question names by its key and whose every other cell
    the table leaves empty or open ("MBA / EMBA | 待定 | 待定 | 待定", quoted with the rows
    around it): the table states nothing for it. Not for questions about what a row lacks.
    "" otherwise."""
    if _ASKS_ABSENCE.search(question):
        return ""
    terms = [t for t in content_terms(question) if len(t) > 1]
    for row in chosen:
        if not row.is_table_row or not row.empty or len(row.cells) > 1:
            continue
        key = normalise(row.cells[0][1]) if row.cells else ""
        if key and any(term_in(t, key) for t in terms):
            return f"the table gives nothing for {row.cells[0][1]!r} but its name"
    return ""


# A cell that is a number: digits first, after a currency sign or a sign at most ("R$ 32,00",
# "NT$ 500", "USD 90").
_NUMBER_CELL = re.compile(r"^(?:[A-Za-z]{0,3}[$€£¥₩₽₹]|[^\w\s]{0,2}|[A-Z]{3}(?=\s))\s?\d")


def _numbers_left_empty(row: Candidate) -> str:
    """The header of a column of numbers (every other value of the table there is one:
    "4,200", "€ 90") which the quoted row leaves empty, when no cell of the row is a
    quantity: its digits are labels ("Room 204"), or name the row (a Fiscal Year, an id),
    not the quantity asked. "" otherwise."""
    if not row.empty or any(
        _NUMBER_CELL.match(v) and not naming_column(h) and not _YEAR.fullmatch(v.strip())
        for h, v in row.cells
    ):
        return ""
    siblings = [dict(c.cells) for c in candidates(row.chunk, row.hit_rank) if c.cells]
    for name in row.empty:
        values = [s[name] for s in siblings if name in s]
        if len(values) >= 2 and all(_NUMBER_CELL.match(v) for v in values):
            return name
    return ""


def _in_title_phrase(word: str, question: str, title: str) -> bool:
    """Whether the question writes the Han word as part of a longer piece of the title
    (two characters more on either side)."""
    i = question.find(word)
    while i >= 0:
        for piece in (question[max(0, i - 2) : i + len(word)], question[i : i + len(word) + 2]):
            if len(piece) > len(word) and piece in title:
                return True
        i = question.find(word, i + 1)
    return False


def _row_not_asked(question: str, best: Candidate, same_doc: str) -> str:
    """A quoted table row that no word of the question picks out (it matched only through
    the header or caption), while the question names something the table does not have at
    all: the table has no row for what was asked ("calories of fish" in a table of leaves,
    berries and grain)."""
    if not best.is_table_row or has_han(question):
        # (Chinese questions describe the cell they want in prose, "求和的公式单元格",
        # whose words a table need not contain: this test is for English row names. A
        # Chinese variant, any question word absent from the table and its document,
        # refused 7 right answers of the shared sets to refuse 1 near miss: session 16.)
        return ""
    terms = [
        t for t in query_terms(question) if len(t) > 1 and not t.isdigit() and t not in SCAFFOLDING
    ]
    values = normalise(" ".join(v for _, v in best.cells))
    if any(term_in(t, values) for t in terms):
        return ""
    table = normalise(f"{best.chunk.title} {_file_name(best.chunk.source)} {best.chunk.text}")
    absent = [t for t in terms if not term_in(t, table) and not term_in(t, same_doc)]
    return f"the table has no row for {', '.join(repr(t) for t in absent)}" if absent else ""


def _counted_in_column(
    unit: str, row: Candidate, similarity: Similarity | None, synonyms: Sequence[str] = ()
) -> bool:
    """Whether a quoted table row has a number in a column whose header means the unit
    asked ("How many employees …?" of a Staff column), or names one of the unit's domain
    synonyms the route applied (people = headcount, where the dictionary says so)."""
    headers = [h for h, v in row.cells if h and any(ch.isdigit() for ch in v)]
    named = normalise(" ".join(headers))
    if any(_name_found(s, named) for s in synonyms):
        return True
    return similarity is not None and bool(headers) and names_a_column(unit, headers, similarity)


def _row_of_another(question: str, row: Candidate, retrieved: Sequence[Chunk]) -> tuple[str, str]:
    """A quoted row keyed by a name the question does not give ("TiFlash Write Node",
    "bearerFormat"), none of whose cells holds the names it does give, while a retrieved
    table has a row keyed by one of those ("TiDB", "servers"): the quote is a sibling's
    row, matched through its other cells or the document's title. The names: the
    question's key terms, and its other words that key a retrieved row, unless a header
    of a retrieved table has them (a "type" asked is the Type column). (Why, the name
    asked), or ("", "")."""
    key = row.cells[0][1] if row.cells else ""
    if not re.search(r"[A-Za-z]", key) or _name_found(key, normalise(question)):
        return "", ""
    keys = {r[0].strip().lower() for c in retrieved for r in c.table_rows if r}
    headers = {w for c in retrieved for h in c.table_header for w in re.findall(r"\w+", h.lower())}
    words = [t for t in content_terms(question) if t in keys and t not in headers]
    named = list(dict.fromkeys([*key_terms(question), *words]))
    cells = normalise(" ".join(v for _, v in row.cells))
    if any(_name_found(n, cells) for n in named):
        return "", ""
    asked = [n for n in named if n.lower() in keys]
    if not asked:
        return "", ""
    return f"the row quoted is about {key!r}, not {', '.join(repr(n) for n in asked)}", asked[0]


# The words of a table's row keys, which name kinds of one thing ("Worker type": Full-time
# employee, Contractor): `_kind_unquoted`.
_KEY_WORD = re.compile(r"[a-z][a-z0-9]*")
_ROW_KEY_WORDS = 4  # a key of more words is a description, not a name of a kind


def _key_stems(text: str) -> frozenset[str]:
    """The stems of a text's Latin words, and the character pairs of its Han runs (a Han
    key is named by its pairs: 实习生 by 实习, 习生)."""
    lowered = text.lower()
    latin = {stem(w) for w in _KEY_WORD.findall(lowered) if w not in STOPWORDS}
    return frozenset(latin.union(_pairs(lowered)))


def _kind_unquoted(question: str, evidence: str, retrieved: Sequence[Chunk]) -> str:
    """A retrieved table's rows name kinds of one thing (its key column: "Full-time
    employee", "Contractor"; 病假, 婚假). Where the question names one of them (every word
    or Han character pair of its key), the quote or its headings must name it too (a word
    or pair of its key no other key has):
    "Full-time employees called for jury service receive full pay ..." does not say what
    contractors get, nor does a sentence naming no kind at all. Why, or ""."""
    tables = [chunk for chunk in retrieved if chunk.table_rows]
    if not tables:
        return ""
    asked_stems = _key_stems(question)
    quote_stems = _key_stems(evidence)
    for chunk in tables:
        keys = [k for k in dict.fromkeys(r[0].strip() for r in chunk.table_rows if r) if k]
        stems = {
            k: _key_stems(k)
            for k in keys
            if len(k.split()) <= _ROW_KEY_WORDS and not any(map(str.isdigit, k))
        }
        asked = [k for k, st in stems.items() if st and st <= asked_stems]
        own = {k: _own_stems(k, stems) for k in asked}
        if not asked or len(asked) == len(stems) or not all(own.values()):
            continue
        if any(own[k] & quote_stems for k in asked):
            continue  # the quote names the kind asked
        shared = frozenset().union(*(stems[k] for k in asked)) | asked_stems
        other = next((k for k, st in stems.items() if (st - shared) & quote_stems), "")
        if other:
            return f"the quoted text is about {other!r}, not {asked[0]!r}"
        return f"no quoted passage mentions {asked[0]!r}"
    return ""


def _own_stems(key: str, stems: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The stems of a key no other key has ("contractor", not "employee")."""
    return stems[key].difference(*(st for k, st in stems.items() if k != key))


def _row_keys(row: Candidate) -> set[str]:
    """The keys (`_key_of`) of every row of a quoted row's table."""
    return {_key_of(c.cells) for c in candidates(row.chunk, row.hit_rank) if c.cells}


# A row's code ("D401", "A101", "EMB-01", "MON-01", "7"): a price list's first column,
# where the next one names the row.
_CODE_CELL = re.compile(r"[A-Za-z]{0,4}[-_ ]?\d{1,5}[A-Za-z]?")


def _key_of(cells: Sequence[tuple[str, str]]) -> str:
    """The cell that names a table row: its first, or the next where the first is a code
    ("課程代碼: D401 | 課程名稱: Python程式入門")."""
    values = [v.strip() for _, v in cells[:2]]
    if len(values) == 2 and _CODE_CELL.fullmatch(values[0]) and not _CODE_CELL.fullmatch(values[1]):
        return values[1]
    return values[0] if values else ""


def _han_row_of_another(question: str, row: Candidate) -> tuple[str, str]:
    """A quoted row keyed by a name the Chinese question does not write ("西南区"), while
    its table has a row keyed by one it does ("华南区", whose cell asked may be empty):
    the figures are another row's. (Why, the key asked), or ("", "")."""
    key = _key_of(row.cells)
    if not has_han(key) or key in question:
        return "", ""
    keys = _row_keys(row)
    asked = [k for k in keys if len(k) >= 2 and has_han(k) and k in question]
    if not asked:
        return "", ""
    name = max(asked, key=len)
    return f"the row quoted is about {key!r}, not {name!r}", name


_HYPHENED = re.compile(r"(?<![\w-])([a-z]+)-([a-z]+)(?![\w-])")


def _hyphen_sibling(question: str, quoted: str, same_doc: str) -> tuple[str, str]:
    """A compound the question writes with a hyphen ("part-time") that the quoted document
    never writes, where the quote has another with the same second word ("full-time"):
    the quote is about that kind. (Why, the compound asked), or ("", "")."""
    for m in _HYPHENED.finditer(question.lower()):
        first, second = m.groups()
        if any(f"{first}{sep}{second}" in same_doc for sep in ("-", " ", "")):
            continue
        for n in _HYPHENED.finditer(quoted.lower()):
            if n.group(2) == second and n.group(1) != first:
                return f"the quoted text is about {n.group(0)!r}, not {m.group(0)!r}", m.group(0)
    return "", ""


# jieba's tags of a word that picks out one kind of a thing (中型 货架, 上海 分公司): a
# distinguishing word (区别词) or a place. (Nouns too were tried: 补贴 of 补助标准 and 儿童
# of 未成年人个人信息 name the same thing as the text's other word.)
_MODIFIER_TAGS = frozenset({"b", "ns"})
_THING_TAGS = frozenset({"n", "nz", "nt", "ns"})  # the thing itself: a noun
_FUNCTION_CHARS = frozenset("的了是在和与及或为以于之其这那对把被从到每各该本此")


def _han_modifier_sibling(question: str, quoted: str, same_doc: str) -> tuple[str, str]:
    """A Chinese question's kind of a thing (中型货架, 上海分公司) whose distinguishing word
    (中型, 上海) its document never writes, while the quote writes the thing with another
    word of the same length in its place (重型货架, 轻型货架; 华南分公司): the quote is about
    its siblings. (Why, the kind asked), or ("", "")."""
    words = [(w, f) for w, f in tagged_words(question) if has_han(w)]
    for (mod, flag), (head, head_flag) in itertools.pairwise(words):
        if flag not in _MODIFIER_TAGS or head_flag not in _THING_TAGS or len(head) < 2:
            continue
        at = question.find(mod + head)
        if at < 0 or _WHICH_HAN.search(question[:at]) or question[:at].endswith("几"):
            continue  # (什么时候闭馆: 时候 is part of the question word)
        if normalise(mod) in same_doc or head not in quoted:
            continue
        siblings = []
        for m in re.finditer(re.escape(head), quoted):
            before = quoted[max(0, m.start() - len(mod)) : m.start()]
            if (
                len(before) == len(mod)
                and all(has_han(ch) and ch not in _FUNCTION_CHARS for ch in before)
                and before != mod
            ):
                siblings.append(before + head)
        if siblings:
            named = ", ".join(repr(x) for x in dict.fromkeys(siblings))
            return f"the quoted text is about {named}, not {mod + head!r}", mod + head
    return "", ""


_NEGATIONS = "未不非无没"
_HAN_OR_DIGITS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\d]{1,5}")  # what a negation governs


def _han_negated(question: str, quoted: str) -> str:
    """A Chinese quote that writes the question's words with a negation between them
    ("怀孕未满4个月" for 怀孕满4个月, "不属于" for 属于), or the other way round, states the
    opposite condition. Not for yes/no questions, which a negation answers. The words
    with the negation, or ""."""
    if YES_NO_HAN.search(question):
        return ""
    for text, other in ((quoted, question), (question, quoted)):
        for i, ch in enumerate(text):
            if ch not in _NEGATIONS or i == 0:
                continue
            left, right = text[i - 1], text[i + 1 : i + 3]
            if len(right) < 2 or not all(has_han(c) or c.isdigit() for c in left + right):
                continue
            if left + right in other and text[i - 1 : i + 3] not in other:
                run = _HAN_OR_DIGITS.match(text, i + 3)
                end = run.end() if run else i + 3
                return text[i - 1 : end] if text is quoted else left + text[i + 1 : end]
    return ""


def _han_sibling_row(question: str, row: Candidate, same_doc: str) -> str:
    """A Chinese question's name ("法务部") that the quoted row's key ("财务部") is a
    sibling of: the name is nowhere in the quoted document, and the key column holds
    names of its kind (two or more keys ending as it ends: 研发部, 市场部, 财务部). The
    row is another one's; the table has none for the name asked. Why, or ""."""
    key = _key_of(row.cells)
    if not has_han(key) or not 2 <= len(key) <= 12:
        return ""
    names = [*han_names(question), han_subject(question)]
    keys = _row_keys(row)
    for name in dict.fromkeys(n for n in names if len(n) >= 2 and has_han(n)):
        if name in key or key in name or normalise(name) in same_doc:
            continue
        kind = [k for k in keys if k[-1:] == name[-1] and len(k) >= 2]
        if key[-1:] == name[-1] and len(kind) >= 2:
            return f"the row quoted is about {key!r}, not {name!r}"
    return ""


def _han_keyed_elsewhere(
    question: str, row: Candidate, retrieved: Sequence[Chunk]
) -> tuple[str, str]:
    """Another row of the quoted row's table whose key the Chinese question names better
    than the quoted row's key: more of the question's character pairs are in it (two at
    least). Asked for the 茶歇 rate of an 80-person meeting, the row keyed 茶歇标准 (茶歇,
    标准) is the one asked about, not the meeting-room row (大会 of 大会议室); asked for the
    分选费, the row 分选费 stays (分选, 选费) against 客户管理费 (客户). Key columns: the
    first, and the next where the first repeats its values (类别 → 项目). (Why, the other
    row's key), or ("", "")."""
    rows = _table_rows(row, retrieved)
    if len(rows) < 3 or not row.cells:
        return "", ""
    keyed = _key_columns(rows)
    pairs = {question[i : i + 2] for i in range(len(question) - 1)}
    pairs = {p for p in pairs if has_han(p[0]) and has_han(p[1])}

    def key_of(cells: Sequence[tuple[str, str]]) -> str:
        return " ".join(v for h, v in cells if h in keyed)

    def named(key: str) -> int:
        return sum(p in key for p in pairs)

    own_key = key_of(row.cells)
    own = named(own_key)
    best = max((key_of(cells) for cells in rows), key=named, default="")
    if best != own_key and named(best) >= max(2, own + 1):
        return f"the table's row for what is asked is {best!r}, not the row quoted", best
    return "", ""


def _key_columns(rows: Sequence[Sequence[tuple[str, str]]]) -> list[str]:
    """A table's key columns: its first, and the next where the first repeats its values
    (a category, then the item: 类别 → 项目)."""
    headers = list(dict.fromkeys(h for cells in rows for h, _ in cells))
    if not headers:
        return []

    def distinct(header: str) -> bool:
        values = [v for cells in rows for h, v in cells if h == header]
        return len(set(values)) >= 0.8 * len(values)

    if distinct(headers[0]) or len(headers) < 2:
        return headers[:1]
    return headers[:2]


def _table_rows(row: Candidate, retrieved: Sequence[Chunk]) -> list[tuple[tuple[str, str], ...]]:
    """The (column, value) cells of every row of a quoted row's table that was retrieved
    (its chunk and the other retrieved parts of the same table)."""
    table = row.chunk.table_id
    parts = [row.chunk] + [
        c
        for c in retrieved
        if table
        and (c.doc_id, c.table_id) == (row.chunk.doc_id, table)
        and c.content_id != row.chunk.content_id
    ]
    return [c.cells for part in parts for c in candidates(part, row.hit_rank) if c.cells]


def _value_of_another_row(question: str, row: Candidate, retrieved: Sequence[Chunk]) -> str:
    """A value the question names ("APAC") that other rows of the quoted row's table hold
    in a column where the quoted row holds another one the question does not name
    ("North America"): the figures are another row's. (Asked for the NPS of Gas Analyzers
    in APAC, the North America row was quoted, its Region left out of the answer.) Names
    only: numbers and one-character values say too little. Why, or ""."""
    asked = normalise(question)
    quoted = normalise(row.text)
    own = dict(row.cells)
    by_column: dict[str, set[str]] = {}
    for cells in _table_rows(row, retrieved):
        for h, v in cells:
            if h in own and v != own[h]:
                by_column.setdefault(h, set()).add(v)
    for h, value in own.items():
        if not h or _name_found(value, asked) or not re.search(r"[^\W\d_]", value):
            continue
        for other in sorted(by_column.get(h, ())):
            name = normalise(other)
            # (Not where the quoted row says it too: "Permanent night" of "Night", a
            # description naming another field.)
            if (
                len(other) > 1
                and re.search(r"[^\W\d_]", other)
                and _name_found(name, asked)
                and not _name_found(name, quoted)
            ):
                return f"the row quoted has {h}: {value!r}, not {other!r}"
    return ""


# jieba's tags of words that say which figure a Chinese question asks of a row:
# abbreviations (人均, 同比) and ordinal periods (第三季度). (Nouns are too often the
# question's way of naming the document or the table: 示例, 申请表, 标准表.)
_ROW_WORD_TAGS = frozenset({"j", "mq"})


def _han_column_unmet(
    question: str, row: Candidate, same_doc: str, similarity: Similarity | None
) -> list[str]:
    """Words a Chinese question asks of a quoted table row ("人均", "第三季度") that the
    quoted document never writes, and that no column of the row means in other words:
    the table does not have them ("研发部的人均预算" of a row with the half-year budgets).
    Spaced languages have `facet_unmet`'s column check."""
    headers = [h for h, _ in row.cells if h] + list(row.empty)
    out: list[str] = []
    for word, flag in tagged_words(question):
        if flag not in _ROW_WORD_TAGS or len(word) < 2 or not has_han(word):
            continue
        if normalise(word) in same_doc:
            continue
        if similarity is not None and headers and names_a_column(word, headers, similarity):
            continue
        out.append(word)
    return out


def _coordinated(question: str, wanted: Sequence[str]) -> bool:
    """Whether the question lists its periods side by side ("2015 and 2016", "2015、2016
    年", "from 2015 to 2016"): then some of them met is a partial answer. Otherwise a
    second period is context ("revenue for 2009 in the November 2012 report")."""
    at = sorted((question.find(p), p) for p in wanted if p in question)
    for (a, pa), (b, _) in itertools.pairwise(at):
        gap = question[a + len(pa) : b].strip().lower()
        if gap in {
            "",
            ",",
            "，",
            "、",
            "and",
            "or",
            "&",
            "to",
            "-",
            "–",
            "和",
            "与",
            "及",
            "或",
            "至",
            "到",
            "and in",
            "vs",
            "versus",
        }:
            return True
    return False


@lru_cache(maxsize=1024)
def quantity_asked(question: str, cues: re.Pattern[str], intent: str = "general") -> bool:
    """Whether the question asks for a quantity: a question word for one (`cues`), or a
    word that names one (or the route's numeric intent) with no other question word.
    Memoised: an answer asks it of one question four times, and the cues are a long
    pattern in many languages (~50 us a question)."""
    named = intent == "numeric"
    for m in cues.finditer(question):
        if not _NAMED_QUANTITY.fullmatch(m.group(0)):
            return True
        named = True
    return named and _ASKS_OTHER.search(question) is None


# "When" in each language the quantity cues know.
_WHEN_Q = re.compile(f"{_WHEN_EN}|{_WHEN_OTHER}", re.IGNORECASE)
# Month names written out (Russian as stems: январ-я, мая), and English abbreviations only
# before a full stop or a day ("Jan. 5", "Nov 2015"); "may" only beside a number.
_MONTH_WORDS = (
    r"\b(?:january|february|march|april|june|july|august|september|october|november|"
    r"december|januar|februar|märz|juni|juli|oktober|dezember|janvier|février|avril|juin|"
    r"juillet|août|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|"
    r"junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|"
    r"maggio|giugno|luglio|settembre|ottobre|dicembre|janeiro|fevereiro|março|maio|junho|"
    r"julho|setembro|outubro|novembro|dezembro|januari|februari|maart|augustus)\b|"
    r"\b(?:январ|феврал|март|апрел|мая\b|май\b|июн|июл|август|сентябр|октябр|ноябр|декабр)|"
    r"\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)(?:\.|\s+\d)|"
    r"\d\s+(?:may|mai)\b|\b(?:may|mai)\s+\d"
)
# A time stated: a year, a month, a date, a century or decade, a time of day, a weekday
# (also in Chinese, Japanese and Korean: "每周一", "日曜日", "둘째 주 월요일"), or a span of
# time units, in the languages above.
_TIME_STATED = re.compile(
    r"(?<![\d.,])(?:1\d{3}|20\d\d)(?!\d|[.,]\d)|\d+\s*(?:年|月|日|世紀|世纪|년|월|일)|"
    rf"{_MONTH_WORDS}|\d{{1,2}}[:.]\d{{2}}\b|[ap]\.m\.|\b\d{{1,2}}\s*[ap]\.?m\b|o'clock|\d+0s\b|"
    r"\b(?:noon|midnight|midday)\b|"
    r"\b(?:centur|decade|jahrhundert|jahrzehnt|siècle|siglo|secolo|século|eeuw|век|wiek|"
    r"stolet|århundrad|århundre|yüzyıl|thế kỷ|abad\b|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|"
    r"lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|lunes|martes|miércoles|jueves|"
    r"viernes|sábado|domingo|lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica|"
    r"segunda-feira|terça-feira|quarta-feira|quinta-feira|sexta-feira|понедельник|вторник|"
    r"сред[аыу]\b|четверг|пятниц|суббот|воскресень)|[月火水木金土日]曜|[월화수목금토일]요일|"
    r"星期[一二三四五六日天]|周[一二三四五六日]|礼拜[一二三四五六日天]|قرن|सदी|शताब्दी|"
    # (With a word between: "10 working days", "3 calendar months"; or one word with it:
    # "10 Arbeitstage", "5 Werktagen".)
    r"\d+\s*(?:(?:working|business|calendar|consecutive|full|clear|banking|trading)\s+)?"
    r"(?:days?|nights?|weeks?|months?|years?|hours?|minutes?|seconds?|tagen?|wochen?|"
    r"(?:arbeits|werk|kalender)tag(?:e|en)?|"
    r"monaten?|jahren?|stunden?|jours?|semaines?|mois|ans|années?|heures?|días?|semanas?|"
    r"meses|años?|horas?|giorni|settimane|mesi|anni|ore|dias|anos|dagen|weken|maanden|"
    r"jaren|uren|дн|недел|месяц|год|лет|час|минут|dni|dzie[nń]|tygodni|tydzie[nń]|"
    r"miesi[ęą]c\w*|lat\b|godzin\w*|dag(?:ar)?\b|veck(?:a|or)\b|m[åa]nad(?:er)?\b|år\b|"
    r"timm(?:e|ar)\b)|"
    # "6か月以内", "3个月", "2週間", "48時間", "3개월", "10営業日"
    r"\d+\s*(?:か月|ヶ月|ケ月|カ月|箇月|个月|個月|週間|週|周|時間|小时|小時|分間|天|"
    r"営業日|개월|주|시간|분)|"
    # A span written in words: "five nights", "ninety minutes".
    rf"\b(?:{_NUMBER_WORDS})[\s-]+(?:nights?|days?|weeks?|months?|years?|hours?|minutes?|"
    r"seconds?)\b",
    re.IGNORECASE,
)
# A "when" answered by an event rather than a time: "once the review is complete", "before
# leaving the building", "only after the board approves it" (in a quote stating no number,
# which would be the measure or count of a near miss instead).
_TIME_CLAUSE = re.compile(
    r"\b(?:once|after|before|until|till|upon|whenever|as soon as|prior to|at the (?:end|start|"
    r"beginning) of|nachdem|bevor|sobald|après|avant|dès que|lorsque|después de|antes de|"
    r"en cuanto|dopo|prima di|depois de)\b",
    re.IGNORECASE,
)


# Units of length as a question counts them ("how many miles").
_LENGTH_WORDS = (
    r"(?:kilomet(?:re|er)s?|kilómetros|quilómetros|quilômetros|chilometri|kilomètres|metres|"
    r"meters|metros|metri|mètres|meter|miles|millas|miglia|milhas|feet|pieds|piedi|pés|pies)"
)
# The word that makes a unit of length one of area ("kilómetros cuadrados").
_SQUARE_AFTER = r"(?:cuadrad|carr[ée]|quadrat|quadrad)"
# A measure a question asks for (English and the other languages the quantity cues know;
# Chinese units have their own check, `asked_unit`), and the units that state one.
_MEASURE_QUESTIONS = (
    (
        "length",
        r"\bhow (?:tall|high|deep|wide|far)\b|\bwhat (?:is|was) the (?:height|length|width|"
        r"depth|elevation|altitude|distance)\b|\bwie (?:hoch|tief|breit|weit)\b|"
        r"\b(?:hauteur|longueur|largeur|profondeur)\b|\bqué (?:altura|longitud|"
        r"anchura|profundidad)\b|\bquanto (?:[eé] )?(?:alto|alta|lungo|lunga|profondo|"
        r"profonda)\b|\b(?:altezza|lunghezza|profondità|altura|comprimento|profundidade)\b|"
        r"\b(?:высот|длин|глубин|ширин)|何メートル|高さ|長さ|深さ|標高|높이|길이|깊이|"
        # "How many kilometres" (not "… square kilometres": an area, below).
        rf"\b(?:how many|cuántos|cuántas|combien de|quanti|quante|quantos|quantas|wie viele)\s+"
        rf"{_LENGTH_WORDS}\b(?!\s+{_SQUARE_AFTER})|"
        r"\bсколько (?:километр|метр|миль)",
    ),
    (
        "sum of money",
        r"\bhow much (?:money|did|does|do|was|is|were)\b[^?]*\b(?:cost|spent|spend|pay|paid|"
        r"charge|worth|earn|raise|price)|\bhow much money\b|\bwie viel (?:geld|kostet|kostete)|"
        r"\bcombien (?:a )?co[uû]t|\bcuánto (?:cuesta|costó|dinero)|\bсколько сто(?:ит|ил)|"
        # A price asked by name ("What is the price of", "le prix d'un", 料金, いくら).
        r"\b(?:what|how much) (?:is|was|are|were) the (?:price|cost|fee|fare)s? (?:of|for)\b|"
        r"\b(?:le|du) (?:prix|tarif) (?:d|du|de|des)\b|\bquel est le (?:prix|tarif|coût)\b|"
        r"\b(?:cuál es|qué) (?:el )?(?:precio|costo|coste)\b|\bqual (?:é|e) o (?:preço|custo)\b|"
        r"\bquanto cost|\bwas kostet\b|\b(?:какова|какая) (?:цена|стоимость)\b|"
        # (얼마 alone asks any amount: 인구는 얼마입니까 is a population.)
        r"料金|運賃|値段|入場料|いくら|(?:비용|가격)[은는이가]?\s*얼마|요금|입장료|운임|"
        # (Swedish, Polish: "vad kostar", "hur dyr", "ile kosztuje", "jaka jest cena")
        r"\bvad kostar\b|\bhur dyr\w*|\bvilket belopp\b|\bile (?:kosztuj[eą]|zapłacę)\b|"
        r"\bjak[aie]? jest (?:cena|kwota|koszt)\b",
    ),
    ("angle", r"\b(?:what|which) angle\b|\bwelchem winkel\b|\bquel angle\b|\bугол"),
    (
        "length or duration",
        r"\bhow long\b|\bwie lange?\b|\bcombien de temps\b|\bcuánto tiempo\b|"
        r"\bсколько времени\b",
    ),
    ("temperature", r"\btemperature\b|\btemperatur|\btempérature\b|\bтемператур|気温|기온"),
    (
        "area",
        r"\bwhat (?:is|was) (?:the|its) (?:total |surface )?area\b|\bhow (?:large|big) an area\b|"
        r"\b(?:qué|cuánta|quale|quanta|quelle) superficie\b|\bcuál es la superficie\b|"
        r"\bquale è la superficie\b|\bquelle est la superficie\b|"
        r"\bqual (?:é )?a (?:superfície|área)\b|\bque superfície\b|\bwie groß ist die fläche\b|"
        r"\bwelche fläche\b|\bкаков\w* площад|\bкакую площадь|面積|면적|"
        r"\bhow many (?:square|sq)\b|\b(?:how many|cuántas|cuántos|combien d|quanti|quantos|"
        rf"wie viele)\W+(?:{_LENGTH_WORDS}\s+{_SQUARE_AFTER}|acres|"
        r"hectares|hectáreas|ettari|hektar|quadratkilometer)|\bсколько квадратн",
    ),
)
_MEASURE_Q = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in _MEASURE_QUESTIONS)
_LENGTH_UNITS = (
    r"\d\s*(?:m|km|cm|mm|ft|mi|yd|in)\b|\d\s*[′'’]|\b(?:feet|foot|metres?|meters?|"
    r"kilomet(?:re|er)s?|miles?|inch(?:es)?|yards?|metern?|kilometern?|mètres?|metros?|"
    r"kilómetros?|quilómetros?|quilômetros?|chilometri|metri)\b|метр|км|\d\s*м\b|"
    r"メートル|キロ|미터|킬로|\d\s*(?:米|公里)"
)
# An area or a volume ("85 000 kilómetros cuadrados", "2.6 million km²", "33 000 metros
# cúbicos por segundo"): no length, though it names one; and the units that state an area.
_SQUARED = (
    r"\b(?:square|sq|cubic)\.?\s+\w+|\w+\s+(?:cuadrad|cúbic|carr[ée]|cubes?\b|cubi\b|"
    r"quadrat|quadrad)\w*|\w+\s*[²³]|\b(?:km|m|mi)[23]\b|\b(?:quadrat|kubik)\w+|"
    r"(?:квадратн|кубическ)\w*\s+\w+|平方\w*|立方\w*|제곱\w*"
)
_AREA_OR_VOLUME = re.compile(_SQUARED, re.IGNORECASE)
_AREA_UNITS = re.compile(
    rf"{_SQUARED}|\b(?:hectares?|hectáreas?|ettari|ettaro|hektar|acres?)\b|гектар|ヘクタール",
    re.IGNORECASE,
)
_DEGREES = re.compile(r"°|\bdegrees?\b|\bgrad\b|\bdegrés?\b|\bgrados?\b|градус|度|도", re.I)
_MEASURE_UNITS = {
    "length": re.compile(_LENGTH_UNITS, re.IGNORECASE),
    "sum of money": re.compile(
        r"[$€£¥₩₽]|\b(?:dollars?|euros?|pounds|yen|yuan|rmb|usd|eur|gbp|francs?|marks?|"
        r"rubles?|roubles?|pesos?|reais|lire|crowns?|won|kr|kronor|sek|nok|dkk|pln|"
        r"zł|złotych|czk|kč)(?!\w)|元|円|원|рубл|евро|доллар",
        re.IGNORECASE,
    ),
    "angle": _DEGREES,
    "temperature": _DEGREES,
    "area": _AREA_UNITS,
    # "How long": a length or a span of time ("1,595 feet", "14 years", "from 1869 to 1883").
    "length or duration": re.compile(f"{_LENGTH_UNITS}|{_TIME_STATED.pattern}", re.IGNORECASE),
}


def asked_measure(question: str) -> str | None:
    """The kind of measure a question asks for ("length" for "how tall", "sum of money" for
    "how much did it cost"), or None; never for Chinese questions."""
    if has_han(question) and not has_kana(question):
        return None
    for name, rx in _MEASURE_Q:
        if rx.search(question):
            return name
    return None


def states_measure(measure: str, evidence: str) -> bool:
    """Whether the evidence (any case) gives a measure of that kind: a length not as part
    of an area or a volume ("kilómetros cuadrados" is no length)."""
    if measure in ("length", "length or duration"):
        evidence = _AREA_OR_VOLUME.sub(" ", evidence)
    return _MEASURE_UNITS[measure].search(evidence) is not None


def asks_when(question: str) -> bool:
    return _WHEN_Q.search(question) is not None


def asks_quantity(question: str, intent: str = "general") -> bool:
    return quantity_asked(question, QUANTITY_QUESTION, intent)


def _scope(cand: Candidate) -> str:
    """What a quoted candidate's passage declares about its scope: title, headings (and
    the sub-heading it stands under inside the chunk), the table caption and header."""
    chunk = cand.chunk
    parts = [
        chunk.title,
        *chunk.section_path,
        cand.heading,
        cand.context,
        " ".join(chunk.table_header),
    ]
    # The chunk's first line is its breadcrumb (or a caption): scope, not content.
    parts.append(chunk.text.split("\n", 1)[0])
    return " ".join(p for p in parts if p)


Stated = Callable[[str, Callable[[str], bool]], bool]


def _documents(cited: Sequence[Chunk], retrieved: Sequence[Chunk]) -> tuple[str, str]:
    """What the cited passages' documents say, normalised: their text (the passages cited
    and those retrieved from the same documents) with their titles and file names, and
    the titles and file names alone. Names and identifiers of a question are often the
    document's own ("per the Wikipedia Duck article", "OpenAPI 3.1.0")."""
    docs = {c.doc_id for c in cited}
    seen: dict[str, str] = {}
    names_of_docs: dict[str, str] = {}
    for ch in [*cited, *(ch for ch in retrieved if ch.doc_id in docs)]:
        seen.setdefault(ch.content_id, ch.text)
        names_of_docs.setdefault(ch.doc_id, f"{ch.title} {_file_name(ch.source)}")
    same_doc = normalise(" ".join([*seen.values(), *names_of_docs.values()]))
    return same_doc, normalise(" ".join(names_of_docs.values()))


def _asked_names(question: str) -> tuple[list[str], list[str], list[str]]:
    """The question's identifiers, its written names, and (in a Chinese question) its
    Latin words. Short all-capital acronyms name agencies, publishers, leagues and kinds
    of document ("the FBI", "HR", "the AD", "WTA") more often than the thing asked about,
    and are often spelled out in the text instead: they are no written names. In a Chinese
    question a Latin acronym is a technical term ("HDD", "SSD"), not a publisher: it is
    one of its Latin words."""
    ids = identifiers(question)
    written = [n for n in names(question) if n not in ids and not _ACRONYM.fullmatch(n)]
    return ids, written, [n for n in tagged_names(question) if n not in written]


@lru_cache(maxsize=1024)
def numbered_names(question: str) -> tuple[str, ...]:
    """The question's names that end in a number ("Grade 7", "Tier 3"): each picks out one
    of its siblings (Grade 5, Tier 2), and the answer's check refuses a quote that does not
    state it. (Memoised: the scoring and the grouping of rows both read them.)"""
    ids, written, _ = _asked_names(question)
    codes = [c for c in _GRADE_CODE.findall(question) if not any(c in n for n in written)]
    return (*(n for n in (*ids, *written) if _NUMBERED_NAME.search(n)), *codes)


# A grade or tier written as a code ("G6", "P1", "L3"): a sibling of G5, P2, L4.
_GRADE_CODE = re.compile(r"\b[A-Z]{1,2}\d{1,2}\b(?![.\-/]\w)")


def names_stated(names: Sequence[str], text: str) -> bool:
    """Whether `text` (as written: normalised here) states every one of `names`."""
    plain = normalise(text)
    return all(_name_found(n, plain) for n in names)


def _other_language_unmet(
    question: str, asked: Sequence[str], same_doc: str, stated: Stated
) -> list[str]:
    """Names of a question in Russian, French, Spanish ... (not among `asked`) that the
    document mentions in none of their forms (a near miss names another city, not another
    case), and place names of a Japanese question it does not mention."""
    missing = [
        name
        for name, stems in inflected_names(question)
        if name not in asked
        and not all(starts_latin_word(same_doc, stem) for stem in stems)
        and not stated(name, lambda x: _name_found(x, same_doc))
    ]
    return missing + [p for p in japanese_places(question) if p not in same_doc]


_WHICH_HAN = re.compile(r"(?:哪[一个些所家座位种]?|(?<!为)什么|何)\s*$")  # (为什么: why)


def _kind_asked(word: str, question: str) -> bool:
    """Whether the question writes `word` right after a which-word (哪个城市, 什么机构)."""
    at = question.find(word)
    return at > 0 and _WHICH_HAN.search(question[:at]) is not None


def _han_unmet(
    question: str, titles: Sequence[str], anchored: bool, same_doc: str, stated: Stated
) -> list[str]:
    """What a Chinese question is about that the document (`same_doc`, normalised) does
    not mention: its names, else the term it asks to define, else its subject. The subject
    is left out where a name outside it, or what an earlier clause names, is in the
    document: then the document is the one asked about, and the subject a part of it that
    it may call otherwise. None of it where the question is `anchored` (a Latin name,
    identifier or title of it is in the document). `titles`: the question's quoted
    titles, checked as such."""
    if anchored:
        return []
    # The kind a which-question asks for ("在哪个城市", 城市 tagged a place) names nothing.
    named = [n for n in han_names(question, titles) if not _kind_asked(n, question)]
    missing = [n for n in named if not stated(n, lambda x: han_name_found(x, same_doc))]
    if missing:
        return missing
    defined = han_defined(question)
    if defined:
        return [] if stated(defined, lambda x: _name_found(x, same_doc)) else [defined]
    subject = han_subject(question)
    if not subject or any(name not in subject for name in named):
        return []
    if any(han_subject_found(scope, same_doc) for scope in han_scope(question)):
        return []
    return [] if stated(subject, lambda x: han_subject_found(x, same_doc)) else [subject]


def unmet_in_documents(
    question: str,
    cited: Sequence[Chunk],
    retrieved: Sequence[Chunk] = (),
    synonyms: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """What the question names that none of the cited documents mentions (in the passages
    cited or retrieved from them, their titles or file names): identifiers, names, titles,
    names in other languages, a Chinese question's names and subject. For an answer
    written from cited passages (an LLM's): a thing asked about that no cited document
    names is answered about something else."""
    same_doc, _ = _documents(cited, retrieved)
    ids, wanted, soft = _asked_names(question)
    expanded = {k.lower(): v for k, v in (synonyms or {}).items()}

    def stated(term: str, found: Callable[[str], bool]) -> bool:
        alternatives = expanded.get(term.lower(), ())
        return found(term) or any(_name_found(alt, same_doc) for alt in alternatives)

    def in_doc(term: str) -> bool:
        return _name_found(term, same_doc)

    named = [*ids, *wanted, *soft]
    missing = [t for t in named if not stated(t, in_doc)]
    anchored = any(in_doc(t) for t in named)
    missing += _other_language_unmet(question, [*wanted, *ids], same_doc, stated)
    missing += _han_unmet(question, wanted, anchored, same_doc, stated)
    return list(dict.fromkeys(missing))


def _facet_miss(
    question: str,
    quoted: Sequence[str],
    scope: Sequence[str],
    written: Sequence[str],
    retrieved: Sequence[Chunk],
    doc_names: str,
    similarity: Similarity | None,
    cells: Sequence[tuple[str, str]] = (),
    synonyms: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Why the quote does not say what is asked of its topic (`facet_unmet`,
    `opposite_stated`), or "" when it does. The topic: of the names the question gives
    (`written` and those of other languages), the one(s) the most retrieved passages
    mention. The others (a landmark, a district, a title) say what is asked of it. `cells`:
    the quoted table row's (column, value) pairs, if it is one."""
    if not checks_facet(question):
        return ""
    asked = [*written, *(n for n, _ in inflected_names(question))]
    topic = asked
    if len(asked) > 1:
        texts = [normalise(c.text) for c in retrieved]
        counts = {n: sum(_name_found(n, t) for t in texts) for n in asked}
        top = max(counts.values())
        topic = [n for n, c in counts.items() if c == top]
    facet = facet_unmet(question, quoted, scope, topic, doc_names, similarity, cells, synonyms)
    if facet:
        return "the quoted evidence says nothing of " + ", ".join(repr(t) for t in facet)
    opposite = opposite_stated(question, quoted, scope, topic, doc_names)
    if opposite:
        return f"the quoted evidence says {opposite[1]!r}, the opposite of {opposite[0]!r}"
    period = other_rate_period(question, " ".join([*quoted, *scope]))
    if period:
        return f"the question asks a figure per {period[0]}; the quoted evidence is per {period[1]}"
    return ""


def _period_met(
    period: str,
    quoted: Sequence[str],
    chosen: Sequence[Candidate],
    evidence: str,
    doc_names: str,
    same_doc: str,
) -> bool:
    """A period is met by the quote or its declared scope, or the document's name
    ("FY2011"). Failing those, a quote stating no year of its own is set in the time its
    passage states before it ("In 1985 the FAA ran a study. In this study, 17 men ..."),
    and with none stated there, the document's retrieved text may give it (a report's
    period is often stated once, in a title block that is a passage of its own). A quote
    with a year of its own is about that year: "revenue for 2011" does not give 2013's,
    nor does the sentence after it because the next paragraph is about 2013."""
    if _period_found(period, evidence):
        return True
    if _period_found(period, _LETTERS_THEN_DIGITS.sub(" ", doc_names)):
        return True
    if _YEAR.search(" ".join(quoted)):
        return False
    years = [m.group(1) for m in _YEAR.finditer(period)]
    set_in = _year_before(chosen[0]) if chosen and years else None
    if set_in is not None and set_in not in years:
        return False
    return _period_found(period, same_doc)


def _year_before(cand: Candidate) -> str | None:
    """The last year a sentence's passage states before it, if any."""
    if cand.is_table_row:
        return None
    lines = cand.chunk.text.split("\n")
    line = lines[cand.first_line] if cand.first_line < len(lines) else ""
    at = max(line.find(cand.text[:20]), 0)
    years = _YEAR.findall("\n".join([*lines[: cand.first_line], line[:at]]))
    return str(years[-1]) if years else None


def _measures(amount: Amount, term: str) -> bool:
    """Whether `term` ("11.2", "800") is the number of an amount with its unit ("11.2 m",
    "800 €", "70 persone", "11,000 business miles")."""
    return amount.text != term and amount.text.startswith(term) and number_value(term) is not None


def judge(
    question: str,
    intent: str,
    quoted: Sequence[str],
    chosen: Sequence[Candidate],
    retrieved: Sequence[Chunk] = (),
    synonyms: Mapping[str, Sequence[str]] | None = None,
    similarity: Similarity | None = None,
) -> Verdict:
    """Whether the quoted sentences (with their passages' declared scope) answer the
    question. `quoted` is the answer's sentences as shown, best first; `retrieved` the
    passages retrieved for it (an acronym may be spelled out only elsewhere in the same
    document); `similarity` (the embedder's, when there is one) tells a quote that says
    what was asked in other words from one about something else."""
    if not quoted or not chosen:
        return Verdict(False, "no retrieved text to quote")
    evidence = normalise(" ".join([*quoted, *(_scope(c) for c in chosen)]))
    same_doc, doc_names = _documents([c.chunk for c in chosen], retrieved)
    wanted_periods = periods(question)
    # An amount the question gives (12年, "$300,000", 300 seats, "an 11.2 m boat") is met
    # by a band of the quote that holds it ("满10年不满20年", "above $50,000 and up to
    # $500,000", "10.01 – 12.0 m"), and is no identifier the quote must write: the asker's
    # own measure ("my 9.5 m cruiser") names nothing the rules list.
    amounts = question_amounts(question)
    wanted_ids, wanted_names, soft_names = _asked_names(question)
    wanted_ids = [t for t in wanted_ids if not any(_measures(a, t) for a in amounts)]
    # So is a plain number with its unit ("800 €", "70 persone", "20 minutes"), unless the
    # quoted document's bands of that unit all leave it out (250 users, the discount table
    # stopping at 100): then the quote must state it.
    given = [g for g in given_numbers(question) if g.text not in wanted_ids]
    measured = [g for g in given if any(_measures(a, g.text) for a in amounts)]
    if measured and fits(amounts, same_doc) is not False:
        given = [g for g in given if g not in measured]
    total = len(wanted_periods) + len(wanted_ids) + len(wanted_names) + len(soft_names)
    total += len(given)
    banded = fits(amounts, evidence)
    in_band = {a.band.lo for a in amounts if a.band.lo == a.band.hi} if banded else set()
    total += int(banded is not None)
    quantity = asks_quantity(question, intent)
    measure = asked_measure(question)  # "how tall", "to what angle": also a quantity asked
    asked_amount = int(quantity or measure is not None)
    total += asked_amount

    def written(term: str) -> bool:
        # In what is quoted (or its declared scope), or the name of the quoted document
        # itself ("the Wikipedia Duck article", "OpenAPI 3.1.0"); an acronym may be
        # spelled out elsewhere in the document. An identifier with a digit ("SEV2", "Q4")
        # picks out one of its siblings (SEV1, SEV3): the quote must say it.
        return (
            _name_found(term, evidence)
            or _name_found(term, doc_names)
            or (term.isupper() and not any(map(str.isdigit, term)) and _name_found(term, same_doc))
        )

    # A word the route expanded is met by one of its synonyms in the quote itself ("RAM" by
    # the 内存 cell of the quoted row): retrieval found the passage by them. Only there: a
    # synonym elsewhere in the document, or in a column the quote leaves out, is not what
    # the quote is about.
    expanded = {k.lower(): v for k, v in (synonyms or {}).items()}
    shown = normalise(" ".join(quoted))

    def stated(term: str, found: Callable[[str], bool]) -> bool:
        alternatives = expanded.get(term.lower(), ())
        return found(term) or any(_name_found(alt, shown) for alt in alternatives)

    # (A number the question gives as an amount, 98.5%, is met by the band that holds it.)
    missing_ids = [
        t for t in wanted_ids if not stated(t, written) and number_value(t) not in in_band
    ]
    # A number the question gives ("SP 800-53", "第八十条", "十六周岁"): in the quote or its
    # scope, or the quoted document (its name; a clause or grade only in the quote); a
    # sibling's number does not meet it.
    missing_ids += [
        g.text
        for g in given
        if not g.found(evidence)
        and not g.found(doc_names)
        and (g.picks_out or not g.found(same_doc))
        and g.value not in in_band
    ]
    missing_names = [t for t in wanted_names if not stated(t, written)]
    missing_names += [t for t in soft_names if not stated(t, lambda x: _name_found(x, same_doc))]
    # Names of a question in another language: checked in the document, not the quote,
    # they pin nothing down (not counted as constraints, so the confidence floor still
    # weighs the quote).
    missing_inflected = _other_language_unmet(
        question, [*wanted_names, *wanted_ids], same_doc, stated
    )
    # Chinese names (a person, a place, an organisation): somewhere in the quoted document.
    # A question about 张天霖 is not answered from a passage about another actor. Like
    # the names above they pin nothing down and are not counted as constraints. jieba
    # tags ordinary words as names too ("LaTeX 入门手册", "公式单元格"): where a Latin name,
    # an identifier or a title of the question is in the quoted document, that document is
    # the one asked about, and such a word describes it.
    anchored = any(_name_found(t, same_doc) for t in [*wanted_ids, *wanted_names, *soft_names])
    missing_han = _han_unmet(question, wanted_names, anchored, same_doc, stated)
    missing_periods = [
        t
        for t in wanted_periods
        if not _period_met(t, quoted, chosen, evidence, doc_names, same_doc)
    ]
    met = total - len(missing_ids) - len(missing_names) - len(missing_periods)
    day = asks_day(question)
    day_quoted = day and any(has_day(q, question) for q in quoted)
    # "When …?" is answered by a time, digits or not ("in May", "im 12. Jahrhundert").
    when = asks_when(question)
    time_quoted = when and any(
        _TIME_STATED.search(q)
        or has_answer_type(q, "time", question)
        or (_TIME_CLAUSE.search(q) and not re.search(r"\d", q) and not _SPELLED.search(q))
        for q in quoted
    )
    # A day named without digits ("放榜次日", "on Monday") answers "哪一天" as a number would.
    if (
        quantity
        and not day_quoted
        and not time_quoted
        and not any(has_quantity(q, question) for q in quoted)
    ):
        return Verdict(
            False,
            "the question asks for a quantity and the quoted evidence states none",
            constraints=total,
            met=met - 1,
            failed="quantity",
        )
    # "How much is the microscope?" of a row whose price cell is empty: the row's digits
    # ("Room 204") are no quantity of it.
    empty = _numbers_left_empty(chosen[0]) if quantity and not when else ""
    if empty and not any(has_quantity(q, question) for q in quoted[1:]):
        return Verdict(
            False,
            f"the table gives no {empty!r} for the row quoted",
            constraints=total,
            met=met - 1,
            failed="quantity",
        )
    # "When …?" asks for a time: a number that is not one (a length, a count of visitors)
    # does not answer it. (Chinese 何时/什么时候 are not quantity cues: an event answers them.)
    if quantity and not day_quoted and when and not time_quoted:
        return Verdict(
            False,
            "the question asks when and the quoted evidence gives no time",
            constraints=total,
            met=met - 1,
            failed="time",
        )
    # A question asking for a date or year by name ("哪一天", "what year") needs one in the
    # quoted sentences that the question does not already give.
    if asks_date(question) and not any(has_answer_type(q, "time", question) for q in quoted):
        return Verdict(
            False,
            "the question asks for a date and the quoted evidence states none",
            constraints=total + 1,
            met=met,
            failed="time",
        )
    # "哪一天", "on what date": a year or a month alone does not say which day.
    if day and not day_quoted:
        return Verdict(
            False,
            "the question asks for a day and the quoted evidence names none",
            constraints=total + 1,
            met=met,
            failed="time",
        )
    unit = asked_unit(question) if quantity else ""
    # A Han unit is counted in the quoted sentences themselves: "多少年" needs a number of
    # years there. (A table states its unit once, in the header or caption, and may name
    # it otherwise: "employees" counted in a Staff column.)
    if unit and (
        not (
            _unit_found(unit, evidence)
            or _counted_in_column(unit, chosen[0], similarity, synonyms_of(unit, expanded))
        )
        or (
            has_han(unit)
            and not chosen[0].is_table_row
            and not any(_counted(unit, q, bool(_ORDINAL_Q.search(question))) for q in quoted)
        )
    ):
        return Verdict(
            False,
            f"the question asks how many {unit} and the quoted evidence gives none",
            constraints=total,
            met=met - 1,
            failed="unit",
        )
    # "¿Cuántos astrónomos …?", "Сколько туристов …?": a count, not a year or a measure
    # of another kind ("2.340 metros", "en 2008", "18 km²"); the counted noun itself may
    # be worded otherwise ("60 Arbeitsplätze" for Sitzplätze), so it is not required.
    noun = counted_noun(question) if quantity and not unit and measure is None else ""
    if noun and not any(_states_count(q, question, noun) for q in quoted):
        return Verdict(
            False,
            "the question asks how many and the quoted evidence gives only years or "
            "measures of another kind",
            constraints=total,
            met=met - 1,
            failed="quantity",
        )
    # "How tall", "how much money", "to what angle": a measure of that kind, with its unit.
    if measure is not None and not states_measure(measure, evidence):
        return Verdict(
            False,
            f"the question asks for a {measure} and the quoted evidence gives none",
            constraints=total,
            met=met - 1,
            failed="unit",
        )
    # "哪所学校", "which agency": the quote must name one, not only repeat the question.
    kind = asked_kind(question)
    if kind and not any(names_kind(kind, q) for q in quoted):
        return Verdict(
            False,
            f"the question asks which {kind} and the quoted evidence names none",
            constraints=total + 1,
            met=met,
            failed="kind",
        )
    sizes = other_sizes(amounts, evidence) if banded is not True else []
    if sizes:  # the row of another size: "20呎貨櫃", asked about a 40呎 one
        asked = ", ".join(repr(a.text) for a in amounts)
        return Verdict(
            False,
            f"the quoted rule is for {', '.join(map(repr, sizes))}, not {asked}",
            constraints=total,
            met=met - 1,
            failed="band",
        )
    if banded is False:  # the rule of another band: 满1年不满10年, asked about 12 years
        asked = ", ".join(repr(a.text) for a in amounts)
        quoted_bands = ", ".join(repr(b) for b in bands_written(amounts, evidence))
        return Verdict(
            False,
            f"the quoted rule is for {quoted_bands}, not {asked}",
            constraints=total,
            met=met - 1,
            failed="band",
        )
    if missing_ids or missing_names or missing_inflected:
        what = ", ".join(repr(t) for t in [*missing_ids, *missing_names, *missing_inflected])
        return Verdict(
            False, f"no quoted passage mentions {what}", constraints=total, met=met, failed="name"
        )
    # A quoted sentence about a sibling of the thing asked (国际空间站 for 天宫空间站). Table
    # rows are left to the row check: their cells are not sentences.
    if not chosen[0].is_table_row:
        sub = substitution(
            question,
            " ".join(quoted),
            " ".join([*(_scope(c) for c in chosen), doc_names]),
            same_doc,
            synonyms,
            doc_names,
            " ".join(c.chunk.text for c in chosen),
            similarity,
        )
        if sub is not None:
            return Verdict(
                False,
                sub.describe(),
                constraints=total,
                met=met,
                failed="subject",
                asked=sub.asked,
            )
        if has_han(question) and (negated := _han_negated(question, " ".join(quoted))):
            why = f"the quoted text says {negated!r}, the opposite of what is asked"
            return Verdict(False, why, constraints=total, met=met, failed="facet")
    # Another kind than the one asked (in prose or a row's key: "Worker type: Full-time
    # employee"): one a table's rows name, or a hyphenated sibling.
    kind_miss = _kind_unquoted(question, evidence, retrieved) if not chosen[0].is_table_row else ""
    kind_asked = ""  # (another document that answers must name it)
    if not kind_miss and not has_han(question):
        kind_miss, kind_asked = _hyphen_sibling(question, evidence, same_doc)
    elif not kind_miss and not chosen[0].is_table_row:  # (rows: the row checks below)
        kind_miss, kind_asked = _han_modifier_sibling(question, evidence, same_doc)
    if kind_miss:
        return Verdict(
            False, kind_miss, constraints=total, met=met, failed="subject", asked=kind_asked
        )
    # (A row whose band holds the amount asked is picked out by it: "250-999" seats.)
    row_miss = "" if banded else _row_not_asked(question, chosen[0], same_doc)
    if not row_miss and chosen[0].is_table_row:
        best = chosen[0]
        other = row_substitution(
            question, best.cells, f"{best.chunk.text} {best.context}", same_doc
        )
        if other is not None:
            row_miss = (
                f"the table has no row with {other.anchor} {other.asked!r} "
                f"(the row quoted has {other.instead!r})"
            )
        elif (cell := cell_substitution(question, best.cells)) is not None:
            row_miss = (
                f"the row quoted is {cell.anchor!r}, with {cell.instead!r} where the "
                f"question has {cell.asked!r}"
            )
    row_asked = ""  # the row key asked, where another row is keyed by it
    if not row_miss and chosen[0].is_table_row:
        row_miss, row_asked = _row_of_another(question, chosen[0], retrieved)
        if banded and row_asked.replace(",", "").replace(".", "").isdigit():
            row_miss = row_asked = ""  # the amount asked, which the row's band holds
        if not row_miss and has_han(question):
            row_miss, row_asked = _han_row_of_another(question, chosen[0])
    first_row = next((c for c in chosen if c.is_table_row), None)  # (under its caption)
    if not row_miss and first_row is not None and has_han(question):
        row_miss = _han_sibling_row(question, first_row, same_doc)
        if not row_miss:
            row_miss, row_asked = _han_keyed_elsewhere(question, first_row, retrieved)
        unmet = [] if row_miss else _han_column_unmet(question, first_row, same_doc, similarity)
        if unmet:
            what = ", ".join(repr(w) for w in unmet)
            return Verdict(
                False, f"the table gives no {what}", constraints=total, met=met, failed="facet"
            )
    if not row_miss and chosen[0].is_table_row:
        row_miss = _value_of_another_row(question, chosen[0], retrieved)
    if not row_miss and chosen[0].is_table_row:
        row_miss = _empty_column_asked(question, chosen[0])
    if not row_miss:
        row_miss = _named_row_blank(question, chosen)
    if row_miss:
        return Verdict(False, row_miss, constraints=total, met=met, failed="row", asked=row_asked)
    if missing_han:  # after the sibling and row checks, which say more
        what = ", ".join(repr(t) for t in missing_han)
        return Verdict(
            False, f"no quoted passage mentions {what}", constraints=total, met=met, failed="name"
        )
    # A quote about the thing asked but not about what is asked of it (another paragraph
    # on the same bridge): the question's other words, none of them quoted.
    facet = _facet_miss(
        question,
        quoted,
        [_scope(c) for c in chosen],
        [*wanted_ids, *wanted_names, *soft_names],
        retrieved,
        doc_names,
        similarity,
        chosen[0].cells,
        expanded,
    )
    if facet:
        return Verdict(False, facet, constraints=total, met=met, failed="facet")
    deferred = (
        left_to_another_rule(question, chosen, retrieved)
        or band_left_open(amounts, quoted)
        or row_left_open(question, chosen)
    )
    if deferred:
        why = f"the document leaves what is asked to another rule: {deferred!r}"
        return Verdict(False, why, constraints=total, met=met, failed="facet")
    item = excluded_item(question, chosen[0])
    if item:
        why = f"the document puts what is asked outside its rules: {item!r}"
        return Verdict(False, why, constraints=total, met=met, failed="subject", final=True)
    excluded, left_out = only_excluded(question, evidence, same_doc, [normalise(q) for q in quoted])
    if left_out:
        # (Another document may answer for it, if it names it: `asked`.)
        why = f"the document puts what is asked outside its rules: {left_out!r}"
        return Verdict(False, why, constraints=total, met=met, failed="subject", asked=excluded)
    versions = asked_versions(question)
    gone, said = only_replaced(
        [(v, version_found) for v in versions]
        + [(t, _period_found) for t in wanted_periods]
        + [(t, _name_found) for t in [*wanted_ids, *wanted_names, *soft_names]],
        evidence,
        same_doc,
    )
    if gone:
        why = f"the document names {gone!r} only as replaced: {said!r}"
        return Verdict(False, why, constraints=total, met=met - 1, failed="period")
    # (Only a question asking one version: the texts are not joined for every answer.)
    asked_version, own = (
        other_version(versions, f"{evidence} {same_doc}") if len(versions) == 1 else ("", "")
    )
    if asked_version:
        why = f"the document is another version ({own!r}) and does not name {asked_version!r}"
        return Verdict(False, why, constraints=total, met=met - 1, failed="period")
    if missing_periods:
        met_periods = [t for t in wanted_periods if t not in missing_periods]
        if met_periods and _coordinated(question, wanted_periods):
            return Verdict(
                True,
                f"partial: the documents give this for {', '.join(met_periods)} "
                f"but not for {', '.join(missing_periods)}",
                partial=True,
                constraints=total,
                met=met,
                pins=total - asked_amount,
            )
        return Verdict(
            False,
            f"the quoted evidence is not about {', '.join(missing_periods)}",
            constraints=total,
            met=met,
            failed="period",
        )
    return Verdict(True, constraints=total, met=met, pins=total - asked_amount)


def unanswered_reason(question: str, intent: str, evidence: str, cited_texts: Sequence[str]) -> str:
    """Why the evidence (the best sentence) does not answer the question, or "" when it
    may. The simple form of `judge` for callers that hold only text."""
    if intent == "numeric" and asks_quantity(question, intent) and not has_quantity(evidence):
        return "the question asks for a quantity and the best evidence states none"
    cited = " ".join(cited_texts).lower()
    missing = [t for t in key_terms(question) if t.lower() not in cited]
    if missing:
        return f"no cited passage mentions {', '.join(repr(t) for t in missing)}"
    return ""
