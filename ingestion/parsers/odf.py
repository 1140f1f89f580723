"""OpenDocument text (.odt), spreadsheets (.ods) and presentations (.odp), read from their
XML with lxml: no Tika needed in the embedded default.

Text: the body in order; `text:h` headings at their outline level, paragraphs, lists (one
block per list, items indented by depth), tables (merged cells repeated, as for Word). Page
1 throughout, a "line" is a body element. Spreadsheets: one page per sheet, the sheet's
name as a heading and its cells as a table, like XLSX. Presentations: one page per slide,
like PPTX (title, frames in order, speaker notes). Title from the metadata, else the first
heading, else the file name.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

from lxml import etree

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import (
    MAX_SHEET_CELLS,
    BlockBuilder,
    clean_text,
    document_title,
    normalise_rows,
    spread_merged,
    workbook_title,
)

PARSER = f"lxml-odf/{etree.__version__}"
_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
}
_TEXT, _TABLE, _OFFICE, _DRAW, _PRES = (
    f"{{{_NS[k]}}}" for k in ("text", "table", "office", "draw", "presentation")
)
# What a slide repeats on every page: no content.
_FURNITURE = {"page-number", "footer", "date-time", "header"}
# A run of empty rows or cells repeated to the sheet's edge (a formatted column): what is
# past this many is no data.
_MAX_REPEAT = 1000
_CELLS = (_TABLE + "table-cell", _TABLE + "covered-table-cell")


def _text(el: Any) -> str:
    """An element's text in reading order: `text:s` is spaces, tabs and line breaks are
    spaces, notes (footnotes, comments) left out."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if node.text:
            out.append(node.text)
        for child in node:
            tag = child.tag
            if tag == _TEXT + "s":
                out.append(" " * int(child.get(_TEXT + "c", "1")))
            elif tag in (_TEXT + "tab", _TEXT + "line-break"):
                out.append(" ")
            elif tag not in (_TEXT + "note", _OFFICE + "annotation"):
                walk(child)
            if child.tail:
                out.append(child.tail)

    walk(el)
    return clean_text("".join(out))


def _repeated(el: Any, attribute: str) -> int:
    return min(int(el.get(_TABLE + attribute, "1")), _MAX_REPEAT)


def _rows(table: Any) -> list[list[str]]:
    """The table's rows; a spanning cell's text in every position it covers."""
    rows: list[list[str]] = []
    spans: list[tuple[int, int, int, int]] = []  # (row, col, rows, cols) of spanning cells
    read = 0
    for row in table.iter(_TABLE + "table-row"):
        cells: list[str] = []
        for cell in row:
            if cell.tag not in _CELLS:
                continue
            across = int(cell.get(_TABLE + "number-columns-spanned", "1"))
            down = int(cell.get(_TABLE + "number-rows-spanned", "1"))
            if across > 1 or down > 1:
                spans.append((len(rows), len(cells), down, across))
            # A covered cell is filled below, from the cell that spans it.
            text = ""
            if cell.tag != _TABLE + "covered-table-cell":
                text = " ".join(t for p in cell.iter(_TEXT + "p", _TEXT + "h") if (t := _text(p)))
            cells.extend([text] * _repeated(cell, "number-columns-repeated"))
        repeat = _repeated(row, "number-rows-repeated")
        rows.extend(list(cells) for _ in range(repeat))
        read += len(cells) * repeat
        if read > MAX_SHEET_CELLS:
            break
    for r, c, down, across in spans:
        spread_merged(rows, r, c, down, across)
    # Trailing empty rows and columns are formatting, not data.
    while rows and not any(rows[-1]):
        rows.pop()
    width = max((max((i + 1 for i, v in enumerate(r) if v), default=0) for r in rows), default=0)
    return [r[:width] for r in rows]


def _body(root: Any, kind: str) -> Any:
    body = root.find("office:body/office:" + kind, _NS)
    if body is None:
        raise ParseError(f"OpenDocument has no {kind} body")
    return body


def _text_items(parent: Any) -> Iterator[Any]:
    """Headings, paragraphs, lists and tables in order; sections opened."""
    for el in parent:
        if el.tag in (_TEXT + "section", _TEXT + "index-body"):
            yield from _text_items(el)
        elif el.tag in (_TEXT + "h", _TEXT + "p", _TEXT + "list", _TABLE + "table"):
            yield el


def _list_items(lst: Any, depth: int = 0) -> Iterator[str]:
    for item in lst.iter(_TEXT + "list-item"):
        if item.getparent() is not lst:
            continue
        for child in item:
            if child.tag == _TEXT + "list":
                yield from _list_items(child, depth + 1)
            elif child.tag in (_TEXT + "p", _TEXT + "h") and (text := _text(child)):
                yield "  " * depth + "- " + text


