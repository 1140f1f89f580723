"""Per-question candidates of the search pipeline on SQuAD-format data, with the rerank
signals of every candidate, so rerank formulas can be compared offline on the same
retrieval (and single questions traced) without re-running the pipeline.

Ingests once into --data-dir (re-runs skip unchanged files), runs every question with the
business formula switched off (score = relevance), writes one JSON line per question:
gold doc_id, route rule, synonyms applied, BM25-alone rank, and per candidate
[doc_id, relevance, timeliness, trust, coverage, content_id, {signal: value}]. Then prints
R@1 / MRR@10 per formula (document-level, like `ragline bench squad`).

    .venv/bin/python bench/cmrc_candidates.py ../shared/data/cmrc2018/trial.json \
        --corpus ../shared/data/cmrc2018/train.json --data-dir D --out rows.jsonl
    .venv/bin/python bench/cmrc_candidates.py --rescore rows.jsonl [--undated]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.settings import FusionSettings, Settings
from core.types import QueryFilter
from fusion.trust import TrustPolicy
from ragline.app import Ragline
from ragline.bench.common import OPERATOR
from ragline.bench.squad import load_squad, write_corpus

FORMULAS = {
    "relevance only": (1.0, 0.0, 0.0, 0.0),
    "issue / default 0.5 + 0.3 t + 0.15 s + 0.05 c": (0.5, 0.3, 0.15, 0.05),
    "0.55 + 0.3 t + 0.15 s (no coverage)": (0.55, 0.3, 0.15, 0.0),
}


# The relevance signals of each candidate (fusion.rerank), kept so their weights can be
# compared offline too.
SIGNALS = ("fused", "coverage", "bigrams", "bigrams_idf", "rare_terms", "lead_terms", "boost")


def collect(args: argparse.Namespace) -> None:
    paragraphs, questions = load_squad(args.file)
    for extra in args.corpus:
        more, _ = load_squad(extra)
        for key, value in more.items():
            paragraphs.setdefault(key, value)
    files = write_corpus(paragraphs, args.data_dir / "corpus")
    rag = Ragline(Settings(data_dir=args.data_dir / "data"))
    outcomes, _ = rag.ingest([args.data_dir / "corpus"])
    key_doc = {files[str(Path(o.path).resolve())]: o.doc_id for o in outcomes if o.doc_id}
    # Quality, not latency: a source timing out on a loaded machine must not change results.
    rag.router.rules = tuple(
        replace(r, sources=tuple(replace(s, timeout_s=60.0) for s in r.sources))
        for r in rag.router.rules
    )
    # Version ordering swaps near-identical passages by date; it cannot be replayed offline.
    off = {
        "base": 1.0,
        "timeliness_weight": 0.0,
        "trust_weight": 0.0,
        "coverage_weight": 0.0,
        "order_versions": False,
    }
    fusion = FusionSettings.model_validate({**rag.settings.fusion.model_dump(), **off})
    rag.reranker.fusion, rag.reranker.policy = fusion, TrustPolicy(fusion)
    where = QueryFilter.for_principal(OPERATOR)
    rows: list[dict[str, Any]] = []

    async def run() -> None:
        for q in questions[: args.limit or None]:
            gold = key_doc.get(q.paragraph, "")
            res = await rag.asearch(q.text, OPERATOR, top_k=50)
            ids = [s.content_id for s in rag.stores.keyword.search(q.text, 50, where)]
            served = rag.stores.metadata.serving(ids)
            bm25 = list(dict.fromkeys(served[i].doc_id for i in ids if i in served))
            rows.append(
                {
                    "qid": q.qid,
                    "q": q.text,
                    "gold": gold,
                    "rule": res.route.rule,
                    "synonyms": res.route.synonyms_applied,
                    "bm25": bm25.index(gold) + 1 if gold in bm25 else None,
                    "hits": [
                        [
                            h.chunk.doc_id,
                            round(h.signals["relevance"], 5),
                            round(h.signals["timeliness"], 4),
                            round(h.signals["trust"], 3),
                            round(h.signals["coverage"], 4),
                            h.chunk.content_id,
                            {k: round(h.signals.get(k, 0.0), 5) for k in SIGNALS},
                        ]
                        for h in res.hits
                    ],
                }
            )

    try:
        asyncio.run(run())
    finally:
        rag.close()
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    rescore(rows, undated=False)


def ranks(rows: list[dict[str, Any]], formula: tuple[float, ...]) -> dict[str, int | None]:
    base, wt, ws, wc = formula
    out: dict[str, int | None] = {}
    for r in rows:
        hits = sorted(r["hits"], key=lambda h: -h[1] * (base + wt * h[2] + ws * h[3] + wc * h[4]))
        docs = list(dict.fromkeys(h[0] for h in hits))[:10]
        out[r["qid"]] = docs.index(r["gold"]) + 1 if r["gold"] in docs else None
    return out


def rescore(rows: list[dict[str, Any]], undated: bool) -> None:
    """`undated`: every candidate's timeliness 1.0 (what a corpus without dated documents,
    all files written today, gives)."""
    if undated:
        for r in rows:
            for h in r["hits"]:
                h[2] = 1.0
    n = len(rows) or 1

    def line(name: str, got: dict[str, int | None]) -> None:
        r1 = sum(rank == 1 for rank in got.values()) / n
        mrr = sum(1 / rank for rank in got.values() if rank) / n
        print(f"{name:50s} R@1 {r1:.4f}  MRR@10 {mrr:.4f}")

    line("BM25 alone", {r["qid"]: r["bm25"] if (r["bm25"] or 99) <= 10 else None for r in rows})
    for name, formula in FORMULAS.items():
        line(name, ranks(rows, formula))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", type=Path, nargs="?")
    ap.add_argument("--corpus", type=Path, action="append", default=[])
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", type=Path, default=Path("candidates.jsonl"))
    ap.add_argument("--rescore", type=Path, help="Rescore a file written before.")
    ap.add_argument("--undated", action="store_true", help="With --rescore: timeliness 1.0.")
    args = ap.parse_args()
    if args.rescore:
        rows = [json.loads(x) for x in args.rescore.read_text(encoding="utf-8").splitlines()]
        rescore(rows, args.undated)
    elif args.file and args.data_dir:
        collect(args)
    else:
        ap.error("give FILE and --data-dir, or --rescore ROWS")


if __name__ == "__main__":
    main()
