"""Parsers on the real shared documents: structure checked against what is in the files."""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # until pyproject sets pytest's pythonpath
    sys.path.insert(0, str(ROOT))

from core.types import Block, ParsedDocument  # noqa: E402
from ingestion.parse import detect_format, parse_bytes  # noqa: E402

# Beside the repo (../shared), or where RAGLINE_SHARED_DOCS points (worktrees).
DOCS = Path(os.environ.get("RAGLINE_SHARED_DOCS", ROOT / ".." / "shared" / "data" / "docs"))
HAN_SPACE = re.compile(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]")


@cache
def parsed(rel: str) -> ParsedDocument:
    path = DOCS / rel
    if not path.is_file():
        pytest.skip(f"shared document {rel} not present (expected beside the repo: {DOCS})")
    return parse_bytes(path.read_bytes(), path)


def headings(doc: ParsedDocument) -> list[Block]:
    return [b for b in doc.blocks if b.kind == "heading"]


def tables(doc: ParsedDocument) -> list[Block]:
    return [b for b in doc.blocks if b.kind == "table"]


def find(doc: ParsedDocument, needle: str) -> list[Block]:
    return [b for b in doc.blocks if needle in re.sub(r"\s+", " ", b.text)]


# ---------------------------------------------------------------------------- PDF


def test_pdf_nist_page_numbers_and_outline_headings() -> None:
    doc = parsed("pdf/en-NIST.SP.800-207-ZeroTrust.pdf")
    assert doc.has_pages and doc.page_count == 59
    assert doc.parser.startswith("pypdfium2/")
    hits = find(doc, "access requests suddenly exceed 100 records in a day")
    assert [b.page for b in hits] == [29]
    assert hits[0].kind == "paragraph" and hits[0].line_start >= 1
    titles = [b.text for b in headings(doc)]
    assert "3.3.1 Trust Algorithm Variations" in titles
    sub = next(b for b in headings(doc) if b.text == "3.3.1 Trust Algorithm Variations")
    assert sub.level == 3 and sub.section_path[-1] == "3.3 Trust Algorithm"
    assert hits[0].section_path[-1] == "3.3.1 Trust Algorithm Variations"
    # The margin note repeated on every page is furniture, not content.
    assert len(find(doc, "This publication is available free of charge")) <= 5  # was 57


def test_pdf_federal_register_identifier_page() -> None:
    doc = parsed("pdf/en-federal-register-2020-17221.pdf")
    assert doc.page_count == 15
    assert {b.page for b in find(doc, "P12.1.2")} == {6}


def test_pdf_nics_wide_table_kept_whole_with_header() -> None:
    doc = parsed("pdf/en-nics-background-checks-2015-11.pdf")
    (table,) = tables(doc)
    header = table.rows[0]
    assert any("State" in cell for cell in header)
    kentucky = [r for r in table.rows if r[0] == "Kentucky"]
    assert kentucky and kentucky[0][1] == "264,140"
    states = [r[0] for r in table.rows[1:]]
    assert "Alabama" in states and "Wyoming" in states and len(table.rows) > 50
    # Table text is not repeated as paragraphs.
    assert not [b for b in doc.blocks if b.kind != "table" and "Kentucky" in b.text]
    assert table.text.splitlines()[0].startswith("| State")


def test_pdf_chinese_ruled_tables_with_merged_cells() -> None:
    doc = parsed("pdf/zh-安徽省建设用地使用标准-表7.5.pdf")
    ts = tables(doc)
    assert len(ts) == 3
    first = ts[0]
    assert first.rows[0][:3] == ("公路技术等级", "车道数", "用地指标基准值")
    # A vertically merged "高速公路" applies to each of its rows.
    assert sum(1 for r in first.rows if r[0] == "高速公路") >= 3
    caption = next(b for b in doc.blocks if b.text.startswith("表 7.5"))
    assert doc.blocks.index(caption) < doc.blocks.index(first)


