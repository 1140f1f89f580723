"""Cut a retrieved chunk into answer candidates: sentences, and table rows with their headers.

Every candidate keeps the page it sits on (chunk text marks page breaks with a form feed,
"\\f", as PDF text extraction does) so a multi-page chunk can be cited by the right page.
Candidate text is the chunk's own text with whitespace normalised; table rows are the one
exception: each cell is shown as "Header: value" so a bare number keeps its meaning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.text import has_han, split_sentences
from core.types import Chunk
from generation.footnotes import strip_mark

# Terminal punctuation: a line ending with one of these finishes its sentence.
_END_PUNCT = tuple("。！？!?；;.:：")
# Punctuation after which a wrapped line clearly continues.
_SOFT_END = tuple(",，、-–(（")
# A markdown table separator row: | --- | :---: |
_SEPARATOR_ROW = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# Lines that start a structure of their own (list items, headings, quotes) are never
# glued onto the line before them.
_STRUCT_START = re.compile(r"^\s*(#{1,6}\s|[-*•·]\s|\d{1,3}[.)、]\s|[（(]?\d{1,3}[)）]|>\s)")
# An item of a list written inline in running text: "第一，…。第二，…", "首先…其次…",
# "一是…二是…", "（一）…".
_INLINE_ITEM = re.compile(
    r"^\s*(?:第[一二三四五六七八九十]{1,3}[，、,：:]|首先|其次|再次|最后[，,]|其[一二三四五六][，、,]|"
    r"[一二三四五六七八九十]是|[（(][一二三四五六七八九十][)）]|(?:first|second|third|finally),)",
    re.IGNORECASE,
)
# A sentence that announces a list: "有以下三点：", "包括如下几个方面", "as follows:".
_ANNOUNCES = re.compile(
    r"(?:以下|如下|下列)[^。！？]{0,8}[：:]|[：:]\s*$|as follows|"
    r"[有分为包括含成][一二三四五六七八九十几两\d]+[^，。；：:\s]{0,4}[：:]"
)
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_DIGITS_ONLY = re.compile(r"^[\d\s,.%+\-–/:]+$")
# A line opening with a short label and a colon is a field of its own ("记录人：张婷",
# "Owner: Security Operations"), not the rest of the line before it.
_LABEL_LINE = re.compile(
    r"^(?:[\u3400-\u9fff]{1,6}|[A-Z][A-Za-z]{1,15}(?: [A-Za-z]{1,15})?)\s?[：:]"
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One thing the extractive answer may quote."""

    text: str
    chunk: Chunk
    hit_rank: int
    position: int  # order inside the chunk, for stable tie-breaking
    page: int
    # True when the sentence was a whole line of its own without end punctuation:
    # headings and captions look like this, and they are poor answers.
    own_line: bool = False
    # Table rows only: (header, value) pairs in column order, empty cells dropped.
    cells: tuple[tuple[str, str], ...] = ()
    # Table rows only: the headers of the columns this row leaves empty.
    empty: tuple[str, ...] = ()
    # Table rows only: the lines just before the table (its caption, the breadcrumb).
    # They are part of what a row means ("修订历史"), so they count when matching.
    context: str = ""
    # The chunk text lines (0-based, inclusive) the candidate was taken from.
    first_line: int = 0
    last_line: int = 0
    # True when the candidate is a list item, or a sentence that introduces a list (ends
    # with a colon right before list items).
    list_item: bool = False
    intro: bool = False
    # The sub-heading the candidate stands under inside its chunk: the last line of its
    # own without end punctuation before it ("Mozilla Location Service" in a chunk where
    # short subsections were merged under "Other activities"). What the passage declares
    # its scope to be, as its section path does; not used to rank quotes.
    heading: str = ""

    @property
    def is_table_row(self) -> bool:
        return bool(self.cells)


def normalise_ws(text: str) -> str:
    return " ".join(text.split())


def _cells(line: str) -> list[str] | None:
    """The cells of a table line (pipe- or tab-separated), or None for an ordinary line."""
    if "\t" in line:
        cells = [c.strip() for c in line.split("\t")]
    elif "|" in line:
        body = line.strip()
        body = body[1:] if body.startswith("|") else body
        body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
        # Markdown escapes a pipe inside a cell as "\|".
        cells = [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(body)]
    else:
        return None
    return cells if len(cells) >= 2 else None


