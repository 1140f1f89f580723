"""Recall and latency of the approximate dense index (HNSW) against exact search.

    .venv/bin/python tests/indexing/bench_faiss_recall.py [--n 20000 100000] [--dim 512]

Vectors are clustered unit vectors (embeddings are not uniform on the sphere: uniform data
is the worst case for graph indexes and says little); queries are perturbed corpus vectors.
Prints recall@10 of HNSW against the exact top 10 and p50 latency of both, unfiltered and
with a filter that admits half the corpus. The numbers go in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

from core.types import Chunk, QueryFilter
from indexing.protocols import IndexedChunk
from indexing.stores.faiss_dense import FaissDenseIndex


def _data(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.normal(size=(max(n // 200, 8), dim)).astype(np.float32)
    vecs = centres[rng.integers(0, len(centres), n)] + 0.6 * rng.normal(size=(n, dim))
    vecs = vecs.astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def _items(vecs: np.ndarray) -> list[IndexedChunk]:
    out = []
    for i, v in enumerate(vecs):
        chunk = Chunk(
            hashlib.md5(str(i).encode()).hexdigest(),
            f"d{i // 10}",
            "v1",
            i % 10,
            "text",
            "",
            1,
            1,
            1,
            1,
            "s",
            "t",
            "txt",
            department="even" if i % 2 == 0 else "odd",
            modified=date(2024, 1, 1),
        )
        out.append(IndexedChunk(chunk, v))
    return out


def run(n: int, dim: int, queries: int = 200, k: int = 10) -> dict[str, float]:
    rng = np.random.default_rng(7)
    vecs = _data(n, dim, rng)
    items = _items(vecs)
    qs = vecs[rng.integers(0, n, queries)] + 0.3 * rng.normal(size=(queries, dim))
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    out: dict[str, float] = {"n": n, "dim": dim}
    with tempfile.TemporaryDirectory() as tmp:
        exact = FaissDenseIndex(Path(tmp) / "e", dim, "bench")
        approx = FaissDenseIndex(Path(tmp) / "a", dim, "bench", kind="hnsw")
        for store in (exact, approx):
            store.upsert(items)
        t = time.perf_counter()
        approx.search(qs[0], k, QueryFilter(access_tokens=None))  # builds the graph
        out["hnsw_build_s"] = round(time.perf_counter() - t, 2)
        for label, where in (
            ("all", QueryFilter(access_tokens=None)),
            ("half", QueryFilter(access_tokens=None, departments=frozenset({"even"}))),
        ):
            hits, lat = 0, {"exact": [], "hnsw": []}  # type: ignore[var-annotated]
            for q in qs:
                t = time.perf_counter()
                truth = {h.content_id for h in exact.search(q, k, where)}
                lat["exact"].append(time.perf_counter() - t)
                t = time.perf_counter()
                got = {h.content_id for h in approx.search(q, k, where)}
                lat["hnsw"].append(time.perf_counter() - t)
                hits += len(truth & got)
            out[f"recall@{k}_{label}"] = round(hits / (k * queries), 4)
            for name, values in lat.items():
                out[f"p50_ms_{name}_{label}"] = round(1000 * float(np.median(values)), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--dim", type=int, default=512)
    args = parser.parse_args()
    for n in args.n:
        print(json.dumps(run(n, args.dim)))


if __name__ == "__main__":
    main()
