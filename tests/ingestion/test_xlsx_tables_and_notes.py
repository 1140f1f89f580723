"""A sheet as people lay one out (held-out passes, session 48): a title above the table,
notes under it ("※ 1) …"), a second table further down after empty rows. The notes were
rows of the table (every other cell empty) and the second table's rows fell under the
first one's header."""

from __future__ import annotations

import io
from pathlib import Path

import openpyxl

from ingestion.parse import parse_bytes
from ingestion.parsers.text import parse as parse_text


def _sheet(rows: list[list[object]]) -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    for row in rows:
        ws.append(row)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def test_notes_under_a_table_and_a_second_table_stand_apart() -> None:
    data = _sheet(
        [
            ["장비 임대 요금표 (2025년 3월 1일 시행)"],
            ["장비 구분", "일 요금", "보증금"],
            ["미니 굴착기", "180,000원", "1,000,000원"],
            ["지게차", "150,000원", "1,000,000원"],
            ["※ 1) 일 요금은 1일 8시간 사용 기준입니다."],
            ["※ 2) 보증금은 반납 후 7영업일 이내에 환불합니다."],
            [],
            [],
            ["운반비 (편도)"],
            ["거리", "요금"],
            ["30km 이내", "120,000원"],
            ["80km 초과", "별도 견적"],
        ]
    )
    doc = parse_bytes(data, Path("rates.xlsx"))
    kinds = [(b.kind, b.text.split("\n")[0][:12]) for b in doc.blocks]
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert [len(t.rows) for t in tables] == [3, 3], kinds
    assert tables[0].rows[0] == ("장비 구분", "일 요금", "보증금")
    assert tables[1].rows[0] == ("거리", "요금") and tables[1].line_start == 10
    notes = [b.text for b in doc.blocks if b.kind == "paragraph" and b.text.startswith("※")]
    assert len(notes) == 2 and notes[0].startswith("※ 1) 일 요금은")
    captions = [b.text for b in doc.blocks if b.kind == "paragraph" and not b.text.startswith("※")]
    assert captions == ["장비 임대 요금표 (2025년 3월 1일 시행)", "운반비 (편도)"]


def test_a_spacer_row_inside_a_table_keeps_it_one_table() -> None:
    """An empty row between rows of figures is a spacer, not the end of the table."""
    data = _sheet([["Region", "Q1", "Q2"], ["North", 10, 12], [], ["South", 8, 9]])
    doc = parse_bytes(data, Path("sales.xlsx"))
    (table,) = (b for b in doc.blocks if b.kind == "table")
    assert [r[0] for r in table.rows] == ["Region", "North", "South"]


def test_a_note_under_a_csv_table_is_a_paragraph() -> None:
    text = "Tier,Price\nBasic,10\nPro,20\n* Prices exclude VAT and are billed yearly.\n"
    doc = parse_text(text.encode(), "prices.csv")
    assert [b.kind for b in doc.blocks] == ["table", "paragraph"]
    assert doc.blocks[1].text == "* Prices exclude VAT and are billed yearly."
