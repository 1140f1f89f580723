"""The table finder's page read with pdfium: characters and edges where pdfminer (read by
pdfplumber itself) puts them, on pages built here with ruled tables, a table inside a
form XObject, a clipping path, spaces and words stacked in one cell, and turned pages."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pdfplumber
import pypdfium2 as pdfium
import pytest

from ingestion.parse import parse_bytes
from ingestion.parsers.pdf_page_objects import PageObjects
from ingestion.parsers.pdf_tables import extract_tables
from tests.ingestion.conftest import one_page_pdf


def ruled_table(x: float, y: float, rows: list[list[str]], width: float = 120) -> str:
    """A table ruled cell by cell with `re` (stroked), text 10 pt in each cell."""
    ops = ["0.5 w"]
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            cx, cy = x + c * width, y - (r + 1) * 20
            ops.append(f"{cx} {cy} {width} 20 re S")
            ops.append(f"BT /F1 10 Tf 1 0 0 1 {cx + 4} {cy + 6} Tm ({text}) Tj ET")
    return "\n".join(ops)


ROWS = [["Region", "Permits", "Long guns"], ["Kentucky", "264,140", "12,155"], ["Ohio", "9,1", "7"]]


def both(data: bytes) -> tuple[PageObjects, Any, Any]:
    doc = pdfium.PdfDocument(data)
    ours = PageObjects(doc[0])
    theirs = pdfplumber.open(io.BytesIO(data)).pages[0]
    return ours, theirs, doc


def same_places(
    ours: list[dict[str, Any]], theirs: list[dict[str, Any]], keys: tuple[str, ...]
) -> None:
    """Same objects at the same places, to 0.25 pt: the standard 14 fonts' descent differs
    by a tenth of a point between pdfium's and pdfminer's metrics."""

    def rows(objs: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(tuple(o[k] for k in keys) for o in objs)

    assert len(ours) == len(theirs)
    for a, b in zip(rows(ours), rows(theirs), strict=True):
        for x, y in zip(a, b, strict=True):
            assert x == pytest.approx(y, abs=0.25), (a, b)


@pytest.mark.parametrize(
    ("content", "form", "matrix"),
    [
        (ruled_table(72, 700, ROWS), "", "1 0 0 1 0 0"),
        # The same table inside a form XObject drawn shifted and scaled.
        ("q /X1 Do Q", ruled_table(72, 700, ROWS), "0.8 0 0 0.8 30 -40"),
    ],
)
def test_glyphs_and_edges_sit_where_pdfminer_puts_them(
    content: str, form: str, matrix: str
) -> None:
    ours, theirs, doc = both(one_page_pdf(content, form=form, form_matrix=matrix))
    try:
        keys = ("text", "x0", "x1", "top", "bottom", "upright")
        visible = [c for c in theirs.chars if not c["text"].isspace()]
        same_places([c for c in ours.chars if not c["text"].isspace()], visible, keys)
        edge_keys = ("orientation", "x0", "x1", "top", "bottom")
        same_places(ours.edges, theirs.edges, edge_keys)
        mb = doc[0].get_mediabox()
        tables = extract_tables(ours, mb[3], mb[0])
        assert [list(r) for r in tables[0].rows] == ROWS
        assert tables[0].rows == extract_tables(theirs, mb[3], mb[0])[0].rows
    finally:
        theirs.close()
        doc.close()


def test_a_clipping_path_is_not_an_edge() -> None:
    content = "q 50 50 400 400 re W n 100 100 m 300 100 l S Q"
    ours, theirs, doc = both(one_page_pdf(content))
    try:
        assert [(e["x0"], e["x1"]) for e in ours.edges] == [(100.0, 300.0)]
        assert len(theirs.edges) == 1
    finally:
        theirs.close()
        doc.close()


def test_words_break_at_spaces_not_at_lines_moving_back() -> None:
    """A space glyph (pdfium reports it as a generated space) splits words; two words
    stacked in one cell do not become one word with letters interleaved."""
    content = (
        "BT /F1 10 Tf 1 0 0 1 100 700 Tm (tinyint unsigned) Tj ET\n"
        "BT /F1 10 Tf 1 0 0 1 100 650 Tm (Page) Tj ET\n"
        "BT /F1 10 Tf 1 0 0 1 100 640 Tm (Up) Tj ET"
    )
    ours, theirs, doc = both(one_page_pdf(content))
    try:
        words = [w["text"] for w in ours.extract_words()]
        assert words == [w["text"] for w in theirs.extract_words()]
        assert words == ["tinyint", "unsigned", "Page", "Up"]
    finally:
        theirs.close()
        doc.close()


@pytest.mark.parametrize("rotate", ["", "/Rotate 90 ", "/Rotate 180 "])
def test_a_rotated_page_keeps_its_table_in_place_and_once(rotate: str) -> None:
    """Tables and text are read in one coordinate space (pdfium's), so a page shown turned
    keeps its table where its text is: once, as a table, with rows in order. (Read by
    pdfminer, the table came out turned, at the page's end, after its rows as text.)"""
    content = (
        "BT /F1 12 Tf 1 0 0 1 72 760 Tm (Permit checks by state) Tj ET\n"
        + ruled_table(72, 700, ROWS)
        + "\nBT /F1 10 Tf 1 0 0 1 72 600 Tm (After the table comes text.) Tj ET"
    )
    data = one_page_pdf(content).replace(
        b"/Type /Page /Parent", f"/Type /Page {rotate}/Parent".encode()
    )
    doc = parse_bytes(data, Path("rotated.pdf"))
    assert [(b.kind, b.rows[:1] if b.rows else b.text) for b in doc.blocks] == [
        ("heading", "Permit checks by state"),
        ("table", (tuple(ROWS[0]),)),
        ("paragraph", "After the table comes text."),
    ]
    table = doc.blocks[1]
    assert [list(r) for r in table.rows] == ROWS


def test_a_browser_printed_chinese_table_reads_as_text(tmp_path: Path) -> None:
    """Chromium prints CJK text with subset fonts that pdfminer read as "(cid:0)"; the
    table's cells now hold the text pdfium reads, and a glyph no font maps is left out
    instead of becoming a control character."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("Debian's chromium is not installed: deploy/local/services up chromium")
    html = tmp_path / "t.html"
    html.write_text(
        '<html><head><meta charset="utf-8"><style>table{border-collapse:collapse}'
        "td,th{border:1px solid #000;padding:4px}</style></head><body>"
        "<h1>硬件要求</h1><table><tr><th>组件</th><th>内存</th><th>硬盘类型</th></tr>"
        "<tr><td>TiKV</td><td>64 GB+</td><td>SSD（NVMe）</td></tr>"
        "<tr><td>PD</td><td>16 GB+</td><td>SSD</td></tr></table></body></html>",
        encoding="utf-8",
    )
    out = tmp_path / "t.pdf"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--print-to-pdf={out}",
            html.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if not out.is_file():
        pytest.skip("chromium could not print here")
    doc = parse_bytes(out.read_bytes(), out)
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 1
    rows = [list(r) for r in tables[0].rows]
    # Chromium's subset fonts leave a glyph or two without a Unicode value (which ones
    # changes with the page): no reader gets those back, so only most of the Han text is
    # asked for. pdfminer gave every Han glyph here as "(cid:0)".
    header = "".join(rows[0])
    assert sum(ch in header for ch in "组件内存硬盘类型") >= 6
    assert rows[1][:2] == ["TiKV", "64 GB+"] and "NVMe" in rows[1][2]
    assert rows[2] == ["PD", "16 GB+", "SSD"]
    assert not any(ch < " " or "cid:" in cell for r in rows for cell in r for ch in cell)
