"""What a question names: its periods (years, months), identifiers, written names, names
in inflected languages and Japanese places; and whether a text states them, word by word
(a name inside a longer word or number is not it). Read by the answer's check
(`generation.answerable`) and by the sentence scorer."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from functools import lru_cache
from urllib.parse import unquote

from core.lang import has_kana, prefix_stem, stemmed_language, stopwords
from core.text import LATIN_WORD_END, STOPWORDS, has_han, starts_latin_word, tagged_words
from generation.answer_type import MONTH_WORD
from generation.passages import Candidate, normalise

# A code of capitals, a hyphen and a number ("CH-3", "ERR-404", "EQ-106"): one thing, whose
# siblings differ in the number only ("CH-1"); matched whole, never word by word.
_CODE = re.compile(r"[A-Za-z]*[A-Z][A-Za-z]*-\d[\w\-]*(?<!-)", re.ASCII)
_KEY_TERM = re.compile(
    r"\b(?:[A-Za-z]*[a-z][A-Z]\w*|[A-Z]{2,}[a-z]+\w*|[A-Za-z]+\d[\w.\-]*)\b", re.ASCII
)
YEAR = re.compile(r"(?<![\d.])(1[6-9]\d\d|20\d\d)(?![\d.])")
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


def key_terms(question: str) -> list[str]:
    return list(dict.fromkeys(_KEY_TERM.findall(question)))


def periods(question: str) -> list[str]:
    """Periods the question is about, as written: a year, a month, or a month of a year
    ("November 2015", "2015年11月", "2015-11" kept as one period: both must be met)."""
    spans: list[tuple[int, int]] = []
    for rx in (YEAR, _MONTH_EN, _MONTH_ZH):
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
    parts = [m.group(1) for m in YEAR.finditer(period)]
    parts += [m.group(1) for m in _MONTH_EN.finditer(period)]
    parts += [m.group(0) for m in _MONTH_ZH.finditer(period)]
    return parts or [period]


def period_found(period: str, text: str) -> bool:
    """All parts of a period in the text: the year, and the month in any common form
    ("November", "Nov", "11月", "2015-11")."""
    for part in _period_parts(period):
        if word_found(part, text):
            continue
        month = part.lower()
        if month in _MONTHS:
            number = _MONTHS.index(month) + 1
            forms = [month[:3], f"{number}月", f"-{number:02d}", f"/{number:02d}"]
            if any(word_found(f, text) for f in forms):
                continue
        zh = _MONTH_ZH.fullmatch(part)
        if zh and word_found(_MONTHS[int(zh.group(1)) - 1], text):
            continue
        return False
    return True


def identifiers(question: str) -> list[str]:
    years = set(YEAR.findall(question))
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


_ACRONYM = re.compile(r"[A-Z]{2,5}")


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
# prepositions ("in Betrieb", "für Sonnenenergie", "ab Herbst": a bare noun after one is
# common, a place after one too, and a wrong refusal costs more), their contractions with
# an article, and the verbs that take a bare noun as their object ("soll
# Klavier-Einzelunterricht bekommen", "braucht Nachhilfe").
_GERMAN_DETERMINER_TEXT = """
    der die das den dem des ein eine einen einem einer eines kein keine keinen keinem keiner
    keines dieser diese dieses diesen diesem jeder jede jedes jeden jedem welcher welche
    welches welchen welchem mein meine meinen meinem meiner sein seine seinen seinem seiner
    ihr ihre ihren ihrem ihrer unser unsere unseren euer eure viele vielen wenige einige
    einigen mehrere alle allen beide beiden zum zur im am vom beim ins ans aufs wie in an
    auf für mit bei nach von aus zu um über unter vor hinter neben zwischen seit als durch
    gegen ohne bis ab außer gegenüber pro je laut trotz während wegen statt innerhalb
    außerhalb samt dank per soll sollen muss müssen kann können will wollen möchte möchten
    darf dürfen bekommt bekommen brauche braucht brauchen
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
            for run in _KANJI_RUN.finditer(question)
            # (A run after a number opens with its counter: "2匹連れて", "3泊")
            if not (run.start() and question[run.start() - 1].isdigit())
            for w, flag in tagged_words(run.group(0))
            if flag == "ns" and len(w) >= 2
        )
    )


def word_found(term: str, text: str) -> bool:
    t = normalise(term)
    if has_han(t) or not re.match(r"\w", t):
        return t in text
    # A word starts where a Latin letter or digit does not precede it ("2015" is not
    # found in "12015"); Han characters do ("截至2015年", "绝对SuperStar"). A plural or
    # possessive ending still matches ("Kentucky's").
    # An acronym is a whole word, or its plural: "PD" is not found in "PDF".
    return starts_latin_word(text, t, _ACRONYM_END if term.isupper() else None)


_ACRONYM_END = re.compile(rf"(?:'?s)?{LATIN_WORD_END}")


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


def file_name(source: str) -> str:
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


def name_found(name: str, text: str) -> bool:
    """A name in the text: whole, or (Latin names of several words) word by word; Han and
    quoted titles compared without spaces and punctuation ("Java 开发手册（黄山版）")."""
    if word_found(name, text):
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
        word_found(w, text) or (compound and _head_found(w, text)) for w in own
    )


_HEAD = 4  # letters of the shortest head of a compound word ("Guss" of "Gussteile")


def _head_found(word: str, text: str) -> bool:
    """Whether the text writes a word that is the head of the compound `word`: "Guss" for
    "Gussteile", "Normteile" for "Normteilerechnung"."""
    return any(word_found(word[:k], text) for k in range(len(word) - 2, _HEAD - 1, -1))


def coordinated(question: str, wanted: Sequence[str]) -> bool:
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


def asked_names(question: str) -> tuple[list[str], list[str], list[str]]:
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
    ids, written, _ = asked_names(question)
    codes = [c for c in _GRADE_CODE.findall(question) if not any(c in n for n in written)]
    return (*(n for n in (*ids, *written) if _NUMBERED_NAME.search(n)), *codes)


# A grade or tier written as a code ("G6", "P1", "L3"): a sibling of G5, P2, L4.
_GRADE_CODE = re.compile(r"\b[A-Z]{1,2}\d{1,2}\b(?![.\-/]\w)")


def names_stated(names: Sequence[str], text: str) -> bool:
    """Whether `text` (as written: normalised here) states every one of `names`."""
    plain = normalise(text)
    return all(name_found(n, plain) for n in names)


def period_met(
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
    if period_found(period, evidence):
        return True
    if period_found(period, _LETTERS_THEN_DIGITS.sub(" ", doc_names)):
        return True
    if YEAR.search(" ".join(quoted)):
        return False
    years = [m.group(1) for m in YEAR.finditer(period)]
    set_in = _year_before(chosen[0]) if chosen and years else None
    if set_in is not None and set_in not in years:
        return False
    return period_found(period, same_doc)


def _year_before(cand: Candidate) -> str | None:
    """The last year a sentence's passage states before it, if any."""
    if cand.is_table_row:
        return None
    lines = cand.chunk.text.split("\n")
    line = lines[cand.first_line] if cand.first_line < len(lines) else ""
    at = max(line.find(cand.text[:20]), 0)
    years = YEAR.findall("\n".join([*lines[: cand.first_line], line[:at]]))
    return str(years[-1]) if years else None