# A cell holding a number alone ("1", "2,140", "12.5%").
_NUMBER_CELL = re.compile(r"[-+]?\d[\d,.]*%?")


# A cell that holds only a sign for "no value" ("—", "-", "N/A", "TBD", "待定", "待确认",
# "暂无"; "noch offen", "k. A.", "pendiente", "por definir", "à définir") is empty: asked
# for it, the table gives nothing, not the dash. ("NA" without its slash is a value:
# North America; "offen" alone is a status.) So is one that sends the reader to ask for
# the value ("on request", "POA", "auf Anfrage", "sur demande", "문의", "お問い合わせ",
# "询价"): a price on request is no price. (The deferrals of `generation.scope`, "sob
# consulta", "sur devis", "별도 문의", "面议", leave a cell open instead: `row_left_open`.)
_PLACEHOLDER = re.compile(
    r"[-–—−/\s]+|n/a|tb[acd]|待定|待確認|待确认|暂无|暫無|未定|미정|noch offen|k\. ?a\.|pendiente|"
    r"por (?:definir|determinar|confirmar)|[àa] (?:d[ée]finir|d[ée]terminer|confirmer)|"
    r"da (?:definire|stabilire|confermare)|a (?:definir|confirmar)|nader te bepalen|"
    r"уточняется|"
    r"(?:price )?(?:on|upon|by) (?:request|application|enquiry|inquiry)|poa|"
    r"auf anfrage|sur demande|su richiesta|a (?:pedido|petición|solicitud|richiesta)|"
    r"bajo (?:petición|pedido)|op aanvraag|по запросу|"
    # (no such option: "Precio no socio: No disponible", "100 pcs: not available")
    r"not available|no disponible|non disponibile|non disponible|n[ãa]o dispon[íi]vel|"
    r"nicht verf[üu]gbar|niet beschikbaar|"
    r"(?:전화 )?문의|要?お?問い?合わ?せ|询价|詢價|电洽|電洽|另询|另詢",
    re.I,
)


def _blank(value: str) -> bool:
    # (A footnote's mark after a placeholder, "TBD²", leaves it a placeholder.)
    return not value or _PLACEHOLDER.fullmatch(strip_mark(value)) is not None


def _row_pairs(header: list[str], row: list[str]) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    for i, value in enumerate(row):
        name = header[i] if i < len(header) else ""
        # Empty cells say nothing; a value repeating the cell before is a merged cell
        # that the parser copied into every column it spans, unless it is a number and
        # both columns have headers of their own: two columns often count the same
        # ("Valves: 1 | Pumps: 1"), and a merged header leaves its other columns empty.
        before = header[i - 1] if 0 < i <= len(header) else ""
        own_count = bool(_NUMBER_CELL.fullmatch(value) and name and before and name != before)
        if _blank(value) or (pairs and pairs[-1][1] == value and not own_count):
            continue
        pairs.append(("" if name == value else name, value))
    return tuple(pairs)


# A first column that only numbers the rows ("序号", "No.", "#" over 1, 2, 3 …) says nothing
# of a row: its key is the next column (a row keyed "12" was quoted for "12个人").
_INDEX_HEADER = re.compile(r"序号|序|编号|no\.?|#|nr\.?|n[º°]|s/?n|s\. ?no\.?|lfd\. ?nr\.?", re.I)


def _index_column(header: list[str], body: list[tuple[int, list[str]]]) -> bool:
    return (
        len(header) > 2
        and _INDEX_HEADER.fullmatch(header[0].strip()) is not None
        and all(row[:1] and row[0].strip().isdigit() for _, row in body)
    )


# A table's only filled cell that reads as a note: this long, or a sentence ending so.
_NOTE_CHARS = 60
_NOTE_END = re.compile(r"[.。!?！？]$")


def _note_row(header: list[str], row: list[str]) -> str:
    """The text of a row that is a note, not a record: its first cell alone is filled (in
    a table of three columns or more), with prose ("* End of month means the 60 days are
    counted from ...", "Intercompany invoices are settled through ... ."); else ""."""
    if len(header) < 3 or not row or any(not _blank(c) for c in row[1:]):
        return ""
    first = row[0].strip()
    words = len(first.split())
    return first if words >= 5 and (len(first) >= _NOTE_CHARS or _NOTE_END.search(first)) else ""


