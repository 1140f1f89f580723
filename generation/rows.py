"""Checks of a quoted table row and of a quote about a sibling of what is asked: an empty
cell or column asked, a row of another key (by name, code or Han modifier), a kind the
quote does not name, a negated or hyphenated sibling, a value written in another row."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

from core.lang import function_word, has_hangul, has_kana
from core.text import STOPWORDS, content_terms, has_han, stem, tagged_words
from core.types import Chunk
from generation.attribute import names_a_column
from generation.blocks import naming_column
from generation.han_names import WHICH_HAN, char_pairs, han_names, han_subject
from generation.names import YEAR, file_name, key_terms, name_found
from generation.passages import Candidate, candidates, normalise, row_key
from generation.quantities import asks_money, states_measure
from generation.scope import term_in
from generation.similarity import Similarity
from generation.slots import SCAFFOLDING
from generation.yes_no import YES_NO_HAN

# A question about what a row lacks ("Which city has no staff cap?") is answered by the row
# whose cell is empty.
_ASKS_ABSENCE = re.compile(r"\b(?:no|not|without|missing|empty|blank|lacks?)\b|没有|无|缺|空", re.I)
_HEADER_WORD = re.compile(r"[\u3400-\u9fff]{2,}|[^\W_]*[^\W\d_][^\W_]*")


def empty_column_asked(question: str, row: Candidate) -> str:
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
    # A price asked of a row that states none: the empty cell is its price ("Whole pool
    # hire | Price on request").
    if asks_money(question) and not states_measure("sum of money", present):
        return f"the table gives no {row.empty[0]!r} for the row quoted"
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
            elif has_hangul(word) or has_kana(word):
                # Whole, inside the question's word: Korean and Japanese write their
                # particles on ("이용료는" of 이용료).
                if len(word) < 2 or word not in lowered or word in present:
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


def named_row_blank(question: str, chosen: Sequence[Candidate]) -> str:
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


def numbers_left_empty(row: Candidate) -> str:
    """The header of a column of numbers (every other value of the table there is one:
    "4,200", "€ 90") which the quoted row leaves empty, when no cell of the row is a
    quantity: its digits are labels ("Room 204"), or name the row (a Fiscal Year, an id),
    not the quantity asked. "" otherwise."""
    if not row.empty or any(
        _NUMBER_CELL.match(v) and not naming_column(h) and not YEAR.fullmatch(v.strip())
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


def row_not_asked(question: str, best: Candidate, same_doc: str) -> str:
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
    # (Not the asker's words: "want", "need".)
    terms = [
        t
        for t in content_terms(question)
        if len(t) > 1 and not t.isdigit() and t not in SCAFFOLDING
    ]
    values = normalise(" ".join(v for _, v in best.cells))
    if any(term_in(t, values) for t in terms):
        return ""
    table = normalise(f"{best.chunk.title} {file_name(best.chunk.source)} {best.chunk.text}")
    absent = [t for t in terms if not term_in(t, table) and not term_in(t, same_doc)]
    return f"the table has no row for {', '.join(repr(t) for t in absent)}" if absent else ""


def counted_in_column(
    unit: str, row: Candidate, similarity: Similarity | None, synonyms: Sequence[str] = ()
) -> bool:
    """Whether a quoted table row has a number in a column whose header means the unit
    asked ("How many employees …?" of a Staff column), or names one of the unit's domain
    synonyms the route applied (people = headcount, where the dictionary says so)."""
    headers = [h for h, v in row.cells if h and any(ch.isdigit() for ch in v)]
    named = normalise(" ".join(headers))
    if any(name_found(s, named) for s in synonyms):
        return True
    return similarity is not None and bool(headers) and names_a_column(unit, headers, similarity)


def row_of_another(question: str, row: Candidate, retrieved: Sequence[Chunk]) -> tuple[str, str]:
    """A quoted row keyed by a name the question does not give ("TiFlash Write Node",
    "bearerFormat"), none of whose cells holds the names it does give, while a retrieved
    table has a row keyed by one of those ("TiDB", "servers"): the quote is a sibling's
    row, matched through its other cells or the document's title. The names: the
    question's key terms, and its other words that key a retrieved row, unless a header
    of a retrieved table has them (a "type" asked is the Type column). (Why, the name
    asked), or ("", "")."""
    key = row.cells[0][1] if row.cells else ""
    if not re.search(r"[A-Za-z]", key) or name_found(key, normalise(question)):
        return "", ""
    keys = {r[0].strip().lower() for c in retrieved for r in c.table_rows if r}
    headers = {w for c in retrieved for h in c.table_header for w in re.findall(r"\w+", h.lower())}
    words = [t for t in content_terms(question) if t in keys and t not in headers]
    named = list(dict.fromkeys([*key_terms(question), *words]))
    cells = normalise(" ".join(v for _, v in row.cells))
    if any(name_found(n, cells) for n in named):
        return "", ""
    asked = [n for n in named if n.lower() in keys]
    if not asked:
        return "", ""
    return f"the row quoted is about {key!r}, not {', '.join(repr(n) for n in asked)}", asked[0]


# The words of a table's row keys, which name kinds of one thing ("Worker type": Full-time
# employee, Contractor): `kind_unquoted`.
_KEY_WORD = re.compile(r"[a-z][a-z0-9]*")
_ROW_KEY_WORDS = 4  # a key of more words is a description, not a name of a kind


def _key_stems(text: str) -> frozenset[str]:
    """The stems of a text's Latin words, and the character pairs of its Han runs (a Han
    key is named by its pairs: 实习生 by 实习, 习生)."""
    lowered = text.lower()
    latin = {stem(w) for w in _KEY_WORD.findall(lowered) if w not in STOPWORDS}
    return frozenset(latin.union(char_pairs(lowered)))


def kind_unquoted(question: str, evidence: str, retrieved: Sequence[Chunk]) -> str:
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
    """The keys (`row_key`) of every row of a quoted row's table."""
    return {row_key(c.cells) for c in candidates(row.chunk, row.hit_rank) if c.cells}


