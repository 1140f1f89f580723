"""The SQLite keyword store alone on a filled scale data dir, at several postings budgets:
latency, the planted chunk's rank, and top-10 overlap with BM25 over every query term.

    PYTHONPATH=. .venv/bin/python bench/keyword_budget_probe.py --data-dir D --chunks 1000000 \
        --data ../shared/data
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from core.types import QueryFilter
from indexing.stores.sqlite_keyword import SqliteKeywordIndex
from ragline.bench.common import percentile
from ragline.bench.scale import DOC_CHUNKS, _chunks_of
from ragline.bench.scale_corpus import default_corpus

EVERY_TERM = 10**12


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--chunks", type=int, required=True)
    ap.add_argument("--budgets", default="200000,100000,60000,40000,20000")
    args = ap.parse_args()
    corpus = default_corpus(args.data, 13)
    questions = corpus.questions_within(args.chunks)[:200]
    gold = {}
    for q in questions:
        _, chunks = _chunks_of(corpus, q.chunk // DOC_CHUNKS, args.chunks)
        gold[q.qid] = chunks[q.chunk % DOC_CHUNKS].content_id
    db = args.data_dir / "ragline.db"
    every = SqliteKeywordIndex(db, postings_budget=EVERY_TERM)
    where = QueryFilter(access_tokens=None)
    exact = {q.qid: [h.content_id for h in every.search(q.text, 50, where)] for q in questions}
    budgets = [EVERY_TERM, *(int(b) for b in args.budgets.split(","))]
    for budget in budgets:
        index = SqliteKeywordIndex(db, postings_budget=budget)
        latency: list[float] = []
        at10, overlap, possible = 0, 0, 0
        for q in questions:
            t0 = time.perf_counter()
            ids = [h.content_id for h in index.search(q.text, 50, where)]
            latency.append((time.perf_counter() - t0) * 1000)
            at10 += gold[q.qid] in ids[:10]
            overlap += len(set(ids[:10]) & set(exact[q.qid][:10]))
            possible += len(exact[q.qid][:10])  # a query may match fewer than 10 chunks
        label = "every term" if budget == EVERY_TERM else f"budget {budget:,}"
        print(
            f"{label}: p50 {percentile(latency, 50):.1f} ms, p95 {percentile(latency, 95):.1f} ms,"
            f" planted in top 10 {at10}/{len(questions)},"
            f" top-10 overlap with every term {overlap / max(1, possible):.3f}",
            flush=True,
        )
        index.close()
    every.close()


if __name__ == "__main__":
    main()
