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

This module decides (`judge`); what it reads lives beside it: the question's names,
periods and identifiers and whether a text states them (`generation.names`), a Chinese
question's names and subject (`generation.han_names`), quantities, units and measures
(`generation.quantities`), quoted table rows and siblings of what is asked
(`generation.rows`), what the document leaves to another rule or puts outside its scope
(`generation.scope`), and the slot a quote fills with another value (`generation.slots`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.text import has_han, starts_latin_word
from core.types import Chunk
from generation.answer_type import asks_date, asks_day, has_answer_type, has_day
from generation.asked_kind import asked_kind, names_kind
from generation.attribute import (
    checks_facet,
    facet_unmet,
    opposite_stated,
    other_rate_period,
    synonyms_of,
)
from generation.days import day_met
from generation.given_numbers import given_numbers, in_count_band
from generation.han_names import (
    WHICH_HAN,
    han_defined,
    han_name_found,
    han_names,
    han_scope,
    han_subject,
    han_subject_found,
)
from generation.names import (
    asked_names,
    coordinated,
    file_name,
    inflected_names,
    japanese_places,
    key_terms,
    name_found,
    period_found,
    period_met,
    periods,
)
from generation.passages import Candidate, normalise, normalise_joined
from generation.quantities import (
    FREE,
    ORDINAL_Q,
    SPELLED,
    TIME_CLAUSE,
    TIME_STATED,
    asked_measure,
    asked_unit,
    asks_money,
    asks_price,
    asks_quantity,
    asks_when,
    counted_noun,
    has_quantity,
    states_count,
    states_measure,
    unit_counted,
    unit_found,
)
from generation.ranges import (
    Amount,
    bands_written,
    fits,
    number_value,
    other_sizes,
    question_amounts,
)
from generation.rows import (
    counted_in_column,
    empty_column_asked,
    han_column_unmet,
    han_keyed_elsewhere,
    han_modifier_sibling,
    han_negated,
    han_row_of_another,
    han_sibling_row,
    hyphen_sibling,
    kind_unquoted,
    named_row_blank,
    numbers_left_empty,
    row_not_asked,
    row_of_another,
    value_of_another_row,
)
from generation.scope import (
    asked_versions,
    band_left_open,
    deferred_beside,
    excluded_item,
    left_to_another_rule,
    only_excluded,
    only_replaced,
    other_version,
    row_left_open,
    version_found,
)
from generation.similarity import Similarity
from generation.slots import cell_substitution, row_substitution, substitution


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


def _documents(
    cited: Sequence[Chunk], retrieved: Sequence[Chunk]
) -> tuple[str, str, tuple[str, ...]]:
    """What the cited passages' documents say, normalised: their text (the passages cited
    and those retrieved from the same documents) with their titles and file names, the
    titles and file names alone, and the pieces of the first, passage by passage (what is
    read a passage at a time is memoised by passage: the same passages come back with
    others question after question). Names and identifiers of a question are often the
    document's own ("per the Wikipedia Duck article", "OpenAPI 3.1.0")."""
    docs = {c.doc_id for c in cited}
    seen: dict[str, str] = {}
    names_of_docs: dict[str, str] = {}
    for ch in [*cited, *(ch for ch in retrieved if ch.doc_id in docs)]:
        seen.setdefault(ch.content_id, ch.text)
        names_of_docs.setdefault(ch.doc_id, f"{ch.title} {file_name(ch.source)}")
    same_doc, parts = normalise_joined([*seen.values(), *names_of_docs.values()])
    doc_names, _ = normalise_joined(list(names_of_docs.values()))
    return same_doc, doc_names, parts


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
        and not stated(name, lambda x: name_found(x, same_doc))
    ]
    return missing + [p for p in japanese_places(question) if p not in same_doc]


