"""What a question asks to be counted or measured, and whether a quote states it: a
quantity (a number, not a clause or section number, a number the question gives, or a
digit inside a Latin name), the unit asked ("多少小时", "how many pages"), a counted
noun, a measure (length, area, volume, degrees, time), a time ("when")."""

from __future__ import annotations

import re
from functools import lru_cache

from core.lang import has_hangul, has_kana, prefix_stem, stemmed_language, stopwords
from core.text import LATIN_WORD_END, STOPWORDS, has_han, latin_words_at
from generation.names import word_found

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
# A price asked by naming it ("What's the fee for …", "What does a sauna session cost?",
# "Was kostet …", "Quel est le tarif …", "¿Qué precio tiene?", "Quali saranno le tariffe
# …", "Qual é o valor …", "Wat kost …", "1時間いくらですか", "可以打幾折"): its answer is an
# amount, or that there is none to pay (`FREE`).
PRICE_QUESTION = (
    r"\bwhat(?:'s| is| are| was| were| will be| would be)? (?:the |a |an )?(?:\w+[ -]){0,2}"
    r"(?:price|cost|fee|charge|fare|tariff|rate)s?\b|\bwhat (?:do|does|did|will|would) "
    r"[^?]{0,60}\b(?:cost|pay|charge)\b|"
    r"\bwas (?:kostet|kosten|zahl\w*)\b|\bwie teuer\b|\bwelche (?:gebühr|kosten|preis)|"
    r"\bquel(?:le)?s? (?:est|sont|sera|seront) (?:le |la |les )?(?:prix|tarifs?|co[uû]ts?|"
    r"montants?|frais)\b|\bqu[ée] precio\b|\bcu[aá]l(?:es)? (?:es|son|será|serán) (?:el |la |"
    r"los |las )?(?:precio|tarifa|coste|costo|importe)s?\b|\bqual[ei]? (?:è|sono|sarà|saranno) "
    r"(?:il |la |le |i |l')?(?:prezz|tariff|cost|import)\w*|\bqual (?:é |será |seria )?"
    r"(?:o |a )?(?:preço|valor|tarifa|custo)\b|\bwat (?:kost|kosten|betaal)\w*|"
    r"いくら|[几幾]折"
)
QUANTITY_QUESTION = re.compile(
    QUANTITY_QUESTION_EN
    + r"|多少|几[个年月天次种条项位名人]|多大|多长|多久|多高|哪一?年|哪一?天|哪个端口|"
    r"数量|比例|百分之?几|[几幾]成|" + QUANTITY_QUESTION_OTHER + "|" + PRICE_QUESTION,
    re.IGNORECASE,
)
_PRICE_Q = re.compile(PRICE_QUESTION, re.IGNORECASE)
# Nothing to pay, as a price list writes it: the answer to a price asked.
FREE = re.compile(
    r"\bfree\b|\bno (?:charges?|fees?|costs?)\b|\bincluded\b|\bkostenlos|\bgebührenfrei|"
    r"\binklusive\b|\bgratuit|\bgratis\b|\bgratuito|\bincluid|\bcompris\b|\binclus\b|\bsin coste\b|"
    r"免费|免費|不收费|不收費|無料|무료",
    re.IGNORECASE,
)


def asks_price(question: str) -> bool:
    """Whether the question asks a price by naming it (`PRICE_QUESTION`)."""
    return _PRICE_Q.search(question) is not None


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
SPELLED = re.compile(rf"\b({_NUMBER_WORDS})\b", re.IGNORECASE)  # "once" may be "when"


_UNIT_ZH = re.compile(
    r"(?:多少|几)\s*个?\s*(小时|分钟|秒钟?|天|日|周|个月|年|岁|周岁|人|名|次|元|万元|亿元|公里|千米|米|"
    r"公顷|平方公里|平方米|亩|公分|厘米|毫米|公尺|公斤|千克|克|吨|字节|字|行|页|倍|条|项|种|位|台|"
    r"件|家|座|层|级|核|GB|MB|TB|KB)"
)
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
        # (a pronoun: "сколько мне вернут" asks an amount, not a count of anything)
        *("мне", "нам", "вам", "тебе", "ему", "ей", "им", "меня", "нас", "вас"),
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


def states_count(text: str, question: str, noun: str) -> bool:
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


