"""How much of the IVF index's recall gap on the 1M real scale vectors is ties in exact
search's top 10, and how much the rescored candidate pool: brute-force exact top 50 for the
bench's queries (planted questions + noisy corpus vectors), then the IVF index at two probe
counts and four pool sizes, recall counted by id and tie-aware (a hit whose exact score
reaches the 10th).

    PYTHONPATH=. .venv/bin/python bench/ivf_ties_probe.py --vectors V --data ../shared/data \
        --json bench/results/ivf_ties_probe_session12.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import faiss
import numpy as np

from core.settings import Settings
from indexing.embedders import make_embedder
from indexing.stores.faiss_dense import _Ivf
from ragline.bench.scale_corpus import default_corpus
from ragline.bench.scale_vectors import VectorCache


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--chunks", type=int, default=1_000_000)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    corpus = default_corpus(args.data, 13)
    emb = make_embedder(Settings().embedder)
    cache = VectorCache(args.vectors, corpus, emb.model, emb.dim)
    n = args.chunks
    vec = np.ascontiguousarray(cache.load(0, n), dtype=np.float32)
    qs = corpus.questions_within(n)[: args.questions]
    queries = [emb.embed_query(q.text) for q in qs]
    rng = np.random.default_rng(corpus.seed)
    for i in rng.choice(n, len(qs), replace=False):
        noisy = vec[i] + 0.05 * np.asarray(rng.normal(size=vec.shape[1]), np.float32)
        queries.append(noisy / np.linalg.norm(noisy))
    q_all = np.stack(queries).astype(np.float32)
    flat = faiss.IndexFlatIP(vec.shape[1])
    flat.add(vec)
    scores, ids = flat.search(q_all, 50)
    tied = int((np.abs(scores[:, 9] - scores[:, 10]) < 1e-6).sum())
    share = float(np.mean([(np.abs(s[:10] - s[9]) < 1e-6).sum() for s in scores]))
    print(f"{len(q_all)} queries, tied at rank 10/11: {tied}, top-10 sharing the 10th: {share}")
    ivf = _Ivf(vec, vec.shape[1])
    rows = []
    for nprobe in (800, 1600):
        for want in (40, 100, 200, 400):
            params = faiss.SearchParametersIVF()
            params.nprobe = nprobe
            by_id = by_score = 0
            lat = []
            for j in range(len(q_all)):
                t0 = time.perf_counter()
                _, pos = ivf.index.search(q_all[j : j + 1], want, params=params)
                found = pos[0][pos[0] >= 0]
                exact = vec[found] @ q_all[j]
                top = np.argsort(-exact, kind="stable")[:10]
                lat.append((time.perf_counter() - t0) * 1000)
                by_id += len(set(found[top].tolist()) & set(ids[j, :10].tolist()))
                by_score += int((exact[top] >= scores[j, 9] - 1e-5).sum())
            row = {
                "nprobe": nprobe,
                "want": want,
                "recall_id": by_id / (10 * len(q_all)),
                "recall_tie": by_score / (10 * len(q_all)),
                "p50": float(np.percentile(lat, 50)),
                "p95": float(np.percentile(lat, 95)),
            }
            print(row, flush=True)
            rows.append(row)
    if args.json:
        args.json.write_text(json.dumps({"tied_queries": tied, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
