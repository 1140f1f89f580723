"""Tables keep one resolved header per column (multi-row and merged headers), headerless
key lists stay key: value pairs, and table chunks carry the header and rows."""

from __future__ import annotations

import io
import os
from functools import cache
from pathlib import Path

import docx
import pytest

from core.settings import ChunkSettings
from core.types import ParsedDocument
from ingestion.chunker import chunk_blocks
from ingestion.parse import parse_bytes
from ingestion.parsers._common import (
    collapse_header,
    header_rows,
    headerless,
    render_table,
    resolve_header,
)

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


# ------------------------------------------------------------------ resolution rules


def test_group_title_over_sub_titles_resolves_per_column() -> None:
    rows = [
        ("State", "Pre-Pawn", "Pre-Pawn", "Totals"),
        ("State", "Handgun", "Long Gun", "Totals"),
        ("Ohio", "14", "15", "29"),
    ]
    assert header_rows(rows) == 2
    assert collapse_header(rows) == (
        ("State", "Pre-Pawn Handgun", "Pre-Pawn Long Gun", "Totals"),
        ("Ohio", "14", "15", "29"),
    )


def test_a_data_row_under_a_merged_cell_is_not_taken_for_a_header() -> None:
    rows = [("Region", "Sales", "Sales"), ("North", "12", "14"), ("South", "9", "11")]
    assert header_rows(rows) == 1
    # A header cell spanning two columns over plain text rows: the rows are data.
    address = [
        ("Name", "Address", "Address"),
        ("Ann", "Main St", "Springfield"),
        ("Bo", "Elm St", "Shelbyville"),
    ]
    assert header_rows(address) == 1
    single = [("Name", "Role"), ("Ann", "Lead"), ("Bo", "Dev")]
    assert header_rows(single) == 1 and collapse_header(single)[0] == ("Name", "Role")


def test_resolve_header_joins_stacked_labels_once_and_cjk_without_spaces() -> None:
    assert resolve_header([("A", "组", "组"), ("A", "面积", "人数")]) == ("A", "组面积", "组人数")
    assert resolve_header([("比例（%）",), ("μ≤10",)]) == ("比例（%） μ≤10",)
    assert resolve_header([("", "Q1"), ("Item", "")]) == ("Item", "Q1")


def test_glossary_and_numbered_references_are_headerless() -> None:
    gloss = [
        ("API", "Application Programming Interface"),
        ("BYOD", "Bring Your Own Device"),
        ("CDM", "Continuous Diagnostics and Mitigation"),
        ("PDP", "Policy Decision Point"),
    ]
    assert headerless(gloss)
    assert collapse_header(gloss)[0] == ("", "")
    assert render_table(collapse_header(gloss)).split("\n")[:2] == [
        "API: Application Programming Interface",
        "BYOD: Bring Your Own Device",
    ]
    refs = [("[1]", "A"), ("[2]", "B"), ("[3]", "C"), ("[10]", "D")]
    assert headerless(refs)
    # A real header breaks the shape ("Acronym") or the order ("ID" after "A0200").
    assert not headerless([("Acronym", "Meaning"), *gloss])
    assert not headerless([("ID", "Text"), ("A0100", "x"), ("A0200", "y"), ("A0300", "z")])


# ---------------------------------------------------------------------- real files


def test_nics_pdf_multi_row_header_is_resolved_per_column() -> None:
    doc = parsed("pdf/en-nics-background-checks-2015-11.pdf")
    [table] = [b for b in doc.blocks if b.kind == "table"]
    header = table.rows[0]
    assert header[:7] == (
        "State / Territory",
        "Permit",
        "Handgun",
        "Long Gun",
        "*Other",
        "**Multiple",
        "Admin",
    )
    assert header[7:10] == ("Pre-Pawn Handgun", "Pre-Pawn Long Gun", "Pre-Pawn *Other")
    assert header[-4:] == (
        "Return to Seller - Private Sale Handgun",
        "Return to Seller - Private Sale Long Gun",
        "Return to Seller - Private Sale *Other",
        "Totals",
    )
    assert len(set(header)) == len(header)  # every column named on its own
    kentucky = next(r for r in table.rows if r[0] == "Kentucky")
    row = dict(zip(header, kentucky, strict=True))
    assert row["Permit"] == "264,140" and row["Handgun"] == "12,155"
    assert row["Long Gun"] == "14,847"
    assert doc.title == "NICS Firearm Background Checks November - 2015"

    drafts = [d for d in chunk_blocks(doc.blocks, ChunkSettings()) if d.kind == "table"]
    assert drafts and all(d.table_header == header for d in drafts)
    [part] = [d for d in drafts if any(r[0] == "Kentucky" for r in d.table_rows)]
    assert "| State / Territory | Permit | Handgun | Long Gun | *Other |" in part.text
    assert "Permit Handgun Long Gun *Other" not in part.text  # no merged header glued on