def unit_found(unit: str, text: str) -> bool:
    """The unit in the text as asked, or in another of its forms; a Latin symbol only
    right after a number ("2cm", "3 km"), where it cannot be a word of its own; a Korean
    counter after its number ("5명")."""
    if has_hangul(unit):
        return any(unit_counted(form, text) for form in unit_forms(unit))
    if word_found(unit, text):
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
ORDINAL_Q = re.compile(r"第(?:几|多少)")
_KO_COUNT = r"\d[\d.,]*\s*[십백천만억]?|한|두|세|네|다섯|여섯|일곱|여덟|아홉|열|스무|수십|수백|수천"
# Han units that begin a longer word of another sense: 年度, 年级, 年代 are not years.
_NOT_THE_UNIT = {"年": "度级代龄纪初底末份中", "天": "然气空下堂津", "行": "业为政动人"}


def unit_counted(unit: str, text: str, ordinal: bool = False) -> bool:
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


# The end of a number the question gives, standing alone: not inside a word, nor the
# start of a longer dotted number ("3.1" in "3.1.0").
_GIVEN_END = re.compile(rf"{LATIN_WORD_END}(?!\.\d)")


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
TIME_STATED = re.compile(
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
TIME_CLAUSE = re.compile(
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
        r"\bhow much (?:money|did|does|do|was|is|were|will|would)\b[^?]*\b(?:cost|spent|spend|"
        r"pay|paid|charge|worth|earn|raise|price)|\bhow much money\b|"
        r"\bwie viel (?:geld|kostet|kostete)|"
        r"\bcombien (?:a )?co[uû]t|\bcuánto (?:cuesta|costó|dinero)|\bсколько сто(?:ит|ил)|"
        # A price asked by name ("What is the price of", "le prix d'un", 料金, いくら).
        r"\b(?:what|how much) (?:is|was|are|were) the (?:price|cost|fee|fare)s? (?:of|for)\b|"
        # ("What's the monthly fee to join", "what is your joining fee")
        r"\bwhat(?:'s|’s| is| are| was| were) (?:the|a|an|your) (?:[\w-]+ ){1,2}"
        r"(?:price|cost|fee|fare)s?\b(?! (?:structure|level|band|categor))|"
        # (a sum asked by what it is: "how big is the fine", "how much will be deducted";
        # not a refund or a fee, often a share: "70% of the fee")
        r"\bhow (?:much|big|high|large) (?:is|was|are|were|will be|would be) (?:the |a |an |"
        r"my |our |your )?(?:[\w-]+ ){0,2}(?:fine|penalty|deposit|surcharge|excess|"
        r"deductible)s?\b|\bhow much (?:exactly |money )?"
        r"(?:will|would|is|are|was|were|can|could|do|does|did)\b[^?]{0,80}\b"
        r"(?:deducted|fined|withheld)\b|"
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
_HAN_MONEY_Q = re.compile(r"多少[钱錢]|[几幾多][块塊][钱錢]")
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
        r"zł|złotych|czk|kč|pence|(?<!per )cents?|centavos|centimes|cêntimos)(?!\w)|\bруб\b|"
        # (pence written after the figure: "35p per page")
        r"\d\s?p\b(?![.’'])|元|円|원|рубл|евро|доллар|\d\s*[块塊]|人民[币幣]|台[币幣]|"
        r"臺[币幣]|港[币幣]",
        re.IGNORECASE,
    ),
    "angle": _DEGREES,
    "temperature": _DEGREES,
    "area": _AREA_UNITS,
    # "How long": a length or a span of time ("1,595 feet", "14 years", "from 1869 to 1883").
    "length or duration": re.compile(f"{_LENGTH_UNITS}|{TIME_STATED.pattern}", re.IGNORECASE),
}


def asked_measure(question: str) -> str | None:
    """The kind of measure a question asks for ("length" for "how tall", "sum of money" for
    "how much did it cost"), or None; never for Chinese questions."""
    if has_han(question) and not has_kana(question):
        # Chinese asks any amount with 多少; money only with 多少钱 (how much money).
        return "sum of money" if _HAN_MONEY_Q.search(question) else None
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


def asks_money(question: str) -> bool:
    """Whether the question asks a sum of money ("how much does it cost", "the fee for")."""
    return asks_price(question) or asked_measure(question) == "sum of money"


def asks_when(question: str) -> bool:
    return _WHEN_Q.search(question) is not None


def asks_quantity(question: str, intent: str = "general") -> bool:
    return quantity_asked(question, QUANTITY_QUESTION, intent)
