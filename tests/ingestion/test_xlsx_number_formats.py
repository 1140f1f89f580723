"""XLSX cells read as Excel shows them (FINDINGS #23: a "0.0%" cell was quoted as the raw
fraction, "执行率: 0.91"): percentages as shown, thousands separators, fixed decimals and
currency signs; other numbers never lose a digit to their format."""

from __future__ import annotations

import datetime as dt
import io

import openpyxl
import pytest

from ingestion.parsers.xlsx import _fmt, parse


def _workbook(rows: list[tuple[object, str]]) -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["部门", "数值"])
    for k, (value, fmt) in enumerate(rows, start=2):
        ws.cell(k, 1, f"r{k}")
        ws.cell(k, 2, value).number_format = fmt
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def test_percent_cells_read_as_excel_shows_them() -> None:
    data = _workbook([(0.91, "0.0%"), (0.9325, "0.0%"), (0.855, "0%"), (-0.05, "0.00%")])
    table = next(b for b in parse(data, "预算.xlsx").blocks if b.kind == "table")
    assert [row[1] for row in table.rows[1:]] == ["91.0%", "93.3%", "86%", "-5.00%"]
    assert "| r2 | 91.0% |" in table.text


@pytest.mark.parametrize(
    ("value", "fmt", "shown"),
    [
        (1234567, "#,##0", "1,234,567"),
        (1234567.5, "#,##0.00", "1,234,567.50"),
        (2180.5, "0.00", "2180.50"),
        (-1234.5, "#,##0.00;[Red]-#,##0.00", "-1,234.50"),
        (1200, '"¥"#,##0', "¥1,200"),
        (1200, "[$€-407]#,##0.00", "€1,200.00"),
        (12, '0" 人"', "12 人"),
        (0.1 + 0.2, "0.00", "0.30"),  # float noise is no digit of the data
        # Digits the format would hide are kept: a reader may need them.
        (2180.555, "0.00", "2180.555"),
        (5.5, "0", "5.5"),
        (0.123, "_(* #,##0.00_)", "0.123"),
        # Formats not shown here keep the plain value.
        (3, "General", "3"),
        (2180.5, "General", "2180.5"),
        (0.5, "# ?/?", "0.5"),
        (12.5, "0.0E+00", "12.5"),
        (1234, "#,##0,", "1234"),
        (7, "@", "7"),
        (True, "0.0%", "TRUE"),
        ("文本", "0.0%", "文本"),
        (dt.datetime(2025, 3, 31), "yyyy年m月d日", "2025-03-31"),
    ],
)
def test_number_formats(value: object, fmt: str, shown: str) -> None:
    assert _fmt(value, fmt) == shown
