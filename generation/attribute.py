"""What a question asks of its topic, and whether a quote says anything of it.

A near-miss quote is about the right thing but not the right facet of it: asked "Which
county lies at the northern end of the Golden Gate Bridge?" with that passage gone, the
closest sentence left is another one about the Golden Gate Bridge ("The Golden Gate
Bridge spans the Golden Gate, the narrow strait ..."). The words such a quote shares with
the question are its topic: the name the question gives that the most retrieved passages
mention (checked elsewhere, in the document; another name, a landmark or a district, is
part of what is asked) and the quoted document's title. The question's other content words (county,
northern, end) are the facet asked, and a quote that answers states at least one of them,
or the heading it stands under does.

Not facet words: stop words (of any language, for a short question's language is often
told wrong), words of the question's form ("what date", "the name of", "which kind"), and
English adverbs, which a paraphrase changes freely ("formally opened" / "officially
opened"). Where fewer than two facet words are left (the question is all topic: "What is
zero trust?"), nothing is checked. English words are compared by their Porter stems, those
of other stemmed languages by prefix stems; Chinese, Japanese and Korean questions are not
checked (`checks_facet`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from core.lang import function_word, needs_segmenting, prefix_stem, stemmed_language, stopwords
from core.text import KEYWORD_STOPWORDS, content_terms, has_han, starts_latin_word, stem
from generation.quantities import states_measure
from generation.similarity import Similarity
from generation.yes_no import asks_yes_no

_WORD = re.compile(r"[^\W\d_]+")
# Words that say what form the answer takes, not what it is about.
_FORM_TEXT = """
    date dates year years day days time times name names named call called kind kinds type
    today now nowadays currently still ever
    types sort sorts number numbers amount value values
    nom noms année années jour jours datum jahr jahre tag tage namen art año años fecha día
    nombre tipo ano anos dia nome anno anni giorno год года году дата день название имя тип
"""
# Light verbs (most English ones are stop words already): "What NPS did it get?", "¿Qué
# extensión tiene …?", "se encuentra", "wie heißt": they say nothing of the facet.
_LIGHT_VERB_TEXT = """
    get gets got gotten getting
    tiene tienen tenía tuvo está están estaba encuentra encuentran llama llaman llamaba
    conoce conocen conocido conocida hay hace hizo
    trouve trouvent appelle appellent appelait connu connue situé située fait
    liegt liegen lag heißt hieß genannt bekannt befindet gibt gab bekomme bekommt bekommen
    habe hast habt erhalte erhält erhalten recibo recibe recibimos tengo tenemos reçois
    reçoit recevons ai avons
    trova trovano chiama chiamato chiamata noto nota hanno
    tem têm fica ficam chama chamado chamada conhecido conhecida há
    находится находятся называется назывался называли имеет есть
    wynosi wyniesie wynoszą
"""
# Verbs of intent ("Vou enviar …", "Quero que …", "Ich möchte …"): the asker's plan, not
# what is asked of the rule.
_INTENT_TEXT = """
    want wants like
    vou vai vamos quero queria queremos seja sejam
    voy quiero quería queremos
    vado voglio vorrei vogliamo sia siano
    vais veux voudrais voulons soit soient
    möchte möchten will wollen
    wil wilt willen ga gaat
    chcę chciałbym chciałabym
    хочу хотим хотел хотела буду
"""
# Modal verbs ("¿Cuál es el máximo que puedo gastar …?", "Wie viel darf ich …?"): what may
# or must be done is the rest of the question.
_MODAL_TEXT = """
    can could may might must should shall
    puedo puedes puede podemos pueden podría podrían debo debes debe debemos deben debería
    peux peut pouvons pouvez peuvent puis pourrais pourrait dois doit devons devez doivent
    devrais devrait
    kann kannst können könnt könnte darf darfst dürfen dürft muss musst müssen müsst soll
    sollst sollen sollte
    posso puoi può possiamo possono potrei potrebbe devo devi deve dobbiamo devono dovrei
    dovrebbe pode podem poderia devemos devem deveria
"""
_FORM_WORDS = frozenset((_FORM_TEXT + _LIGHT_VERB_TEXT + _MODAL_TEXT + _INTENT_TEXT).split())


def form_word(word: str) -> bool:
    """Whether a (lower-cased) word says the answer's form, or is a light, modal or intent
    verb: nothing of what is asked, nor a value the question puts on a table's column."""
    return word in _FORM_WORDS