def render_row(cells: tuple[tuple[str, str], ...]) -> str:
    return " | ".join(f"{h}: {v}" if h else v for h, v in cells)


# A cell holding a code ("D401", "EMB-01", "G6"), which a row's name may follow.
_CODE_CELL = re.compile(r"[A-Za-z]{0,4}[-_ ]?\d{1,5}[A-Za-z]?")


def row_key(cells: Sequence[tuple[str, str]]) -> str:
    """The cell that names a table row: its first, or the next where the first is a code
    ("課程代碼: D401 | 課程名稱: Python程式入門")."""
    values = [v.strip() for _, v in cells[:2]]
    if len(values) == 2 and _CODE_CELL.fullmatch(values[0]) and not _CODE_CELL.fullmatch(values[1]):
        return values[1]
    return values[0] if values else ""


def title_case(line: str) -> bool:
    words = [w for w in line.split() if w[:1].isalpha() and not has_han(w[:1])]
    return len(words) >= 2 and sum(w[0].isupper() for w in words) >= 0.6 * len(words)


def _joins(prev: str, nxt: str, longest: int) -> bool:
    """Whether `nxt` continues the sentence of `prev` (a hard-wrapped line, as in PDFs).

    Kept conservative: a false join glues a heading onto a sentence, a missed join only
    leaves a sentence in two pieces.
    """
    if not prev or not nxt or prev.endswith(_END_PUNCT) or _STRUCT_START.match(nxt):
        return False
    if prev.lstrip().startswith("#") or _DIGITS_ONLY.match(nxt) or _LABEL_LINE.match(nxt):
        return False
    if prev.endswith(_SOFT_END) or nxt[0].islower():
        return True
    if title_case(prev):
        return False  # "Required Actions", "Flight Control Computer Version": a heading
    # A line that runs (nearly) to the right margin and ends in a word was wrapped there.
    # Lines ending in digits are often table rows extracted as text: leave those alone.
    last = prev[-1]
    return len(prev) >= 0.7 * longest and (last.isalpha() or has_han(last))


def _join(prev: str, nxt: str) -> str:
    # Han text wraps without a space; Latin text wraps at a space (or after a hyphen).
    if (has_han(prev[-1]) and has_han(nxt[0])) or prev.endswith("-"):
        return prev + nxt
    return f"{prev} {nxt}"


@dataclass(slots=True)
class _Logical:
    """Wrapped lines glued back into one: text, and where each raw line starts in it."""

    text: str
    starts: list[tuple[int, int]]  # (offset in text, raw line index)
    single: bool


def _logical_lines(lines: list[str], base: int) -> list[_Logical]:
    """Glue wrapped lines back together, remembering the raw line of every offset."""
    longest = max((len(line) for line in lines), default=0)
    out: list[_Logical] = []
    for k, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        if out and _joins(out[-1].text, line, longest):
            prev = out[-1]
            joined = _join(prev.text, line)
            prev.starts.append((len(joined) - len(line), base + k))
            prev.text, prev.single = joined, False
        else:
            out.append(_Logical(line, [(0, base + k)], True))
    return out


def _raw_line(logical: _Logical, offset: int) -> int:
    line = logical.starts[0][1]
    for at, raw in logical.starts:
        if at > offset:
            break
        line = raw
    return line


_OPENERS, _CLOSERS = "（(「“《[【", "）)」”》]】"
_BRACKET = re.compile(f"[{re.escape(_OPENERS + _CLOSERS)}]")


# A split after these is no sentence end: "St. John", "H. Verwoerd", "No. 5", "e.g. this".
_ABBREVIATION = re.compile(
    r"(?:(?<![A-Za-z])(?:St|Mr|Mrs|Ms|Dr|Prof|Jr|Sr|No|Nos|vs|etc|Inc|Co|Ltd|Fig|Vol|pp|e\.g|i\.e)|"
    r"(?<![A-Za-z])[A-Z])\.$"
)


