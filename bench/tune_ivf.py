"""Sweep the IVF index's probes on real embeddings of the scale corpus: recall@10 against
exact search and latency (one thread), per size and nprobe. Uses the vectors cached by
`ragline bench scale` (or its embedding workers); queries are the planted questions
(embedded with the same model) plus noisy copies of corpus vectors.

    PYTHONPATH=. .venv/bin/python bench/tune_ivf.py --sizes 10000,40000 --nprobe 8,16,32,64
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import faiss
import numpy as np

from indexing.embedders import UseEmbedder
from indexing.stores.faiss_dense import _Ivf
from ragline.bench.scale_corpus import default_corpus
from ragline.bench.scale_vectors import VectorCache


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--vectors", type=Path, default=Path(".ragline-bench/scale-vectors"))
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--nprobe", default="4,8,16,32,64")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    faiss.omp_set_num_threads(1)
    corpus = default_corpus(args.data)
    embedder = UseEmbedder()
    cache = VectorCache(args.vectors, corpus, embedder.model, embedder.dim)
    qfile = cache.dir / "questions.npy"
    if qfile.exists():
        questions = np.load(qfile)
    else:
        questions = embedder.embed_passages([q.text for q in corpus.questions])  # normalised
        np.save(qfile, questions)
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        have = cache.cached(n)
        if have < n:
            print(f"only {have} of {n} vectors cached: skipped")
            continue
        vectors = cache.load(0, n)
        rng = np.random.default_rng(1)
        noisy = vectors[rng.choice(n, 300, replace=False)]
        noisy = noisy + 0.05 * rng.normal(size=noisy.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        queries = np.vstack([questions, noisy]).astype(np.float32)
        flat = faiss.IndexFlatIP(vectors.shape[1])
        flat.add(vectors)
        t0 = time.perf_counter()
        _, truth = flat.search(queries, 10)
        exact_ms = (time.perf_counter() - t0) * 1000 / len(queries)
        t0 = time.perf_counter()
        ivf = _Ivf(vectors, vectors.shape[1])
        build_s = time.perf_counter() - t0
        for nprobe in [int(p) for p in args.nprobe.split(",")]:
            params = faiss.SearchParametersIVF()
            params.nprobe = min(nprobe, ivf.nlist)
            hits, qhits, lat = 0, 0, []
            for qi, q in enumerate(queries):
                t0 = time.perf_counter()
                _, pos = ivf.index.search(q[None, :], 40, params=params)
                found = pos[0][pos[0] >= 0]
                top = found[np.argsort(-(vectors[found] @ q))[:10]]
                lat.append((time.perf_counter() - t0) * 1000)
                got = len(set(top.tolist()) & set(truth[qi].tolist()))
                hits += got
                qhits += got if qi < len(questions) else 0
            row = {
                "n": n,
                "nlist": ivf.nlist,
                "nprobe": nprobe,
                "recall@10": round(hits / (10 * len(queries)), 4),
                "recall@10_questions": round(qhits / (10 * len(questions)), 4),
                "p50_ms": round(float(np.percentile(lat, 50)), 3),
                "p95_ms": round(float(np.percentile(lat, 95)), 3),
                "exact_ms_mean_batched": round(exact_ms, 3),
                "build_s": round(build_s, 2),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
