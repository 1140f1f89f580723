"""HTML parser: inline elements in reading order, robust to deep nesting, huge text and
characters XML cannot hold, titles from the page's own metadata."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.settings import ChunkSettings
from ingestion.chunker import chunk_blocks
from ingestion.parsers import html

DOCS = Path(
    os.environ.get(
        "RAGLINE_SHARED_DOCS",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs",
    )
)


def texts(data: bytes) -> list[str]:
    return [b.text for b in html.parse(data, "page.html").blocks]


def test_inline_elements_keep_reading_order() -> None:
    page = (
        b"<html><body><p><i><a href='/g'>The Guardian</a></i> said it "
        b"<a href='/x'>damages the health</a> of ducks.<sup>[1]</sup></p>"
        b"<p>Old English <span><i>d\xc5\xabce</i></span> 'diver', from "
        b"<span>*<i>d\xc5\xabcan</i></span>; see <b><a>dabbling <em>duck</em></a></b>"
        b" group. Area 5 m<sup>2</sup>, H<sub>2</sub>O.</p></body></html>"
    )
    assert texts(page) == [
        "The Guardian said it damages the health of ducks.[1]",
        "Old English dūce 'diver', from *dūcan; see dabbling duck group. Area 5 m2, H2O.",
    ]


def test_wikipedia_duck_sentences_are_faithful() -> None:
    path = DOCS / "html" / "en-wikipedia-duck-docling.html"
    if not path.is_file():
        pytest.skip("shared documents not present")
    doc = html.parse(path.read_bytes(), path.name)
    body = "\n".join(b.text for b in doc.blocks)
    assert "comes from Old English dūce 'diver', a derivative of the verb *dūcan 'to duck" in body
    assert "many species in the dabbling duck group feed by upending" in body
    assert "compare with Dutch duiken and German tauchen 'to dive'" in body
    assert (
        "The Guardian published an article advising that ducks should not be fed with "
        "bread because it damages the health of the ducks"
    ) in body
    assert "dūcandabbling" not in body and "The Guardiandamages" not in body
    assert doc.title == "Duck"  # the <h1>, not "Duck - Wikipedia"


def test_list_items_with_inline_markup_and_nesting() -> None:
    page = (
        b"<html><body><ul><li><b>Fast</b> start</li><li>Two <a>levels</a>"
        b"<ol><li>inner <i>one</i></li><li>inner two</li></ol> tail</li></ul></body></html>"
    )
    assert texts(page) == ["- Fast start\n- Two levels tail\n  1. inner one\n  2. inner two"]


@pytest.mark.parametrize("depth", [300, 3000])
def test_deep_nesting_keeps_the_paragraph(depth: int) -> None:
    page = (
        b"<html><body>"
        + b"<div>" * depth
        + b"<p>Deep paragraph survives.</p>"
        + b"</div>" * depth
        + b"</body></html>"
    )
    doc = html.parse(page, "deep.html")
    assert [b.text for b in doc.blocks] == ["Deep paragraph survives."]


def test_huge_pre_is_kept_and_chunked() -> None:
    line = b"line of log output 1234567890 abcdefghij klmnopqrstuvwxyz 0123456789 ABCDEFGHIJ\n"
    page = b"<html><body><h1>Log</h1><pre>" + line * 145_000 + b"</pre></body></html>"
    assert len(page) > 11_500_000
    doc = html.parse(page, "big.html")
    [code] = [b for b in doc.blocks if b.kind == "code"]
    assert len(code.text) == len(line) * 145_000 - 1  # whole, only the last newline cut
    drafts = chunk_blocks(doc.blocks, ChunkSettings(), has_pages=False)
    assert len(drafts) > 1000
    assert drafts[-1].text.endswith("0123456789 ABCDEFGHIJ")


def test_characters_xml_cannot_hold_are_stripped_not_fatal() -> None:
    page = "<html><body><p>Bad \x01 char\x0b here \uffff\x7f ok</p><p>next</p></body></html>"
    data = page.encode("utf-8")
    assert texts(data) == ["Bad char here ok", "next"]


def test_rowspan_and_colspan_fill_every_position_and_thead_sets_the_header() -> None:
    page = b"""<html><body><table>
      <thead><tr><th rowspan=2>State</th><th colspan=2>Handgun</th><th rowspan=2>Total</th></tr>
      <tr><th>New</th><th>Used</th></tr></thead>
      <tr><td rowspan=2>Ohio</td><td>1</td><td>2</td><td>3</td></tr>
      <tr><td>4</td><td>5</td><td>9</td></tr></table></body></html>"""
    [table] = [b for b in html.parse(page, "t.html").blocks if b.kind == "table"]
    assert table.rows == (
        ("State", "Handgun New", "Handgun Used", "Total"),
        ("Ohio", "1", "2", "3"),
        ("Ohio", "4", "5", "9"),
    )


def test_title_prefers_h1_inside_title_else_title_without_site_name() -> None:
    page = (
        b"<html><head><title>Duck - Wikipedia</title></head><body><h1>Duck</h1>"
        b"<p>text</p></body></html>"
    )
    assert html.parse(page, "x.html").title == "Duck"
    page = (
        b"<html><head><meta property='og:title' content='Quarterly report | ACME'>"
        b"<title>ACME</title></head><body><p>text</p></body></html>"
    )
    assert html.parse(page, "x.html").title == "Quarterly report"
    assert html.parse(b"<html><body><p>text</p></body></html>", "notes.html").title == "notes"


def test_key_value_table_with_row_headers_has_no_header_row() -> None:
    page = (
        b"<html><body><table><tr><th>Industry</th><td>Software</td></tr>"
        b"<tr><th>Founded</th><td>1998</td></tr><tr><th>Website</th><td>mozilla.org</td>"
        b"</tr></table></body></html>"
    )
    [table] = [b for b in html.parse(page, "t.html").blocks if b.kind == "table"]
    assert table.rows == (
        ("", ""),
        ("Industry", "Software"),
        ("Founded", "1998"),
        ("Website", "mozilla.org"),
    )
    assert table.text.split("\n") == ["Industry: Software", "Founded: 1998", "Website: mozilla.org"]


def test_definition_list_keeps_term_definition_pairs() -> None:
    page = (
        b"<html><body><dl><dt><abbr>PDP</abbr></dt><dd>Policy <b>Decision</b> Point</dd>"
        b"<dt>PE</dt><dt>Policy Engine</dt><dd>Decides access</dd><dd>Part of the PDP</dd>"
        b"</dl></body></html>"
    )
    assert texts(page) == [
        "PDP: Policy Decision Point\nPE / Policy Engine: Decides access; Part of the PDP"
    ]


def test_a_documents_own_header_and_footer_are_kept_a_sites_chrome_is_not() -> None:
    """(Held-out pass, session 50.) Policies saved as HTML put their version, the dates in
    force, what they replace and their footnotes in <header> and <footer>, outside <main>;
    those were dropped as a site's chrome. A header of links or with a <nav>, and a footer
    of links, still are."""
    page = (
        "<html><body><header><nav><a href='/'>Home</a> <a href='/a'>About</a></nav></header>"
        "<header><h1>Parental leave rules</h1><p>Version 5, in force from 1 April 2025.</p>"
        "</header><main><h2>1. Leave</h2><p>"
        + "Employees may take parental leave until the child turns two. "
        * 5
        + "</p></main><footer><p>(1) Version 4 of 1 October 2022 is repealed.</p></footer>"
        "<footer><a href='/privacy'>Privacy</a> <a href='/terms'>Terms</a></footer>"
        "</body></html>"
    )
    doc = html.parse(page.encode(), "leave.html")
    texts = [b.text for b in doc.blocks]
    assert texts[0] == "Parental leave rules"
    assert "Version 5, in force from 1 April 2025." in texts
    assert texts[-1] == "(1) Version 4 of 1 October 2022 is repealed."
    assert not any("Home" in t or "Privacy" in t for t in texts)
    lines = [b.line_start for b in doc.blocks]
    assert lines == sorted(lines)
