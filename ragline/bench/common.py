"""Helpers shared by the benchmarks."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.types import Hit, Principal

# Benchmarks measure retrieval, not permissions: an operator principal sees everything.
OPERATOR = Principal(user="bench", superuser=True)


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def doc_ranking(hits: Sequence[Hit]) -> list[str]:
    """Distinct doc_ids in hit order: several chunks of one document count once."""
    return list(dict.fromkeys(h.chunk.doc_id for h in hits))


def rank_metrics(rank: int | None) -> dict[str, float]:
    return {
        "recall@1": float(rank is not None and rank <= 1),
        "recall@5": float(rank is not None and rank <= 5),
        "mrr@10": 1.0 / rank if rank is not None and rank <= 10 else 0.0,
    }


_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    return _SPACE.sub("", text).lower()


def contains_answer(answer: str, golds: Sequence[str]) -> bool:
    """Whitespace- and case-insensitive containment (PDF text often re-flows spaces)."""
    a = normalise(answer)
    return any(normalise(g) and normalise(g) in a for g in golds)


def calibration_of(rows: Sequence[tuple[float, bool]]) -> dict[str, Any]:
    """How confidence lines up with being right: Brier score, AUC (the chance that a right
    answer has a higher confidence than a wrong one; ties count half) and the mean
    confidence of right and of wrong answers."""
    if not rows:
        return {}
    conf = np.array([c for c, _ in rows], dtype=float)
    ok = np.array([r for _, r in rows], dtype=bool)
    right, wrong = conf[ok], conf[~ok]
    auc = None
    if len(right) and len(wrong):
        above = (right[:, None] > wrong[None, :]).mean()
        tied = (right[:, None] == wrong[None, :]).mean()
        auc = round(float(above + 0.5 * tied), 4)
    return {
        "brier": round(float(((conf - ok) ** 2).mean()), 4),
        "auc": auc,
        "mean_when_right": round(float(right.mean()), 3) if len(right) else None,
        "mean_when_wrong": round(float(wrong.mean()), 3) if len(wrong) else None,
        "n": len(rows),
    }


def write_json(path: Path | None, payload: dict[str, Any]) -> None:
    text = json.dumps(payload, ensure_ascii=False, indent=2)
    print(text)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")


def write_json_quiet(path: Path, payload: dict[str, Any]) -> None:
    """`write_json` to a file only (for results too long to print)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
