"""Tables in PDFs that go on from one page to the next."""

from __future__ import annotations

from pathlib import Path

from core.settings import ChunkSettings
from core.types import Block, ParsedDocument
from ingestion.chunker import chunk_blocks
from ingestion.parse import parse_bytes
from tests.ingestion.conftest import pages_pdf

HEADER = ["Asset", "Interval", "Last service", "Cost"]
ROWS = [
    ["Chiller CH-1", "6 months", "12 Jan 2024", "1,450"],
    ["Boiler B-1", "12 months", "20 Nov 2023", "2,900"],
    ["Elevator E-1", "3 months", "15 Mar 2024", "780"],
    ["Air handler AHU-2", "3 months", "23 Feb 2024", "640"],
    ["Transformer TX-1", "24 months", "30 Sep 2022", "4,800"],
]
COLUMNS = [60, 220, 320, 440, 530]


def _text(x: float, y: float, text: str, size: float = 10) -> str:
    return f"BT /F1 {size} Tf {x} {y} Td ({text}) Tj ET"


def _grid(top: float, rows: list[list[str]]) -> list[str]:
    """A ruled table whose first row's baseline is at `top`."""
    ops = []
    for r, row in enumerate(rows):
        ops += [_text(COLUMNS[c] + 4, top - 18 * r, cell) for c, cell in enumerate(row)]
    upper, lower = top + 12, top + 12 - 18 * len(rows)
    ops += [
        f"0.8 w {COLUMNS[0]} {upper - 18 * i} m {COLUMNS[-1]} {upper - 18 * i} l S"
        for i in range(len(rows) + 1)
    ]
    ops += [f"0.8 w {x} {upper} m {x} {lower} l S" for x in COLUMNS]
    return ops


def _parsed(second_page: list[str]) -> ParsedDocument:
    first = [
        _text(60, 780, "2. Service intervals", 14),
        _text(60, 750, "Each asset is serviced at the interval below by the contractor."),
        *_grid(720, [HEADER, *ROWS[:3]]),
        _text(60, 60, "1 Logged in the maintenance system.", 8),
    ]
    data = pages_pdf(["\n".join(first), "\n".join(second_page)])
    return parse_bytes(data, Path("handbook.pdf"))


def _tables(second_page: list[str]) -> list[Block]:
    return [b for b in _parsed(second_page).blocks if b.kind == "table"]


def test_a_table_going_on_without_its_header_gets_the_header_it_continues() -> None:
    """The rows at the top of page 2 are the same table: "Air handler AHU-2" is a row,
    not the header of the rows below it."""
    _, rest = _tables(_grid(780, ROWS[3:]))
    assert rest.page == 2
    assert list(rest.rows[0]) == HEADER
    assert [list(r) for r in rest.rows[1:]] == ROWS[3:]
    # Each row is cited at its own line of page 2 (the header is not among them).
    drafts = chunk_blocks(_parsed(_grid(780, ROWS[3:])).blocks, ChunkSettings())
    part = next(d for d in drafts if d.kind == "table" and d.page_start == 2)
    lines = part.text.split("\n")
    at = {
        row[0]: part.line_map[i] for i, line in enumerate(lines) for row in ROWS if row[0] in line
    }
    assert at == {"Air handler AHU-2": (2, 1, 1), "Transformer TX-1": (2, 2, 2)}


def test_a_repeated_header_and_a_new_table_keep_their_own() -> None:
    _, repeated = _tables(_grid(780, [HEADER, *ROWS[3:]]))
    assert list(repeated.rows[0]) == HEADER and len(repeated.rows) == 3
    # Text before it: a table of its own, even with as many columns.
    other = ["Zone", "Owner", "Since", "Budget"]
    _, new = _tables(
        [
            _text(60, 790, "Zones are assigned to owners as follows."),
            *_grid(760, [other, ["North", "Ana", "2021", "900"]]),
        ]
    )
    assert list(new.rows[0]) == other
