"""Sweep fusion and rerank weights offline on a SQuAD-format set.

Fetches each question's top-50 fused candidates once (with per-source ranks and rerank
signals), then rescores them for every weight combination, so a sweep costs seconds.
Tune on one set (CMRC train), confirm on another (CMRC trial) with `ragline bench squad`.

    .venv/bin/python bench/tune_fusion.py ../shared/data/cmrc2018/train.json --limit 3000
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import pickle
import tempfile
from pathlib import Path
from typing import Any

from core.settings import Settings
from core.text import char_bigrams
from fusion.rerank import rare_bigram_overlap
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, rank_metrics
from ragline.bench.squad import load_squad, write_corpus


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", type=Path)
    ap.add_argument("--limit", type=int, default=3000)
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--cache", type=Path, help="Save/load the candidates here.")
    args = ap.parse_args()
    if args.cache and args.cache.exists():
        rows = pickle.loads(args.cache.read_bytes())
    else:
        rows = collect(args.file, args.limit, args.data_dir)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(rows))
    sweep(rows)


def collect(file: Path, limit: int, data_dir: Path | None) -> list[Any]:
    paragraphs, questions = load_squad(file)
    questions = questions[:limit]
    with tempfile.TemporaryDirectory() as tmp:
        root = data_dir or Path(tmp)
        rag = Ragline(Settings(data_dir=root / "data"))
        files = write_corpus(paragraphs, root / "corpus")
        outcomes, _ = rag.ingest([root / "corpus"])
        key_doc = {files[str(Path(o.path).resolve())]: o.doc_id for o in outcomes if o.doc_id}
        rows: list[Any] = []

        async def run() -> None:
            for q in questions:
                res = await rag.asearch(q.text, OPERATOR, top_k=50)
                rows.append(
                    (
                        key_doc.get(q.paragraph, ""),
                        q.text,
                        [(h.chunk.doc_id, h.ranks, h.signals, h.chunk.text) for h in res.hits],
                    )
                )

        asyncio.run(run())
        rag.close()
    return rows


def _rare_bigrams(question: str, texts: list[str]) -> list[float]:
    """The reranker's own rare-bigram signal, over this question's candidates."""
    return rare_bigram_overlap(char_bigrams(question), [char_bigrams(t) for t in texts])


def _metrics(order: list[str], gold: str) -> tuple[float, float]:
    """(recall@1, mrr@10) of one ranking, as `ragline bench squad` counts them."""
    m = rank_metrics(order.index(gold) + 1 if gold in order else None)
    return m["recall@1"], m["mrr@10"]


def sweep(rows: list[Any]) -> None:
    feats = []
    for gold, question, cands in rows:
        bidf = _rare_bigrams(question, [c[3] for c in cands])
        feats.append(
            (gold, [(doc, ranks, sig, bidf[i]) for i, (doc, ranks, sig, _t) in enumerate(cands)])
        )
    grid = itertools.product(
        [3.0, 5.0, 10.0], [0.25, 0.5, 0.75], [0.0, 0.1], [0.4, 0.8], [0.8, 1.2, 1.6, 2.4]
    )
    results = []
    for k, w_dense, w_cov, w_bi, w_bidf in grid:
        r1 = mrr = 0.0
        norm = (1.0 + w_dense) / (k + 1)
        for gold, cands in feats:
            scored = []
            for doc, ranks, sig, bidf in cands:
                rrf = sum(
                    w / (k + ranks[s])
                    for s, w in (("keyword", 1.0), ("dense", w_dense))
                    if s in ranks
                )
                score = rrf / norm + w_cov * sig["coverage"] + w_bi * sig["bigrams"] + w_bidf * bidf
                scored.append((score, doc))
            order = list(dict.fromkeys(d for _, d in sorted(scored, key=lambda x: -x[0])))
            hit1, rr = _metrics(order, gold)
            r1 += hit1
            mrr += rr
        n = len(feats)
        results.append((r1 / n, mrr / n, k, w_dense, w_cov, w_bi, w_bidf))
    results.sort(reverse=True)
    print("R@1    MRR@10  k     w_dense w_cov w_bigram w_bigram_idf")
    for r in results[:15]:
        print(f"{r[0]:.4f} {r[1]:.4f}  {r[2]:<5} {r[3]:<7} {r[4]:<5} {r[5]:<8} {r[6]}")
    bm25 = _bm25_only(rows)
    print(f"BM25 alone (same candidates): R@1 {bm25[0]:.4f} MRR {bm25[1]:.4f}")


def _bm25_only(rows: list[Any]) -> tuple[float, float]:
    r1 = mrr = 0.0
    for gold, _q, cands in rows:
        kw = sorted((ranks["keyword"], doc) for doc, ranks, _s, _t in cands if "keyword" in ranks)
        hit1, rr = _metrics(list(dict.fromkeys(d for _, d in kw)), gold)
        r1 += hit1
        mrr += rr
    return r1 / len(rows), mrr / len(rows)


if __name__ == "__main__":
    main()