def test_pdf_chinese_book_no_spaces_between_han_and_headings() -> None:
    doc = parsed("pdf/zh-lshort-zh-cn.pdf")
    assert doc.page_count == 128
    bad = [b.text[:60] for b in doc.blocks if HAN_SPACE.search(b.text)]
    assert not bad, bad[:5]
    titles = [b.text for b in headings(doc)]
    assert len(titles) >= 100  # the outline has 122 entries
    assert "1.3.4 注释" in titles
    assert any(b.kind == "code" and "\\documentclass" in b.text for b in doc.blocks)
    # Running headers like "1.4 源文件的结构 5" are not content.
    assert not [b for b in doc.blocks if re.fullmatch(r"\d+\.\d+ \S+ \d+", b.text)]


def test_pdf_p3c_tables_and_no_han_spaces() -> None:
    doc = parsed("pdf/zh-p3c-Java开发手册-黄山版.pdf")
    assert len(tables(doc)) >= 8
    assert not [b for b in doc.blocks if b.kind != "table" and HAN_SPACE.search(b.text)]


# --------------------------------------------------------------------------- DOCX


def test_docx_sample_headings_lists_and_table() -> None:
    doc = parsed("docx/en-docling-word_sample.docx")
    assert [b.text for b in headings(doc)] == ["Swimming in the lake", "Let’s swim!", "Let’s eat"]
    eat = headings(doc)[2]
    assert eat.level == 2 and eat.section_path == ("Let’s swim!",)
    (table,) = tables(doc)
    assert table.rows[0] == ("", "Food", "Calories per portion")
    assert ("Berries", "Blueberry, Strawberry, Cranberry", "150") in table.rows
    assert table.section_path == ("Let’s swim!", "Let’s eat")
    lists = [b for b in doc.blocks if b.kind == "list"]
    assert lists[0].text.count("\n") >= 3 and lists[0].text.startswith("- You can relax")


def test_docx_chinese_styled_headings_and_tables() -> None:
    doc = parsed("docx/zh-需求规格说明书-cylong1016.docx")
    assert len(headings(doc)) == 96
    assert len(tables(doc)) == 19
    assert {b.level for b in headings(doc)} <= {1, 2, 3, 4}


def test_docx_table_of_contents_skipped() -> None:
    doc = parsed("docx/zhen-mineru-docx_01.docx")
    assert not find(doc, "1.1. 显式空白字符表示 iii")
    assert len(tables(doc)) == 8


# --------------------------------------------------------------------------- XLSX


def test_xlsx_sheets_are_pages_with_header_rows() -> None:
    doc = parsed("xlsx/mixed-mineru-xlsx_01.xlsx")
    assert doc.page_count == 4
    assert [b.text for b in headings(doc)] == ["Sheet1", "Sheet2", "Sheet3", "Sheet4"]
    ts = tables(doc)
    # (Sheet2 holds a second table under four empty rows: its own table since session 48.)
    assert [t.page for t in ts] == [1, 2, 2, 3, 4]
    assert ts[2].rows[0] == ("col-1", "col-2", "col-3") and ts[2].line_start == 14
    assert ts[0].rows[0] == ("first 123", "second 123", "third 123")
    assert ts[0].rows[1] == ("1", "5", "9")
    assert ts[0].section_path == ("Sheet1",)


def test_xlsx_merged_title_row_becomes_caption() -> None:
    doc = parsed("xlsx/en-IDA_Statement_Of_Cash_Flows__FY2011.xlsx")
    (table,) = tables(doc)
    # The title merged over four cells reads once.
    captions = [b.text for b in doc.blocks if b.kind == "paragraph"]
    assert captions[0] == "IDA_Statement_Of_Cash_Flows__FY2011"
    assert table.rows[0] == ("Source", "Line Item", "Fiscal Year", "Amount (US$, Millions)")
    assert (
        "Cash flows from investment activities",
        "Development Credits - Disbursements",
        "2011",
        "-8021",
    ) in table.rows
    assert table.line_start == 2


def test_xlsx_chinese_issues_sheet() -> None:
    doc = parsed("xlsx/zh-langchain-ChatGLM_closed-issues.xlsx")
    (table,) = tables(doc)
    assert table.rows[0][1:3] == ("title", "file")
    assert len(table.rows) == 173
    assert table.rows[1][1] == "加油~以及一些建议"


# --------------------------------------------------------------------------- HTML


