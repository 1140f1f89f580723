"""PowerPoint decks parse natively: a page per slide, titles as headings, bullets as
lists, tables as tables, speaker notes kept; a damaged deck fails alone with its reason.

The decks are made here with python-pptx, as PowerPoint writes them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pptx import Presentation
from pptx.util import Inches

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parse import detect_format, parse_bytes
from tests.ingestion.test_ooxml_strict import to_strict


def _deck() -> bytes:
    prs = Presentation()
    prs.core_properties.title = "Pump Maintenance Review"
    cover = prs.slides.add_slide(prs.slide_layouts[0])
    cover.shapes.title.text = "Pump Maintenance Review"
    cover.placeholders[1].text = "Plant operations, Q3"

    bullets = prs.slides.add_slide(prs.slide_layouts[1])
    bullets.shapes.title.text = "Findings"
    body = bullets.placeholders[1].text_frame
    body.text = "Three valves failed the pressure test"
    for text, level in (("Two at Plant A", 1), ("Seals replaced within a week", 0)):
        p = body.add_paragraph()
        p.text, p.level = text, level
    bullets.notes_slide.notes_text_frame.text = "Ask the vendor about the seal batch."
    # A line break inside a paragraph (Shift+Enter) keeps the words apart.
    broken = body.add_paragraph()
    broken.add_run().text = "Next audit"
    broken.add_line_break()
    broken.add_run().text = "in January"

    tabled = prs.slides.add_slide(prs.slide_layouts[5])
    tabled.shapes.title.text = "Failures by site"
    shape = tabled.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(1.5))
    cells = [("Site", "Valves", "Pumps"), ("Plant A", "2", "0"), ("Plant B", "1", "1")]
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            shape.table.cell(r, c).text = text
    # A note placed below the table, written first: reading order is by position.
    box = tabled.shapes.add_textbox(Inches(1), Inches(4.5), Inches(6), Inches(1))
    box.text_frame.text = "Counts are for the third quarter."
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


def _parsed(data: bytes | None = None) -> ParsedDocument:
    return parse_bytes(data or _deck(), Path("review.pptx"))


def test_a_deck_parses_slide_by_slide() -> None:
    doc = _parsed()
    assert doc.parser.startswith("python-pptx/")
    assert doc.has_pages and doc.page_count == 3
    assert doc.title == "Pump Maintenance Review"
    headings = [(b.page, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings == [(1, "Pump Maintenance Review"), (2, "Findings"), (3, "Failures by site")]
    [bullets] = [b for b in doc.blocks if b.kind == "list"]
    assert bullets.page == 2 and bullets.section_path == ("Findings",)
    assert bullets.text.splitlines() == [
        "- Three valves failed the pressure test",
        "  - Two at Plant A",
        "- Seals replaced within a week",
        "- Next audit in January",
    ]
    notes = [b for b in doc.blocks if b.text.startswith("Speaker notes:")]
    assert [(b.page, b.text) for b in notes] == [
        (2, "Speaker notes: Ask the vendor about the seal batch.")
    ]
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.page == 3
    assert table.rows == (("Site", "Valves", "Pumps"), ("Plant A", "2", "0"), ("Plant B", "1", "1"))
    slide3 = [b.kind for b in doc.blocks if b.page == 3]
    assert slide3 == ["heading", "table", "paragraph"]  # the note sits under the table


def test_merged_table_cells_repeat_their_value() -> None:
    prs = Presentation(io.BytesIO(_deck()))
    table = next(s for s in prs.slides[2].shapes if s.has_table).table
    table.cell(1, 1).merge(table.cell(2, 1))  # one value for both plants
    table.cell(1, 1).text = "3"
    buf = io.BytesIO()
    prs.save(buf)
    [block] = [b for b in _parsed(buf.getvalue()).blocks if b.kind == "table"]
    assert [row[1] for row in block.rows[1:]] == ["3", "3"]


def test_strict_and_mislabelled_decks_open_natively() -> None:
    twin = _parsed()
    strict = _parsed(to_strict(_deck()))
    assert [(b.kind, b.text) for b in strict.blocks] == [(b.kind, b.text) for b in twin.blocks]
    # Content decides the format: a deck saved as .docx is still a deck.
    assert detect_format(Path("slides.docx"), _deck()[:4096]) == "pptx"


def test_a_damaged_deck_fails_with_its_reason() -> None:
    data = _deck()
    with pytest.raises(ParseError, match="corrupt zip container"):
        parse_bytes(data[: len(data) // 2], Path("broken.pptx"))
    # A whole package that is no presentation (its main part missing) fails as such.
    with pytest.raises(ParseError, match="not a PowerPoint presentation"):
        parse_bytes(_without("ppt/presentation.xml", data), Path("broken.pptx"))


def _without(member: str, data: bytes) -> bytes:
    import zipfile

    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info, src.read(info))
    return out.getvalue()
