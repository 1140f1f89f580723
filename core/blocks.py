"""Content blocks: the one shape every gateway operation returns, whatever the source.

A document passage, a row set from a SQL template and a live status result all travel as a
`ContentBlock` with a citation label (`[DocX_pY]`, `[DB_<template>_<n>]`,
`[API_<source>_<n>]`), the permission tags that admitted it and how fresh it is. Memory
blocks (notes an agent asked Ragline to keep) carry no label: they are never authoritative.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

SourceKind = Literal["document", "rows", "status", "memory"]
Outcome = Literal["ok", "empty", "denied", "invalid", "unavailable", "no_match"]

_LABEL_PART = re.compile(r"[^A-Za-z0-9_]+")
# Every label a gateway answer may carry; anything else in an LLM's text is removed.
LABEL_PATTERN = re.compile(r"\[(?:Doc[0-9a-f]{6}_p\d+|DB_\w+?_\d+|API_\w+?_\d+)\]")


def rows_label(template: str, n: int) -> str:
    return f"[DB_{_LABEL_PART.sub('', template)}_{n}]"


def status_label(source: str, n: int) -> str:
    return f"[API_{_LABEL_PART.sub('', source)}_{n}]"


@dataclass(frozen=True, slots=True)
class Freshness:
    """`age_s`: seconds since the data last changed (None: unknown); `stale` when the age is
    past the source's declared window."""

    window_s: float
    age_s: float | None = None
    stale: bool = False

    @classmethod
    def of(cls, age_s: float | None, window_s: float) -> Freshness:
        return cls(window_s, age_s, age_s is not None and window_s > 0 and age_s > window_s)

    def note(self) -> str:
        if not self.stale:
            return ""
        if self.age_s is None:
            return (
                f"may be outdated: when it last changed is unknown, window {_human(self.window_s)}"
            )
        return (
            f"may be outdated: last updated {_human(self.age_s)} ago, "
            f"window {_human(self.window_s)}"
        )


def _human(seconds: float) -> str:
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


@dataclass(frozen=True, slots=True)
class RowSet:
    """Rows with their column names; `truncated` when the forced LIMIT cut more rows off."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool = False

    def as_text(self, max_rows: int = 20) -> str:
        lines = [" | ".join(self.columns)]
        lines += [" | ".join(_cell(v) for v in r) for r in self.rows[:max_rows]]
        if len(self.rows) > max_rows or self.truncated:
            lines.append("(more rows not shown)")
        return "\n".join(lines)


def params_text(params: Mapping[str, Any], given_only: bool = False) -> str:
    """Parameters as a reader writes them: "state=Kentucky, region=West" (`given_only`:
    without those that were not given, None)."""
    return ", ".join(f"{k}={v}" for k, v in params.items() if not given_only or v is not None)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return "" if value is None else str(value)


@dataclass(frozen=True, slots=True)
class ContentBlock:
    source_id: str
    source_kind: SourceKind
    content: str | RowSet | dict[str, Any]
    confidence: float
    permission_tags: tuple[str, ...]
    accessed_at: datetime
    freshness: Freshness
    label: str  # "" for memory: never cited
    title: str = ""
    authoritative: bool = True
    # Where exactly: content_id/page for documents, template and parameters for rows,
    # the resolved URL (without credentials) for status.
    locator: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        if isinstance(self.content, RowSet):
            return self.content.as_text()
        if isinstance(self.content, dict):
            return "; ".join(f"{k}: {_cell(v)}" for k, v in self.content.items())
        return self.content


@dataclass(frozen=True, slots=True)
class GatewayResult:
    """What query_rows / lookup_status / query_text return: the blocks and why.

    `status` is "ok" with blocks, or says why there are none (denied: the principal may not
    use the source; invalid: a parameter was refused; unavailable: the source failed, timed
    out or its breaker is open; no_match: nothing in the question maps to a template)."""

    trace_id: str
    operation: str
    status: Outcome
    blocks: tuple[ContentBlock, ...] = ()
    message: str = ""
    source_id: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
