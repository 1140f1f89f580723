"""PPTX via python-pptx: one page per slide, so a citation names the slide.

Each slide gives its title as a heading, then its shapes in reading order (top to
bottom, then left to right; groups opened): a body placeholder's paragraphs as a list (the
layout bullets them, indented by level), a text box's as paragraphs, a table as a table
(merged cells repeated, like Word's), and the speaker notes last. A "line" is a block's
place on its slide. Strict Open XML presentations are read as Transitional ones.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PackageNotFoundError

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import BlockBuilder, clean_text, document_title, spread_merged
from ingestion.parsers._ooxml import to_transitional

PARSER = f"python-pptx/{version('python-pptx')}"
# Placeholders whose paragraphs the layout sets as bullets.
_BULLETED = {PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT, PP_PLACEHOLDER.VERTICAL_BODY}
_TITLES = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE}
# What a slide repeats on every page (footer, number, date): no content.
_FURNITURE = {PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE}


def _placeholder(shape: Any) -> Any:
    return shape.placeholder_format.type if shape.is_placeholder else None


def _in_reading_order(shapes: Any) -> Iterator[Any]:
    """The shapes top to bottom, then left to right; a group's shapes in its place."""
    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _in_reading_order(shape.shapes)
        else:
            yield shape


def _table_rows(table: Any) -> list[list[str]]:
    """Cell texts row by row; a merged cell's text in every position it covers."""
    grid = [[clean_text(cell.text) for cell in row.cells] for row in table.rows]
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            if cell.is_merge_origin:
                spread_merged(grid, r, c, cell.span_height, cell.span_width)
    return grid


def _paragraphs(shape: Any) -> list[tuple[int, str]]:
    """(level, text) of each non-empty paragraph; a line break inside one is a space."""
    return [
        (p.level, text)
        for p in shape.text_frame.paragraphs
        if (text := clean_text(p.text.replace("\v", " ")))
    ]


def parse(data: bytes, name: str) -> ParsedDocument:
    try:
        deck = Presentation(io.BytesIO(to_transitional(data)))
    except (zipfile.BadZipFile, KeyError, ValueError, PackageNotFoundError) as exc:
        raise ParseError(f"PPTX is damaged or not a PowerPoint presentation: {exc}") from exc
    b = BlockBuilder()
    slides = list(deck.slides)
    for page, slide in enumerate(slides, start=1):
        b.reset_sections()
        line = 1
        title = slide.shapes.title
        framed = title is not None and title.has_text_frame
        heading = clean_text(title.text_frame.text.replace("\v", " ")) if framed else ""
        if heading:
            b.heading(heading, 1, page, line)
        for shape in _in_reading_order(slide.shapes):
            kind = _placeholder(shape)
            if shape is title or kind in _TITLES or kind in _FURNITURE:
                continue
            if shape.has_table:
                rows = _table_rows(shape.table)
                b.table(rows, page, line + 1, line + max(1, len(rows)))
                line += max(1, len(rows))
                continue
            if not shape.has_text_frame:
                continue
            paragraphs = _paragraphs(shape)
            if not paragraphs:
                continue
            line += 1
            if kind in _BULLETED and len(paragraphs) > 1:
                items = "\n".join("  " * level + "- " + text for level, text in paragraphs)
                b.add("list", items, page, line)
            else:
                b.add("paragraph", "\n".join(text for _, text in paragraphs), page, line)
        if slide.has_notes_slide:
            notes = clean_text(slide.notes_slide.notes_text_frame.text)
            if notes:
                line += 1
                b.add("paragraph", f"Speaker notes: {notes}", page, line)
    title_text = document_title(deck.core_properties.title or "", b.blocks, name)
    return ParsedDocument(tuple(b.blocks), max(1, len(slides)), title_text, PARSER, True)