def _parse_text(root: Any, b: BlockBuilder) -> None:
    _add_items(b, _text_items(_body(root, "text")), 1, 0)


def _add_items(b: BlockBuilder, items: Iterator[Any], page: int, line: int) -> int:
    """Headings, paragraphs, lists and tables as blocks of `page`, from line `line` on;
    the last line used."""
    for el in items:
        if el.tag == _TABLE + "table":
            rows = _rows(el)
            if rows:
                b.table(rows, page, line + 1, line + len(rows))
                line += len(rows)
            continue
        line += 1
        if el.tag == _TEXT + "list":
            b.add("list", "\n".join(_list_items(el)), page, line)
        elif el.tag == _TEXT + "h":
            b.heading(_text(el), int(el.get(_TEXT + "outline-level", "1")), page, line)
        else:
            b.add("paragraph", _text(el), page, line)
    return line


def _frame_items(frame: Any) -> Iterator[Any]:
    """What a drawing frame holds: the text of its text box, or its table."""
    for child in frame:
        if child.tag == _DRAW + "text-box":
            yield from _text_items(child)
        elif child.tag == _TABLE + "table":
            yield child


def _parse_slides(root: Any, b: BlockBuilder) -> int:
    """A page per slide: its title as a heading, its frames' text and tables in order,
    its speaker notes last."""
    slides = _body(root, "presentation").findall("draw:page", _NS)
    for page, slide in enumerate(slides, start=1):
        b.reset_sections()
        frames = [f for f in slide if f.tag == _DRAW + "frame"]
        kinds = [f.get(_PRES + "class", "") for f in frames]
        line = 1
        for frame, kind in zip(frames, kinds, strict=True):
            if kind == "title" and (title := " ".join(_text(p) for p in frame.iter(_TEXT + "p"))):
                b.heading(title, 1, page, line)
        for frame, kind in zip(frames, kinds, strict=True):
            if kind not in _FURNITURE and kind != "title":
                line = _add_items(b, _frame_items(frame), page, line)
        notes = slide.find("presentation:notes", _NS)
        if notes is not None:
            text = " ".join(
                t
                for frame in notes.iter(_DRAW + "frame")
                if frame.get(_PRES + "class") == "notes"
                for p in frame.iter(_TEXT + "p")
                if (t := _text(p))
            )
            if text:
                b.add("paragraph", f"Speaker notes: {text}", page, line + 1)
    return max(1, len(slides))


def _parse_sheets(root: Any, b: BlockBuilder) -> int:
    sheets = _body(root, "spreadsheet").findall("table:table", _NS)
    for page, sheet in enumerate(sheets, start=1):
        b.reset_sections()
        b.heading(sheet.get(_TABLE + "name", f"Sheet {page}"), 1, page, 1)
        rows = normalise_rows(_rows(sheet))
        if rows:
            b.table(rows, page, 1, len(rows))
    return max(1, len(sheets))


def parse(data: bytes, name: str) -> ParsedDocument:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            mimetype = zf.read("mimetype").decode("ascii", "replace").strip()
            content = etree.fromstring(zf.read("content.xml"), etree.XMLParser(huge_tree=True))
            meta = zf.read("meta.xml") if "meta.xml" in zf.namelist() else b""
    except (zipfile.BadZipFile, KeyError, etree.XMLSyntaxError) as exc:
        raise ParseError(f"OpenDocument file is damaged: {exc}") from exc
    title = ""
    if meta:
        try:
            found = etree.fromstring(meta).find(".//dc:title", _NS)
            title = found.text or "" if found is not None else ""
        except etree.XMLSyntaxError:
            title = ""
    b = BlockBuilder()
    if mimetype.startswith("application/vnd.oasis.opendocument.spreadsheet"):
        pages = _parse_sheets(content, b)
        return ParsedDocument(tuple(b.blocks), pages, workbook_title(title, name), PARSER, True)
    if mimetype.startswith("application/vnd.oasis.opendocument.presentation"):
        pages = _parse_slides(content, b)
        title = document_title(title, b.blocks, name)
        return ParsedDocument(tuple(b.blocks), pages, title, PARSER, True)
    if not mimetype.startswith("application/vnd.oasis.opendocument.text"):
        raise ParseError(
            f"not an OpenDocument text, spreadsheet or presentation ({mimetype or 'no mimetype'})"
        )
    _parse_text(content, b)
    return ParsedDocument(tuple(b.blocks), 1, document_title(title, b.blocks, name), PARSER)