# A question asking for the most allowed ("maximum", "máximo", "höchstens") is asked of
# a text that states an upper bound in any words ("up to", "hasta", "bis zu", "不超过").
_MOST = ("maxim", "máxim", "massim", "höchst")
_UPPER_BOUND = re.compile(
    r"\b(?:up to|at most|no more than|not (?:to )?exceed|max(?:imum|imal\w*)?|bis zu|"
    r"h[öo]chstens|hasta|como m[áa]ximo|jusqu.?[àa]|au plus|plafon\w*|fino a|al massimo|"
    r"até|no m[áa]ximo)\b|最多|至多|不超过|以内|上限|最高"
)
# The verb that asks a price ("what does it cost", "was kostet", "ile kosztuje", "cuánto
# cuesta", "quanto costa", "combien coûte", "quanto custa", "vad kostar"), as a facet word
# (its stem): left alone unmet by a row, the row's sum of money (its price column) says it.
_COSTS = re.compile(r"(?:costs?|kost\w*|koszt\w*|cuest\w*|co[uû]t\w*|cust[ao]?m?)$")
# An English question asking for a thing its subject does ("What payment terms do we
# give …?", "Which fee do they charge?"): the thing asked names the facet, the verb after
# "do we" is only what is done with it.
_DONE_WITH = re.compile(
    r"\b(?:what|which)\s+(?:[a-z-]+\s+){1,3}?(?:do|does|did)\s+"
    r"(?:we|i|you|they|he|she|it|the\s+[a-z]+|our\s+[a-z]+)\s+([a-z]+)",
    re.IGNORECASE,
)
# A facet of one word is most often a verb ("Quand Claude Monet est-il mort ?", "When was
# it declared a landmark?"), which the text writes in another form or word (meurt,
# designated): only a facet of two words or more is checked in sentences. A table row is
# different: its columns name what it states, and a one-word facet is the column asked
# ("What was the population of Kentucky?" of a row with Permit, Handgun, Long Gun ...).
MIN_FACET = 2
MIN_ROW_FACET = 1
# A quote whose meaning, topic left out on both sides, is this close to the question's
# states the facet in other words (multilingual sets: paraphrases 0.24-0.39, quotes on
# another facet -0.02-0.10, with the default embedder).
MEANING_FLOOR = 0.2
# A facet word this close in meaning to a column's header names that column in other
# words (default embedder: employees / Staff 0.79, geöffnet / Öffnung 0.77, memory / 内存
# 0.69; columns a table does not have: warranty / Location 0.19, denied / Permit 0.46,
# income / Fiscal Year 0.45, population / State 0.33).
COLUMN_FLOOR = 0.5
# A cell value of at most this many words names its row; a longer one is a description.
_KEY_WORDS = 6
# Question words that ask for a kind of thing named right after them ("how" for a
# measure: "how tall").
_WHICH_TEXT = """
    which what whose how welche welcher welches welchen welchem welcher quel quelle quels
    quelles qué cuál cuáles quale quali qual quais какой какая какое какие каком какую
    каких какого какому чей чья чьё чьи
"""
_WHICH = frozenset(_WHICH_TEXT.split())
_ADVERB_ENDINGS = ("ally", "ously", "fully", "ively", "ently", "antly", "ably", "ibly", "edly")


@lru_cache(maxsize=8192)
def _english_stems(lowered: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(lowered))


def _says(term: str, lowered: str, lang: str) -> bool:
    """Whether a text (`lowered`: in lower case, by the caller, once for all its terms)
    states a question term: an English word by its Porter stem; a word of another stemmed
    language by its prefix stem, at the start of a word (French "exposit" in
    "expositions"); Han, kana and Hangul terms as written (the text may cut them
    otherwise)."""
    if not term.isalpha():
        return term in lowered
    if lang:
        return starts_latin_word(lowered, term)
    if term.isascii():
        return stem(term) in _english_stems(lowered)
    return term in lowered


def _kinds(words: Sequence[str]) -> set[str]:
    """The words a question word asks for ("which county", "dans quelle ville"): the
    answer is one of them, and often does not say so ("Limoges", not "la ville de")."""
    return {w for prev, w in itertools.pairwise(words) if prev in _WHICH}


