"""Fit and check the covered-answer confidence (generation/confidence.py) on fixed search
results: the extractive answer runs on each question's cached hits (as in
`bench/answer_ablation.py`), its `AnswerEvidence` is recorded with whether the answer is
right (it contains a gold answer), a logistic model is fitted on the --fit set, and the
shipped `WEIGHTS` and the refit are scored on every set: Brier score, AUC (how well the
confidence orders right above wrong answers), mean confidence when right and when wrong.

    python bench/calibrate_confidence.py --data-dir C \
        --fit-squad ../shared/data/cmrc2018/train.json --fit-limit 803 \
        --squad ../shared/data/cmrc2018/trial.json \
        --docs-data-dir D --questions ../shared/data/qa/examples_qa.jsonl ...

C / D: data dirs of earlier `ragline bench squad|docs --data-dir` runs (C: trial + train
paragraphs). Each question's hits are searched once and cached in the data dir's
`answer_ablation_search.pkl` (shared with `bench/answer_ablation.py`). The fit set is the
first --fit-limit questions of --fit-squad: CMRC train questions, none of them in a set
reported.
"""

from __future__ import annotations

import argparse
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import generation.answer as answer_module
from core.settings import Settings
from fusion.pipeline import SearchPipeline
from generation.confidence import WEIGHTS, AnswerEvidence
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, calibration_of, contains_answer
from ragline.bench.docs import _is_negative, _load, score_question
from ragline.bench.squad import load_squad

Row = tuple[AnswerEvidence, bool]


def _squad(path: Path) -> list[dict[str, Any]]:
    """The questions of a SQuAD file, in file order, as `_rows` takes them."""
    return [{"question": q.text, "answers": list(q.answers)} for q in load_squad(path)[1]]


def _rows(data_dir: Path, questions: Sequence[dict[str, Any]], docs: Path | None) -> list[Row]:
    """(evidence, right) for every question answered as covered."""
    seen: list[AnswerEvidence] = []
    shipped = answer_module.answer_confidence

    def record(verdict: Any, evidence: AnswerEvidence) -> float:
        seen.append(evidence)
        return shipped(verdict, evidence)

    answer_module.answer_confidence = record
    rag = Ragline(Settings(data_dir=data_dir))
    cache = data_dir / "answer_ablation_search.pkl"
    found: dict[str, Any] = pickle.loads(cache.read_bytes()) if cache.exists() else {}
    missing = [q["question"] for q in questions if q["question"] not in found]
    for question in missing:
        r = rag.search(question, OPERATOR, top_k=8)
        found[question] = (r.hits, r.route)
    if missing:
        cache.write_bytes(pickle.dumps(found))
    out: list[Row] = []
    try:
        for q in questions:
            hits, route = found[q["question"]]
            covered, _ = SearchPipeline._covered(q["question"], hits, route.min_coverage, {})
            seen.clear()
            a = rag.extractive.answer(q["question"], hits, covered, route, {}, "calibration")
            if not a.covered or not seen:
                continue
            if docs is None:
                right = contains_answer(a.text, q["answers"])
            else:
                right = score_question(q, a, docs)["answer_contains"] >= 1.0
            out.append((seen[-1], bool(right)))
    finally:
        answer_module.answer_confidence = shipped
        rag.close()
    return out


def _matrix(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([(1.0, *e.features()) for e, _ in rows])
    return x, np.array([float(ok) for _, ok in rows])


def fit(rows: Sequence[Row], l2: float = 1.0) -> np.ndarray:
    """Logistic regression by Newton's method, L2 on every weight but the intercept."""
    x, y = _matrix(rows)
    w = np.zeros(x.shape[1])
    ridge = l2 * np.diag(np.r_[0.0, np.ones(x.shape[1] - 1)])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) + ridge @ w
        hess = x.T @ (x * (p * (1 - p))[:, None]) + ridge
        w -= np.linalg.solve(hess, grad)
    return w


def report(name: str, rows: Sequence[Row], weights: Sequence[float] | np.ndarray) -> str:
    x, y = _matrix(rows)
    c = np.clip(1 / (1 + np.exp(-x @ np.asarray(weights))), 0.05, 0.97)
    m = calibration_of(list(zip(c.tolist(), (y == 1).tolist(), strict=True)))
    return (
        f"{name}: n {m['n']}, right {y.mean():.3f}, brier {m['brier']:.4f}, auc {m['auc']}, "
        f"mean when right {m['mean_when_right']}, when wrong {m['mean_when_wrong']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True, help="SQuAD runs' data dir")
    ap.add_argument("--fit-squad", type=Path, required=True)
    ap.add_argument("--fit-limit", type=int, default=0, help="its first N questions (0 = all)")
    ap.add_argument("--squad", type=Path, action="append", default=[])
    ap.add_argument("--docs-data-dir", type=Path)
    ap.add_argument("--docs", type=Path, default=Path("../shared/data/docs"))
    ap.add_argument("--questions", type=Path, action="append", default=[])
    args = ap.parse_args()
    fit_questions = _squad(args.fit_squad)
    if args.fit_limit:
        fit_questions = fit_questions[: args.fit_limit]
    train = _rows(args.data_dir, fit_questions, None)
    sets = {args.fit_squad.name: train}
    for path in args.squad:
        sets[path.name] = _rows(args.data_dir, _squad(path), None)
    if args.docs_data_dir and args.questions:
        qs = [q for _, q in _load(args.questions) if not _is_negative(q)]
        sets["shared documents"] = _rows(args.docs_data_dir, qs, args.docs)
    refit = fit(train)
    print("refit weights:", ", ".join(f"{w:.2f}" for w in refit))
    for name, rows in sets.items():
        print(report(f"{name} shipped", rows, WEIGHTS))
        print(report(f"{name} refit", rows, refit))


if __name__ == "__main__":
    main()