def _kind_asked(word: str, question: str) -> bool:
    """Whether the question writes `word` right after a which-word (哪个城市, 什么机构)."""
    at = question.find(word)
    return at > 0 and WHICH_HAN.search(question[:at]) is not None


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
        return [] if stated(defined, lambda x: name_found(x, same_doc)) else [defined]
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
    same_doc, _, _ = _documents(cited, retrieved)
    ids, wanted, soft = asked_names(question)
    expanded = {k.lower(): v for k, v in (synonyms or {}).items()}

    def stated(term: str, found: Callable[[str], bool]) -> bool:
        alternatives = expanded.get(term.lower(), ())
        return found(term) or any(name_found(alt, same_doc) for alt in alternatives)

    def in_doc(term: str) -> bool:
        return name_found(term, same_doc)

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
        return _other_period(question, quoted, scope)
    asked = [*written, *(n for n, _ in inflected_names(question))]
    topic = asked
    if len(asked) > 1:
        texts = [normalise(c.text) for c in retrieved]
        counts = {n: sum(name_found(n, t) for t in texts) for n in asked}
        top = max(counts.values())
        topic = [n for n, c in counts.items() if c == top]
    facet = facet_unmet(question, quoted, scope, topic, doc_names, similarity, cells, synonyms)
    if facet:
        return "the quoted evidence says nothing of " + ", ".join(repr(t) for t in facet)
    opposite = opposite_stated(question, quoted, scope, topic, doc_names)
    if opposite:
        return f"the quoted evidence says {opposite[1]!r}, the opposite of {opposite[0]!r}"
    return _other_period(question, quoted, scope)


def _other_period(question: str, quoted: Sequence[str], scope: Sequence[str]) -> str:
    """A rate of another period than the one asked ("월 15,000원", asked the day pass), in
    any language (it needs no word cutting), or ""."""
    period = other_rate_period(question, " ".join([*quoted, *scope]))
    if period is None:
        return ""
    return f"the question asks a figure per {period[0]}; the quoted evidence is per {period[1]}"


def _measures(amount: Amount, term: str) -> bool:
    """Whether `term` ("11.2", "800") is the number of an amount with its unit ("11.2 m",
    "800 €", "70 persone", "11,000 business miles")."""
    return amount.text != term and amount.text.startswith(term) and number_value(term) is not None


def _is_measure(amount: Amount, term: str) -> bool:
    """Whether `term` is the whole amount, its number and unit ("15kg")."""
    return bool(amount.unit) and amount.text.replace(" ", "") == term.replace(" ", "").lower()


@dataclass(frozen=True, slots=True)
class _Reading:
    """The question and the quote, read once for every check of `judge`: what is asked
    (periods, identifiers, names, amounts, a quantity or measure), the quote with its
    declared scope (`evidence`, normalised), its documents' text and names, and which of
    the question's constraints the quote leaves unmet."""

    question: str
    quoted: Sequence[str]
    chosen: Sequence[Candidate]
    retrieved: Sequence[Chunk]
    synonyms: Mapping[str, Sequence[str]] | None
    expanded: Mapping[str, Sequence[str]]  # the synonyms, keyed by lower-cased word
    similarity: Similarity | None
    beside: Sequence[Candidate]  # the answer's other quotes of the same document
    evidence: str
    same_doc: str
    doc_parts: tuple[str, ...]  # same_doc passage by passage
    doc_names: str
    amounts: Sequence[Amount]
    banded: bool | None  # whether a band of the quote holds the amounts (None: no band)
    quantity: bool
    measure: str | None
    wanted_periods: list[str]
    wanted_ids: list[str]
    wanted_names: list[str]
    soft_names: list[str]
    missing_ids: list[str]
    missing_names: list[str]
    missing_inflected: list[str]
    missing_han: list[str]
    missing_periods: list[str]
    total: int  # the question's key constraints
    met: int  # ... that the quote meets

    @property
    def asked_names(self) -> list[str]:
        return [*self.wanted_ids, *self.wanted_names, *self.soft_names]

    @property
    def pins(self) -> int:
        """The constraints that pin one thing down: all but a quantity asked."""
        return self.total - int(self.quantity or self.measure is not None)

    def refuse(
        self,
        reason: str,
        failed: str,
        met: int = 0,
        total: int = 0,
        asked: str = "",
        final: bool = False,
    ) -> Verdict:
        """Not covered, for `reason`; `met`, `total`: added to the counts (a constraint
        the check found unmet, -1; one it adds, +1)."""
        return Verdict(
            False,
            reason,
            constraints=self.total + total,
            met=self.met + met,
            failed=failed,
            asked=asked,
            final=final,
        )


