"""XLSX via openpyxl: one heading (sheet name) + one table per sheet; `page` = sheet index.

`read_only=False` because merged ranges are only available on a full worksheet;
`data_only=True` so formulas give their cached values instead of "=SUM(...)".
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import re
import zipfile
from importlib.metadata import version
from typing import Any

import openpyxl

from core.errors import ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import (
    MAX_SHEET_CELLS,
    BlockBuilder,
    add_sheet_part,
    clean_text,
    sheet_parts,
    spread_merged,
    workbook_title,
)
from ingestion.parsers._ooxml import to_transitional

PARSER = f"openpyxl/{version('openpyxl')}"


# A number format's parts: quoted text, an escaped or padding/fill character, a bracketed
# colour, condition or locale ("[Red]", "[$€-407]"), or one character.
_FORMAT_PART = re.compile(r'"[^"]*"|\\.|[_*].|\[[^\]]*\]|.', re.DOTALL)
_NUMBER_CORE = re.compile(r"[#0?,]*[#0][#0?,]*(?:\.[#0?]*)?")


def _number_format(fmt: str) -> tuple[str, str, str, int] | None:
    """(text before, digit pattern, text after, "%" signs) of the first section of an
    Excel number format that shows a plain, percentage or fixed-decimal number, else None
    (General, dates and times, fractions, scientific notation, text, scaled "#,##0,")."""
    section = next(iter(_sections(fmt)), "")
    before: list[str] = []
    core = ""
    after: list[str] = []
    percent = 0
    for part in _FORMAT_PART.findall(section):
        if part.startswith('"'):
            literal = part[1:-1]
        elif part.startswith("\\"):
            literal = part[1:]
        elif part[0] in "_*":
            continue
        elif part.startswith("["):
            if not part.startswith("[$"):
                continue
            literal = part[2:-1].split("-")[0]
        elif part in "#0?,.":
            if after:
                return None
            core += part
            continue
        elif part.isalpha() or part in "/@":
            return None  # dates, times, scientific, fractions, text
        else:
            literal = part
            percent += part == "%"
        (after if core else before).append(literal)
    if not _NUMBER_CORE.fullmatch(core):
        return None
    if core.rstrip(".").endswith(","):
        return None  # "#,##0," shows thousands: no scaling here
    return "".join(before), core, "".join(after), percent


def _sections(fmt: str) -> list[str]:
    """A format's ";"-separated sections, quoted text and escapes left whole."""
    out, current = [], ""
    for part in _FORMAT_PART.findall(fmt):
        if part == ";":
            out.append(current)
            current = ""
        else:
            current += part
    return [*out, current]


def _formatted(value: float, fmt: str) -> str | None:
    """`value` as the cell's number format shows it: a percentage as Excel rounds it
    ("0.0%": 0.9325 -> "93.3%"), thousands separators, fixed decimals and currency signs.
    Other numbers keep every digit they have (2180.55 under "0.0" stays 2180.55): only
    padding is added, so nothing a reader needs is rounded away. None: not a format
    shown here (General, dates, ...)."""
    parsed = _number_format(fmt)
    if parsed is None:
        return None
    before, core, after, percent = parsed
    decimals = len(core.split(".", 1)[1]) if "." in core else 0
    shown = decimal.Decimal(repr(float(value))) * (100**percent)
    if percent:
        digits = decimals
    else:
        shown = decimal.Decimal(f"{float(shown):.15g}")  # float noise, not data
        exponent = shown.normalize().as_tuple().exponent
        own = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        digits = max(core.split(".", 1)[1].count("0") if "." in core else 0, own)
    shown = shown.quantize(decimal.Decimal(1).scaleb(-digits), decimal.ROUND_HALF_UP)
    grouped = "," in core.split(".", 1)[0]
    text = f"{abs(shown):,.{digits}f}" if grouped else f"{abs(shown):.{digits}f}"
    sign = "-" if shown < 0 else ""
    return f"{sign}{before}{text}{after}".strip()


def _fmt(value: Any, number_format: str = "General") -> str:
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and number_format not in ("General", "@")
        and (shown := _formatted(value, number_format)) is not None
    ):
        return shown
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
    grid = [
        [_fmt(cell.value, getattr(cell, "number_format", "General")) for cell in row]
        for row in ws.iter_rows(max_row=rows)
    ]
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
        # A sheet may hold several tables parted by empty rows; rows holding one value
        # above a table (a merged title) are captions, not its header, and those under it
        # that read as notes ("※ 1) …") are paragraphs, not rows.
        for part in sheet_parts(numbered):
            add_sheet_part(b, part, index)
    wb.close()
    title = workbook_title(wb.properties.title or "", name)
    return ParsedDocument(
        tuple(b.blocks), len(wb.worksheets), title, PARSER, warnings=tuple(warnings)
    )
