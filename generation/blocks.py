"""Answers from gateway blocks (rows, live status): the figures as they came back, each
followed by its block's citation label, and a freshness warning where a block is stale.

No LLM is needed: a row set or a status record already is the answer; the text only makes
it readable and cites it. Memory blocks are never used here (they are not authoritative).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.blocks import ContentBlock, RowSet, params_text

MAX_ROWS = 10


# Columns whose numbers are names, not amounts: no thousands separators ("fiscal_year:
# 2011", not "2,011"; an order id, a postal code).
_NAMING_COLUMN = re.compile(
    r"(?:^|_|\b)(?:year|yr|fy|month|day|date|id|code|zip|postcode|postal|phone|number|no)(?:$|_|\b)",
    re.IGNORECASE,
)


def naming_column(column: str) -> bool:
    """Whether a column's numbers name things (a year, a date, an id, a code), rather than
    count or measure them."""
    return _NAMING_COLUMN.search(column) is not None


def _value(v: Any, column: str = "") -> str:
    if isinstance(v, bool) or v is None:
        return "" if v is None else str(v).lower()
    if isinstance(v, int):
        return str(v) if naming_column(column) else f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.0f}" if v.is_integer() else f"{v:,.2f}"
    return str(v)


def _row(columns: Sequence[str], row: Sequence[Any]) -> str:
    return ", ".join(f"{c}: {_value(v, c)}" for c, v in zip(columns, row, strict=False))


def block_sentence(block: ContentBlock) -> str:
    """One block as text with its label."""
    content = block.content
    if isinstance(content, RowSet):
        if not content.rows:
            return f"{block.title}: no rows match {params_text(block.locator.get('params', {}))}."
        if len(content.rows) == 1:
            body = _row(content.columns, content.rows[0])
        else:
            shown = content.rows[:MAX_ROWS]
            body = "; ".join(f"{i}. {_row(content.columns, r)}" for i, r in enumerate(shown, 1))
            if len(content.rows) > MAX_ROWS or content.truncated:
                body += "; (more rows not shown)"
        text = f"{block.title}: {body} {block.label}"
    elif isinstance(content, dict):
        body = ", ".join(f"{k}: {_value(v, k)}" for k, v in content.items())
        text = f"{block.title}: {body} {block.label}"
    else:
        text = f"{content} {block.label}"
    note = block.freshness.note()
    return f"{text} ({note})" if note else text


def compose(blocks: Sequence[ContentBlock]) -> str:
    return "\n".join(block_sentence(b) for b in blocks if b.authoritative and b.label)