def _terms(question: str, lang: str) -> list[str]:
    """The question's content words but the kind it asks for: English as the keyword
    analysis gives them; words of another stemmed language cut to their prefix stems
    after their function words are dropped (a stem of "dans" is no function word)."""
    words = _WORD.findall(question.lower())
    kinds = _kinds(words)
    if not lang:
        done = {m.group(1).lower() for m in _DONE_WITH.finditer(question)}
        return [t for t in content_terms(question) if t not in kinds and t not in done]
    skip = stopwords(lang)
    kept = [w for w in words if w not in skip and w not in kinds and len(w) > 1]
    return list(dict.fromkeys(prefix_stem(w, lang) for w in kept if not _no_facet(w, lang)))


def _no_facet(term: str, lang: str) -> bool:
    return (
        term in KEYWORD_STOPWORDS
        or term in _FORM_WORDS
        or term in stopwords(lang)
        or (bool(lang) and function_word(term))
        or (not lang and term.isascii() and len(term) > 5 and term.endswith(_ADVERB_ENDINGS))
    )


def checks_facet(question: str) -> bool:
    """Whether the facet is checked for a question: only in spaced languages (English,
    German, French, Russian ...). In Chinese, paraphrase and word cutting leave too many
    right quotes without the question's words (CMRC 2018 trial, words alone: answers
    containing the answer 0.868 -> 0.857 for 1 point more refusals with the answer taken
    away)."""
    return not has_han(question) and not needs_segmenting(question)


def asked_facet(question: str, topic: Sequence[str], names: str) -> list[str]:
    """The question's content words that are not its topic (see the module doc): the
    facet it asks about. `topic`: the names the question gives (its subject);
    `names`: the quoted document's title and file name."""
    if not checks_facet(question):
        return []
    lang = stemmed_language(question)
    about, names = " ".join(topic).lower(), names.lower()
    return [
        t
        for t in _terms(question, lang)
        if not _no_facet(t, lang) and not _says(t, about, lang) and not _says(t, names, lang)
    ]


# Opposites (English): a quote that states the opposite of a facet word, and not the word
# itself, answers another question: asked "When does the office close?", "The office opens
# at 9 am" is the other end of the day; asked "When did the war end?", "The war began in
# 1939" is its other end. Each line holds words that are opposites of each other; the
# forms the stemmer does not bring together are listed after "=".
_OPPOSITE_TEXT = """
    open close
    start end finish
    begin end finish
    arrive depart
    arrival departure
    born die
    birth death
    first last
    earliest latest
    minimum maximum
    lowest highest
    increase decrease
    buy sell
    import export
    entrance exit
    upload download
    win lose
    input output
    inbound outbound
    accept reject
    approve reject
"""
_IRREGULAR_TEXT = """
    began=begin begun=begin dead=die died=die won=win lost=lose sold=sell bought=buy
    closure=close
"""
_IRREGULAR = dict(pair.split("=") for pair in _IRREGULAR_TEXT.split())
# Opposites only before a noun ("the last king"): at the end of a question "last" is the
# verb ("How long did the siege last?"), whose answer may well say "first".
_BEFORE_A_NOUN = frozenset({"last"})
# A span between two values ("9 am to 5 pm", "1939-1945", "from 9 until 17") gives both
# ends at once, whichever of the two words it is written with.
_SPAN = re.compile(
    r"\d[\d:.,]*\s*(?:a\.?m\.?|p\.?m\.?|h)?\s*(?:-|\u2013|\u2014|to|until|till|through)\s*\d",
    re.IGNORECASE,
)


def _word_stem(word: str) -> str:
    return stem(_IRREGULAR.get(word, word))


def _opposites() -> dict[str, frozenset[str]]:
    pairs: dict[str, set[str]] = {}
    for line in _OPPOSITE_TEXT.strip().splitlines():
        stems = [_word_stem(w) for w in line.split()]
        head, others = stems[0], stems[1:]
        # "start end finish": start is the opposite of end and of finish, not they of
        # each other.
        for other in others:
            pairs.setdefault(head, set()).add(other)
            pairs.setdefault(other, set()).add(head)
    return {k: frozenset(v) for k, v in pairs.items()}


_OPPOSITE = _opposites()


