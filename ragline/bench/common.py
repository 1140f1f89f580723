"""Helpers shared by the benchmarks."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.types import Hit, Principal, QueryFilter

if TYPE_CHECKING:
    from ragline.app import Ragline

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


class AnswerHider:
    """The documents a question may see once its answer is taken away: all but its own and
    every document whose text holds one of its gold answers (compared as `contains_answer`
    does). `texts`: each document's whole text by doc_id."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._texts = {doc: normalise(text) for doc, text in texts.items()}
        self._all = frozenset(self._texts)

    def without(self, answers: Sequence[str], *own: str) -> frozenset[str]:
        golds = [g for g in (normalise(a) for a in answers) if g]
        away = set(own)
        away.update(d for d, text in self._texts.items() if any(g in text for g in golds))
        return self._all - away

    async def ask(
        self, rag: Ragline, question: str, answers: Sequence[str], *own: str, top_k: int
    ) -> tuple[float, bool] | None:
        """The question asked through the whole pipeline with its answer taken away:
        (confidence, refused), or None when no document would be left to search."""
        visible = self.without(answers, *own)
        if not visible:
            return None
        where = QueryFilter.for_principal(OPERATOR, doc_ids=visible)
        away = await rag.aask(question, OPERATOR, where=where, top_k=top_k)
        return away.confidence, not away.covered


def covered_calibration(
    answered: Sequence[tuple[float, bool, bool]], removed: Sequence[tuple[float, bool]] = ()
) -> dict[str, Any]:
    """How the confidence of the answers given as covered lines up with being right - what
    an agent that acts on covered answers meets: `answered` ((confidence, covered, right)
    each) and the questions asked with their answer taken away ((confidence, refused) each),
    where a covered answer is wrong. A refusal's confidence (how sure "not covered" is) is
    left out, so a set with no near misses is not scored on it."""
    rows = [(c, right) for c, covered, right in answered if covered]
    rows += [(c, False) for c, refused in removed if not refused]
    return calibration_of(rows)


def removed_report(
    removed: Sequence[tuple[float, bool]], answerable: Sequence[tuple[float, bool]]
) -> dict[str, Any]:
    """Refusals of the questions asked with their answer taken away ((confidence, refused)
    each), and the confidence over those and the answerable ones together ((confidence,
    right) each): a refusal is right only with the answer away."""
    n = len(removed)
    covered = [c for c, refused in removed if not refused]
    return {
        "questions": n,
        "refused": round(1 - len(covered) / n, 4) if n else None,
        "confidence_when_covered": round(sum(covered) / len(covered), 3) if covered else None,
        "confidence_with_answerable": calibration_of([*answerable, *removed]),
    }
