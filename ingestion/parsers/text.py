"""Plain text (.txt/.log/.rst/.json) and CSV: encoding detection, paragraphs, numbered headings.

A paragraph (lines up to a blank line) keeps its line structure: a line that is an item of
its own (it ends a sentence, it is short, or the next line opens a list item, a numbered
clause or a "label：" line) stays a line, and only a line wrapped in mid-sentence (one that
runs to about the paragraph's width) is joined to the next. Where each source line starts
is kept (`Block.line_marks`), so a sentence is cited at its own lines.

Text laid out for a fixed-width screen keeps its structure: a rule line (dashes, equals
signs) parts paragraphs and makes the short line it underlines or frames a heading; a
table drawn with a column rule under its header, with columns aligned by spaces, or with
bars and borders (psql, reStructuredText grids, Markdown pipes) is a table; rows parted by
wide gaps or dot leaders stay lines. The title is the text's first line or two when they
stand alone at its top."""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import PurePath

from core.types import Block, ParsedDocument
from ingestion.parsers._common import (
    BlockBuilder,
    add_sheet_part,
    clean_text,
    decode,
    generic_title,
    join_lines,
    join_marked,
    numbered_level,
    numeric_cell,
    plausible_heading,
    sheet_parts,
    solid_chars,
)

PARSER = "ragline-text/1"


def parse(data: bytes, name: str) -> ParsedDocument:
    text, encoding = decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # NUL: the sanitiser counts it
    stem = PurePath(name).stem
    if PurePath(name).suffix.lower() == ".csv":
        return _parse_csv(text, stem, encoding)
    b = BlockBuilder()
    lines = text.split("\n")
    para: list[tuple[int, str]] = []  # (line number, raw line)

    def flush() -> None:
        if not para:
            return
        start, end = para[0][0], para[-1][0]
        raws = [raw for _, raw in para]
        grid = _grid_rows(raws)
        rows = grid[0] if grid else _aligned_rows(raws)
        if rows:
            b.table(rows, 1, start, end, n_header=grid[1] if grid else None)
        else:
            text, marks = _paragraph([(number, raw.strip()) for number, raw in para])
            b.add("paragraph", text, 1, start, end, line_marks=marks if len(marks) > 1 else ())
        para.clear()

    i = 0
    while i < len(lines):
        raw, number, line = lines[i], i + 1, lines[i].strip()
        i += 1
        if not line:
            flush()
            continue
        runs = _rule_runs(line)
        if runs and len(runs) > 1 and para:
            # A column rule under a table's header: the header is the line above it.
            head = para.pop()
            flush()
            rows, i = _ruled_table(lines, i, head[1])
            b.table(rows, 1, head[0], max(i, number), n_header=1)
            continue
        if runs:
            # A rule ends a paragraph; a lone line it underlines (or frames) is a heading.
            if len(para) == 1 and _underlined(para[0][1], raw):
                b.heading(para[0][1].strip(), numbered_level(para[0][1]) or 1, 1, para[0][0])
                para.clear()
            flush()
            continue
        next_raw = lines[i] if i < len(lines) else ""
        level = numbered_level(line)
        if level is None and not para and not next_raw.strip() and _capitalised_item(line):
            level = 1  # "2. ON-CALL STIPENDS (USD, gross)" alone between blank lines
        if level is not None and _heading_line(line, raw, next_raw):
            flush()
            b.heading(line, level, 1, number)
            continue
        para.append((number, raw))
    flush()
    title = _title(b.blocks) or stem
    return ParsedDocument(tuple(b.blocks), 1, title, f"{PARSER} ({encoding})")


