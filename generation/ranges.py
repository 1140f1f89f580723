"""Bands a rule states, and whether an amount a question gives falls in one.

Policies give their rules by band: "已满 10 年不满 20 年的，年休假 10 天", "单笔5000元（含）
至2万元的，由部门负责人和财务经理审批", "Contracts above $50,000 and up to $500,000 are
approved by the Director of Procurement", a price list's "250-999" seats. Asked "我累计工作
了12年，年休假有几天？", "Who approves a $300,000 contract?", "What discount applies to 300
seats?", the sentence that answers states no 12, no 300,000, no 300: it states the band
that holds it. And the sentence of another band (满 1 年不满 10 年) is the wrong rule, not
a near answer.

An amount is a number with its unit as the question writes it (12年, 15万元, 2万5千元,
$300,000, 300 seats, five years); years (2024年) and clause numbers are not amounts. A
band is read around numbers of the same unit: a bound before or after one (满, 不满, 以上,
以下, （含）, 超过, 不超过, at least, over, under, up to, or more ...), or two numbers
joined (A至B, A-B, A to B, between A and B). A band with no unit of its own ("1-49" in a
column "Number of seats") counts where the text names the question's unit. `fits` says
whether a text's bands of the amount's unit hold it: True, False (they all leave it out),
or None (the text states no such band).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.lang import function_word, stemmed_language
from core.text import han_number, has_han

_HAN_DIGITS = "零〇一二两三四五六七八九十百"
# Thousands grouped by dots, as German, Italian, Spanish and Portuguese write them ("1.200
# sacchi", "3.201 a 10.000"): groups of three digits, no decimals after them. (An English
# text writes 1.5, not 1.500, for one and a half.)
_DOT_GROUPED = r"[1-9]\d{0,2}(?:\.\d{3})+(?![\d.]|,\d)"
_DOT_GROUPED_WHOLE = re.compile(_DOT_GROUPED)
# A decimal comma ("99,9 %", "3,5 t"): one or two digits after it (three are a thousands
# group: "1,000").
_COMMA_DECIMAL = r"\d+,\d{1,2}(?![\d,]|\.\d)"
_COMMA_DECIMAL_WHOLE = re.compile(_COMMA_DECIMAL)
# Thousands grouped by spaces, as French, Polish, Swedish and Russian write them ("3 200
# zł", "2 500,01", "5 000 kr"; a no-break or thin space too), with a decimal comma.
_SPACE_GROUPED = r"[1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3})+(?:,\d{1,2})?(?![\d.,]\d)"
_SPACE_GROUPED_WHOLE = re.compile(_SPACE_GROUPED)
# A number: digits (1,000 / 2.5), or a Chinese count before its unit, with 万/千/亿 parts
# ("2万5千", "15万", "1.5万").
_NUMBER = (
    rf"(?:{_SPACE_GROUPED}|{_DOT_GROUPED}|{_COMMA_DECIMAL}|\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?"
    rf"(?:\s?[万千亿](?![米克瓦])(?:\d+|[{_HAN_DIGITS}]+)?(?:千)?)?"
    rf"|[{_HAN_DIGITS}]+(?:[万千](?![米克瓦]))?"
)
# Chinese units an amount is counted in (longest first).
# (Not 月 or 日 alone: "4月", "15日" are dates. 千米 is a kilometre, not a thousand metres.)
_HAN_UNITS = (
    "个工作日|工作日|个自然日|自然日|个月|周岁|小时|千米|公里|公斤|平方米|万元|千元|亿元|"
    "年|周|天|元|个人|人|名|台|家|次|岁|歳|米|吨|件|辆|间|张|户|个|座|套|份|块|"
    "英尺|英寸|呎|吋|公分|厘米|毫米"
)
_WORD_NUMBERS_TEXT = """zero one two three four five six seven eight nine ten eleven twelve
    thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"""
_WORD_NUMBERS = {w: i for i, w in enumerate(_WORD_NUMBERS_TEXT.split())}
_CURRENCY_CODES = (
    r"usd|eur|gbp|cny|rmb|aud|cad|chf|jpy|sek|nok|dkk|nzd|hkd|sgd|inr|brl|mxn|zar|krw|twd|ntd|"
    r"pln|czk|huf|rub|zł|kr"
)
# Letters of an alphabet (not kana, Han or Hangul: "15kgの柴犬" is 15 kg, followed by words
# of another script).
_LETTERS = r"[^\W\d_\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]"
_UNIT_AFTER = (
    rf"\s?(?:(?P<han>{_HAN_UNITS})|(?P<pct>%)|(?P<cur>[$€£¥₩₽₹円원]|(?:{_CURRENCY_CODES})\b)|"
    rf"(?P<word>{_LETTERS}{{2,}}(?:-{_LETTERS}+)*|[\u3040-\u30ff]{{2,}}|[\uac00-\ud7af]{{2,}})|"
    rf"(?P<metre>m[²³23]?)(?![^\W\d_]|\d))?"
)
# In lower-cased text. (Not a clock time's or a version's parts: "22:30", "3.1.2"; a
# label's colon after a number is no clock: "gbp 2,000: team leader".)
_MENTION = re.compile(rf"(?<![\d:.a-z])(?P<num>{_NUMBER})(?!:\d|\d|\.\d){_UNIT_AFTER}")
# Numbers in words, read in questions only ("for five years"): rules write digits.
_WORD_MENTION = re.compile(rf"\b(?P<num>{'|'.join(_WORD_NUMBERS)})\b{_UNIT_AFTER}")
_CURRENCY_BEFORE = re.compile(rf"(?:nt\$|r\$|[$€£¥₩₽₹]|\b(?:{_CURRENCY_CODES}))\s?$")
# The same money however written: a sign, its code, its name.
_CURRENCY_OF = {
    "€": "eur",
    "euro": "eur",
    "euros": "eur",
    "£": "gbp",
    "pound": "gbp",
    "pounds": "gbp",
    "dollar": "$",
    "dollars": "$",
    "rmb": "cny",
    "₩": "krw",
    "₽": "rub",
    "₹": "inr",
    "nt$": "twd",
    "ntd": "twd",
    "r$": "brl",
    "zł": "pln",
    "円": "jpy",
    "원": "krw",
}
# A year by itself ("2024年", "in 2025"), not an amount of years.
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
# English words after a number that are no unit of it.
_NOT_UNITS_TEXT = """and or to of the a an per in on at by for from with is are was were be
    than more less fewer"""
# Units of time in German, Spanish, French, Italian, Portuguese, Dutch, Polish and
# Russian, as the English unit they count in.
_UNIT_WORDS_TEXT = """jahr=year jahre=year jahren=year monat=month monate=month monaten=month
    woche=week wochen=week tag=day tage=day tagen=day arbeitstag=day arbeitstage=day
    arbeitstagen=day stunde=hour stunden=hour minute=minute minuten=minute
    año=year años=year mes=month meses=month semana=week semanas=week día=day días=day
    hora=hour horas=hour minuto=minute minutos=minute
    an=year ans=year année=year années=year mois=month semaine=week semaines=week
    jour=day jours=day heure=hour heures=hour
    anno=year anni=year mese=month mesi=month settimana=week settimane=week giorno=day
    giorni=day ora=hour ore=hour minuti=minute
    ano=year anos=year mês=month dia=day dias=day
    jaar=year jaren=year maand=month maanden=month weken=week dag=day dagen=day uur=hour
    minuut=minute
    rok=year lata=year lat=year miesiąc=month miesiące=month miesięcy=month tydzień=week
    tygodnie=week tygodni=week dzień=day dni=day godzina=hour godziny=hour godzin=hour
    год=year года=year лет=year месяц=month месяца=month месяцев=month неделя=week
    недели=week недель=week день=day дня=day дней=day час=hour часа=hour часов=hour"""
_UNIT_WORDS = dict(pair.split("=") for pair in _UNIT_WORDS_TEXT.split())
_NOT_UNITS = frozenset(_NOT_UNITS_TEXT.split())
# "60 procent", "20 Prozent", "15 percent": a share, as "%" writes it.
_PERCENT_WORDS_TEXT = """percent procent prozent pourcent porcento percento procento процент
    процента процентов 퍼센트 パーセント"""
_PERCENT_WORDS = frozenset(_PERCENT_WORDS_TEXT.split())
# The noun after an English unit's modifier: "11,000 business miles", "10 working days".
_NOUN_AFTER = re.compile(r"\s([^\W\d_]{3,})")
_ABBREVIATIONS = frozenset(
    [
        *("kg", "km", "cm", "mm", "gb", "mb", "tb", "lb", "lbs", "ft", "mi", "hr", "hrs", "min"),
        *("sqm", "nm", "kw", "kwh", "bar", "psi", "ml", "mg", "kn", "ton", "tons", "m", "fte"),
    ]
)
_MULTIPLIER = {"万": 10_000, "千": 1_000, "亿": 100_000_000}
_AREA_VOLUME = {"m²": "m²", "m2": "m²", "m³": "m³", "m3": "m³"}
# Units of mass, as kilograms: a question in tonnes meets a rule's bands in kilograms.
_IN_KG = {"tonne": 1000.0, "ton": 1000.0, "吨": 1000.0, "公斤": 1.0}
_COUNTED_KEY = 4  # letters a counted noun of another language is known by

# Bounds written before a number: (pattern, side, inclusive).
_BEFORE = (
    (re.compile(r"(?:不满|未满|不足|少于|低于|小于|不到)\s*$"), "hi", False),
    (re.compile(r"(?:不超过|不高于|不多于|最多|至多)\s*$"), "hi", True),
    (re.compile(r"(?:超过|高于|大于|多于)\s*$"), "lo", False),
    (re.compile(r"(?:已满|年满|满)\s*$"), "lo", True),
    (
        re.compile(r"\b(?:under|less than|below|fewer than|lower than)\s*$", re.I),
        "hi",
        False,
    ),
    (
        re.compile(
            r"\b(?:up to|at most|no more than|not more than|not exceeding|maximum of|max\.?)"
            r"\s*$",
            re.I,
        ),
        "hi",
        True,
    ),
    (
        re.compile(r"\b(?:over|more than|above|greater than|exceeding|in excess of)\s*$", re.I),
        "lo",
        False,
    ),
    (re.compile(r"\b(?:at least|minimum of|min\.?|from)\s*$", re.I), "lo", True),
    # German, Spanish, French
    (
        re.compile(r"\b(?:unter|weniger als|menos de|inferior a|moins de|inf[ée]rieur [àa])\s*$"),
        "hi",
        False,
    ),
    (
        re.compile(
            r"\b(?:bis(?: zu)?|h[öo]chstens|maximal|hasta|como m[áa]ximo|jusqu.[àa]|au plus)\s*$"
        ),
        "hi",
        True,
    ),
    (
        re.compile(r"\b(?:[üu]ber|mehr als|m[áa]s de|superior a|plus de|sup[ée]rieur [àa])\s*$"),
        "lo",
        False,
    ),
    (
        re.compile(
            r"\b(?:ab|mindestens|desde|a partir de|al menos|[àa] partir de|au moins|d[èe]s)\s*$"
        ),
        "lo",
        True,
    ),
    # Italian, Portuguese, Dutch, Russian; signs ("≥ 120 %", "< 48 h")
    (
        re.compile(
            r"(?:\b(?:inferior(?:e)? al?|menor que|abaixo de|meno di|sotto|minder dan|onder)|"
            r"(?:менее|меньше|ниже)(?: чем)?(?: за)?|<)\s*$"
        ),
        "hi",
        False,
    ),
    (
        re.compile(
            r"(?:\b(?:até|no m[áa]ximo|fino al?|non oltre|al massimo|t/m|tot en met|maximaal|"
            r"hoogstens|niet meer dan)|(?:не более|не свыше|до)|≤|<=)\s*$"
        ),
        "hi",
        True,
    ),
    (
        re.compile(
            r"(?:\b(?:superior al?|mayor que|maior que|acima de|oltre|più di|superiore a|"
            r"meer dan|boven|hoger dan)|(?:более|больше|свыше|выше)(?: чем)?(?: за)?|>)\s*$"
        ),
        "lo",
        False,
    ),
    (
        re.compile(
            r"(?:\b(?:no m[íi]nimo|pelo menos|como m[íi]nimo|almeno|a partire da|vanaf|"
            r"minimaal|ten minste|minstens)|(?:не менее|от)|≥|>=)\s*$"
        ),
        "lo",
        True,
    ),
    # An age by the years completed: "nie ukończył 23 lat", "не достигшие 18 лет" (under);
    # "ukończone 21 lat", "достигшие 18 лет" (that age or over)
    (re.compile(r"(?:\bnie ukończy\w*|\bnieukończon\w*|\bне достиг\w*)\s*$"), "hi", False),
    (re.compile(r"(?:\bukończy\w*|\bukończon\w*|\bдостиг\w*)\s*$"), "lo", True),
    # Polish, Swedish
    (re.compile(r"\b(?:poni[żz]ej|mniej ni[żz]|mindre [äa]n)\s*$"), "hi", False),
    (
        re.compile(
            r"\b(?:do|nie wi[ęe]cej ni[żz]|najwy[żz]ej|maksymalnie|maks\.|upp till|h[öo]gst|"
            r"maximalt)\s*$"
        ),
        "hi",
        True,
    ),
    (re.compile(r"\b(?:powy[żz]ej|ponad|wi[ęe]cej ni[żz]|[öo]ver|mer [äa]n)\s*$"), "lo", False),
    (re.compile(r"\b(?:od|co najmniej|minimum|minst|fr[åa]n)\s*$"), "lo", True),
)
# Bounds written after a number (and its unit).
_AFTER = (
    (re.compile(r"^\s*[（(]含[)）]?\s*以上|^\s*[及或]?以上"), "lo", True),
    (re.compile(r"^\s*[（(]含[)）]?\s*以下|^\s*[及或]?以[下内]"), "hi", True),
    (re.compile(r"^\s*(?:or more|or above|and above|and over|\+)", re.I), "lo", True),
    (re.compile(r"^\s*(?:or less|or fewer|or below|and below|and under)", re.I), "hi", True),
    (re.compile(r"^\s*(?:und mehr|oder mehr|und länger|o más|ou plus|et plus)"), "lo", True),
    (re.compile(r"^\s*(?:oder weniger|o menos|ou moins)"), "hi", True),
    (re.compile(r"^\s*(?:ou mais|o più|of meer|и более|и выше|이상)"), "lo", True),
    (re.compile(r"^\s*(?:ou menos|o meno|of minder|и менее|и ниже|이하)"), "hi", True),
    (re.compile(r"^\s*(?:未満|미만)"), "hi", False),
    (re.compile(r"^\s*(?:超|초과)"), "lo", False),
    # ("3歳〜小学校就学前": from 3 up to a bound written in words)
    (re.compile(r"^\s*[〜～~](?!\s*\d)"), "lo", True),
)
# Two numbers joined into one band: "A（含）至B", "A-B", "A to B", "between A and B".
# ("bis unter 10", "to under 10": the upper bound is left out.)
_JOIN = re.compile(
    r"^\s*(?:[（(]含[)）])?\s*"
    r"(?:至|到|~|～|〜|-|–|—|to|up to|bis|a|à|al|até|ao|tot|t/m|до|do|till)\s*"
    r"(?P<under>unter|under|below)?\s*$",
    re.I,
)
_BETWEEN = re.compile(
    r"(?:\b(?:between|from|zwischen|entre|tra|fra|tussen|od|mi[ęe]dzy|fr[åa]n|mellan)|от)\s*$",
    re.I,
)
_AND = re.compile(r"^\s*(?:and|und|y|et|e|en|и|a|och)\s*$", re.I)
# A lower bound and an upper bound this close (characters between them) are one band:
# "满10年不满20年", "above $50,000 and up to $500,000".
_PAIR_GAP = 12


@dataclass(frozen=True, slots=True)
class Band:
    lo: float | None
    hi: float | None
    lo_in: bool
    hi_in: bool
    unit: str  # "年", "元", "$", "seat" ... ("" when its numbers have none)

    def within(self, other: Band) -> bool:
        """Whether every value of this band is in `other`."""
        if other.lo is not None and (
            self.lo is None
            or self.lo < other.lo
            or (self.lo == other.lo and self.lo_in and not other.lo_in)
        ):
            return False
        return other.hi is None or not (
            self.hi is None
            or self.hi > other.hi
            or (self.hi == other.hi and self.hi_in and not other.hi_in)
        )


@dataclass(frozen=True, slots=True)
class Amount:
    """What a question gives: one value (12年, "$300,000"), or a band of its own
    ("不满十四周岁"), which a rule's band must hold whole."""

    band: Band
    text: str

    @property
    def unit(self) -> str:
        return self.band.unit