# A column header that is a count ("100 pcs", "250", "1,000 copies", "10회").
_COUNT_HEADER = re.compile(r"\s*\d[\d,.]*\s*[^\W\d_]{0,8}\.?\s*$")


def _read(
    question: str,
    intent: str,
    quoted: Sequence[str],
    chosen: Sequence[Candidate],
    retrieved: Sequence[Chunk],
    synonyms: Mapping[str, Sequence[str]] | None,
    similarity: Similarity | None,
    beside: Sequence[Candidate],
) -> _Reading:
    evidence = normalise(" ".join([*quoted, *(_scope(c) for c in chosen)]))
    same_doc, doc_names, doc_parts = _documents([c.chunk for c in chosen], retrieved)
    wanted_periods = periods(question)
    # An amount the question gives (12年, "$300,000", 300 seats, "an 11.2 m boat") is met
    # by a band of the quote that holds it ("满10年不满20年", "above $50,000 and up to
    # $500,000", "10.01 – 12.0 m"), and is no identifier the quote must write: the asker's
    # own measure ("my 9.5 m cruiser") names nothing the rules list.
    amounts = question_amounts(question)
    wanted_ids, wanted_names, soft_names = asked_names(question)
    wanted_ids = [t for t in wanted_ids if not any(_measures(a, t) for a in amounts)]
    # ... nor a measure written as one word in a question of another script ("15kgの柴犬"):
    # a band of the quote holds it, or the band check refuses.
    soft_names = [t for t in soft_names if not any(_is_measure(a, t) for a in amounts)]
    # So is a plain number with its unit ("800 €", "70 persone", "20 minutes"), unless the
    # quoted document's bands of that unit all leave it out (250 users, the discount table
    # stopping at 100): then the quote must state it. An age or a number of years the
    # document's bands hold must be met by the quote's: a quote on something else
    # ("children under 4 are not admitted") says nothing of the asker's 68 years.
    given = [g for g in given_numbers(question) if g.text not in wanted_ids]
    measured = [g for g in given if any(_measures(a, g.text) for a in amounts)]
    banded = fits(amounts, evidence)
    if measured and (
        (held := fits(amounts, same_doc)) is None
        or (held and (banded or not any(a.unit == "year" for a in amounts)))
    ):
        given = [g for g in given if g not in measured]
    total = len(wanted_periods) + len(wanted_ids) + len(wanted_names) + len(soft_names)
    total += len(given)
    in_band = {a.band.lo for a in amounts if a.band.lo == a.band.hi} if banded else set()
    total += int(banded is not None)
    quantity = asks_quantity(question, intent)
    measure = asked_measure(question)  # "how tall", "to what angle": also a quantity asked
    total += int(quantity or measure is not None)

    def written(term: str) -> bool:
        # In what is quoted (or its declared scope), or the name of the quoted document
        # itself ("the Wikipedia Duck article", "OpenAPI 3.1.0"); an acronym may be
        # spelled out elsewhere in the document. An identifier with a digit ("SEV2", "Q4")
        # picks out one of its siblings (SEV1, SEV3): the quote must say it.
        return (
            name_found(term, evidence)
            or name_found(term, doc_names)
            or (term.isupper() and not any(map(str.isdigit, term)) and name_found(term, same_doc))
        )

    # A word the route expanded is met by one of its synonyms in the quote itself ("RAM" by
    # the 内存 cell of the quoted row): retrieval found the passage by them. Only there: a
    # synonym elsewhere in the document, or in a column the quote leaves out, is not what
    # the quote is about.
    expanded = {k.lower(): v for k, v in (synonyms or {}).items()}
    shown = normalise(" ".join(quoted))

    def stated(term: str, found: Callable[[str], bool]) -> bool:
        alternatives = expanded.get(term.lower(), ())
        return found(term) or any(name_found(alt, shown) for alt in alternatives)

    # (A number the question gives as an amount, 98.5%, is met by the band that holds it.)
    missing_ids = [
        t for t in wanted_ids if not stated(t, written) and number_value(t) not in in_band
    ]
    # A number the question gives ("SP 800-53", "第八十条", "十六周岁"): in the quote or its
    # scope, or the quoted document (its name; a clause or grade only in the quote); a
    # sibling's number does not meet it.
    # A quoted row priced by count in its columns ("100 pcs: £24 | 250 pcs: £29"): the
    # count asked picks out its column, and another column's price is no answer for it.
    by_count = any(sum(1 for h, _ in c.cells if _COUNT_HEADER.match(h)) >= 2 for c in chosen)
    missing_ids += [
        g.text
        for g in given
        if not g.found(evidence)
        and not g.found(doc_names)
        and (g.picks_out or by_count or not g.found(same_doc))
        and g.value not in in_band
        and not (g.value is not None and not g.picks_out and in_count_band(g.value, evidence))
    ]
    # A day of the week is also met by a span of days that holds it, or by a term the
    # document defines with it ("Peak: … all day on Saturdays") that the quote writes.
    missing_names = [
        t for t in wanted_names if not stated(t, written) and not day_met(t, evidence, same_doc)
    ]
    missing_names += [t for t in soft_names if not stated(t, lambda x: name_found(x, same_doc))]
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
    anchored = any(name_found(t, same_doc) for t in [*wanted_ids, *wanted_names, *soft_names])
    missing_han = _han_unmet(question, wanted_names, anchored, same_doc, stated)
    missing_periods = [
        t
        for t in wanted_periods
        if not period_met(t, quoted, chosen, evidence, doc_names, same_doc)
    ]
    return _Reading(
        question=question,
        quoted=quoted,
        chosen=chosen,
        retrieved=retrieved,
        synonyms=synonyms,
        expanded=expanded,
        similarity=similarity,
        beside=beside,
        evidence=evidence,
        same_doc=same_doc,
        doc_parts=doc_parts,
        doc_names=doc_names,
        amounts=amounts,
        banded=banded,
        quantity=quantity,
        measure=measure,
        wanted_periods=wanted_periods,
        wanted_ids=wanted_ids,
        wanted_names=wanted_names,
        soft_names=soft_names,
        missing_ids=missing_ids,
        missing_names=missing_names,
        missing_inflected=missing_inflected,
        missing_han=missing_han,
        missing_periods=missing_periods,
        total=total,
        met=total - len(missing_ids) - len(missing_names) - len(missing_periods),
    )