# A line that ends a sentence (or announces what follows) ends its line.
_LINE_END = tuple("。！？!?；;.：:")
# A line that starts an item of its own: a bullet, a number ("1.", "2)", "(3)", "①"), or a
# label with a colon ("参会人员：", "Attendees: ").
_ITEM_START = re.compile(
    r"^(?:[•●▪■◆◇○◦‣∙·\-–—*✓✔➢►▶](?:\s|$)|\(?\d{1,3}[.)、．]|[（(]\d{1,3}[)）]|[①-⑳]"
    r"|[^\s：:，。,.]{1,12}[：]|[A-Z][\w'-]*(?: [\w'-]+){0,2}: )"
)
# Two lines that both hold fields parted by a gap (two spaces, a tab, an ideographic space)
# are rows of a list or table, not one sentence wrapped.
_GAP = re.compile(r"\S(?: {2,}|[\t\u3000]| ?[.·]{4,} ?| [.·] )\s*\S")
# A line at least this share of the paragraph's widest line ran to the margin: wrapped.
_WRAPPED = 0.75


def _width(line: str) -> int:
    """Columns a line takes in a fixed-width view: CJK characters count two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


# A rule: a line of dashes, equals signs or box-drawing strokes (a column rule holds several
# runs, one under each column of a fixed-width table).
_RULE_LINE = re.compile(r"[-=_~─━═—–*]+(?: +[-=_~─━═—–*]+)*")
_RULE_RUN = re.compile(r"[-=_~─━═—–*]+")
# Runs of text in a fixed-width line: two spaces, a tab or an ideographic space part them.
_FIELD = re.compile(r"[^\s]+(?: [^\s]+)*")
# Clause punctuation a heading does not hold inside it.
_CLAUSE_INSIDE = re.compile(r"[，；。]")


def _rule_runs(line: str) -> list[str]:
    """The runs of a rule line (stripped), or [] for a line of text; a column rule's runs
    are three characters or more each."""
    if len(line) < 3 or not _RULE_LINE.fullmatch(line):
        return []
    runs = _RULE_RUN.findall(line)
    return runs if len(runs) == 1 or all(len(r) >= 3 for r in runs) else [line]


def _at_columns(raw: str, pattern: re.Pattern[str]) -> Iterator[tuple[int, re.Match[str]]]:
    """Each match of `pattern` in a fixed-width line with the display column it starts at
    (the widths summed once along the line, not again from its start for every match)."""
    column = done = 0
    for m in pattern.finditer(raw):
        column += _width(raw[done : m.start()])
        done = m.start()
        yield column, m


def _rule_starts(raw: str) -> list[int]:
    """Display columns where a column rule's runs start."""
    return [column for column, _ in _at_columns(raw.rstrip(), _RULE_RUN)]


def _ruled_table(lines: list[str], i: int, head: str) -> tuple[list[list[str]], int]:
    """The rows of a fixed-width table whose column rule is line i (0-based, 1 before `i`),
    its header `head` above it, and the index of the line after it: the rows run to a blank
    line or a rule, which is taken with them."""
    starts = _rule_starts(lines[i - 1])
    rows = [_cells(head, starts)]
    while i < len(lines) and lines[i].strip():
        if _rule_runs(lines[i].strip()):
            return rows, i + 1  # the rule closing the table is taken with it
        rows.append(_cells(lines[i], starts))
        i += 1
    return rows, i


def _fields(raw: str) -> list[tuple[int, int, str]]:
    """(first column, end column, text) of each run of text in a fixed-width line."""
    return [
        (start, start + _width(m.group()), m.group())
        for start, m in _at_columns(raw.expandtabs(8), _FIELD)
    ]


def _cells(raw: str, starts: list[int]) -> list[str]:
    """A fixed-width line cut into the columns that start at `starts`: each run of text goes
    to the column it starts in."""
    cells = [""] * len(starts)
    for first, _, text in _fields(raw):
        k = max(0, bisect_right(starts, first) - 1)
        cells[k] = f"{cells[k]} {text}" if cells[k] else text
    return [clean_text(c) for c in cells]