def test_nist_acronyms_table_is_term_definition_pairs() -> None:
    doc = parsed("pdf/en-NIST.SP.800-207-ZeroTrust.pdf")
    [table] = [b for b in doc.blocks if b.kind == "table" and b.page == 54]
    assert table.rows[0] == ("", "")
    assert ("API", "Application Programming Interface") in table.rows
    assert ("PDP", "Policy Decision Point") in table.rows
    [draft] = [
        d
        for d in chunk_blocks(doc.blocks, ChunkSettings())
        if d.kind == "table" and d.page_start == 54
    ]
    assert draft.table_header == ()
    assert "API: Application Programming Interface\n" in draft.text
    assert "PDP: Policy Decision Point\n" in draft.text


def test_nist_table_drawn_with_boxes_inside_cells_keeps_three_columns() -> None:
    doc = parsed("pdf/en-NIST.SP.800-207-ZeroTrust.pdf")
    [table] = [b for b in doc.blocks if b.kind == "table" and b.page == 55]
    assert table.rows[0] == ("Category", "Example Questions", "Identified Gaps")
    assert [r[0] for r in table.rows[1:]] == [
        "Immediate deployment",
        "Systemic",
        "Areas needing more research",
    ]
    assert table.rows[2][2] == "• Too much reliance on vendor APIs"


def test_xlsx_merged_header_cells_resolve_per_column() -> None:
    doc = parsed("xlsx/mixed-mineru-xlsx_01.xlsx")
    sheet3 = [b for b in doc.blocks if b.kind == "table" and b.page == 3]
    assert sheet3[0].rows[0][:3] == ("first", "header second", "header third")


def test_docx_merged_group_header_resolves_per_column() -> None:
    d = docx.Document()
    t = d.add_table(rows=4, cols=3)
    t.cell(0, 0).merge(t.cell(1, 0)).text = "Site"
    t.cell(0, 1).merge(t.cell(0, 2)).text = "Failures"
    t.cell(1, 1).text, t.cell(1, 2).text = "Valves", "Pumps"
    for r, row in enumerate([("Plant A", "2", "0"), ("Plant B", "1", "3")], start=2):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    buf = io.BytesIO()
    d.save(buf)
    doc = parse_bytes(buf.getvalue(), Path("report.docx"))
    [table] = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == (
        ("Site", "Failures Valves", "Failures Pumps"),
        ("Plant A", "2", "0"),
        ("Plant B", "1", "3"),
    )


def test_markdown_and_csv_headers_are_unchanged() -> None:
    md = b"# T\n\n| Name | Qty |\n|---|---|\n| bolt | 4 |\n| nut | 9 |\n"
    [table] = [b for b in parse_bytes(md, Path("t.md")).blocks if b.kind == "table"]
    assert table.rows == (("Name", "Qty"), ("bolt", "4"), ("nut", "9"))
    # The syntax names the header, so a code-like sorted header is still a header...
    md = b"| CODE | Country |\n|---|---|\n| DE01 | Germany |\n| FR02 | France |\n| IT03 | Italy |\n"
    [table] = [b for b in parse_bytes(md, Path("t.md")).blocks if b.kind == "table"]
    assert table.rows[0] == ("CODE", "Country")
    # ... and a blank header row means no header.
    md = b"| | |\n|---|---|\n| API | Application Programming Interface |\n| PE | Policy Engine |\n"
    [table] = [b for b in parse_bytes(md, Path("t.md")).blocks if b.kind == "table"]
    assert table.rows == (
        ("", ""),
        ("API", "Application Programming Interface"),
        ("PE", "Policy Engine"),
    )
    csv = b"Name,Qty\nbolt,4\nnut,9\n"
    [table] = [b for b in parse_bytes(csv, Path("t.csv")).blocks if b.kind == "table"]
    assert table.rows[0] == ("Name", "Qty")