def _kind_of_answer(r: _Reading) -> Verdict | None:
    """What is asked for must be quoted: a quantity (not the row's other digits, where its
    cell is empty), a time for "when", a date or day, a count of the unit asked, a measure
    of the kind asked, or one of the kind a which-question asks."""
    question, quoted, chosen, quantity = r.question, r.quoted, r.chosen, r.quantity
    day = asks_day(question)
    day_quoted = day and any(has_day(q, question) for q in quoted)
    # "When …?" is answered by a time, digits or not ("in May", "im 12. Jahrhundert").
    when = asks_when(question)
    time_quoted = when and any(
        TIME_STATED.search(q)
        or has_answer_type(q, "time", question)
        or (TIME_CLAUSE.search(q) and not re.search(r"\d", q) and not SPELLED.search(q))
        for q in quoted
    )
    # A day named without digits ("放榜次日", "on Monday") answers "哪一天" as a number would;
    # "free" answers a price.
    if (
        quantity
        and not day_quoted
        and not time_quoted
        and not any(has_quantity(q, question) for q in quoted)
        and not (asks_price(question) and any(FREE.search(q) for q in quoted))
    ):
        why = "the question asks for a quantity and the quoted evidence states none"
        # A price asked of the row quoted first, whose cell is left empty ("Whole pool hire
        # | Price on request"): no later quote about another item answers it.
        final = chosen[0].is_table_row and bool(chosen[0].empty) and asks_money(question)
        return r.refuse(why, "quantity", met=-1, final=final)
    # "How much is the microscope?" of a row whose price cell is empty: the row's digits
    # ("Room 204") are no quantity of it.
    empty = numbers_left_empty(chosen[0]) if quantity and not when else ""
    if empty and not any(has_quantity(q, question) for q in quoted[1:]):
        return r.refuse(f"the table gives no {empty!r} for the row quoted", "quantity", met=-1)
    # "When …?" asks for a time: a number that is not one (a length, a count of visitors)
    # does not answer it. (Chinese 何时/什么时候 are not quantity cues: an event answers them.)
    if quantity and not day_quoted and when and not time_quoted:
        return r.refuse("the question asks when and the quoted evidence gives no time", "time", -1)
    # A question asking for a date or year by name ("哪一天", "what year") needs one in the
    # quoted sentences that the question does not already give.
    if asks_date(question) and not any(has_answer_type(q, "time", question) for q in quoted):
        why = "the question asks for a date and the quoted evidence states none"
        return r.refuse(why, "time", total=1)
    # "哪一天", "on what date": a year or a month alone does not say which day.
    if day and not day_quoted:
        return r.refuse(
            "the question asks for a day and the quoted evidence names none", "time", total=1
        )
    unit = asked_unit(question) if quantity else ""
    # A Han unit is counted in the quoted sentences themselves: "多少年" needs a number of
    # years there. (A table states its unit once, in the header or caption, and may name
    # it otherwise: "employees" counted in a Staff column.)
    if unit and (
        not (
            unit_found(unit, r.evidence)
            or counted_in_column(unit, chosen[0], r.similarity, synonyms_of(unit, r.expanded))
        )
        or (
            has_han(unit)
            and not chosen[0].is_table_row
            and not any(unit_counted(unit, q, bool(ORDINAL_Q.search(question))) for q in quoted)
        )
    ):
        why = f"the question asks how many {unit} and the quoted evidence gives none"
        return r.refuse(why, "unit", met=-1)
    # "¿Cuántos astrónomos …?", "Сколько туристов …?": a count, not a year or a measure
    # of another kind ("2.340 metros", "en 2008", "18 km²"); the counted noun itself may
    # be worded otherwise ("60 Arbeitsplätze" for Sitzplätze), so it is not required.
    noun = counted_noun(question) if quantity and not unit and r.measure is None else ""
    if noun and not any(states_count(q, question, noun) for q in quoted):
        why = (
            "the question asks how many and the quoted evidence gives only years or "
            "measures of another kind"
        )
        return r.refuse(why, "quantity", met=-1)
    # "How tall", "how much money", "to what angle": a measure of that kind, with its unit.
    if r.measure is not None and not states_measure(r.measure, r.evidence):
        why = f"the question asks for a {r.measure} and the quoted evidence gives none"
        return r.refuse(why, "unit", met=-1)
    # "哪所学校", "which agency": the quote must name one, not only repeat the question.
    kind = asked_kind(question)
    if kind and not any(names_kind(kind, q) for q in quoted):
        why = f"the question asks which {kind} and the quoted evidence names none"
        return r.refuse(why, "kind", total=1)
    return None