WIKI_JUNK = (
    "Jump to",
    "Main page",
    "Random article",
    "Donate",
    "Retrieved from",
    "Privacy policy",
    "Personal tools",
    "[edit]",
    "Navigation menu",
)


@pytest.mark.parametrize(
    "rel", ["html/en-wikipedia-duck-docling.html", "html/en-wikipedia-mozilla.html"]
)
def test_html_wikipedia_main_content_only(rel: str) -> None:
    doc = parsed(rel)
    text = "\n".join(b.text for b in doc.blocks)
    assert not [j for j in WIKI_JUNK if j in text]
    assert headings(doc)[0].level == 1
    assert all(b.section_path[:1] == (headings(doc)[0].text,) for b in doc.blocks[1:])


def test_html_duck_structure() -> None:
    doc = parsed("html/en-wikipedia-duck-docling.html")
    assert doc.title == "Duck"
    titles = [b.text for b in headings(doc)]
    assert titles[:4] == ["Duck", "Etymology", "Taxonomy", "Morphology"]
    feeding = next(b for b in headings(doc) if b.text == "Feeding")
    assert feeding.level == 3 and feeding.section_path == ("Duck", "Behaviour")
    # Navbox tables at the bottom are dropped; the infobox stays.
    assert len(tables(doc)) == 1


def test_html_chinese_news_page() -> None:
    doc = parsed("html/zh-gmw-science.html")
    assert doc.title == "宇航员在太空中喝酒会怎么样？后果很严重"
    text = "\n".join(b.text for b in doc.blocks)
    assert "国际空间站" in text and "\ufffd" not in text
    assert len([b for b in doc.blocks if b.kind == "paragraph"]) >= 20
    assert "网站地图" not in text and "登录" not in text


# ----------------------------------------------------------------------- Markdown


def test_markdown_tidb_headings_tables_front_matter() -> None:
    doc = parsed("md/zh-tidb-hardware-and-software-requirements.md")
    assert doc.title == "TiDB 软件和硬件环境需求"
    hs = headings(doc)
    assert len(hs) == 16
    assert (hs[0].text, hs[0].level, hs[0].line_start) == ("TiDB 软件和硬件环境需求", 1, 7)
    first = tables(doc)[0]
    assert first.rows[0] == ("操作系统", "支持的 CPU 架构")
    assert first.rows[1] == ("Red Hat Enterprise Linux 9.4 及以上的 9.x 版本", "x86_64, ARM 64")
    assert first.section_path == ("TiDB 软件和硬件环境需求", "操作系统及平台要求")
    assert first.line_start == 21


def test_markdown_law_headings_only_from_markup() -> None:
    doc = parsed("md/zh-个人信息保护法-2021.md")
    assert len(headings(doc)) == 12
    art = find(doc, "第一条 为了保护个人信息权益")[0]
    assert art.kind == "paragraph" and art.section_path[-1] == "第一章 总 则"


def test_markdown_openapi_code_and_tables() -> None:
    doc = parsed("md/en-openapi-3.1.0.md")
    assert len(headings(doc)) >= 140
    assert len([b for b in doc.blocks if b.kind == "code"]) > 100
    assert any(t.rows[0][:2] == ("Field Name", "Type") for t in tables(doc))


# ------------------------------------------------------------------ all documents


def test_every_shared_document_parses_with_sane_blocks() -> None:
    if not DOCS.is_dir():
        pytest.skip(f"shared documents not present at {DOCS}")
    files = [p for p in sorted(DOCS.rglob("*")) if p.is_file() and p.name != "MANIFEST.tsv"]
    assert len(files) == 18
    for path in files:
        doc = parsed(str(path.relative_to(DOCS)))
        assert doc.blocks, path.name
        assert doc.title, path.name
        for b in doc.blocks:
            assert 1 <= b.page <= max(1, doc.page_count), (path.name, b)
            assert 1 <= b.line_start <= b.line_end, (path.name, b)
            assert b.text.strip(), (path.name, b)
            assert (b.level > 0) == (b.kind == "heading"), (path.name, b)
            assert (b.kind == "table") == bool(b.rows), (path.name, b)


