"""The RAG prompt lists sources under their labels, best first, within a budget."""

from __future__ import annotations

from gen_cases import make_chunk, make_hits

from generation.language import DEFAULT_NOT_COVERED
from generation.prompt import build_messages, format_sources


def test_sources_in_rank_order_with_label_title_and_page() -> None:
    hits = make_hits(
        make_chunk("Second page text.", doc_id="ab12cd" + "0" * 10, page_start=2, title="Guide"),
        make_chunk(
            "Pages text.\fMore.",
            doc_id="ef3456" + "0" * 10,
            page_start=4,
            page_end=5,
            title="Manual",
        ),
    )
    text = format_sources(hits)
    assert text == (
        "[Docab12cd_p2] (Guide, page 2)\nSecond page text.\n\n"
        "[Docef3456_p4] (Manual, pages 4-5)\nPages text.\nMore."
    )


def test_budget_keeps_the_best_sources_and_cuts_the_rest() -> None:
    hits = make_hits(
        *(make_chunk(f"source {i} " + "x" * 500, doc_id=f"{i:06x}" + "0" * 10) for i in range(5))
    )
    text = format_sources(hits, budget_chars=1300)
    assert len(text) <= 1300
    assert "source 0" in text and "source 1" in text
    assert "source 3" not in text and "source 4" not in text
    # The first source is always there, even when it alone is over budget.
    assert format_sources(hits, budget_chars=100).startswith("[Doc000000_p1]")


def test_messages_carry_rules_in_the_question_language() -> None:
    hits = make_hits(make_chunk("Text.", page_start=7))
    zh = build_messages("问题是什么？", hits, DEFAULT_NOT_COVERED["zh"], "zh")
    en = build_messages("What is it?", hits, DEFAULT_NOT_COVERED["en"], "en")
    assert [m["role"] for m in zh] == ["system", "user"]
    assert DEFAULT_NOT_COVERED["zh"] in zh[0]["content"] and "Chinese" in zh[0]["content"]
    assert DEFAULT_NOT_COVERED["en"] in en[0]["content"] and "English" in en[0]["content"]
    assert "[Docab12cd_p7] (Test document, page 7)\nText." in en[1]["content"]
    assert en[1]["content"].endswith("Question: What is it?")
