"""DOCX via python-docx: body in order (paragraphs and tables interleaved), styled or
inferred headings, merged table cells repeated, consecutive list paragraphs as one block.

Word has no stable pages, so `page` is 1 and a "line" is a body paragraph or table row.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from importlib.metadata import version
from typing import Any

import docx
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import (
    BlockBuilder,
    clean_text,
    document_title,
    numbered_level,
    plausible_heading,
)
from ingestion.parsers._ooxml import to_transitional

PARSER = f"python-docx/{version('python-docx')}"
_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)


def _style_level(p: Paragraph) -> int | None:
    """Heading level from the style name, or from an outline level set directly or on the
    style chain (Chinese templates often use custom styles with an outline level)."""
    style = p.style
    name = (style.name or "") if style is not None else ""
    m = _HEADING_STYLE.match(name.strip())
    if m:
        return int(m.group(1))
    if name.lower() == "title":
        return 1
    candidates: list[Any] = [p._p.pPr]
    s = style
    while s is not None:
        candidates.append(s.element.pPr)
        s = s.base_style
    for ppr in candidates:
        if ppr is None:
            continue
        lvl = ppr.find(qn("w:outlineLvl"))
        if lvl is not None:
            val = int(lvl.get(qn("w:val"), "9"))
            return val + 1 if val < 9 else None
    return None


def _is_list(p: Paragraph) -> int | None:
    """Nesting depth (0-based) when the paragraph is a list item, else None."""
    ppr = p._p.pPr
    num = ppr.find(qn("w:numPr")) if ppr is not None else None
    if num is not None:
        ilvl = num.find(qn("w:ilvl"))
        return int(ilvl.get(qn("w:val"), "0")) if ilvl is not None else 0
    name = (p.style.name or "") if p.style is not None else ""
    return 0 if "list" in name.lower() else None


def _font_size(p: Paragraph) -> float | None:
    sizes = [r.font.size.pt for r in p.runs if r.font.size is not None and r.text.strip()]
    return max(sizes) if sizes else None


def _all_bold(p: Paragraph) -> bool:
    runs = [r for r in p.runs if r.text.strip()]
    return bool(runs) and all(r.bold for r in runs)


def _cell_text(tc: Any) -> str:
    # All paragraphs of the cell, nested tables included, one per line.
    texts = ("".join(t.text or "" for t in p.iter(qn("w:t"))) for p in tc.iter(qn("w:p")))
    return "\n".join(t for t in (clean_text(x) for x in texts) if t)


def _table_rows(table: Table) -> list[list[str]]:
    rows: list[list[str]] = []
    for row in table.rows:
        # row.cells repeats a cell spanning several grid columns and returns the top cell
        # for vertically merged continuations: merged values are repeated, as intended.
        cache: dict[int, str] = {}
        rows.append([cache.setdefault(id(c._tc), _cell_text(c._tc)) for c in row.cells])
    return rows


def _iter_body(parent: Any) -> Any:
    for child in parent.iterchildren():
        if child.tag == qn("w:sdt"):  # content controls wrap blocks
            gallery = child.find(f"{qn('w:sdtPr')}/{qn('w:docPartObj')}/{qn('w:docPartGallery')}")
            if gallery is not None and "contents" in (gallery.get(qn("w:val")) or "").lower():
                continue  # a table of contents repeats the headings, with page numbers
            content = child.find(qn("w:sdtContent"))
            if content is not None:
                yield from _iter_body(content)
        elif child.tag in (qn("w:p"), qn("w:tbl")):
            yield child


def parse(data: bytes, name: str) -> ParsedDocument:
    try:
        document = docx.Document(io.BytesIO(to_transitional(data)))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ParseError(f"DOCX is damaged or not a Word document: {exc}") from exc
    body = document.element.body
    items: list[Paragraph | Table] = [
        Paragraph(el, document) if el.tag == qn("w:p") else Table(el, document)
        for el in _iter_body(body)
    ]
    paragraphs = [i for i in items if isinstance(i, Paragraph)]
    styled = any(_style_level(p) for p in paragraphs)
    sizes = Counter(s for p in paragraphs if (s := _font_size(p)) and p.text.strip())
    body_size = sizes.most_common(1)[0][0] if sizes else None

    def inferred_level(p: Paragraph, text: str) -> int | None:
        # Only used when the author applied no heading styles at all.
        if not plausible_heading(text, 60):
            return None
        level = numbered_level(text)
        size = _font_size(p)
        bigger = bool(body_size and size and size >= body_size * 1.15)
        if bigger or _all_bold(p):
            return level or (1 if bigger and size and body_size and size >= body_size * 1.5 else 2)
        return level if level is not None and level <= 2 else None

    b = BlockBuilder()
    line = 0
    pending: list[str] = []
    pending_start = pending_end = 0

    def flush_list() -> None:
        if pending:
            b.add("list", "\n".join(pending), 1, pending_start, pending_end)
            pending.clear()

    for item in items:
        if isinstance(item, Table):
            flush_list()
            rows = _table_rows(item)
            b.table(rows, 1, line + 1, line + max(1, len(rows)))
            line += max(1, len(rows))
            continue
        line += 1
        text = clean_text(item.text)
        if not text:
            continue
        level = _style_level(item) if styled else inferred_level(item, text)
        depth = _is_list(item) if level is None else None
        if depth is not None:
            if not pending:
                pending_start = line
            pending.append("  " * depth + "- " + text)
            pending_end = line
            continue
        flush_list()
        if level is not None:
            b.heading(text, level, 1, line)
        else:
            b.add("paragraph", text, 1, line)
    flush_list()
    title = document_title(document.core_properties.title or "", b.blocks, name)
    return ParsedDocument(tuple(b.blocks), 1, title, PARSER)