def _aligned_rows(raws: list[str]) -> list[list[str]]:
    """A paragraph laid out as a fixed-width table without a rule: three lines or more, three
    columns or more parted by two blank columns in every line, a header of labels across
    them; [] for anything else. Two columns are a table too where a header of two labels
    stands over rows that each fill both, parted by a wide gap, with a number in the second
    column of most ("勤続年数 … 祝金" over "1年未満 … 10,000円"): lines of "label  value" pairs
    under no header stay lines."""
    if len(raws) < 3:
        return []
    fields = [_fields(raw) for raw in raws]
    if any(len(f) < 2 for f in fields):
        return []
    spans = sorted((first, end) for line in fields for first, end, _ in line)
    starts: list[int] = []
    reach = -2
    for first, end in spans:
        if first >= reach + 2:
            starts.append(first)
        reach = max(reach, end)
    if len(starts) < 2 or len(fields[0]) < len(starts) - 1:
        return []
    if len(starts) == 2 and not _two_columns(raws, fields):
        return []
    rows = [_cells(raw, starts) for raw in raws]
    # A header holds labels: a first line of numbers, or one opening with a date or a
    # number like the lines under it (a log), is data.
    if (
        any(sum(bool(c) for c in row) < 2 for row in rows)
        or any(numeric_cell(c) for c in rows[0] if c)
        or rows[0][0][:1].isdigit()
    ):
        return []
    return rows


# Blank columns between the two columns of a two-column table laid out by spaces.
_TWO_COLUMN_GAP = 4


def _two_columns(raws: list[str], fields: list[list[tuple[int, int, str]]]) -> bool:
    """Whether a paragraph of lines of two fields each is a two-column table: every line's
    second field starts in one column, far from the first; the first line's are labels
    (no digit, no colon), and most lines under it hold a digit in their second field."""
    if any(len(f) != 2 for f in fields):
        return False
    if len({f[1][0] for f in fields}) != 1 or any(
        f[1][0] - f[0][1] < _TWO_COLUMN_GAP for f in fields
    ):
        return False
    header = [text for _, _, text in fields[0]]
    if any(ch.isdigit() for h in header for ch in h) or any(
        h.rstrip().endswith((":", "：")) for h in header
    ):
        return False
    numbered = sum(any(ch.isdigit() for ch in f[1][2]) for f in fields[1:])
    return 2 * numbered > len(fields) - 1


# A drawn table: a border ("+----+----+", "|---|:--|") or a row between bars ("| a | b |").
_GRID_BORDER = re.compile(r"[+|]?[-=:+| ]*[-=][-=:+| ]*[+|]?")
_GRID_ROW = re.compile(r"\|.*\|")
_PSQL_RULE = re.compile(r"-+(?:\+-+)+")


def _grid_rows(raws: list[str]) -> tuple[list[list[str]], int | None] | None:
    """A table drawn with bars and borders (psql, reStructuredText grid, Markdown pipes):
    its rows and how many head it, or None. A row whose first cell is empty continues the
    row above (a cell wrapped over lines), as a row between two borders is one row."""
    lines = [raw.strip() for raw in raws]
    if any(_PSQL_RULE.fullmatch(line) for line in lines) and all(
        _PSQL_RULE.fullmatch(line) or ("|" in line and not line.startswith("|")) for line in lines
    ):
        # psql's own layout: no bars at the ends of a row, "---+---" under the header.
        lines = [line if _PSQL_RULE.fullmatch(line) else f"|{line}|" for line in lines]
    if len(lines) < 2 or not all(
        _GRID_ROW.fullmatch(line) or _GRID_BORDER.fullmatch(line) for line in lines
    ):
        return None
    rows: list[list[str]] = []
    header: int | None = None
    fresh = True  # a border was just passed: the next line opens a row
    for line in lines:
        if not _GRID_ROW.fullmatch(line) or not line.strip("|-=:+ "):
            fresh = True
            if rows and header is None:
                header = len(rows)
            continue
        cells = [clean_text(c) for c in line[1:-1].split("|")]
        if rows and not fresh and not cells[0] and len(cells) == len(rows[-1]):
            rows[-1] = [f"{a} {c}".strip() for a, c in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)
        fresh = False
    if len(rows) < 2 or max(len(r) for r in rows) < 2:
        return None
    return rows, header if header and header < len(rows) else None