@dataclass(frozen=True, slots=True)
class _Number:
    value: float
    unit: str
    start: int
    end: int


def _grouped(text: str) -> float | None:
    """The value of digits grouped by dots ("1.200") or with a decimal comma ("99,9"),
    else None."""
    if _DOT_GROUPED_WHOLE.fullmatch(text):
        return float(text.replace(".", ""))
    if _COMMA_DECIMAL_WHOLE.fullmatch(text):
        return float(text.replace(",", "."))
    if _SPACE_GROUPED_WHOLE.fullmatch(text):
        return float(re.sub(r"[ \u00a0\u202f]", "", text).replace(",", "."))
    return None


def _value(text: str) -> float | None:
    """ "2万5千" -> 25000, "15万" -> 150000, "1,000" -> 1000, "两" -> 2, "five" -> 5."""
    if (grouped := _grouped(text)) is not None:
        return grouped
    text = text.replace(",", "").replace(" ", "").lower()
    if text in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[text])
    total, last = 0.0, 0
    for mult in ("亿", "万", "千"):
        if mult in text:
            head, text = text.split(mult, 1)
            part = _plain(head)
            if part is None:
                return None
            last = _MULTIPLIER[mult]
            total += part * last
    if text:
        rest = _plain(text)
        if rest is None:
            return None
        # "2万5" is 25000: one digit after 万 counts thousands (after 千, hundreds).
        total += rest * (last // 10) if last and len(text) == 1 else rest
    return total


def number_value(text: str) -> float | None:
    """The value of digits as a rule or question writes them ("98.5", "1,000", "1.200"
    grouped by dots), else None."""
    if (grouped := _grouped(text)) is not None:
        return grouped
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _plain(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        value = han_number(text)
        return float(value) if value is not None else None


def _unit(
    han: str | None, word: str | None, currency: str | None, pct: str | None, counted: bool
) -> str:
    if currency:
        return _CURRENCY_OF.get(currency.lower(), currency.lower())
    if pct:
        return "%"
    if han:
        unit = han.lstrip("个")
        return {
            "万元": "元",
            "千元": "元",
            "亿元": "元",
            "周岁": "岁",
            "歳": "岁",
            "自然日": "天",
            "千米": "公里",
        }.get(unit, unit)
    w = (word or "").lower()
    if w in _CURRENCY_OF:  # "350 dollars", "120 euros"
        return _CURRENCY_OF[w]
    if w in _PERCENT_WORDS:
        return "%"
    if w in _UNIT_WORDS:
        return _UNIT_WORDS[w]
    # An English unit is a noun in the plural ("300 seats", "five years") or a measure's
    # abbreviation; "release 5 change" is a designation and a verb.
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3 and w not in _NOT_UNITS:
        return w[:-1]
    if w in _ABBREVIATIONS:
        return w
    if w in _AREA_VOLUME:  # "25 m³", "25 m3"
        return _AREA_VOLUME[w]
    # With `counted` (a question in another language than English), a noun counting the
    # number ("1.200 sacchi", "50 Säcke"), known by its first letters, which its singular
    # and plural share (sacco / sacchi); a band of a rule finds it written after its
    # numbers (`_same_unit`).
    if counted and len(w) > _COUNTED_KEY and not function_word(w):
        return w[:_COUNTED_KEY]
    return ""


def _numbers(text: str, words: bool = False, counted: bool = False) -> list[_Number]:
    """The numbers of a lower-cased text with their units (and, with `words`, those
    written in English words)."""
    found = [*_MENTION.finditer(text), *(_WORD_MENTION.finditer(text) if words else ())]
    out = []
    for m in sorted(found, key=lambda m: m.start()):
        raw = m.group("num")
        value = _value(raw)
        if value is None:
            continue
        han = m.group("han")
        if han and han in ("万元", "千元", "亿元"):
            value *= _MULTIPLIER[han[0]]
        sign = _CURRENCY_BEFORE.search(text, max(0, m.start() - 5), m.start())
        currency = sign.group(0).strip() if sign else m.group("cur")
        word = None if currency else m.group("word") or m.group("metre")
        pct = m.group("pct")
        unit = _unit(han, word, currency, pct, counted)
        word_end = m.end("word" if m.group("word") else "metre") if word else -1
        if word and not unit and not counted and word not in _NOT_UNITS:
            # An English unit after its modifier ("business miles"): the noun counted.
            noun = _NOUN_AFTER.match(text, word_end)
            if noun and (unit := _unit(None, noun.group(1), None, None, False)):
                word_end = noun.end()
        if (unit in ("", "年") and raw.isdigit() and _YEAR.match(raw)) or (
            unit == "年" and value >= 100
        ):
            continue  # a year, not an amount
        if text[max(0, m.start() - 1) : m.start()] == "第":
            continue  # "第二张", "第十二条": which one, not how many
        if not raw[0].isdigit() and (value == 1 or not unit):
            continue  # "一年", "one year": a year's worth, per year; "one" alone: none
        end = (
            m.end("han")
            if han
            else m.end("pct")
            if pct
            else m.end("cur")
            if m.group("cur") and not sign
            else word_end
            if word and unit
            else m.end("num")
        )
        if unit in _IN_KG:  # "6 tonnes" against "up to 2,500 kg", "3吨" against "500公斤"
            value, unit = value * _IN_KG[unit], "kg"
        out.append(_Number(value, unit, sign.start() if sign else m.start(), end))
    return out


@lru_cache(maxsize=1024)
def question_amounts(question: str) -> tuple[Amount, ...]:
    """The amounts the question gives, with a unit or a currency (see the module doc).
    A number the question bounds is a band ("不满十四周岁", "under $25,000"), except a
    lower bound alone that includes it: "工作满12年", "at least 5 years" say how long,
    one value."""
    text = question.lower()
    counted = bool(stemmed_language(question))
    out = []
    banded: set[int] = set()
    for band, start, end in _read_bands(text, counted):
        if not band.unit:
            continue
        banded.update(range(start, end))
        if band.hi is None and band.lo_in and band.lo is not None:
            band = Band(band.lo, band.lo, True, True, band.unit)
        out.append(Amount(band, text[start:end].strip()))
    for n in _numbers(text, words=True, counted=counted):
        if n.unit and n.start not in banded:
            out.append(Amount(Band(n.value, n.value, True, True, n.unit), text[n.start : n.end]))
    for m in _BARE_AGE.finditer(text):
        age = float(m.group(1))
        out.append(Amount(Band(age, age, True, True, "year"), f"{m.group(1)} years"))
    return tuple(out)


# An English question's age given without its unit: "I'm 72", "our cat is 11 and ...",
# "she turns 16." (a number closing its clause, after the verb of being of a person or an
# animal, or of turning).
_BARE_AGE = re.compile(
    r"(?:\bi'm|\bi’m|\bi am|\bhe's|\bshe's|\bhe is|\bshe is|\b(?:son|daughter|child|kid|boy|"
    r"girl|baby|mother|mum|mom|father|dad|grandmother|grandfather|granny|grandma|grandpa|"
    r"wife|husband|partner|dog|cat|puppy|kitten|pet|rabbit|horse)\s+is|\bturns|\bturned|"
    r"\bturning|\baged)\s+(\d{1,3})(?![.,]\d)(?=\s*(?:[,;.!?)]|\band\b|\bbut\b|\bso\b|$))"
)


# What every band is written with, in a digit-holding text: a bound's word or a joining
# sign. A text without any states none (and is not read number by number, ~40 us).
_BAND_HINT = re.compile(
    r"满|不足|少于|低于|小于|不到|超过|高于|大于|多于|最多|至多|以[上下内]|至|到|~|～|〜|-|–|—|\+|"
    r"under|less|below|fewer|lower|up to|at most|more|max|min|over|above|greater|exceed|"
    r"at least|from|between|\d\s?to\b|"
    r"unter|weniger|bis|h[öo]chstens|maximal|hasta|m[áa]ximo|jusqu|au plus|[üu]ber|mehr|m[áa]s|"
    r"superior|plus|\bab\b|mindestens|desde|partir|al menos|au moins|d[èe]s|zwischen|entre|"
    r"menos|moins|inf[ée]rieur|\d\s?[aà]\b|\bal\b|até|acima|abaixo|m[íi]nimo|m[áa]ximo|"
    r"fino|oltre|più|meno|sotto|almeno|tra\b|fra\b|t/m|\btot\b|vanaf|boven|onder|meer|minder|"
    r"minimaal|maximaal|tussen|менее|меньше|ниже|более|больше|свыше|выше|\bот\b|\bдо\b|"
    r"[≥≤<>]|이상|이하|미만|초과|未満|超|\bdo\b|\bod\b|powy[żz]ej|poni[żz]ej|ponad|najwy[żz]ej|"
    r"najmniej|wi[ęe]cej|mniej|h[öo]gst|minst|[öo]ver|till\b|fr[åa]n|mellan|mindre|mer\b|"
    r"ukończ|достиг"
)


@lru_cache(maxsize=8192)
def bands(text: str) -> tuple[Band, ...]:
    """The bands a (lower-cased) text states."""
    if not _BAND_HINT.search(text):
        return ()
    return tuple(band for band, _, _ in _read_bands(text))


# What follows a section's number in a breadcrumb ("… > 4. Discounts"): its point.
_NUMBERED_HEADING = re.compile(r"\.(?:\s|$)")


def _read_bands(text: str, counted: bool = False) -> list[tuple[Band, int, int]]:
    """The bands of the text, each with where its numbers start and end (`counted`: see
    `_unit`)."""
    nums = _numbers(text, counted=counted)
    out: list[tuple[Band, int, int]] = []
    # (index, number, side, inclusive, where the bound's words start and end)
    bounds: list[tuple[int, _Number, str, bool, int, int]] = []
    used: set[int] = set()
    for i, n in enumerate(nums):
        if i in used:
            continue
        nxt = nums[i + 1] if i + 1 < len(nums) else None
        if nxt is not None and i + 1 not in used:
            between = text[n.end : nxt.start]
            joined = _JOIN.match(between) or (
                _AND.match(between) and _BETWEEN.search(text[: n.start])
            )
            if joined:
                hi_in = not re.match(r"^\s*[（(]不含", text[nxt.end :]) and not (
                    joined.re is _JOIN and joined.group("under")
                )
                band = Band(n.value, nxt.value, True, hi_in, n.unit or nxt.unit)
                if nxt.value < n.value:  # counted down: "entre 12 et 6 mois avant la date"
                    band = Band(nxt.value, n.value, True, True, band.unit)
                out.append((band, n.start, nxt.end))
                used.update((i, i + 1))
                continue
        before = text[max(0, n.start - 16) : n.start]
        after = text[n.end : n.end + 10]
        if before.endswith(" > ") and _NUMBERED_HEADING.match(after):
            continue  # a breadcrumb's section ("… cloud > 4. multi-seat discount"): no bound
        for pattern, side, inclusive in _BEFORE:
            if found := pattern.search(before):
                bounds.append((i, n, side, inclusive, n.start - len(before) + found.start(), n.end))
                break
        else:
            for pattern, side, inclusive in _AFTER:
                if found := pattern.search(after):
                    bounds.append((i, n, side, inclusive, n.start, n.end + found.end()))
                    break
    k = 0
    while k < len(bounds):
        i, n, side, inclusive, start, end = bounds[k]
        if k + 1 < len(bounds):
            j, m, side2, inclusive2, _, end2 = bounds[k + 1]
            close = j == i + 1 and m.start - n.end <= _PAIR_GAP
            alike = not n.unit or not m.unit or n.unit == m.unit
            if close and alike and (side, side2) == ("lo", "hi"):
                band = Band(n.value, m.value, inclusive, inclusive2, n.unit or m.unit)
                out.append((band, start, end2))
                k += 2
                continue
        if side == "lo":
            out.append((Band(n.value, None, inclusive, False, n.unit), start, end))
        else:
            out.append((Band(None, n.value, False, inclusive, n.unit), start, end))
        k += 1
    return out


def _same_unit(band: Band, amount: Amount, text: str) -> bool:
    if band.unit:
        return band.unit == amount.unit
    # A band without its unit ("1-49" under "Number of seats") is of the English unit the
    # text names as a word. (A Chinese band writes its unit; one character of it found
    # elsewhere, 名 in 名车, says nothing.)
    unit = amount.unit
    return (
        len(unit) > 1 and not has_han(unit) and re.search(rf"\b{re.escape(unit)}", text) is not None
    )


# Units of a size that names a model or a kind of thing (a 20 ft or a 40 ft container, a
# 16 m or a 20 m lift, a plot of 250 m² or of 500 m²): a row for one size states nothing
# of another.
_SIZE_UNITS = frozenset(
    "m cm mm ft inch 米 厘米 公分 毫米 英尺 英寸 呎 吋 m² m2 ㎡ ft² 平方米 平米 坪".split()  # noqa: SIM905
)


def other_sizes(amounts: Sequence[Amount], text: str) -> list[str]:
    """The sizes the (lower-cased) text states in the unit of a size the question gives,
    when none of them is that size and no band of the text holds it ("20呎" asked about
    "40呎"); [] otherwise."""
    sized = [a for a in amounts if a.unit in _SIZE_UNITS]
    if not sized or fits(sized, text):
        return []
    stated = [n for n in _numbers(text) if any(n.unit == a.unit for a in sized)]
    if any(n.value == a.band.lo for n in stated for a in sized if n.unit == a.unit):
        return []
    return [text[n.start : n.end] for n in stated]


def holding_spans(amounts: Sequence[Amount], text: str) -> list[tuple[int, int]]:
    """Where the (lower-cased) text writes a band of an amount's unit that holds it."""
    return [
        (start, end)
        for band, start, end in _read_bands(text)
        if any(_same_unit(band, a, text) and a.band.within(band) for a in amounts)
    ]


def bands_written(amounts: Sequence[Amount], text: str) -> list[str]:
    """The bands of the amounts' units as the (lower-cased) text writes them ("未满4个月")."""
    return [
        text[start:end].strip()
        for band, start, end in _read_bands(text)
        if any(_same_unit(band, a, text) for a in amounts)
    ]


def counts_in(amounts: Sequence[Amount], text: str) -> bool:
    """Whether the (lower-cased) text states a number in the unit of one of the amounts
    ("99.95%" for an amount of 97.2%), whatever its value."""
    units = {a.unit for a in amounts}
    return any(n.unit in units for n in _numbers(text, counted=True))


def fits(amounts: Sequence[Amount], text: str) -> bool | None:
    """Whether the bands the (lower-cased) text states for the amounts' units hold every
    amount whole; None when it states no band of their units."""
    if not amounts:
        return None
    found = bands(text)
    if not found:
        return None
    verdict: bool | None = None
    for amount in amounts:
        same = [b for b in found if _same_unit(b, amount, text)]
        if not same:
            continue
        if not any(amount.band.within(b) for b in same):
            return False
        verdict = True
    return verdict
