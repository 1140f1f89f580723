"""PDF layout: two-column glossaries without rules stay term: definition pairs; titles
come from metadata or the first page's title block, never a running header or
front matter."""

from __future__ import annotations

import ctypes
import os
from functools import cache
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_raw
import pytest

from core.types import ParsedDocument
from ingestion.parse import parse_bytes
from ingestion.parsers import pdf, pdf_raw
from tests.ingestion.conftest import one_page_pdf

DOCS = Path(
    os.environ.get(
        "RAGLINE_SHARED_DOCS",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs",
    )
)


@cache
def parsed(rel: str) -> ParsedDocument:
    path = DOCS / rel
    if not path.is_file():
        pytest.skip(f"shared document {rel} not present")
    return parse_bytes(path.read_bytes(), path)


def make_pdf(
    items: list[tuple[float, float, str, float]], title: str = "", scale: float = 1.0
) -> bytes:
    """A one-page PDF with Helvetica text runs at (x, y) of the given sizes; with `scale`,
    each run's font size is divided by it and its text matrix multiplied by it (as some
    producers set every glyph at size 1)."""
    ops = []
    for x, y, text, size in items:
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"BT /F1 {size / scale} Tf {scale} 0 0 {scale} {x} {y} Tm ({escaped}) Tj ET")
    return one_page_pdf("\n".join(ops), title)


def glossary_page(title: str = "") -> bytes:
    items = [
        (72, 760, "Glossary of Terms", 16),
        (72, 730, "The following terms are used throughout this guide to describe it.", 10),
    ]
    pairs = [
        ("API", "Application Programming Interface"),
        ("PDP", "Policy Decision Point"),
        ("PEP", "Policy Enforcement Point"),
        ("ZTA", "Zero Trust Architecture, a long definition that wraps"),
    ]
    y = 700
    for term, definition in pairs:
        items += [(72, y, term, 10), (180, y, definition, 10)]
        y -= 14
    items.append((180, y, "onto a second line in the definition column.", 10))
    y -= 14
    items += [(72, y, "SDP", 10), (180, y, "Software Defined Perimeter", 10)]
    items.append((72, y - 30, "After the list comes ordinary body text, long enough.", 10))
    return make_pdf(items, title)


def test_two_column_glossary_without_rules_stays_pairs() -> None:
    doc = pdf.parse(glossary_page(), "glossary.pdf")
    kinds = [(b.kind, b.text.split("\n")[0]) for b in doc.blocks]
    assert kinds[0] == ("heading", "Glossary of Terms")
    [gloss] = [b for b in doc.blocks if b.kind == "list"]
    assert gloss.text.split("\n") == [
        "API: Application Programming Interface",
        "PDP: Policy Decision Point",
        "PEP: Policy Enforcement Point",
        "ZTA: Zero Trust Architecture, a long definition that wraps onto a second line in "
        "the definition column.",
        "SDP: Software Defined Perimeter",
    ]
    assert (gloss.line_start, gloss.line_end) == (3, 8)
    assert doc.blocks[-1].text == "After the list comes ordinary body text, long enough."


def test_title_from_metadata_else_title_block_never_generic() -> None:
    assert (
        pdf.parse(glossary_page("Access Control Handbook"), "g.pdf").title
        == "Access Control Handbook"
    )
    assert pdf.parse(glossary_page("Untitled"), "g.pdf").title == "Glossary of Terms"
    preface = make_pdf(
        [
            (72, 760, "Preface", 20),
            (72, 730, "Body text of the preface.", 10),
            (72, 716, "More body text follows here.", 10),
        ]
    )
    assert pdf.parse(preface, "field-guide.pdf").title == "field-guide"


@pytest.mark.parametrize(
    ("rel", "title"),
    [
        (
            "pdf/en-federal-register-2020-17221.pdf",
            "Airworthiness Directives; The Boeing Company Airplanes",
        ),
        ("pdf/zh-p3c-Java开发手册-黄山版.pdf", "zh-p3c-Java开发手册-黄山版"),
        ("pdf/en-NIST.SP.800-207-ZeroTrust.pdf", "Zero Trust Architecture"),
        ("pdf/zh-lshort-zh-cn.pdf", "一份不太简短的 LATEX 2ε 介绍"),
    ],
)
def test_real_pdf_titles(rel: str, title: str) -> None:
    assert parsed(rel).title == title


def test_nist_reference_list_keeps_key_entry_pairs() -> None:
    doc = parsed("pdf/en-NIST.SP.800-207-ZeroTrust.pdf")
    [refs] = [b for b in doc.blocks if b.kind == "list" and b.page == 51]
    lines = refs.text.split("\n")
    assert lines[0].startswith("[ACT-IAC]: American Council for Technology")
    assert any(
        x.startswith("[Gilman]: Gilman E, Barth D (2017) Zero Trust Networks") for x in lines
    )


@pytest.mark.parametrize("scale", [1.0, 20.0])
def test_line_size_is_its_most_common_run_size_set_or_scaled(scale: float) -> None:
    """A line's size is the size most of its glyphs are set at, whether set with Tf or
    scaled by the text matrix, with runs of other sizes on the same line."""
    data = make_pdf(
        [
            (72, 700, "Big heading words", 18),
            (260, 700, "x", 9),
            (72, 660, "Body text set in ten points", 10),
            (72, 640, "A", 7),
            (80, 640, "line with a small first run", 10),
        ],
        scale=scale,
    )
    doc = pdfium.PdfDocument(data)
    try:
        page = doc[0]
        lines = [ln for ln in pdf._lines(page, 1, []).lines if ln.text]
    finally:
        doc.close()
    assert [(ln.text, ln.size) for ln in lines] == [
        ("Big heading words x", 18.0),
        ("Body text set in ten points", 10.0),
        ("A line with a small first run", 10.0),
    ]


def test_page_codes_match_pdfium_character_by_character() -> None:
    """The page's text read in one call lines up with pdfium's characters (its own
    per-character codes, 0xFFFE and 2 both being pdfium's soft-hyphen markers); pages where
    it would not (glyphs with no Unicode value, which the text leaves out) are read
    character by character."""
    path = DOCS / "pdf" / "zh-lshort-zh-cn.pdf"
    if not path.is_file():
        pytest.skip("shared document pdf/zh-lshort-zh-cn.pdf not present")
    doc = pdfium.PdfDocument(path.read_bytes())
    fallback = 0
    try:
        for i in range(len(doc)):
            tp = doc[i].get_textpage()
            n = pdfium_raw.FPDFText_CountChars(tp)
            codes = [2 if c == 0xFFFE else c for c in pdf_raw.char_codes(tp.raw, n)]
            each = [pdfium_raw.FPDFText_GetUnicode(tp, k) for k in range(n)]
            assert codes == [2 if c == 0xFFFE else c for c in each], f"page {i + 1}"
            buf = (ctypes.c_ushort * (n + 1))()
            fallback += n > 0 and pdfium_raw.FPDFText_GetText(tp, 0, n, buf) != n + 1
            tp.close()
    finally:
        doc.close()
    assert fallback >= 1  # this document has such pages: the fallback was exercised