def _title(blocks: list[Block]) -> str:
    """A plain text's title: its first block when that is a heading, or one or two short
    lines standing alone at the top ("华信科技员工考勤管理制度"); "" when neither."""
    if not blocks:
        return ""
    first = blocks[0]
    lines = first.text.split("\n")
    if first.kind == "heading" or (
        first.kind == "paragraph"
        and len(lines) <= 2
        and all(plausible_heading(x, 40) for x in lines)
    ):
        return join_lines(lines) if not generic_title(first.text) else ""
    return ""


def _underlined(line: str, rule: str) -> bool:
    """A short line with a rule under it (or framed by two) that reaches across it."""
    text = line.strip()
    return plausible_heading(text, 60) and _width(rule.strip()) >= 0.8 * _width(text)


# A line numbered as an item ("2. ", "3) "): `numbered_level` leaves it to lists.
_ITEM_NUMBER = re.compile(r"^\d{1,2}[.)]\s+(?=\S)")


def _capitalised_item(line: str) -> bool:
    """A line numbered as a list item whose words are capitalised as a heading's ("1.
    SEVERITY LEVELS", "3. Rest and Workload Limits"): standing alone, it heads a section
    (an item of a list is a sentence: "1. Install the package")."""
    m = _ITEM_NUMBER.match(line)
    if m is None:
        return False
    words = [w for w in line[m.end() :].split() if w[:1].isalpha()]
    return len(words) >= 1 and sum(w[0].isupper() for w in words) >= 0.6 * len(words)


def _heading_line(line: str, raw: str, next_raw: str) -> bool:
    """A numbered line is a heading when it is short, holds no clause inside and does not
    run on into the next line (wrapped text indented under it)."""
    if not plausible_heading(line, 60) or _CLAUSE_INSIDE.search(line):
        return False
    indent = len(raw) - len(raw.lstrip())
    next_indent = len(next_raw) - len(next_raw.lstrip())
    runs_on = (
        bool(next_raw.strip())
        and next_indent > indent
        and numbered_level(next_raw) is None
        and _width(raw.strip()) >= _WRAPPED * _width(next_raw.strip())
    )
    return not runs_on


def _paragraph(lines: list[tuple[int, str]]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A paragraph's text, a line per item and wrapped lines joined (`join_marked`), with
    where each source line starts in it (`Block.line_marks`)."""
    if len(lines) == 1:
        return clean_text(lines[0][1]), ((0, lines[0][0]),)
    widest = max(_width(line) for _, line in lines)
    groups: list[list[tuple[int, str]]] = []
    for k, (number, line) in enumerate(lines):
        prev = lines[k - 1][1] if k else ""
        wrapped = (
            k > 0
            and not prev.endswith(_LINE_END)
            and _width(prev) >= _WRAPPED * widest
            and not _ITEM_START.match(line)
            and numbered_level(line) is None
            and not (_GAP.search(prev) and _GAP.search(line))
        )
        if wrapped:
            groups[-1].append((number, clean_text(line)))
        else:
            groups.append([(number, clean_text(line))])
    out: list[str] = []
    marks: list[tuple[int, int]] = []
    solid = 0
    for group in groups:
        text, group_marks = join_marked(group)
        marks += [(solid + at, number) for at, number in group_marks]
        out.append(text)
        solid += solid_chars(text)
    return "\n".join(out), tuple(marks)


def _parse_csv(text: str, stem: str, encoding: str) -> ParsedDocument:
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096], ",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    b = BlockBuilder()
    # Read as a sheet is (a spreadsheet saved as CSV keeps its title, its tables and its
    # notes apart with empty rows): cut where a new table, title or note starts after an
    # empty row, while figures after a spacer row go on the table before it. (Cut at every
    # empty row, the figures after a spacer made a table of their own, headed by its first
    # row: "Plum | 2.10 | seasonal" as the columns of "Kiwi | 0.50".)
    numbered = [
        (number, [c.strip() for c in row])
        for number, row in enumerate(rows, start=1)
        if any(c.strip() for c in row)
    ]
    for part in sheet_parts(numbered):
        # A title, a version line, a note: a line of text set in a single cell, above or
        # under a table or on its own.
        add_sheet_part(b, part, 1)
    return ParsedDocument(tuple(b.blocks), 1, _title(b.blocks) or stem, f"{PARSER} ({encoding})")
