"""Knowledge gaps: which questions the documents do not answer, for the administrators.

A question is a gap when the answer was "not covered", or covered with a best query
coverage under settings.gaps.low_coverage. Questions are deduplicated by their normalised
form (Unicode NFKC, case-folded, punctuation dropped, content terms sorted), so "What is
the TiKV memory limit?" and "tikv memory limit, what is it" are one gap, counted twice.
"""

from __future__ import annotations

import csv
import hashlib
import io
import unicodedata
from collections.abc import Sequence
from typing import Any

from core.text import query_terms
from core.types import Hit
from indexing.protocols import GapRecord


def normalise(question: str) -> str:
    text = unicodedata.normalize("NFKC", question).casefold()
    terms = sorted(set(query_terms(text)))
    return " ".join(terms) if terms else " ".join(text.split())


def gap_key(normalised: str) -> str:
    return hashlib.sha1(normalised.encode("utf-8")).hexdigest()


def best_coverage(hits: Sequence[Hit]) -> float:
    return max((h.signals.get("coverage", 0.0) for h in hits[:5]), default=0.0)


def near_misses(hits: Sequence[Hit], n: int) -> list[dict[str, Any]]:
    """The best documents retrieved for the question, one entry per document."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for h in hits:
        if h.chunk.doc_id in seen:
            continue
        seen.add(h.chunk.doc_id)
        out.append(
            {
                "doc_id": h.chunk.doc_id,
                "title": h.chunk.title,
                "source": h.chunk.source,
                "label": h.chunk.label,
                "coverage": round(h.signals.get("coverage", 0.0), 3),
            }
        )
        if len(out) >= n:
            break
    return out


def gap_view(g: GapRecord) -> dict[str, Any]:
    return {
        "key": g.key,
        "question": g.question,
        "normalised": g.normalised,
        "count": g.count,
        "first_asked": g.first_at.isoformat(),
        "last_asked": g.last_at.isoformat(),
        "roles": list(g.roles),
        "near_misses": list(g.near_misses),
        "reason": g.reason,
        "best_coverage": round(g.best_coverage, 3),
        "status": g.status,
        "closed_at": g.closed_at.isoformat() if g.closed_at else None,
        "closed_by": g.closed_by,
    }


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def gaps_csv(gaps: Sequence[GapRecord]) -> str:
    """CSV for spreadsheets; cells a spreadsheet would run as a formula are quoted."""

    def cell(value: object) -> str:
        text = str(value)
        return "'" + text if text.startswith(_FORMULA_START) else text

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["question", "count", "first_asked", "last_asked", "roles", "near_misses", "reason",
         "best_coverage", "status", "closed_at"]
    )  # fmt: skip
    for g in gaps:
        v = gap_view(g)
        writer.writerow(
            [
                cell(v["question"]),
                v["count"],
                v["first_asked"],
                v["last_asked"],
                cell(" ".join(v["roles"])),
                cell("; ".join(m["title"] or m["source"] for m in v["near_misses"])),
                cell(v["reason"]),
                v["best_coverage"],
                v["status"],
                v["closed_at"] or "",
            ]
        )
    return out.getvalue()