# A row's code ("D401", "A101", "EMB-01", "MON-01", "7"): a price list's first column,
# where the next one names the row.
def han_row_of_another(question: str, row: Candidate) -> tuple[str, str]:
    """A quoted row keyed by a name the Chinese question does not write ("西南区"), while
    its table has a row keyed by one it does ("华南区", whose cell asked may be empty):
    the figures are another row's. (Why, the key asked), or ("", "")."""
    key = row_key(row.cells)
    if not has_han(key) or key in question:
        return "", ""
    keys = _row_keys(row)
    asked = [k for k in keys if len(k) >= 2 and has_han(k) and k in question]
    if not asked:
        return "", ""
    name = max(asked, key=len)
    return f"the row quoted is about {key!r}, not {name!r}", name


_HYPHENED = re.compile(r"(?<![\w-])([a-z]+)-([a-z]+)(?![\w-])")


def hyphen_sibling(question: str, quoted: str, same_doc: str) -> tuple[str, str]:
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


def han_modifier_sibling(question: str, quoted: str, same_doc: str) -> tuple[str, str]:
    """A Chinese question's kind of a thing (中型货架, 上海分公司) whose distinguishing word
    (中型, 上海) its document never writes, while the quote writes the thing with another
    word of the same length in its place (重型货架, 轻型货架; 华南分公司): the quote is about
    its siblings. (Why, the kind asked), or ("", "")."""
    words = [(w, f) for w, f in tagged_words(question) if has_han(w)]
    for (mod, flag), (head, head_flag) in itertools.pairwise(words):
        if flag not in _MODIFIER_TAGS or head_flag not in _THING_TAGS or len(head) < 2:
            continue
        at = question.find(mod + head)
        if at < 0 or WHICH_HAN.search(question[:at]) or question[:at].endswith("几"):
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


def han_negated(question: str, quoted: str) -> str:
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


def han_sibling_row(question: str, row: Candidate, same_doc: str) -> str:
    """A Chinese question's name ("法务部") that the quoted row's key ("财务部") is a
    sibling of: the name is nowhere in the quoted document, and the key column holds
    names of its kind (two or more keys ending as it ends: 研发部, 市场部, 财务部). The
    row is another one's; the table has none for the name asked. Why, or ""."""
    key = row_key(row.cells)
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


def han_keyed_elsewhere(
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


def value_of_another_row(question: str, row: Candidate, retrieved: Sequence[Chunk]) -> str:
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
        if not h or name_found(value, asked) or not re.search(r"[^\W\d_]", value):
            continue
        for other in sorted(by_column.get(h, ())):
            name = normalise(other)
            # (Not where the quoted row says it too: "Permanent night" of "Night", a
            # description naming another field.)
            if (
                len(other) > 1
                and re.search(r"[^\W\d_]", other)
                and name_found(name, asked)
                and not name_found(name, quoted)
            ):
                return f"the row quoted has {h}: {value!r}, not {other!r}"
    return ""


# jieba's tags of words that say which figure a Chinese question asks of a row:
# abbreviations (人均, 同比) and ordinal periods (第三季度). (Nouns are too often the
# question's way of naming the document or the table: 示例, 申请表, 标准表.)
_ROW_WORD_TAGS = frozenset({"j", "mq"})


def han_column_unmet(
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