def opposite_stated(
    question: str,
    quoted: Sequence[str],
    scope: Sequence[str],
    topic: Sequence[str],
    names: str,
) -> tuple[str, str] | None:
    """(facet word, its opposite) when the quote or its headings state the opposite of a
    word the question asks (`asked_facet`) and not the word itself; None otherwise. Facets
    of one word count too: the opposite is evidence enough that the quote is about the
    other end. Not for yes/no questions ("Is the office open on Sundays?" is answered by
    "closed on Sundays"), nor for a quote giving a span between two values. English only."""
    if stemmed_language(question):
        return None
    words = _WORD.findall(question.lower())
    if not words or asks_yes_no(question):
        return None
    asked = {_word_stem(t): t for t in asked_facet(question, topic, names)}
    wanted = {
        s: t
        for s, t in asked.items()
        if s in _OPPOSITE and not (t in _BEFORE_A_NOUN and words[-1] == t)
    }
    if not wanted:
        return None
    text = " ".join([*quoted, *scope])
    if _SPAN.search(text):
        return None
    stated = {_word_stem(w): w for w in _WORD.findall(text.lower())}
    for s, term in wanted.items():
        if s in stated:
            continue
        found = next((stated[o] for o in _OPPOSITE[s] if o in stated), None)
        if found is not None:
            return term, found
    return None


def _without(text: str, topic: Sequence[str]) -> str:
    """The text with each topic name blanked out, in any case (no pattern compiled per
    name: every question brings new ones)."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: leave as is
        return text
    chars = list(text)
    for name in (n.lower() for n in topic if n):
        i = lowered.find(name)
        while i >= 0:
            chars[i : i + len(name)] = " " * len(name)
            i = lowered.find(name, i + len(name))
    return " ".join("".join(chars).split())


def facet_unmet(
    question: str,
    quoted: Sequence[str],
    scope: Sequence[str],
    topic: Sequence[str],
    names: str,
    similarity: Similarity | None = None,
    cells: Sequence[tuple[str, str]] = (),
    synonyms: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The facet words of the question (`asked_facet`) when neither the quoted sentences
    (or table row, `cells`: its (column, value) pairs) nor the headings they stand under
    (`scope`) state any of them, and, given a `similarity`, the quote's meaning is not
    close to the facet's either (both without the topic: "When did builders start work on
    …" / "Construction of … began on …" is a paraphrase, not another facet); [] when the
    facet is met, or there is none. A row must also have the column asked
    (`_column_unmet`). A word is also said by one of the domain `synonyms` the route
    applied for it ("employees" by a Headcount column, where the dictionary says so)."""
    facet = asked_facet(question, topic, names)
    lang = stemmed_language(question)
    expanded = synonyms or {}

    def says(term: str, lowered: str) -> bool:
        if term.startswith(_MOST) and _UPPER_BOUND.search(lowered):
            return True  # "the maximum" of a text saying "up to 140 €"
        alternatives = synonyms_of(term, expanded)
        return any(_says(t.lower(), lowered, lang) for t in (term, *alternatives))

    text = " ".join([*quoted, *scope]).lower()
    least = MIN_ROW_FACET if cells else MIN_FACET
    if len(facet) < least:
        return []
    if any(says(t, text) for t in facet):
        return _column_unmet(facet, cells, scope, says, similarity) if cells else []
    if similarity is not None:
        asked = _without(question, topic)
        close = similarity(asked, [_without(q, topic) for q in quoted])
        if max(close, default=0.0) >= MEANING_FLOOR:
            return []
    return facet


def _column_unmet(
    facet: Sequence[str],
    cells: Sequence[tuple[str, str]],
    scope: Sequence[str],
    says: Callable[[str, str], bool],
    similarity: Similarity | None,
) -> list[str]:
    """A row is named by the words its short values state ("centrifuge", "Mittwoch"):
    they are its topic. What else the question asks must be one of its columns, by name,
    in a long value (a description) or its headings, or in other words (a header close
    in meaning to a word: "employees" / Staff, "geöffnet" / Öffnung); otherwise the row
    does not have it ("What is the warranty period of the centrifuge?" of a row with a
    quantity and a price). The words left unmet, or []."""
    keys = " ".join(v for _, v in cells if len(v.split()) <= _KEY_WORDS).lower()
    rest = [t for t in facet if not says(t, keys)]
    long_values = (v for _, v in cells if len(v.split()) > _KEY_WORDS)
    columns = " ".join([*(h for h, _ in cells), *long_values, *scope]).lower()
    if not rest or any(says(t, columns) for t in rest):
        return []
    values = " ".join(v for _, v in cells).lower()
    if all(map(_COSTS.match, rest)) and states_measure("sum of money", values):
        return []  # "Ile kosztuje …?" of a row whose price column says "10 zł"
    headers = [h for h, _ in cells if h]
    if similarity is None or not headers:
        return rest
    return [] if any(names_a_column(t, headers, similarity) for t in rest) else rest


