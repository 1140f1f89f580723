"""Fit and check the answers' confidence (generation/confidence.py).

Every question of every set is asked through the whole pipeline (extractive answers, the
confidence floor off). Each covered answer's `AnswerEvidence` is recorded with whether the
answer is right: it holds a gold answer, and the question is no near miss. Each refusal's
kind and retrieval coverage are recorded with whether it is right: the question is a near
miss. The sets:
- written sets (`--docs-set DIR`: DIR/docs and DIR.jsonl beside it), answerable questions
  and near misses: a covered near miss is wrong;
- SQuAD files (`--squad FILE`), each question asked twice: as it is, and with every
  paragraph holding its answer hidden (`ragline bench squad`'s removed-answer negatives),
  where a covered answer is wrong.

A logistic model is fitted with every set weighing the same, in two forms: over the
evidence without the meaning feature (every answer), and with it (the answers whose
first quote the answer step re-read by meaning, by this embedder; the others are scored
by the first form, as the answer step does); and one for refusals (an offset per kind,
the coverage). Each set is scored by weights fitted on the others (leave one set out),
beside the shipped weights: Brier score, AUC (how well the confidence orders right above
wrong answers). `--hold-out DIR` sets are scored by the weights fitted on everything
else only, never fitted on. The last lines are the weights to ship.

    python bench/calibrate_confidence.py --work /tmp/calibration \\
        --docs-set bench/questions/unseen_policies ... \\
        --squad bench/questions/multilingual/en.json ... \\
        --squad ../shared/data/cmrc2018/trial.json \\
        --squad ../shared/data/cmrc2018/train.json --squad-limit 803 \\
        --hold-out bench/questions/unseen_policies11 --json bench/results/F.json

`--work`: one data dir per set, kept, so a second run reuses the indexes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.settings import Settings
from core.types import QueryFilter
from generation.confidence import CALIBRATION, AnswerEvidence, Calibration, RefusalModel
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, AnswerHider, calibration_of, contains_answer
from ragline.bench.docs import _is_negative, _load
from ragline.bench.squad import load_squad, write_corpus


@dataclass(frozen=True)
class Row:
    group: str
    words: tuple[float, ...]  # the features without the meaning
    meaning: float | None  # the meaning feature, where the answer step measured it
    right: bool


@dataclass(frozen=True)
class Refusal:
    group: str
    kind: str
    coverage: float
    right: bool


class _Recorder:
    """Stands in for the answerers' `Calibration`: the shipped numbers, and the last
    evidence or refusal it was asked about."""

    def __init__(self, shipped: Calibration) -> None:
        self.shipped = shipped
        self.meaning = shipped.meaning or (0.0,)  # the answerer measures meaning
        self.last: AnswerEvidence | None = None
        self.refused: tuple[str, float] | None = None

    def probability(self, evidence: AnswerEvidence) -> float:
        self.last = evidence
        return self.shipped.probability(evidence)

    def refusal_confidence(self, kind: str, coverage: float) -> float:
        self.refused = (kind, coverage)
        return self.shipped.refusal_confidence(kind, coverage)


class _Asker:
    def __init__(self, data_dir: Path) -> None:
        self.rag = Ragline(Settings(data_dir=data_dir))
        self.recorder = _Recorder(CALIBRATION)
        for answerer in self.rag._answerers.values():
            answerer.min_confidence = 0.0  # every covered answer is kept, to be judged
            answerer.calibration = self.recorder  # type: ignore[assignment]

    async def row(
        self,
        group: str,
        question: str,
        golds: Sequence[str],
        where: QueryFilter | None = None,
        top_k: int = 8,
    ) -> Row | Refusal | None:
        """The question's row (`ragline bench docs` asks for 8 hits, `ragline bench squad`
        for 10); `golds` empty: a near miss."""
        self.recorder.last = self.recorder.refused = None
        answer = await self.rag.aask(question, OPERATOR, where=where, top_k=top_k)
        evidence, refused = self.recorder.last, self.recorder.refused
        if not answer.covered:
            return None if refused is None else Refusal(group, *refused, not golds)
        if evidence is None:
            return None
        right = bool(golds) and contains_answer(answer.text, golds)
        features = evidence.features()
        meaning = features[-1] if evidence.meaning is not None else None
        return Row(group, evidence.features(False), meaning, right)


def docs_rows(folder: Path, work: Path) -> list[Row | Refusal]:
    data = work / folder.name
    fresh = not data.exists()
    asker = _Asker(data)
    try:
        if fresh:
            asker.rag.ingest([folder / "docs"])
        questions = _load([folder.with_suffix(".jsonl")])

        async def run() -> list[Row | Refusal | None]:
            return [
                await asker.row(
                    folder.name, q["question"], [] if _is_negative(q) else [q["answer"]]
                )
                for _, q in questions
            ]

        return [r for r in asyncio.run(run()) if r is not None]
    finally:
        asker.rag.close()


def squad_rows(file: Path, limit: int, work: Path) -> list[Row | Refusal]:
    paragraphs, questions = load_squad(file)
    questions = [q for q in questions[: limit or None] if q.text.strip()]
    data = work / f"squad_{file.parent.name}_{file.stem}"
    files = write_corpus(paragraphs, data / "corpus")
    asker = _Asker(data / "data")
    try:
        outcomes, _ = asker.rag.ingest([data / "corpus"])
        key_doc = {files[str(Path(o.path).resolve())]: o.doc_id for o in outcomes if o.doc_id}
        hider = AnswerHider({key_doc[k]: t for k, (_, t) in paragraphs.items() if k in key_doc})
        name = f"{file.parent.name}/{file.stem}"

        async def run() -> list[Row | Refusal | None]:
            out = []
            for q in questions:
                out.append(await asker.row(name, q.text, q.answers, top_k=10))
                visible = hider.without(q.answers, key_doc.get(q.paragraph, ""))
                if visible:
                    where = QueryFilter.for_principal(OPERATOR, doc_ids=visible)
                    out.append(await asker.row(name, q.text, (), where, top_k=10))
            return out

        return [r for r in asyncio.run(run()) if r is not None]
    finally:
        asker.rag.close()


def _matrix(rows: Sequence[Row], meaning: bool) -> tuple[np.ndarray, np.ndarray]:
    """The words model's inputs, or the meaning model's (rows with the meaning only)."""
    x = np.array([(*r.words, r.meaning) if meaning else r.words for r in rows], dtype=float)
    return np.c_[np.ones(len(rows)), x], np.array([r.right for r in rows], dtype=float)


def _measured(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.meaning is not None]


def _logistic(x: np.ndarray, y: np.ndarray, groups: Sequence[str], l2: float = 1.0) -> np.ndarray:
    """Ridge-penalised logistic regression (Newton steps; the first column, the intercept,
    is not penalised), every group weighing the same."""
    counts: dict[str, int] = {}
    for g in groups:
        counts[g] = counts.get(g, 0) + 1
    weight = np.array([100.0 / counts[g] for g in groups])
    w = np.zeros(x.shape[1])
    ridge = l2 * np.diag(np.r_[0.0, np.ones(x.shape[1] - 1)])
    for _ in range(60):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (weight * (p - y)) + ridge @ w
        hess = x.T @ (x * (weight * p * (1 - p))[:, None]) + ridge
        w -= np.linalg.solve(hess, grad)
    return w


def fit(rows: Sequence[Row], meaning: bool) -> np.ndarray:
    """The words model on every row; the meaning model on the rows with the meaning."""
    rows = _measured(rows) if meaning else rows
    x, y = _matrix(rows, meaning)
    return _logistic(x, y, [r.group for r in rows])


def fit_refusals(rows: Sequence[Refusal]) -> RefusalModel:
    """One intercept, an offset per kind (penalised: a rare kind stays near the rest), the
    coverage of a refusal of retrieval and of the others."""
    kinds = sorted({r.kind for r in rows})

    def inputs(r: Refusal) -> list[float]:
        retrieval = r.kind == "retrieval"
        cov = min(1.0, max(0.0, r.coverage))
        return [1.0, *(float(r.kind == k) for k in kinds), cov * (not retrieval), cov * retrieval]

    x = np.array([inputs(r) for r in rows])
    y = np.array([r.right for r in rows], dtype=float)
    w = [round(float(v), 2) for v in _logistic(x, y, [r.group for r in rows])]
    return RefusalModel(w[0], tuple(zip(kinds, w[1:-2], strict=True)), w[-2], w[-1])


def _report(conf: Sequence[float], right: Sequence[bool]) -> dict[str, Any]:
    c = np.clip(np.asarray(conf, dtype=float), 0.05, 0.97)
    return calibration_of(list(zip(c.tolist(), list(right), strict=True))) | {
        "right": round(float(np.mean(right)), 3)
    }


def _probability(rows: Sequence[Row], weights: Sequence[float], meaning: bool) -> np.ndarray:
    x, _ = _matrix(rows, meaning)
    return np.asarray(1 / (1 + np.exp(-x @ np.asarray(weights))))


def score(
    rows: Sequence[Row], words: Sequence[float], meaning: Sequence[float] | None
) -> dict[str, Any]:
    """Each answer as the answer step scores it: by the meaning model where its meaning was
    measured (and `meaning` is given), else by the words model."""
    p = _probability(rows, words, False)
    if meaning is not None:
        where = [i for i, r in enumerate(rows) if r.meaning is not None]
        if where:
            p[where] = _probability([rows[i] for i in where], meaning, True)
    return _report(p.tolist(), [r.right for r in rows])


def score_refusals(rows: Sequence[Refusal], model: RefusalModel) -> dict[str, Any]:
    return _report([model.probability(r.kind, r.coverage) for r in rows], [r.right for r in rows])


def _line(name: str, m: dict[str, Any]) -> str:
    return (
        f"{name}: n {m['n']}, right {m['right']}, brier {m['brier']:.4f}, auc {m['auc']}, "
        f"mean when right {m['mean_when_right']}, when wrong {m['mean_when_wrong']}"
    )


def _scores(
    answers: Sequence[Row],
    refusals: Sequence[Refusal],
    fitted: dict[bool, np.ndarray],
    refusal_model: RefusalModel,
    label: str,
) -> dict[str, Any]:
    """One set scored by the shipped weights and by `fitted` (labelled `label`)."""
    out: dict[str, Any] = {}
    if answers:
        out["shipped_words"] = score(answers, CALIBRATION.words, None)
        out[f"{label}_words"] = score(answers, fitted[False], None)
        out["shipped_meaning"] = score(answers, CALIBRATION.words, CALIBRATION.meaning)
        out[f"{label}_meaning"] = score(answers, fitted[False], fitted[True])
    if refusals:
        out["shipped_refusals"] = score_refusals(refusals, CALIBRATION.refusal)
        out[f"{label}_refusals"] = score_refusals(refusals, refusal_model)
    return out


def _split(rows: Sequence[Row | Refusal]) -> tuple[list[Row], list[Refusal]]:
    return [r for r in rows if isinstance(r, Row)], [r for r in rows if isinstance(r, Refusal)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="data dirs, one per set (kept)")
    ap.add_argument("--docs-set", type=Path, action="append", default=[])
    ap.add_argument("--squad", type=Path, action="append", default=[])
    ap.add_argument("--squad-limit", type=int, default=0, help="the last --squad's first N")
    ap.add_argument("--hold-out", type=Path, action="append", default=[])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows: list[Row | Refusal] = []
    for folder in args.docs_set:
        got = docs_rows(folder, args.work)
        rows += got
        print(f"{folder.name}: {len(got)} answers and refusals", flush=True)
    for i, file in enumerate(args.squad):
        got = squad_rows(file, args.squad_limit if i == len(args.squad) - 1 else 0, args.work)
        rows += got
        print(f"{file}: {len(got)} answers and refusals", flush=True)
    answers, refusals = _split(rows)
    report: dict[str, Any] = {"sets": {}, "hold_out": {}}
    for group in dict.fromkeys(r.group for r in rows):
        rest_answers = [r for r in answers if r.group != group]
        others = {meaning: fit(rest_answers, meaning) for meaning in (True, False)}
        rest_refusals = fit_refusals([r for r in refusals if r.group != group])
        mine = _split([r for r in rows if r.group == group])
        report["sets"][group] = _scores(*mine, others, rest_refusals, "others")
    final = {meaning: fit(answers, meaning) for meaning in (True, False)}
    final_refusals = fit_refusals(refusals)
    for folder in args.hold_out:
        mine = _split(docs_rows(folder, args.work))
        report["hold_out"][folder.name] = _scores(*mine, final, final_refusals, "fitted")
    for where in ("sets", "hold_out"):
        for group, scores in report[where].items():
            for key, m in scores.items():
                print(_line(f"{'held out ' if where == 'hold_out' else ''}{group} {key}", m))
    for meaning, form in ((False, "words"), (True, "meaning")):
        weights = [round(float(w), 2) for w in final[meaning]]
        report[f"weights_{form}"] = weights
        print(f"weights ({form}):", ", ".join(f"{w:.2f}" for w in weights))
    report["refusal_model"] = repr(final_refusals)
    print("refusals:", repr(final_refusals))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
