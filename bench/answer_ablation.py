"""Answer-step ablation on fixed search results: retrieval runs once per question (cached
beside the data dir), then the extractive answer is produced under each variant, so the
variants differ only in how sentences are chosen and judged.

    python bench/answer_ablation.py --data-dir D --questions ../shared/data/qa/examples_qa.jsonl \
        --questions bench/questions/near_miss.jsonl --variant semantic=16 --variant semantic=0
    python bench/answer_ablation.py --data-dir C --squad ../shared/data/cmrc2018/trial.json \
        --variant semantic=16 --variant semantic=0 --variant power=2

D / C: data dirs of earlier `ragline bench docs|squad --data-dir` runs (their index is
reused; nothing is ingested here). Question files use the `ragline bench docs` format.
Prints answer_contains, citation page accuracy, refusals of negatives and citation_support
per question file and variant, and the answer step's CPU per question.
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from pathlib import Path
from typing import Any

import generation.extractive as extractive
from core.settings import Settings
from fusion.pipeline import SearchPipeline
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, contains_answer
from ragline.bench.docs import _is_negative, _load, score_question
from ragline.bench.support import sentence_support


def _squad(path: Path) -> list[tuple[str, dict[str, Any]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        (
            path.name,
            {
                "id": qa["id"],
                "question": qa["question"],
                "answers": [a["text"] for a in qa["answers"]],
                "kind": "squad",
            },
        )
        for art in data["data"]
        for p in art["paragraphs"]
        for qa in p["qas"]
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--docs", type=Path, default=Path("../shared/data/docs"))
    ap.add_argument("--questions", type=Path, action="append", default=[])
    ap.add_argument("--squad", type=Path)
    ap.add_argument(
        "--variant", action="append", default=[], help="semantic=N, power=X or window=X"
    )
    ap.add_argument(
        "--dump", type=Path, help="write each answer (JSON lines) here, to diff two runs"
    )
    args = ap.parse_args()
    questions = _load(args.questions) if args.questions else []
    if args.squad:
        questions += _squad(args.squad)
    rag = Ragline(Settings(data_dir=args.data_dir))
    cache = args.data_dir / "answer_ablation_search.pkl"
    found: dict[str, Any] = pickle.loads(cache.read_bytes()) if cache.exists() else {}
    for _, q in questions:
        if q["question"] not in found:
            r = rag.search(q["question"], OPERATOR, top_k=8)
            found[q["question"]] = (r.hits, r.route)
    cache.write_bytes(pickle.dumps(found))
    answerer = rag.extractive
    default_power = extractive.SEMANTIC_POWER
    default_window = answerer.semantic_window
    for variant in args.variant or ["semantic=16"]:
        name, _, value = variant.partition("=")
        answerer.semantic_candidates = int(value) if name == "semantic" else 16
        extractive.SEMANTIC_POWER = float(value) if name == "power" else default_power
        answerer.semantic_window = float(value) if name == "window" else default_window
        sim = answerer.similarity
        counted = [0]

        def counting(question: str, texts: Any, _sim: Any = sim, _n: Any = counted) -> Any:
            _n[0] += len(texts)
            return _sim(question, texts)

        answerer.similarity = counting
        rows: dict[str, dict[str, list[float]]] = {}
        dumped: list[str] = []
        cpu = time.process_time()
        for set_name, q in questions:
            hits, route = found[q["question"]]
            covered, _ = SearchPipeline._covered(q["question"], hits, route.min_coverage, {})
            a = answerer.answer(q["question"], hits, covered, route, {}, "ablation")
            dumped.append(
                json.dumps(
                    {"variant": variant, "id": q["id"], "covered": a.covered, "answer": a.text},
                    ensure_ascii=False,
                )
            )
            r = rows.setdefault(set_name, {"ac": [], "cp": [], "refused": [], "ok": [], "n": []})
            if q["kind"] == "squad":
                r["ac"].append(float(contains_answer(a.text, q["answers"])))
            elif _is_negative(q):
                r["refused"].append(float(not a.covered))
                continue
            else:
                s = score_question(q, a, args.docs)
                r["ac"].append(s["answer_contains"])
                r["cp"].append(s["citation_page_accuracy"])
            ok, n = sentence_support(a)
            r["ok"].append(ok)
            r["n"].append(n)
        ms = (time.process_time() - cpu) * 1000 / max(len(questions), 1)
        if args.dump:
            with args.dump.open("a", encoding="utf-8") as out:
                out.writelines(line + "\n" for line in dumped)
        for set_name, r in rows.items():
            mean = {k: round(sum(v) / len(v), 4) if v else None for k, v in r.items()}
            support = f"{int(sum(r['ok']))}/{int(sum(r['n']))}"
            print(
                f"{variant:14} {set_name:24} answer_contains {mean['ac']}  page {mean['cp']}  "
                f"refused {mean['refused']}  support {support}"
            )
        answerer.similarity = sim
        per_q = counted[0] / max(len(questions), 1)
        print(f"{variant:14} answer step CPU {ms:.1f} ms/question, {per_q:.1f} sentences embedded")
    rag.close()


if __name__ == "__main__":
    main()
