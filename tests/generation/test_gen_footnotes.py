"""Footnotes: marks written onto words, the note lines they point to, and a quote that
shows a mark quoted with its note (which explains the quote and never answers alone)."""

from __future__ import annotations

import pytest
from gen_cases import make_chunk, make_hits, make_table

from core.types import Route
from generation.answer import AnswerGenerator
from generation.footnotes import marks, note_mark


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Standard terms: 60 days end of month*", ["*"]),
        ("Ancienneté(1): De 3 à 5 ans | Indemnité mensuelle(2): 40 €", ["1", "2"]),
        ("认定起点（单价）注1: 3000元", ["1"]),
        ("Zuschlag² gilt", ["2"]),
        ("Rate[3]: 5%", ["3"]),
        ("预算金额（不含税）①: 5万元以下", ["1"]),
        # not marks: a bracketed word, an item number, an operator, a number alone
        ("see item (3) of the list", []),
        ("a (b) c", []),
        ("Rate * 2", []),
        ("Version 2", []),
    ],
)
def test_marks_are_read_where_written_onto_a_word(text: str, expected: list[str]) -> None:
    assert marks(text) == expected


@pytest.mark.parametrize(
    ("line", "mark"),
    [
        ('* "End of month" means the 60 days are counted from ...', "*"),
        ("(1) L'ancienneté s'apprécie au 1er janvier.", "1"),
        ("① 预算金额按项目整体计算。", "1"),
        ("注1：认定起点以不含税价格计算", "1"),
        ("Note 2: figures exclude VAT.", "2"),
        ("² Nur an Werktagen.", "2"),
        # numbered lines are no notes without a note word
        ("1. Introduction", ""),
        ("2) Submit the form.", ""),
        ("Plain line of text.", ""),
    ],
)
def test_a_note_is_a_line_opening_with_its_mark(line: str, mark: str) -> None:
    assert note_mark(line) == mark


TERMS = make_table(
    ("Supplier category", "Standard terms", "Early-payment discount"),
    (
        ("Raw materials (steel, aluminium)", "60 days end of month*", "1.5%"),
        ("Electronic components", "45 days net", "2%"),
        (
            '* "End of month" means the 60 days are counted from the last day of the month '
            "in which the invoice is received.",
            "",
            "",
        ),
    ),
)


def test_a_row_showing_a_mark_is_quoted_with_its_note(route: Route) -> None:
    """(Held-out pass, session 47.) "60 days end of month*" means what its note says; the
    note is the table's last row, one cell wide: a sentence, not a supplier category."""
    gen = AnswerGenerator(max_sentences=1, min_confidence=0.0)
    answer = gen.answer(
        "Our aluminium supplier is on 60 days end of month. From when do the 60 days run?",
        make_hits(TERMS),
        True,
        route,
        {},
        "t",
    )
    assert answer.covered, answer
    assert answer.text.startswith("Supplier category: Raw materials"), answer.text
    assert "counted from the last day of the month" in answer.text
    assert "Supplier category: *" not in answer.text


def test_a_note_never_answers_alone(route: Route) -> None:
    """A note is quoted after the quote whose mark it explains; when that quote fails the
    question's checks (the row asked for has no figure), the note does not answer in its
    place."""
    table = make_table(
        ("预算金额（不含税）①", "采购方式", "最少邀请供应商数量", "审批人"),
        (
            ("5万元以下", "直接采购", "1家", "部门负责人"),
            ("5万元（含）至50万元", "询价", "3家", "采购总监"),
            ("工程类（任何金额）", "待定", "待定", "由基建管理委员会另行规定"),
        ),
    )
    note = make_chunk(
        "① 预算金额按项目整体计算，不得通过拆分项目规避招标。", doc_id=table.doc_id, ordinal=1
    )
    gen = AnswerGenerator(max_sentences=1, min_confidence=0.0)
    hits = make_hits(table, note)
    answered = gen.answer("5万元以下的采购最少邀请几家供应商？", hits, True, route, {}, "t")
    assert answered.covered and "1家" in answered.text, answered
    assert "拆分项目" in answered.text, answered  # the mark's note, after the row
    blank = gen.answer("工程类采购至少需要邀请几家供应商？", hits, True, route, {}, "t")
    assert not blank.covered, blank