def synonyms_of(word: str, synonyms: Mapping[str, Sequence[str]]) -> Sequence[str]:
    """The domain synonyms the route applied for `word` (singular or plural), or ()."""
    stem = word.lower().removesuffix("s")
    return next((v for k, v in synonyms.items() if k.lower().removesuffix("s") == stem), ())


def names_a_column(word: str, headers: Sequence[str], similarity: Similarity) -> bool:
    """Whether one of a table's `headers` means `word` in other words (COLUMN_FLOOR)."""
    return max(similarity(word, headers), default=0.0) >= COLUMN_FLOOR


# How often a rate or limit counts, as questions and rules write it (Korean "월 15,000원"
# is a month's fee, "8월" a month's name): "daily" and "per month" are two limits, and one
# is no answer for the other ("What is the daily ATM limit?" of a row giving "ATM cash
# withdrawal (per month): £400").
_PER = {
    "day": r"\bdaily\b|\bper day\b|\ba day\b|\beach day\b|/day\b|\bt[äa]glich|\bpro tag\b|"
    r"\bdiari[oa]\b|\bal d[íi]a\b|\bpor d[íi]a\b|\bquotidien|\bpar jour\b|\bgiornalier|"
    r"\bal giorno\b|\bdi[áa]ri[oa]\b|\bao dia\b|每日|每天|日额|日額|1日(?:あたり|につき)|"
    r"一日|1日券|하루|일일|일당|1일당|(?<!\w)일 (?=최대|요금|이용|한도)|"
    r"\btages(?:karte|ticket|pass)|\bday (?:pass|ticket)s?\b",
    "week": r"\bweekly\b|\bper week\b|\ba week\b|/week\b|\bw[öo]chentlich|\bpro woche\b|"
    r"\bsemanal|\bpor semana\b|\bhebdomadaire|\bpar semaine\b|\bsettimanal|"
    r"\ba settimana\b|每周|每週|毎週|週額|주당|일주일|매주|(?<!\w)주 (?=최대|요금|이용|한도)|"
    r"\b7-day\b",
    "month": r"\bmonthly\b|\bper month\b|\ba month\b|/month\b|\bmonatlich|\bpro monat\b|"
    r"\bmensual|\bal mes\b|\bpor mes\b|\bmensuel|\bpar mois\b|\bmensil|\bal mese\b|"
    r"\bmensal|\bpor m[êe]s\b|每月|月额|月額|毎月|1[かヶカ]月|ひと月|한 ?달|매월|월정액|"
    r"(?<![\d０-９])월 ?\d|(?<!\w)월 (?=최대|요금|이용|한도)|\b30-day\b|30日間|30天",
    "year": r"\byearly\b|\bannual(?:ly)?\b|\bper (?:year|annum)\b|\ba year\b|/year\b|"
    r"\bj[äa]hrlich|\bpro jahr\b|\banual\b|\bal a[ñn]o\b|\bpor a[ñn]o\b|\bannuel|\bpar an\b|"
    r"\bannual[ei]\b|\ball.anno\b|\bpor ano\b|每年|年度|年额|年額|年間|毎年|연간|연회비|매년",
    # (A price per use is no monthly one: a pass for the month asked, "単位: 1回" quoted;
    # not "週1回", how often, nor Korean "1회", which is either.)
    "visit": r"\bper (?:visit|session|entry|use)\b|\bsingle (?:visit|entry|session|swim)\b|"
    r"\bpro (?:besuch|eintritt)\b|\beinzeleintritt|\bpar (?:visite|séance|entrée)\b|"
    r"\bpor (?:visita|sesión|entrada)\b|\bper (?:ingresso|seduta)\b|(?<![週月年日毎])1回(?!目)",
}
_PERIODS = {name: re.compile(rx, re.IGNORECASE) for name, rx in _PER.items()}


def other_rate_period(question: str, stated: str) -> tuple[str, str] | None:
    """(The period the question's rate is counted in, another the quoted evidence gives)
    when the question names one ("daily") and the evidence states others ("per month")
    but not it; None otherwise, and for a question naming two (asking which applies)."""
    asked = [name for name, rx in _PERIODS.items() if rx.search(question)]
    if len(asked) != 1:
        return None
    given = [name for name, rx in _PERIODS.items() if rx.search(stated)]
    if not given or asked[0] in given:
        return None
    return asked[0], given[0]
