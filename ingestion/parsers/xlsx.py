"""XLSX via openpyxl: one heading (sheet name) + one table per sheet; `page` = sheet index.

`read_only=False` because merged ranges are only available on a full worksheet;
`data_only=True` so formulas give their cached values instead of "=SUM(...)".
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from importlib.metadata import version
from typing import Any

import openpyxl

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import (
    MAX_SHEET_CELLS,
    BlockBuilder,
    clean_text,
    normalise_rows,
    spread_merged,
    workbook_title,
)
from ingestion.parsers._ooxml import to_transitional

PARSER = f"openpyxl/{version('openpyxl')}"


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return clean_text(str(value))


def _grid(ws: Any) -> list[list[str]]:
    rows = min(ws.max_row or 0, MAX_SHEET_CELLS // max(1, ws.max_column or 1))
    grid = [[_fmt(v) for v in row] for row in ws.iter_rows(max_row=rows, values_only=True)]
    for rng in ws.merged_cells.ranges:
        r0, c0 = rng.min_row - 1, rng.min_col - 1
        if r0 >= len(grid) or c0 >= len(grid[r0]):
            continue
        spread_merged(grid, r0, c0, rng.max_row - r0, rng.max_col - c0)
    return grid


def parse(data: bytes, name: str) -> ParsedDocument:
    try:
        wb = openpyxl.load_workbook(
            io.BytesIO(to_transitional(data)), read_only=False, data_only=True
        )
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise ParseError(f"XLSX is damaged or not an Excel workbook: {exc}") from exc
    b = BlockBuilder()
    warnings: list[str] = []
    for index, ws in enumerate(wb.worksheets, start=1):
        b.reset_sections()
        b.heading(ws.title, 1, index, 1)
        grid = _grid(ws)
        numbered = [(i + 1, row) for i, row in enumerate(grid) if any(row)]
        if not numbered:
            continue
        if ws.max_row and ws.max_row > len(grid):
            warnings.append(f"sheet {ws.title!r}: only the first {len(grid)} rows were read")
        # Leading rows holding one value (a merged title across the table) are captions,
        # not the header row.
        while len(numbered) > 2 and len({c for c in numbered[0][1] if c}) == 1:
            line, row = numbered.pop(0)
            b.add("paragraph", next(c for c in row if c), index, line)
        rows = normalise_rows([row for _, row in numbered])
        if rows:
            b.table(rows, index, numbered[0][0], numbered[-1][0])
    wb.close()
    title = workbook_title(wb.properties.title or "", name)
    return ParsedDocument(
        tuple(b.blocks), len(wb.worksheets), title, PARSER, warnings=tuple(warnings)
    )
