"""Sync cost with and without grouping consecutive upserts, in the same run: the same
scale-corpus documents (cached real vectors) staged into two fresh embedded data dirs,
synced every 40 documents, once with one store write per document (before) and once
with runs of up to 2,000 chunks (after). Wall and CPU seconds of the syncs.

    PYTHONPATH=. .venv/bin/python bench/sync_groups.py --chunks 20000
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from core.settings import Settings
from indexing.sync import OutboxApplier
from ragline.app import Ragline
from ragline.bench.scale import _chunks_of
from ragline.bench.scale_corpus import DOC_CHUNKS, default_corpus
from ragline.bench.scale_vectors import VectorCache


def one(corpus, vectors, n: int, group: int, root: Path) -> dict[str, float]:  # type: ignore[no-untyped-def]
    rag = Ragline(Settings(data_dir=root))
    applier = OutboxApplier(rag.stores.metadata, rag.stores.derived, group_chunks=group)
    wall = cpu = 0.0
    try:
        for d in range((n + DOC_CHUNKS - 1) // DOC_CHUNKS):
            document, chunks = _chunks_of(corpus, d, n)
            lo = d * DOC_CHUNKS
            from core.types import DocumentVersion

            version = DocumentVersion(document.doc_id, "v1", "pending", len(chunks), 1)
            rag.stores.metadata.stage_version(
                document, version, chunks, vectors[lo : lo + len(chunks)], rag.stores.derived
            )
            if (d + 1) % 40 == 0 or lo + len(chunks) >= n:
                t0, c0 = time.perf_counter(), time.process_time()
                report = applier.run()
                wall += time.perf_counter() - t0
                cpu += time.process_time() - c0
                assert not report.errors, report.errors
    finally:
        rag.close()
    return {"sync_wall_s": round(wall, 1), "sync_cpu_s": round(cpu, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--vectors", type=Path, default=Path(".ragline-bench/scale-vectors"))
    ap.add_argument("--chunks", type=int, default=10000)
    args = ap.parse_args()
    corpus = default_corpus(args.data)
    cache = VectorCache(args.vectors, corpus, "use-multilingual-v3", 512)
    vectors = cache.load(0, args.chunks)
    out = {"chunks": args.chunks}
    with tempfile.TemporaryDirectory() as tmp:
        out["before_per_document"] = one(corpus, vectors, args.chunks, 1, Path(tmp) / "a")
        out["after_grouped"] = one(corpus, vectors, args.chunks, 2000, Path(tmp) / "b")
    b, a = out["before_per_document"], out["after_grouped"]
    out["cpu_ratio_before_over_after"] = round(b["sync_cpu_s"] / max(a["sync_cpu_s"], 1e-9), 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