def _balanced(sentences: list[str], source: str) -> list[str]:
    """Sentences re-joined where a split fell inside brackets or quotes ("X（学名：'；"
    and the rest of the parenthesis are one sentence; 《CDTV×Sacas！》) or after an
    abbreviation ("St."), with what `source` has between the two pieces."""
    out: list[str] = []
    depth = 0
    for sentence in sentences:
        if out and (
            depth > 0 or (out[-1].endswith((".", ".\n")) and _ABBREVIATION.search(out[-1]))
        ):
            out[-1] = f"{out[-1]}{'' if out[-1] + sentence in source else ' '}{sentence}"
        else:
            out.append(sentence)
        if _BRACKET.search(sentence):  # most sentences hold none
            depth += sum(sentence.count(c) for c in _OPENERS)
            depth -= sum(sentence.count(c) for c in _CLOSERS)
            depth = max(depth, 0)
    return out


def _breadcrumb_line(chunk: Chunk, lines: list[str]) -> int:
    """0 when the chunk's first line is its breadcrumb (its section path written out, or
    no source line of its own in the line map), else -1. (The line map may give the
    breadcrumb the line of the heading it ends with: a chunk opening at that heading.)"""
    if not lines or not chunk.section_path:
        return -1
    if lines[0].strip() == " > ".join(chunk.section_path):
        return 0
    if chunk.line_map and len(chunk.line_map) == len(lines):
        return 0 if chunk.line_map[0][1] == 0 else -1
    return -1


def _lines_and_pages(chunk: Chunk) -> tuple[list[str], list[int]]:
    """The chunk's text lines and the page of each: from the line map, else by the form
    feeds ("\\f", a page break in extracted PDF text) before it."""
    raw = chunk.text.split("\n")
    if chunk.line_map and len(chunk.line_map) == len(raw):
        mapped = [p if a > 0 else chunk.page_start for p, a, _ in chunk.line_map]
        return [line.replace("\f", " ") for line in raw], mapped
    last = max(chunk.page_end, chunk.page_start)
    lines: list[str] = []
    pages: list[int] = []
    for offset, page_text in enumerate(chunk.text.split("\f")):
        page = min(chunk.page_start + offset, last)
        for line in page_text.split("\n"):
            lines.append(line)
            pages.append(page)
    return lines, pages


def _structured_rows(chunk: Chunk, n_rows: int) -> tuple[list[str], list[list[str]]] | None:
    """The table's resolved header and body rows from the chunk's metadata, when they
    describe the rows found in its text."""
    if chunk.kind != "table" or not chunk.table_header or len(chunk.table_rows) != n_rows:
        return None
    return list(chunk.table_header), [list(r) for r in chunk.table_rows]


def _table_candidates(
    chunk: Chunk,
    rank: int,
    lines: list[str],
    i: int,
    rows: list[tuple[int, list[str]]],
    start: int,
    pages: list[int],
) -> list[Candidate]:
    out: list[Candidate] = []
    header = rows[0][1]
    body = rows[1:]
    structured = _structured_rows(chunk, len(body))
    if structured is not None:
        header = structured[0]
        body = [(line, cells) for (line, _), cells in zip(body, structured[1], strict=True)]
    if _index_column(header, body):
        header, body = header[1:], [(line, row[1:]) for line, row in body]
    context = " ".join(line.strip() for line in lines[max(0, i - 2) : i])
    for line, row in body:
        note = _note_row(header, row)
        if note:
            # A line of prose set across a table's width (a note under its rows, as a
            # spreadsheet holds it in its first cell): a sentence, under no column.
            out.append(
                Candidate(
                    note,
                    chunk,
                    rank,
                    start + len(out),
                    pages[line],
                    context=context,
                    first_line=line,
                    last_line=line,
                )
            )
            continue
        pairs = _row_pairs(header, row)
        if pairs:
            out.append(
                Candidate(
                    render_row(pairs),
                    chunk,
                    rank,
                    start + len(out),
                    pages[line],
                    cells=pairs,
                    empty=tuple(
                        h for i, h in enumerate(header) if h and _blank((row[i : i + 1] or [""])[0])
                    ),
                    context=context,
                    first_line=line,
                    last_line=line,
                )
            )
    return out


# Full-width forms of ASCII ("Ａ１０１", common in Chinese and Japanese documents) and the
# ideographic space, as their ASCII: a question asking about A101 finds it written so.
_FULL_WIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


def normalise(text: str) -> str:
    """`normalise_ws` in lower case, full-width ASCII as ASCII (how the answer's checks
    compare texts), keeping one space where the text starts or ends with white space, as
    the regular expression it replaced did (the same white space, str.isspace; cut in C,
    ~3x faster on the documents' joined texts)."""
    if not text.isascii():
        text = text.translate(_FULL_WIDTH)
    folded = normalise_ws(text)
    if not folded:
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return f"{lead}{folded}{trail}".lower()


