"""Quick measurements of the embedded stores (prints, asserts nothing; not collected).

    .venv/bin/python tests/indexing/bench_stores.py [--faiss-n 50000] [--dim 512]

Keyword and graph: CMRC 2018 paragraphs (train + trial) split in two at a sentence end,
~5,000 Chinese passages; queries are the dataset's questions. FAISS: random unit vectors.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.text import split_sentences
from core.types import Principal, QueryFilter
from indexing.entities import extract_entities, query_entities
from indexing.protocols import IndexedChunk
from indexing.stores.faiss_dense import FaissDenseIndex
from indexing.stores.sqlite_graph import SqliteGraphStore
from indexing.stores.sqlite_keyword import SqliteKeywordIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_cases import make_chunk

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "cmrc2018"
TAGS = ("finance", "hr", "legal", "ops")
DEPTS = ("finance", "it", "sales", "")


def passages_and_questions() -> tuple[list[str], list[str]]:
    passages: list[str] = []
    questions: list[str] = []
    for name in ("train.json", "trial.json"):
        for article in json.loads((DATA / name).read_text(encoding="utf-8"))["data"]:
            for para in article["paragraphs"]:
                sents = split_sentences(para["context"])
                half = max(1, len(sents) // 2)
                passages.extend(p for p in ("".join(sents[:half]), "".join(sents[half:])) if p)
                questions.extend(q["question"] for q in para["qas"])
    return passages, questions


def ms(seconds: list[float], q: int) -> float:
    return statistics.quantiles(seconds, n=100)[q - 1] * 1000 if len(seconds) > 1 else 0.0


def report(label: str, times: list[float]) -> None:
    print(f"  {label:<42} p50 {ms(times, 50):7.2f} ms   p95 {ms(times, 95):7.2f} ms")


def items_for(passages: list[str], dim: int) -> list[IndexedChunk]:
    out = []
    for i, text in enumerate(passages):
        tags = frozenset({TAGS[i % len(TAGS)]}) if i % 5 == 0 else frozenset()  # 20% tagged
        chunk = make_chunk(
            f"p{i}",
            text,
            doc=f"doc{i // 4}",
            ordinal=i % 4,
            tags=tags,
            department=DEPTS[i % len(DEPTS)],
            doc_type=("manual", "faq", "wiki")[i % 3],
            modified=date(2022 + i % 4, 1 + i % 12, 1),
        )
        out.append(IndexedChunk(chunk, np.zeros(dim, dtype=np.float32)))
    return out


FILTERS = {
    "no filter (superuser)": QueryFilter(access_tokens=None),
    "ACL (user with one tag)": QueryFilter.for_principal(Principal(tags=frozenset({"hr"}))),
    "ACL + dept + date": QueryFilter.for_principal(
        Principal(tags=frozenset({"hr"})),
        departments=frozenset({"finance"}),
        modified_from=date(2023, 1, 1),
    ),
}


def bench_keyword_and_graph(passages: list[str], questions: list[str]) -> None:
    items = items_for(passages, 4)
    chars = sum(len(p) for p in passages) / len(passages)
    print(f"\n{len(passages)} Chinese passages, {chars:.0f} chars avg; {len(questions)} questions")
    extract_entities(passages[0])  # warm jieba and the IDF table
    # CPU time, so other processes on a shared machine do not inflate it.
    t0 = time.process_time()
    for p in passages:
        extract_entities(p)
    per = (time.process_time() - t0) / len(passages) * 1000
    print(f"  extract_entities: {per:.3f} ms CPU/passage ({per * 500 / chars:.3f} per 500 chars)")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ragline.db"
        kw = SqliteKeywordIndex(db)
        t0 = time.perf_counter()
        for i in range(0, len(items), 500):
            kw.upsert(items[i : i + 500])
        print(
            f"keyword: build {time.perf_counter() - t0:.2f} s, db {db.stat().st_size / 1e6:.1f} MB"
        )
        qs = questions[:300]
        for label, where in FILTERS.items():
            times = []
            for q in qs:
                t0 = time.perf_counter()
                kw.search(q, 10, where)
                times.append(time.perf_counter() - t0)
            report(f"top-10, {label}", times)
        t0 = time.perf_counter()
        for item in items[:200]:
            kw.upsert([item])
        print(f"  re-upsert one chunk: {(time.perf_counter() - t0) / 200 * 1000:.2f} ms")

        graph = SqliteGraphStore(db)
        t0 = time.perf_counter()
        for i in range(0, len(items), 500):
            graph.upsert(items[i : i + 500])
        print(f"graph: build {time.perf_counter() - t0:.2f} s (entity extraction included)")
        for label, where in FILTERS.items():
            times = []
            for q in qs:
                ents = query_entities(q)
                t0 = time.perf_counter()
                graph.search(ents, 10, where)
                times.append(time.perf_counter() - t0)
            report(f"top-10, {label}", times)
        kw.close()
        graph.close()


def bench_faiss(n: int, dim: int) -> None:
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    items = [
        IndexedChunk(it.chunk, vectors[i])
        for i, it in enumerate(items_for([f"x{i}" for i in range(n)], dim))
    ]
    print(f"\nFAISS IndexIDMap2(FlatIP) {n} x {dim}, 1 thread")
    with tempfile.TemporaryDirectory() as tmp:
        dense = FaissDenseIndex(Path(tmp) / "dense", dim=dim, model="bench")
        t0 = time.perf_counter()
        dense.rebuild_from(items)
        print(f"  bulk load {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        dense.flush()
        print(f"  flush {time.perf_counter() - t0:.2f} s")
        queries = rng.standard_normal((100, dim), dtype=np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        filters = {
            **FILTERS,
            "doc_type (1/3 of ids)": QueryFilter(doc_types=frozenset({"faq"})),
        }
        for label, where in filters.items():
            times = []
            for q in queries:
                t0 = time.perf_counter()
                dense.search(q, 10, where)
                times.append(time.perf_counter() - t0)
            report(f"top-10, {label}", times)
        t0 = time.perf_counter()
        for item in items[:20]:
            dense.upsert([item])
        print(f"  upsert one (remove_ids + add): {(time.perf_counter() - t0) / 20 * 1000:.1f} ms")
        t0 = time.perf_counter()
        FaissDenseIndex(Path(tmp) / "dense", dim=dim, model="bench")
        print(f"  reopen {time.perf_counter() - t0:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faiss-n", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=512)
    args = parser.parse_args()
    passages, questions = passages_and_questions()
    bench_keyword_and_graph(passages, questions)
    bench_faiss(args.faiss_n, args.dim)


if __name__ == "__main__":
    main()
