"""Plain text (.txt/.log/.rst/.json) and CSV: encoding detection, paragraphs, numbered headings.

A paragraph (lines up to a blank line) keeps its line structure: a line that is an item of
its own (it ends a sentence, it is short, or the next line opens a list item, a numbered
clause or a "label：" line) stays a line, and only a line wrapped in mid-sentence (one that
runs to about the paragraph's width) is joined to the next. Where each source line starts
is kept (`Block.line_marks`), so a sentence is cited at its own lines."""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from pathlib import PurePath

from core.types import ParsedDocument
from ingestion.parsers._common import (
    BlockBuilder,
    clean_text,
    decode,
    document_title,
    join_marked,
    numbered_level,
    plausible_heading,
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
    para: list[str] = []
    start = 0

    def flush(end: int) -> None:
        if para:
            text, marks = _paragraph(list(enumerate(para, start=start)))
            b.add("paragraph", text, 1, start, end, line_marks=marks if len(marks) > 1 else ())
            para.clear()

    for i, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            flush(i - 1)
            continue
        level = numbered_level(line)
        if level is not None and plausible_heading(line, 60):
            flush(i - 1)
            b.heading(line, level, 1, i)
            continue
        if not para:
            start = i
        para.append(line)
    flush(len(lines))
    title = document_title("", b.blocks, stem)
    return ParsedDocument(tuple(b.blocks), 1, title, f"{PARSER} ({encoding})")


# A line that ends a sentence (or announces what follows) ends its line.
_LINE_END = tuple("。！？!?；;.：:")
# A line that starts an item of its own: a bullet, a number ("1.", "2)", "(3)", "①"), or a
# label with a colon ("参会人员：", "Attendees: ").
_ITEM_START = re.compile(
    r"^(?:[•●▪■◆◇○◦‣∙·\-–—*✓✔➢►▶](?:\s|$)|\(?\d{1,3}[.)、．]|[（(]\d{1,3}[)）]|[①-⑳]"
    r"|[^\s：:，。,.]{1,12}[：]|[A-Z][\w'-]*(?: [\w'-]+){0,2}: )"
)
# A line at least this share of the paragraph's widest line ran to the margin: wrapped.
_WRAPPED = 0.75


def _width(line: str) -> int:
    """Columns a line takes in a fixed-width view: CJK characters count two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


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
    b.table(rows, 1, 1, max(1, len(rows)))
    return ParsedDocument(tuple(b.blocks), 1, stem, f"{PARSER} ({encoding})")