def normalise_joined(parts: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """`normalise(" ".join(parts))`, and the pieces it joins: each part normalised without
    the white space at its ends, the empty ones left out. Each part's work is memoised: a
    document's passages are joined again for every question about it (~0.5 ms an answer
    over its ~40 KB), and full-width forms, white space and case are each a matter of one
    part (a part's edge is white space in the joined text)."""
    pieces = tuple(w for w in map(_normalised_part, parts) if w)
    if not pieces:
        return (" " if any(parts) or len(parts) > 1 else ""), pieces
    first = parts[0][:1] or " "  # the joined text's first character: the separator
    last = parts[-1][-1:] or " "
    lead = " " if first.isspace() else ""
    trail = " " if last.isspace() else ""
    return f"{lead}{' '.join(pieces)}{trail}", pieces


@lru_cache(maxsize=2048)
def _normalised_part(text: str) -> str:
    if not text.isascii():
        text = text.translate(_FULL_WIDTH)
    return normalise_ws(text).lower()


# A line of its own longer than this is a sentence without its full stop, not a heading.
_HEADING_CHARS = 100


def candidates(chunk: Chunk, rank: int) -> list[Candidate]:
    """All answer candidates of one chunk, in reading order.

    Memoised by the chunk itself (every field: a chunk whose title or ACL changed is
    another key) and its rank: the passages a corpus answers from come back question
    after question, and splitting one costs ~0.2 ms. Candidates are frozen."""
    return list(_candidates(chunk, rank))


@lru_cache(maxsize=1024)  # ~10 KB each: a chunk's text and its candidates
def _candidates(chunk: Chunk, rank: int) -> tuple[Candidate, ...]:
    out: list[Candidate] = []
    lines, pages = _lines_and_pages(chunk)
    crumb = _breadcrumb_line(chunk, lines)
    heading = ""
    i = 0
    while i < len(lines):
        # A run of two or more table lines is a table: its first row names the columns.
        j = i
        rows: list[tuple[int, list[str]]] = []
        while j < len(lines):
            if _SEPARATOR_ROW.match(lines[j]) and "-" in lines[j]:
                j += 1
                continue
            cells = _cells(lines[j])
            if cells is None:
                break
            rows.append((j, cells))
            j += 1
        if len(rows) >= 2:
            out.extend(_table_candidates(chunk, rank, lines, i, rows, len(out), pages))
            i = j
            continue
        # Otherwise a paragraph: everything up to the next blank line or table. The
        # breadcrumb the chunker puts first is a line of its own, even when the text after
        # it goes on from the previous chunk in lower case ("as denying requests ..."):
        # glued to it, a quote would show headings no source line holds.
        j = i + 1
        while j < len(lines) and lines[j].strip() and _cells(lines[j]) is None and i != crumb:
            j += 1
        for logical in _logical_lines(lines[i:j], i):
            marker = _STRUCT_START.match(logical.text)
            item = bool(marker) and not logical.text.startswith("#")
            sentences = _balanced(split_sentences(logical.text), logical.text)
            if item and marker and len(sentences) > 1 and sentences[0] == marker.group(0).strip():
                # "1. All data sources are resources." : the item number is not a sentence.
                sentences = [f"{sentences[0]} {sentences[1]}", *sentences[2:]]
            cursor = 0
            for sentence in sentences:
                at = max(logical.text.find(sentence, cursor), cursor)
                cursor = at + len(sentence)
                first = _raw_line(logical, at)
                last = _raw_line(logical, max(at, cursor - 1))
                own = logical.single and len(sentences) == 1 and not sentence.endswith(_END_PUNCT)
                listed = (item and at == 0) or bool(_INLINE_ITEM.match(sentence))
                out.append(
                    Candidate(
                        normalise_ws(sentence),
                        chunk,
                        rank,
                        len(out),
                        pages[first],
                        own_line=own,
                        first_line=first,
                        last_line=last,
                        list_item=listed,
                        intro=bool(_ANNOUNCES.search(sentence.rstrip())),
                        heading=heading,
                    )
                )
                if own and not listed and first != crumb and len(sentence) <= _HEADING_CHARS:
                    heading = normalise_ws(sentence.lstrip("#"))
        i = j
    return tuple(out)
