"""OpenDocument text and spreadsheets parse natively (no Tika): headings at their outline
level, lists, tables with spanned cells repeated, sheets as pages; a damaged file fails
alone with its reason.

The files are written here as LibreOffice writes them: a zip whose first member is the
uncompressed mimetype, then content.xml and meta.xml.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from core.errors import ParseError
from ingestion.parse import detect_format, parse_bytes

_ROOT = (
    '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'office:version="1.3">'
    "<office:body>{}</office:body></office:document-content>"
)
_META = (
    '<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>{}</dc:title>'
    "</office:meta></office:document-meta>"
)


def _odf(mimetype: str, body: str, title: str = "") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), mimetype)  # stored, first
        zf.writestr("content.xml", _ROOT.format(body), zipfile.ZIP_DEFLATED)
        zf.writestr("meta.xml", _META.format(title), zipfile.ZIP_DEFLATED)
    return out.getvalue()


_TEXT_BODY = (
    "<office:text>"
    '<text:h text:outline-level="1">Inspection report</text:h>'
    "<text:p>Three valves<text:s/>failed the<text:tab/>pressure test"
    "<text:note><text:note-body><text:p>see annex</text:p></text:note-body></text:note>.</text:p>"
    '<text:section><text:h text:outline-level="2">Actions</text:h>'
    "<text:list><text:list-item><text:p>Replace the seals</text:p>"
    "<text:list><text:list-item><text:p>at Plant A first</text:p></text:list-item></text:list>"
    "</text:list-item><text:list-item><text:p>Test again in May</text:p></text:list-item>"
    "</text:list></text:section>"
    "<table:table><table:table-row><table:table-cell><text:p>Site</text:p></table:table-cell>"
    "<table:table-cell><text:p>Valves</text:p></table:table-cell></table:table-row>"
    "<table:table-row>"
    '<table:table-cell table:number-rows-spanned="2"><text:p>North</text:p></table:table-cell>'
    "<table:table-cell><text:p>2</text:p></table:table-cell></table:table-row>"
    "<table:table-row><table:covered-table-cell/>"
    "<table:table-cell><text:p>1</text:p></table:table-cell></table:table-row>"
    "</table:table></office:text>"
)


def test_a_text_document_parses_in_order() -> None:
    data = _odf("application/vnd.oasis.opendocument.text", _TEXT_BODY, "Valve inspection")
    assert detect_format(Path("report.odt"), data[:4096]) == "odf"
    doc = parse_bytes(data, Path("report.odt"))
    assert doc.parser.startswith("lxml-odf/") and doc.title == "Valve inspection"
    assert [(b.kind, b.level, b.text) for b in doc.blocks if b.kind == "heading"] == [
        ("heading", 1, "Inspection report"),
        ("heading", 2, "Actions"),
    ]
    [para] = [b for b in doc.blocks if b.kind == "paragraph"]
    assert para.text == "Three valves failed the pressure test."  # the note left out
    [items] = [b for b in doc.blocks if b.kind == "list"]
    assert items.text.splitlines() == [
        "- Replace the seals",
        "  - at Plant A first",
        "- Test again in May",
    ]
    assert items.section_path == ("Inspection report", "Actions")
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == (("Site", "Valves"), ("North", "2"), ("North", "1"))


def test_a_spreadsheet_gives_a_page_per_sheet() -> None:
    sheet = (
        '<office:spreadsheet><table:table table:name="Budget">'
        "<table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell>"
        "<table:table-cell><text:p>Cost</text:p></table:table-cell>"
        '<table:table-cell table:number-columns-repeated="16000"/></table:table-row>'
        "<table:table-row><table:table-cell><text:p>Pumps</text:p></table:table-cell>"
        "<table:table-cell><text:p>1200</text:p></table:table-cell></table:table-row>"
        '<table:table-row table:number-rows-repeated="1048570"><table:table-cell/>'
        "</table:table-row></table:table>"
        '<table:table table:name="Notes"><table:table-row><table:table-cell>'
        "<text:p>Figures</text:p></table:table-cell><table:table-cell><text:p>in euros</text:p>"
        "</table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>a"
        "</text:p></table:table-cell><table:table-cell><text:p>b</text:p></table:table-cell>"
        "</table:table-row></table:table></office:spreadsheet>"
    )
    data = _odf("application/vnd.oasis.opendocument.spreadsheet", sheet)
    doc = parse_bytes(data, Path("budget.ods"))
    assert doc.has_pages and doc.page_count == 2 and doc.title == "budget"
    headings = [(b.page, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings == [(1, "Budget"), (2, "Notes")]
    tables = [b for b in doc.blocks if b.kind == "table"]
    # Repeated empty cells and rows to the sheet's edge are formatting, not data.
    assert tables[0].rows == (("Item", "Cost"), ("Pumps", "1200"))


def test_a_damaged_or_foreign_package_fails_with_its_reason() -> None:
    data = _odf("application/vnd.oasis.opendocument.text", _TEXT_BODY)
    with pytest.raises(ParseError, match="corrupt zip container"):
        parse_bytes(data[: len(data) // 2], Path("broken.odt"))
    drawing = _odf("application/vnd.oasis.opendocument.graphics", "<office:drawing/>")
    with pytest.raises(ParseError, match="not an OpenDocument text, spreadsheet or presentation"):
        parse_bytes(drawing, Path("figure.odt"))


def test_a_presentation_gives_a_page_per_slide() -> None:
    slides = (
        "<office:presentation>"
        '<draw:page draw:name="page1">'
        '<draw:frame presentation:class="subtitle"><draw:text-box><text:p>Plant operations'
        "</text:p></draw:text-box></draw:frame>"
        '<draw:frame presentation:class="title"><draw:text-box><text:p>Pump review</text:p>'
        "</draw:text-box></draw:frame>"
        '<draw:frame presentation:class="page-number"><draw:text-box><text:p>1</text:p>'
        "</draw:text-box></draw:frame></draw:page>"
        '<draw:page draw:name="page2">'
        '<draw:frame presentation:class="title"><draw:text-box><text:p>Findings</text:p>'
        "</draw:text-box></draw:frame>"
        '<draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item>'
        "<text:p>Three valves failed</text:p></text:list-item><text:list-item>"
        "<text:p>Seals replaced</text:p></text:list-item></text:list></draw:text-box>"
        "</draw:frame><draw:frame><table:table><table:table-row><table:table-cell>"
        "<text:p>Site</text:p></table:table-cell><table:table-cell><text:p>Valves</text:p>"
        "</table:table-cell></table:table-row><table:table-row><table:table-cell>"
        "<text:p>North</text:p></table:table-cell><table:table-cell><text:p>2</text:p>"
        "</table:table-cell></table:table-row></table:table></draw:frame>"
        '<presentation:notes><draw:frame presentation:class="notes"><draw:text-box>'
        "<text:p>Ask the vendor.</text:p></draw:text-box></draw:frame></presentation:notes>"
        "</draw:page></office:presentation>"
    )
    data = _odf("application/vnd.oasis.opendocument.presentation", slides)
    assert detect_format(Path("review.odp"), data[:4096]) == "odf"
    doc = parse_bytes(data, Path("review.odp"))
    assert doc.has_pages and doc.page_count == 2 and doc.title == "Pump review"
    blocks = [(b.page, b.kind, b.text) for b in doc.blocks]
    assert blocks[:2] == [(1, "heading", "Pump review"), (1, "paragraph", "Plant operations")]
    assert all(text != "1" for _, _, text in blocks)  # the slide number left out
    assert (2, "list", "- Three valves failed\n- Seals replaced") in blocks
    assert (2, "paragraph", "Speaker notes: Ask the vendor.") in blocks
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.page == 2 and table.rows == (("Site", "Valves"), ("North", "2"))