def _band(r: _Reading) -> Verdict | None:
    """The quoted rule is for another size or band than the amount the question gives."""
    asked = ", ".join(repr(a.text) for a in r.amounts)
    sizes = other_sizes(r.amounts, r.evidence) if r.banded is not True else []
    if sizes:  # the row of another size: "20呎貨櫃", asked about a 40呎 one
        return r.refuse(
            f"the quoted rule is for {', '.join(map(repr, sizes))}, not {asked}", "band", met=-1
        )
    if r.banded is False:  # the rule of another band: 满1年不满10年, asked about 12 years
        quoted_bands = ", ".join(repr(b) for b in bands_written(r.amounts, r.evidence))
        return r.refuse(f"the quoted rule is for {quoted_bands}, not {asked}", "band", met=-1)
    return None


def _names(r: _Reading) -> Verdict | None:
    """An identifier or name the question gives that the quote (or, for names in another
    language, its document) does not."""
    missing = [*r.missing_ids, *r.missing_names, *r.missing_inflected]
    if missing:
        return r.refuse(f"no quoted passage mentions {', '.join(map(repr, missing))}", "name")
    return None


def _sibling(r: _Reading) -> Verdict | None:
    """A quote about a sibling of the thing asked: another subject in the same slot
    (国际空间站 for 天宫空间站), the opposite of what is asked, or another kind (in prose or
    a row's key: "Worker type: Full-time employee")."""
    question, quoted, chosen = r.question, r.quoted, r.chosen
    # Table rows are left to the row check: their cells are not sentences.
    if not chosen[0].is_table_row:
        sub = substitution(
            question,
            " ".join(quoted),
            " ".join([*(_scope(c) for c in chosen), r.doc_names]),
            r.same_doc,
            r.synonyms,
            r.doc_names,
            " ".join(c.chunk.text for c in chosen),
            r.similarity,
        )
        if sub is not None:
            return r.refuse(sub.describe(), "subject", asked=sub.asked)
        if has_han(question) and (negated := han_negated(question, " ".join(quoted))):
            return r.refuse(
                f"the quoted text says {negated!r}, the opposite of what is asked", "facet"
            )
    # Another kind: one a table's rows name, or a hyphenated sibling.
    kind_miss = "" if chosen[0].is_table_row else kind_unquoted(question, r.evidence, r.retrieved)
    kind_asked = ""  # (another document that answers must name it)
    if not kind_miss and not has_han(question):
        kind_miss, kind_asked = hyphen_sibling(question, r.evidence, r.same_doc)
    elif not kind_miss and not chosen[0].is_table_row:  # (rows: the row checks below)
        kind_miss, kind_asked = han_modifier_sibling(question, r.evidence, r.same_doc)
    if kind_miss:
        return r.refuse(kind_miss, "subject", asked=kind_asked)
    return None