def test_detect_format_by_content_then_extension(tmp_path: Path) -> None:
    assert detect_format(Path("a.pdf"), b"<!DOCTYPE html><html><body>x</body></html>") == "html"
    assert detect_format(Path("a.txt"), b"%PDF-1.7\n") == "pdf"
    assert detect_format(Path("x.bin"), b"From: a@b.c\nTo: d@e.f\nSubject: hi\n\nbody") == "eml"
    assert detect_format(Path("notes.md"), b"# Title\n") == "markdown"
    assert detect_format(Path("data.csv"), b"a,b\n1,2\n") == "text"


def _list_block(text: str, name: str) -> tuple[ParsedDocument, Block]:
    """A document parsed from `text` as file `name`, and its one list block."""
    doc = parse_bytes(text.encode(), Path(name))
    (lst,) = [b for b in doc.blocks if b.kind == "list"]
    return doc, lst


def test_markdown_list_items_are_cited_at_their_own_lines() -> None:
    """Each item of a Markdown list carries its source lines, a wrapped one its first and
    last: a quote of one item is cited there, not at the whole list and the blank line
    after it."""
    from core.settings import ChunkSettings
    from ingestion.chunker import chunk_blocks

    text = (
        "# Leave\n\n## Annual leave\n\n"
        "- Full-time staff get 25 days a year.\n"
        "- Contractors get 10 days a year, unpaid, and must\n"
        "  book them through the portal.\n"
        "- Unused days expire on 31 March.\n\nMore text.\n"
    )
    doc, lst = _list_block(text, "leave.md")
    assert [line for _, line in lst.line_marks] == [5, 6, 7, 8]
    (draft,) = [d for d in chunk_blocks(doc.blocks, ChunkSettings()) if "Contractors" in d.text]
    lines = draft.text.split("\n")
    spans = {line: draft.line_map[k][1:] for k, line in enumerate(lines) if line.startswith("-")}
    assert spans["- Full-time staff get 25 days a year."] == (5, 5)
    wrapped = "- Contractors get 10 days a year, unpaid, and must book them through the portal."
    assert spans[wrapped] == (6, 7)
    assert spans["- Unused days expire on 31 March."] == (8, 8)


def test_html_list_items_are_cited_at_their_own_lines() -> None:
    """An HTML list's items carry their own lines (a sublist's items theirs), not the
    whole <ul>'s."""
    html = (
        "<html><body>\n<h1>Benefits</h1>\n<ul>\n"
        "<li>Meals: 25 a day.</li>\n"
        "<li>Transport: 300 a month\nfor staff.\n<ul>\n<li>Interns: 150.</li>\n</ul></li>\n"
        "<li>Phone: 100 a month.</li>\n</ul>\n</body></html>\n"
    )
    _, lst = _list_block(html, "benefits.html")
    assert lst.text.split("\n") == [
        "- Meals: 25 a day.",
        "- Transport: 300 a month for staff.",
        "  - Interns: 150.",
        "- Phone: 100 a month.",
    ]
    assert [line for _, line in lst.line_marks] == [4, 5, 6, 8, 10]


def test_an_html_table_written_one_row_a_line_cites_each_row_at_its_line() -> None:
    """Rows of an HTML table, one <tr> a line, are cited at their own lines (the chunk's
    line map), and its caption at the caption's."""
    from core.settings import ChunkSettings
    from ingestion.chunker import chunk_blocks

    html = (
        "<html><body>\n<h1>Hotels</h1>\n<table>\n<caption>Nightly caps (EUR)</caption>\n"
        "<tr><th>Grade</th><th>Tier 1</th></tr>\n"
        "<tr><td>Director</td><td>900</td></tr>\n"
        "<tr><td>Manager</td><td>650</td></tr>\n</table>\n</body></html>\n"
    )
    doc = parse_bytes(html.encode(), Path("hotels.html"))
    (draft,) = [d for d in chunk_blocks(doc.blocks, ChunkSettings()) if d.kind == "table"]
    lines = dict(zip(draft.text.split("\n"), draft.line_map, strict=True))
    assert lines["Nightly caps (EUR)"][1:] == (4, 4)
    assert lines["| Director | 900 |"][1:] == (6, 6)
    assert lines["| Manager | 650 |"][1:] == (7, 7)
