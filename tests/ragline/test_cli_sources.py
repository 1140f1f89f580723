"""How `ragline ask` prints where a cited sentence is."""

from __future__ import annotations

from ragline.cli.commands import _span_text


def test_a_span_on_one_page_and_one_across_a_page_break() -> None:
    one = {"page_start": 3, "page_end": 3, "line_start": 14, "line_end": 20}
    assert _span_text(one) == "p3 lines 14-20"
    # Line numbers count within their page: "lines 14-10" would read as a reversed range.
    across = {"page_start": 33, "page_end": 34, "line_start": 14, "line_end": 10}
    assert _span_text(across) == "p33 line 14 - p34 line 10"
    passage = {
        "chunk_page_start": 33,
        "chunk_page_end": 33,
        "chunk_line_start": 5,
        "chunk_line_end": 9,
    }
    assert _span_text(passage, "chunk_") == "p33 lines 5-9"
