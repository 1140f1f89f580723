"""Does the quote talk about a sibling of what was asked? A near miss often quotes a
sentence that matches the question word for word except in one slot: asked about
天宫空间站, it quotes 国际空间站.
The shared word (the anchor) is there, the question's word next to it is nowhere in the
quote, and the quote has another word of the same kind in that place.

Words are read in order: jieba's tagged cut, lower-case Porter2 stems for the Latin
words a Chinese question holds. Linking words ("的", "of") are skipped, so the words on
either side stay adjacent; articles, other function words, question words, units, numbers
and punctuation break adjacency, so the slot the answer fills ("谁发明了电话" / "贝尔发明了
电话") is never taken for a substitution, and neither is the noun a question word asks
for ("哪所学校", "which newspaper": the answer names one).

Chinese questions only. English has no tagger here, and on English questions written
apart from the code (bench/questions/multilingual/en_heldout.json) the check read
paraphrase as siblings ("most recent eruption" / "last eruption", "fresh lava dome" /
"new lava dome", "cable railway" / "funicular railway"): it refused 9 of 48 answerable
questions there for 2 near misses caught on the shared documents (bench/RESULTS.md).
Words of the question's other facets are checked for every spaced language by
`generation.attribute` instead.

Paraphrase is the risk, so a substitution counts only when it is one of like for like:
- Chinese: both words are nouns (jieba's n* tags), so "使用/用", "一直/不断" never count
  (a one-character noun of the question only when the quoted passages never have the
  character: "单个类的总行数" against "单个方法的总行数");
- never when the quote's word is an acronym of the question's words ("AOA" for "angle of
  attack") or a synonym the route applied (儿童 → 未成年人).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache

from core.lang import function_word, language
from core.text import (
    HAN_NUMERALS,
    KEYWORD_STOPWORDS,
    SOURCE_WORDS,
    han_word,
    has_han,
    stem,
    tagged_words,
)
from generation.attribute import form_word
from generation.similarity import Similarity

# Linking words: skipped, the words on either side stay adjacent ("species of eider
# ducks"). Articles are not: "raise an alert" / "send an alert" is a verb and its object,
# not a noun and its modifier.
_LINKS = frozenset({"的", "之", "of", "s"})
_PIECE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+|[A-Za-z][A-Za-z\-']*|\d[\d.,]*|\S")
_NUMERAL = re.compile(rf"^[\d.,]+$|^[{HAN_NUMERALS}亿]+$")
# Question words (the slot the answer fills), and units, which a quote states its own way.
_QUESTION_WORD = re.compile(r"^(?:哪|多少|几|什么|怎|如何|为何|是否|谁)")
_ASKS_FOR = frozenset({"which", "what", "whose"})
_UNITS = frozenset("年月日天周时分秒个次元米行页条项种位台件家座层级名人岁字")

# The scaffolding of a question, not what it is about.
SCAFFOLDING = frozenset(
    {
        "many",
        "much",
        "have",
        "has",
        "had",
        "give",
        "gives",
        "given",
        "provide",
        "provides",
        "show",
        "shows",
        "list",
        "listed",
        "record",
        "recorded",
        "report",
        "reported",
        "according",
        "total",
        "number",
        "value",
        "amount",
        "figure",
        "state",
        "stated",
        "say",
        "says",
        "said",
        "mention",
        "mentioned",
        "per",
        "does",
        "did",
        "多少",
        "几",
        "什么",
        "哪些",
        "哪个",
        "是否",
        "有",
        "为",
        "给出",
        "记录",
        "显示",
        "根据",
        "按",
    }
)

NOUN, WORD, ASKED_FOR = "n", "w", "a"  # a Chinese noun, another word, the noun asked for


@dataclass(frozen=True, slots=True)
class Substitution:
    asked: str  # the question's word, absent from the quote
    anchor: str  # the word both share
    instead: str  # the quote's word in that slot

    def describe(self) -> str:
        if not self.instead:  # the quote has the anchor alone, not the question's compound
            return f"the quoted text is about {self.anchor!r}, not {self.anchor + self.asked!r}"
        return f"the quoted text is about {self.instead!r} {self.anchor!r}, not {self.asked!r}"


def _barrier(w: str) -> bool:
    return (
        w in KEYWORD_STOPWORDS
        or function_word(w)  # "de" of "in de garage"
        or form_word(w)  # "Ile wyniesie cena za dobę?": no value of the column
        or w in SOURCE_WORDS
        or w in _UNITS
        or w in SCAFFOLDING
        or bool(_NUMERAL.match(w))
        or bool(_QUESTION_WORD.match(w))
    )


@lru_cache(maxsize=4096)
def words(text: str) -> tuple[tuple[str, str] | None, ...]:
    """(word, kind) in reading order; None where adjacency breaks."""
    out: list[tuple[str, str] | None] = []
    asking = False  # right after a question word: the noun it asks for
    pieces = _PIECE.findall(text.lower())
    for piece in pieces:
        if has_han(piece):
            parts = tagged_words(piece)
        elif piece[0].isalpha():
            parts = tuple((p, "eng") for p in re.split(r"['\-]", piece) if p)
        else:
            out.append(None)
            asking = False
            continue
        for w, flag in parts:
            if w in _LINKS or flag == "u":  # 哪所学校: 所 links too
                continue
            if _barrier(w):
                out.append(None)
                asking = w in _ASKS_FOR or bool(_QUESTION_WORD.match(w))
                continue
            # A one-character classifier stands for a noun ("单个类的总行数": 类).
            noun = flag.startswith("n") or (flag == "q" and len(w) == 1)
            kind = ASKED_FOR if asking else NOUN if noun else WORD
            out.append((stem(w) if w.isascii() else w, kind))
            asking = asking and not has_han(w)  # "which German verb": the phrase
    return tuple(out)


def _pairs(
    seq: tuple[tuple[str, str] | None, ...],
) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    return [(a, b) for a, b in itertools.pairwise(seq) if a is not None and b is not None]


def _specific(word: str) -> bool:
    """A word specific enough to align a slot on."""
    return len(word) >= 2 if has_han(word) else len(word) >= 3


def _in_passage(word: str, passage: str) -> bool:
    """A Han word is in the passage when most of its character pairs are: jieba may join a
    name to the next word ("符泳练水" for 符泳 … 练水). A one-character word has no pairs:
    it is in the passage when its character is."""
    if len(word) == 1:
        return word in passage
    pairs = [word[i : i + 2] for i in range(len(word) - 1)]
    return sum(p in passage for p in pairs) * 3 >= len(pairs) * 2


def mentioned(word: str, text: str) -> bool:
    """A word of `words` (a Han word, or a Latin stem) in a text."""
    text = text.lower()
    return _in_passage(word, text) if has_han(word) else word in _latin_stems(text)


def _head_siblings(a: str, b: str) -> bool:
    """Two Han words of one length that end in the same character and share no other:
    kinds of one thing (婚假/丧假)."""
    return len(a) == len(b) >= 2 and a[-1] == b[-1] and not set(a[:-1]) & set(b[:-1])


def _same_root(a: str, b: str) -> bool:
    """Two Latin stems with the same consonants in the same order: forms of one word that
    differ in a vowel, which the stemmer leaves apart (becam/becom, wrote/write, began/
    begin), not siblings (eider/steamer, swan/swallow)."""
    ca, cb = (re.sub(r"[aeiouy]", "", w) for w in (a, b))
    return len(ca) >= 2 and ca == cb and a[0] == b[0]


def _acronym(short: str, question_words: list[str]) -> bool:
    """`short` spells the initials of consecutive question words ("aoa": angle of attack,
    "pep": policy enforcement point; a plural "s" may follow)."""
    letters = short[:-1] if short.endswith("s") and len(short) > 2 else short
    if not letters.isascii() or not letters.isalpha() or len(letters) < 2:
        return False
    initials = "".join(w[0] for w in question_words if w.isascii() and w[:1].isalpha())
    return letters in initials


def _explained(word: str, alternatives: Mapping[str, list[str]], text: str) -> bool:
    """A synonym the route applied to (a part of) the word is in the quote: 个人数据处理者
    asked, 个人信息处理者 quoted."""
    for term, alts in alternatives.items():
        related = term == word or (has_han(word) and (term in word or word in term))
        if related and any(alt in text for alt in alts):
            return True
    return False


def _latin_stems(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z]+", text)}


def substitution(
    question: str,
    quote: str,
    scope: str = "",
    document: str = "",
    synonyms: Mapping[str, Collection[str]] | None = None,
    names: str = "",
    passage: str = "",
    similarity: Similarity | None = None,
) -> Substitution | None:
    """The first slot where the quote has another word of the same kind than the question,
    around a word both share, while the question's word is nowhere in the quote or its
    scope (`scope`: the passage's title, headings, the document's names; `document`: the
    quoted document's retrieved text; `synonyms`: the route's applied expansions; `names`:
    the quoted document's title and file name; `passage`: the quoted passages' text), nor,
    given the embedder's `similarity`, said by a word of the quote in other words (补贴 by
    补助: SAME_MEANING). Chinese questions only (see the module doc)."""
    if language(question) != "zh":
        return None
    text = f"{quote} {scope}".lower()
    stems = _latin_stems(text)
    alternatives = {k.lower(): [a.lower() for a in v] for k, v in (synonyms or {}).items()}
    passage = passage.lower()

    def there(word: str) -> bool:  # cheap: no tagging of the quote
        return word in text if has_han(word) else word in stems

    # Slots worth aligning: the anchor is in the quote, the question's word beside it is
    # nowhere in the quote, its scope, a synonym the route applied, or (Latin words) the
    # quoted document; a Han word must be a noun that the quoted passages never name.
    slots: list[tuple[str, str, int, bool]] = []  # (..., whether a word of any kind counts)
    verb_heads: list[tuple[str, str]] = []  # (a word that is no noun, the noun after it)
    doc_stems: set[str] | None = None
    for a, b in _pairs(words(question)):
        for (anchor, anchor_kind), (missing, kind), side in ((a, b, 1), (b, a, 0)):
            if kind == ASKED_FOR or not _specific(anchor) or not there(anchor):
                continue
            if there(missing) or _explained(missing, alternatives, text):
                continue
            if has_han(missing):
                # (A one-character noun, 类 or 头, only when no quoted passage has it. A
                # longer word jieba tags otherwise may still be a head's sibling: 丧假.)
                if (kind != NOUN and len(missing) < 2) or _in_passage(missing, passage):
                    continue
            else:
                doc_stems = _latin_stems(document.lower()) if doc_stems is None else doc_stems
                if missing in doc_stems:
                    continue
            slots.append((anchor, missing, side, kind == NOUN or not has_han(missing)))
            # A verb and a one-character noun written as one word (请求头, 响应体): a
            # compound noun. A longer noun after a verb is its object (处理孩子的信息).
            compound = anchor + missing
            one_word = len(missing) == 1 and has_han(compound) and compound in question
            if side == 1 and anchor_kind == WORD and one_word:
                verb_heads.append((anchor, missing))
    if any(not any_kind for *_, any_kind in slots):
        # (A word tagged otherwise counts only as a sibling of one of the quote's nouns.)
        nouns = {w for w, kind in filter(None, words(quote)) if kind == NOUN}
        slots = [s for s in slots if s[3] or any(_head_siblings(n, s[1]) for n in nouns)]
    if slots and similarity is not None:
        slots = [s for s in slots if not _said_otherwise(s[1], quote, similarity)]
    if not slots:
        return None
    # The words naming the quoted document ("according to the Wikipedia Duck article") are
    # where to look, not what is asked: the quote's "ducks" may stand in for "penguins".
    named = {w for w, _ in filter(None, words(names))} if names else set()
    qwords = {w for w, _ in filter(None, words(question))} - named
    raw_words = re.findall(r"[a-z]+", question.lower())
    quote_pairs = _pairs(words(quote))
    for anchor, missing, side, any_kind in slots:
        latin = not has_han(missing)
        for left, right in quote_pairs:
            (here, _), (other, other_kind) = (left, right) if side == 1 else (right, left)
            if here != anchor or other in qwords or not _specific(other):
                continue
            if _acronym(other, raw_words):
                continue
            # Han words sharing a character are forms of one word (藏书量/藏书, 长度/长约),
            # not siblings - unless they share only the head, the last character, and
            # are of one length: kinds of one thing (婚假/丧假, 一等座/二等座), whatever
            # jieba tags the question's word (丧假 a verb).
            if not latin:
                sibling = _head_siblings(other, missing)
                if other_kind != NOUN:
                    continue
                if not (sibling or (any_kind and not set(other) & set(missing))):
                    continue
            # Latin stems of one word's forms (become/became, write/wrote) start alike.
            if latin and _same_root(other, missing):
                continue
            return Substitution(missing, anchor, other)
    # A Han noun the question makes of a verb and a one-character noun (请求头, "request
    # header"; 选举的重要性 is an attribute, 处理孩子 a verb and its object) whose head
    # no quoted passage has, while the quote uses the verb as a verb only, never
    # before a noun (请求通过 URL 传递参数): the quote is about the act, not the thing.
    # (A noun's compound, 项目代码 against 项目使用, is left alone: paraphrase.)
    for anchor, missing in verb_heads:
        if anchor + missing in text:
            continue
        uses = [(here, after) for here, after in quote_pairs if here[0] == anchor]
        if uses and all(here[1] == WORD and after[1] != NOUN for here, after in uses):
            return Substitution(missing, anchor, "")
    return None


# A quote's word this close in meaning to the question's word says it in other words
# (补贴/补助 0.73, 员工/职工 0.75, 价格/售价 0.81); siblings stay below (经理/总监 0.59,
# 法务/财务 0.50, 一等座/二等座 0.53).
SAME_MEANING = 0.65


def _said_otherwise(word: str, quote: str, similarity: Similarity) -> bool:
    if not has_han(word):
        return False
    # Any word of the quote (jieba tags 补助 a verb), not a number or a single character.
    said = list(dict.fromkeys(w for w, _ in filter(None, words(quote)) if han_word(w)))
    return bool(said) and max(similarity(word, said)) >= SAME_MEANING


_LIST_MARK = re.compile(r"[,，、;；/]")
_VALUE_BEFORE_HAN = re.compile(rf"([{HAN_NUMERALS}\d]+)$")


def _numeric(value: str) -> bool:
    return bool(value) and all(c.isdigit() or c in HAN_NUMERALS or c in ".," for c in value)


def _standalone(value: str, text: str) -> bool:
    """The value as a cell of its own: not inside a longer number or word."""
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", text) is not None


def _header_in_question(header: str, question: str) -> str:
    """The longest part of a column header the question writes (Han: two characters or
    more, "车道数" -> "车道"; Latin: a whole word, "Field Name" -> "field")."""
    if has_han(header):
        for size in range(len(header), 1, -1):
            for i in range(len(header) - size + 1):
                part = header[i : i + size]
                if has_han(part) and part in question:
                    return part
        return ""
    for w in sorted(re.findall(r"[a-z]{3,}", header.lower()), key=len, reverse=True):
        if re.search(rf"\b{w}\b", question.lower()):
            return w
    return ""


def _value_asked(part: str, question: str) -> str:
    """The value the question puts on a column: the numeral right before a Han header
    ("十车道"), or the word right before a Latin one ("the phone field")."""
    at = question.lower().find(part)
    before = question[:at]
    if has_han(part):
        m = _VALUE_BEFORE_HAN.search(before)
        return m.group(1) if m else ""
    m = re.search(r"([A-Za-z][\w\-]*)\s+$", before)
    word = m.group(1).lower() if m else ""
    if not word or _barrier(word) or len(word) < 3:  # ("wie viel Skonto": no value)
        return ""
    return word


_ONE = frozenset({"one", "a", "an", "1", "single"})


def row_substitution(
    question: str, cells: Collection[tuple[str, str]], table: str, document: str = ""
) -> Substitution | None:
    """A quoted table row whose key cell is another value than the one the question puts
    on that column, which the table has nowhere: asked for "十车道", the row says 车道数: 八;
    asked for "the phone field", it says Field Name: url. A Latin word the quoted document
    (`document`: its retrieved text) uses is not taken for a value ("the duck food
    table": the document is about ducks)."""
    table = f"{table} {document}".lower() if not has_han(question) else table.lower()
    values = {v.lower() for _, v in cells}
    for header, value in cells:
        if not value or len(value) > 24 or len(value.split()) > 3 or _LIST_MARK.search(value):
            continue  # a description or a list of things, not a key
        part = _header_in_question(header, question)
        asked = _value_asked(part, question) if part else ""
        if not asked or _numeric(asked) != _numeric(value) or asked in values:
            continue
        if asked in _ONE and re.search(rf"\bper {re.escape(part)}", header, re.IGNORECASE):
            continue  # "for one night" of a column "Maximum per night": the rate asked
        if _numeric(asked) and (f"{asked}{part}" in table or _standalone(asked, table)):
            continue  # another row has it: that row, not this one, is the answer
        if not _numeric(asked) and re.search(rf"(?<![a-z]){re.escape(asked)}", table):
            continue
        if _numeric(asked) and not has_han(part):
            continue
        return Substitution(asked, header, value)
    return None


_CELL_WORD = re.compile(r"[^\W_][\w.\-]*", re.UNICODE)
_CELL_SPAN = 4  # the question's words between the first and last it shares with a cell


def cell_substitution(question: str, cells: Collection[tuple[str, str]]) -> Substitution | None:
    """A quoted table row named by part of one of its cells with another word in its
    place: asked for "Steel nut M8", the row's Product is "Steel bolt M8"; asked for
    "Steel washer M8", the same. A cell names its row canonically, so a word of the
    question between two of the cell's words (within a few words) that the cell does not
    have, while the cell has a word the question lacks, names another thing. Spaced
    languages only (Chinese: `row_substitution` and `substitution`); words compared by
    their stems ("bolts" is "bolt")."""
    if has_han(question):
        return None
    asked = [w.rstrip(".-") for w in _CELL_WORD.findall(question.lower())]
    stems = [stem(w) for w in asked]
    for _, value in cells:
        if not value or len(value) > 40 or _LIST_MARK.search(value):
            continue  # a description or a list of things, not a name
        written = [w.rstrip(".-") for w in _CELL_WORD.findall(value.lower())]
        cell = [stem(w) for w in written]
        if not 2 <= len(cell) <= 5:
            continue
        shared = [i for i, s in enumerate(stems) if s in cell]
        if len({stems[i] for i in shared}) < 2 or shared[-1] - shared[0] > _CELL_SPAN:
            continue
        between = [
            asked[i]
            for i in range(shared[0] + 1, shared[-1])
            if stems[i] not in cell and not _barrier(asked[i])
        ]
        # (Between the cell's own shared words: "Third contravention in 12 months" is no
        # other thing than a "third parking contravention"; "Steel bolt M8" is.)
        held = [j for j, s in enumerate(cell) if s in stems]
        lacking = [written[j] for j in range(held[0] + 1, held[-1]) if cell[j] not in stems]
        if between and lacking:
            return Substitution(between[0], value, lacking[0])
    return None
