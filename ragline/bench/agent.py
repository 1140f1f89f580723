"""`ragline bench agent`: calibrate the agent search tool's "not in the material"
threshold, and measure what an LLM endpoint does to answer quality.

Part 1 (no LLM needed): for every question, the best passage's normalised relevance
(the score the search tool shows the model). Answerable questions should score above the
threshold, questions the documents do not cover below it. Reported: each class's spread,
accuracy at the configured threshold, the best threshold on this set, and the
pipeline's own coverage decision on the same questions as the baseline.

Part 2 (with --llm-url): the same retrieved passages answered extractively and by the
LLM, side by side: answer_contains, citation page accuracy, how often the LLM's answer
was kept or fell back, labels removed, latency.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from core.settings import LLMSettings
from core.types import Answer
from generation.answer import AnswerGenerator
from generation.llm import OpenAICompatibleClient
from ragline.agent_tools import relevance, score_scale
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, percentile
from ragline.bench.docs import score_question


def _load(files: list[Path]) -> list[dict[str, Any]]:
    out = []
    for f in files:
        out += [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    return out


def _answerable(q: dict[str, Any]) -> bool:
    return q.get("file") is not None and q.get("kind") != "negative"


def _accuracy(rows: list[tuple[bool, float]], threshold: float) -> dict[str, float]:
    pos = [s for a, s in rows if a]
    neg = [s for a, s in rows if not a]
    tpr = sum(s >= threshold for s in pos) / len(pos) if pos else 0.0
    tnr = sum(s < threshold for s in neg) / len(neg) if neg else 0.0
    return {
        "answerable_kept": round(tpr, 4),
        "unanswerable_refused": round(tnr, 4),
        "balanced_accuracy": round((tpr + tnr) / 2, 4),
    }


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "n": len(values),
        "min": round(min(values), 3),
        "p25": round(percentile(values, 25), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def _answer_row(q: dict[str, Any], a: Answer, docs: Path, ms: float) -> dict[str, Any]:
    return {
        **score_question(q, a, docs),
        "mode": a.mode,
        "covered": a.covered,
        "removed": len(a.removed_labels),
        "ms": ms,
    }


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float | None:
        vals = [r[key] for r in rows if key in r]
        return round(sum(vals) / len(vals), 4) if vals else None

    return {
        "answer_contains": mean("answer_contains"),
        "citation_page_accuracy": mean("citation_page_accuracy"),
        "negatives_refused": mean("negatives_refused"),
        "modes": {m: sum(r["mode"] == m for r in rows) for m in sorted({r["mode"] for r in rows})},
        "covered": sum(r["covered"] for r in rows),
        "removed_labels": sum(r["removed"] for r in rows),
        "latency_ms_p50": round(percentile([r["ms"] for r in rows], 50), 1),
        "latency_ms_p95": round(percentile([r["ms"] for r in rows], 95), 1),
    }


def _spread_sample(n: int, k: int | None) -> set[int]:
    """`k` indices spread evenly over `n` questions (all when k is None or >= n)."""
    if k is None or k >= n:
        return set(range(n))
    return {round(i * (n - 1) / max(k - 1, 1)) for i in range(k)}


def run_agent_bench(
    rag: Ragline,
    docs: Path,
    question_files: list[Path],
    llm: LLMSettings | None,
    llm_sample: int | None = None,
) -> dict[str, Any]:
    rag.ingest([docs])
    questions = _load(question_files)
    scale = score_scale(rag.reranker.weights)
    threshold = rag.settings.agent.min_score
    rows: list[tuple[bool, float]] = []
    baseline: list[tuple[bool, bool]] = []
    details: list[dict[str, Any]] = []
    extractive = rag.extractive
    generator = AnswerGenerator(OpenAICompatibleClient(llm)) if llm else None
    answers: dict[str, list[dict[str, Any]]] = {"extractive": [], "llm": []}

    sampled = _spread_sample(len(questions), llm_sample)

    async def run_all() -> None:
        for i, q in enumerate(questions):
            result = await rag.asearch(q["question"], OPERATOR, top_k=5)
            best = relevance(result.hits[0], scale) if result.hits else 0.0
            rows.append((_answerable(q), best))
            baseline.append((_answerable(q), result.covered))
            details.append(
                {
                    "id": q["id"],
                    "answerable": _answerable(q),
                    "best": round(best, 3),
                    "pipeline_covered": result.covered,
                }
            )
            if generator is None or i not in sampled:
                continue
            for name, gen in (("extractive", extractive), ("llm", generator)):
                t = time.perf_counter()
                a = await gen.aanswer(
                    q["question"],
                    result.hits,
                    result.covered,
                    result.route,
                    {},
                    uuid.uuid4().hex,
                )
                answers[name].append(_answer_row(q, a, docs, (time.perf_counter() - t) * 1000))

    asyncio.run(run_all())
    sweep = {round(t / 100, 2): _accuracy(rows, t / 100)["balanced_accuracy"] for t in range(5, 96)}
    best_t = max(sweep, key=lambda t: (sweep[t], -abs(t - threshold)))
    pos, neg = [b for a, b in baseline if a], [b for a, b in baseline if not a]
    out: dict[str, Any] = {
        "questions": len(questions),
        "answerable": _spread([s for a, s in rows if a]),
        "unanswerable": _spread([s for a, s in rows if not a]),
        "threshold": threshold,
        "at_threshold": _accuracy(rows, threshold),
        "best_threshold": best_t,
        "at_best_threshold": _accuracy(rows, best_t),
        "baseline_pipeline_covered": {
            "answerable_kept": round(sum(pos) / len(pos), 4) if pos else 0.0,
            "unanswerable_refused": round(sum(not c for c in neg) / len(neg), 4) if neg else 0.0,
        },
        "details": details,
    }
    if generator is not None:
        out["answers"] = {name: _summary(r) for name, r in answers.items()}
        out["llm_model"] = llm.model if llm else ""
        out["llm_questions"] = sorted(questions[i]["id"] for i in sampled)
    print(
        json.dumps({k: v for k, v in out.items() if k != "details"}, indent=2, ensure_ascii=False)
    )
    return out