def _row(r: _Reading) -> Verdict | None:
    """A quoted table row that is not the one asked: another row's key, a cell of another
    value than the question's, a column the table does not give, an empty cell asked."""
    question, chosen, best = r.question, r.chosen, r.chosen[0]
    # (A row whose band holds the amount asked is picked out by it: "250-999" seats.)
    row_miss = "" if r.banded else row_not_asked(question, best, r.same_doc)
    if not row_miss and best.is_table_row:
        other = row_substitution(
            question, best.cells, f"{best.chunk.text} {best.context}", r.same_doc
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
    if not row_miss and best.is_table_row:
        row_miss, row_asked = row_of_another(question, best, r.retrieved)
        if r.banded and row_asked.replace(",", "").replace(".", "").isdigit():
            row_miss = row_asked = ""  # the amount asked, which the row's band holds
        elif row_asked and day_met(row_asked, r.evidence, r.same_doc):
            row_miss = row_asked = ""  # a day the row's defined term holds ("Peak")
        if not row_miss and has_han(question):
            row_miss, row_asked = han_row_of_another(question, best)
    first_row = next((c for c in chosen if c.is_table_row), None)  # (under its caption)
    if not row_miss and first_row is not None and has_han(question):
        row_miss = han_sibling_row(question, first_row, r.same_doc)
        if not row_miss:
            row_miss, row_asked = han_keyed_elsewhere(question, first_row, r.retrieved)
        unmet = [] if row_miss else han_column_unmet(question, first_row, r.same_doc, r.similarity)
        if unmet:
            return r.refuse(f"the table gives no {', '.join(map(repr, unmet))}", "facet")
    if not row_miss and best.is_table_row:
        row_miss = value_of_another_row(question, best, r.retrieved)
    if not row_miss and first_row is not None:
        row_miss = empty_column_asked(question, first_row)
    if not row_miss:
        row_miss = named_row_blank(question, chosen)
    if row_miss:
        return r.refuse(row_miss, "row", asked=row_asked)
    return None


def _han_names(r: _Reading) -> Verdict | None:
    """A Chinese question's names or subject that the quoted document does not mention
    (after the sibling and row checks, which say more)."""
    if r.missing_han:
        return r.refuse(f"no quoted passage mentions {', '.join(map(repr, r.missing_han))}", "name")
    return None


def _facet(r: _Reading) -> Verdict | None:
    """A quote about the thing asked but not about what is asked of it (another paragraph
    on the same bridge): the question's other words, none of them quoted."""
    facet = _facet_miss(
        r.question,
        r.quoted,
        [_scope(c) for c in r.chosen],
        r.asked_names,
        r.retrieved,
        r.doc_names,
        r.similarity,
        r.chosen[0].cells,
        r.expanded,
    )
    return r.refuse(facet, "facet") if facet else None


def _scope_of_rules(r: _Reading) -> Verdict | None:
    """What is asked is left to another rule, or put outside the document's rules."""
    deferred = (
        left_to_another_rule(r.question, r.chosen, r.retrieved)
        or deferred_beside(r.question, r.chosen, r.beside)
        or band_left_open(r.amounts, r.quoted)
        or row_left_open(r.question, r.chosen)
    )
    if deferred:
        return r.refuse(f"the document leaves what is asked to another rule: {deferred!r}", "facet")
    item = excluded_item(r.question, r.chosen[0])
    if item:
        why = f"the document puts what is asked outside its rules: {item!r}"
        return r.refuse(why, "subject", final=True)
    quoted = [normalise(q) for q in r.quoted]
    excluded, left_out = only_excluded(r.question, r.evidence, r.doc_parts, quoted)
    if left_out:
        # (Another document may answer for it, if it names it: `asked`.)
        why = f"the document puts what is asked outside its rules: {left_out!r}"
        return r.refuse(why, "subject", asked=excluded)
    return None


def _version(r: _Reading) -> Verdict | None:
    """The document names what is asked (a version, period or name) only as replaced, or
    is another version than the one asked."""
    versions = asked_versions(r.question)
    gone, said = only_replaced(
        [(v, version_found) for v in versions]
        + [(t, period_found) for t in r.wanted_periods]
        + [(t, name_found) for t in r.asked_names],
        r.evidence,
        r.same_doc,
    )
    if gone:
        return r.refuse(f"the document names {gone!r} only as replaced: {said!r}", "period", -1)
    # (Only a question asking one version: the texts are not joined for every answer.)
    asked_version, own = (
        other_version(versions, f"{r.evidence} {r.same_doc}") if len(versions) == 1 else ("", "")
    )
    if asked_version:
        why = f"the document is another version ({own!r}) and does not name {asked_version!r}"
        return r.refuse(why, "period", met=-1)
    return None


def _periods(r: _Reading) -> Verdict | None:
    """Periods the quote is not about: a partial answer where the question lists them side
    by side and some are met, not covered otherwise."""
    if not r.missing_periods:
        return None
    met_periods = [t for t in r.wanted_periods if t not in r.missing_periods]
    if met_periods and coordinated(r.question, r.wanted_periods):
        return Verdict(
            True,
            f"partial: the documents give this for {', '.join(met_periods)} "
            f"but not for {', '.join(r.missing_periods)}",
            partial=True,
            constraints=r.total,
            met=r.met,
            pins=r.pins,
        )
    return r.refuse(f"the quoted evidence is not about {', '.join(r.missing_periods)}", "period")


# The checks, in the order they are tried: the first that has something to say decides.
_CHECKS: tuple[Callable[[_Reading], Verdict | None], ...] = (
    _kind_of_answer,
    _band,
    _names,
    _sibling,
    _row,
    _han_names,
    _facet,
    _scope_of_rules,
    _version,
    _periods,
)


def judge(
    question: str,
    intent: str,
    quoted: Sequence[str],
    chosen: Sequence[Candidate],
    retrieved: Sequence[Chunk] = (),
    synonyms: Mapping[str, Sequence[str]] | None = None,
    similarity: Similarity | None = None,
    beside: Sequence[Candidate] = (),
) -> Verdict:
    """Whether the quoted sentences (with their passages' declared scope) answer the
    question. `quoted` is the answer's sentences as shown, best first; `retrieved` the
    passages retrieved for it (an acronym may be spelled out only elsewhere in the same
    document); `similarity` (the embedder's, when there is one) tells a quote that says
    what was asked in other words from one about something else; `beside`: the answer's
    other quotes of the same document, shown with it (one that leaves what is asked to a
    later rule makes it no answer)."""
    if not quoted or not chosen:
        return Verdict(False, "no retrieved text to quote")
    reading = _read(question, intent, quoted, chosen, retrieved, synonyms, similarity, beside)
    for check in _CHECKS:
        verdict = check(reading)
        if verdict is not None:
            return verdict
    return Verdict(True, constraints=reading.total, met=reading.met, pins=reading.pins)


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
