"""`ragline bench scale`: ingest throughput, index size, memory, query latency and recall
at N chunks of the scale corpus (ragline/bench/scale_corpus.py), and the approximate
dense index against exact search on the same vectors, in the same run.

Per size N:
1. vectors: the shipped embedder over chunks [0, N), cached in blocks
   (scale_vectors.py). `max_embed` bounds how many chunks this run embeds; past the cache
   and that bound, chunk vectors are *derived*: the normalised sum of two real chunk
   vectors (the corpus's chunks are collages of two runs of sentences too). Derived
   vectors are counted and reported as such; recall on them is indicative only.
2. ingest: documents of DOC_CHUNKS chunks are staged in the metadata store (the truth)
   and synced to every derived store, as `ragline ingest` does after parsing and
   embedding. Parsing is left out (`ragline bench ingest` measures it); the embedding
   rate is measured separately, so the end-to-end rate is given as a computed figure.
3. size on disk per store, resident memory of this process.
4. queries: the planted questions below N through the whole pipeline (`aask`, top 10):
   recall@10 of the planted chunk, p50 / p95. The baseline of the same run is exact
   dense search: dense recall@10 of the approximate index against it (a chunk counts
   when its exact score reaches exact search's 10th, so tied copies are not misses; the
   strict id share beside it), both latencies, and the approximate index's build time.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from core.ids import content_id_for, doc_id_for
from core.types import Chunk, Document, DocumentVersion, QueryFilter, ScoredId
from indexing.entities import extract_entities
from indexing.protocols import DenseIndex, IndexedChunk
from indexing.stores.faiss_dense import FaissDenseIndex, IndexKind
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, percentile
from ragline.bench.scale_corpus import DOC_CHUNKS, ScaleCorpus, ScaleQuestion
from ragline.bench.scale_vectors import VectorCache

Say = Callable[[str], None]
_TAGS = (frozenset({"finance"}), frozenset({"hr"}))  # docs 0 and 1 of every 10; rest open
ALL = QueryFilter(access_tokens=None)


def _du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20, peak


def vectors_for(
    corpus: ScaleCorpus, cache: VectorCache, embedder: Any, n: int, max_embed: int, say: Say
) -> tuple[np.ndarray, dict[str, Any]]:
    """Vectors of chunks [0, n): cached, embedded now (up to max_embed), then derived."""
    have = cache.cached(n)
    target = min(n, have + max_embed)
    embedded, spent = cache.fill(embedder, target, progress=say) if target > have else (0, 0.0)
    real = cache.cached(target)
    vectors = np.empty((n, cache.dim), dtype=np.float32)
    for lo in range(0, real, cache.block * 16):
        hi = min(real, lo + cache.block * 16)
        vectors[lo:hi] = cache.load(lo, hi)
    if real < n:
        rng = np.random.default_rng(corpus.seed)
        for lo in range(real, n, 65536):
            hi = min(n, lo + 65536)
            a = vectors[rng.integers(0, real, hi - lo)]
            b = vectors[rng.integers(0, real, hi - lo)]
            mixed = a + b
            vectors[lo:hi] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    if spent == 0.0:  # all cached: time a sample so the rate is still this run's
        sample = [corpus.chunk(i).text for i in range(0, min(n, 20 * 64), 20)]
        t0 = time.perf_counter()
        embedder.embed_passages(sample)
        embedded, spent = len(sample), time.perf_counter() - t0
    info = {
        "real": real,
        "derived": n - real,
        "embedded_now": embedded,
        "embed_chunks_per_s": round(embedded / spent, 1) if spent else None,
    }
    return vectors, info


def _chunks_of(
    corpus: ScaleCorpus, doc: int, n: int, entities: bool = True
) -> tuple[Document, list[Chunk]]:
    source = f"scale://corpus-{corpus.fingerprint}/doc-{doc:06d}"
    doc_id = doc_id_for(source)
    tags = _TAGS[doc % 10] if doc % 10 < 2 else frozenset()
    modified = date(2020, 1, 1).fromordinal(date(2020, 1, 1).toordinal() + doc % 1500)
    document = Document(doc_id, source, f"scale doc {doc}", "txt", tags, "", 1.0, modified)
    chunks = []
    for i in range(doc * DOC_CHUNKS, min(n, (doc + 1) * DOC_CHUNKS)):
        text = corpus.chunk(i).text
        chunks.append(
            Chunk(
                content_id=content_id_for(doc_id, "v1", i - doc * DOC_CHUNKS),
                doc_id=doc_id,
                version="v1",
                ordinal=i - doc * DOC_CHUNKS,
                kind="text",
                text=text,
                page_start=1,
                page_end=1,
                line_start=1,
                line_end=1,
                source=source,
                title=document.title,
                doc_type="txt",
                acl_tags=tags,
                modified=modified,
                entities=tuple(extract_entities(text)) if entities else (),
            )
        )
    return document, chunks


def ingest(rag: Ragline, corpus: ScaleCorpus, vectors: np.ndarray, say: Say) -> dict[str, Any]:
    """Stage every document and sync the stores every `sync_every` documents."""
    n = len(vectors)
    docs = (n + DOC_CHUNKS - 1) // DOC_CHUNKS
    meta, stores = rag.stores.metadata, rag.stores.derived
    stage_s = sync_s = 0.0
    errors: dict[str, str] = {}
    sync_every = 40  # 2,000 chunks per sync round
    for d in range(docs):
        t0 = time.perf_counter()
        document, chunks = _chunks_of(corpus, d, n)
        lo = d * DOC_CHUNKS
        version = DocumentVersion(document.doc_id, "v1", "pending", len(chunks), 1)
        meta.stage_version(document, version, chunks, vectors[lo : lo + len(chunks)], stores)
        stage_s += time.perf_counter() - t0
        if (d + 1) % sync_every == 0 or d == docs - 1:
            t0 = time.perf_counter()
            errors.update(rag.sync().errors)
            sync_s += time.perf_counter() - t0
            say(f"ingested {min(n, (d + 1) * DOC_CHUNKS):,} of {n:,} chunks")
    total = stage_s + sync_s
    return {
        "chunks": n,
        "documents": docs,
        "stage_s": round(stage_s, 1),
        "sync_s": round(sync_s, 1),
        "chunks_per_s": round(n / total, 1),
        "sync_errors": errors,
    }


def _latency(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 50), 2),
        "p95_ms": round(percentile(values, 95), 2),
    }


def pipeline_queries(
    rag: Ragline, corpus: ScaleCorpus, questions: list[ScaleQuestion], n: int
) -> dict[str, Any]:
    """Recall@10 of the planted chunk and latency through the whole query path."""
    docs = {q.chunk: _chunks_of(corpus, q.chunk // DOC_CHUNKS, n) for q in questions}
    gold = {
        q.qid: docs[q.chunk][1][q.chunk % DOC_CHUNKS].content_id
        for q in questions
        if q.chunk % DOC_CHUNKS < len(docs[q.chunk][1])
    }
    latency: list[float] = []
    stages: list[dict[str, float]] = []
    found = 0

    async def run() -> None:
        nonlocal found
        for q in questions:
            t0 = time.perf_counter()
            answer = await rag.aask(q.text, OPERATOR, top_k=10)
            latency.append((time.perf_counter() - t0) * 1000)
            found += gold.get(q.qid) in {h.chunk.content_id for h in answer.hits[:10]}
            stages.append(dict(answer.timings_ms))

    asyncio.run(run())
    return (
        {"questions": len(questions), "recall@10": round(found / max(1, len(questions)), 4)}
        | _latency(latency)
        | {"stages_ms": _stage_profile(stages, latency)}
    )


def _stage_profile(stages: list[dict[str, float]], latency: list[float]) -> dict[str, Any]:
    """Where the time of the whole query goes: p50 / p95 of each stage of the answers'
    timings (`source_*` run side by side inside `retrieve`), and each stage's mean over the
    slowest 5% of questions, so a tail has a named cause. A stage a question skipped
    counts as 0 ms for it."""
    cut = percentile(latency, 95)
    slow = [t for t, ms in zip(stages, latency, strict=True) if ms >= cut]
    names = sorted({name for t in stages for name in t})
    return {
        name: _latency([t.get(name, 0.0) for t in stages])
        | {"tail_mean_ms": round(sum(t.get(name, 0.0) for t in slow) / max(1, len(slow)), 2)}
        for name in names
    }


# Two hits whose cosines differ by less than this are tied (float32 rescoring noise).
TIE_EPS = 1e-5


@dataclass(frozen=True)
class _Truth:
    """Exact search's top 10 for one query: the ids, and the 10th score. The scale corpus
    recombines sentences, so several chunks can hold the same text (the same vector): at
    a tie on the 10th place which of them is "the" top 10 is arbitrary. Recall then counts
    a returned chunk whose exact score reaches the 10th (the ann-benchmarks definition);
    `recall@10_ids` is the strict share of the exact ids, which ties keep below 1."""

    ids: frozenset[str]
    tenth: float
    tied: bool  # the 11th scores as the 10th

    @classmethod
    def of(cls, hits: list[ScoredId]) -> _Truth:
        top = hits[:10]
        tenth = top[-1].score if len(top) == 10 else -np.inf
        tied = len(hits) > 10 and hits[10].score >= tenth - TIE_EPS
        return cls(frozenset(h.content_id for h in top), float(tenth), tied)


def dense_compare(
    rag: Ragline,
    corpus: ScaleCorpus,
    vectors: np.ndarray,
    questions: list[ScaleQuestion],
    kind: IndexKind,
    nprobe: int,
    workdir: Path,
    say: Say,
    served: DenseIndex | None = None,
    sweep: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Approximate vs exact dense search on the same vectors: recall@10 against exact,
    latency of both (one thread), build time of the approximate index, with and without
    an ACL filter (a user who sees the open documents and `finance`). `served`: measure
    this already filled index (Elasticsearch kNN) instead of building a FAISS one."""
    n = len(vectors)
    queries = [rag.embedder.embed_query(q.text) for q in questions]
    rng = np.random.default_rng(corpus.seed)
    for i in rng.choice(n, min(n, len(questions)), replace=False):  # chunk-like queries too
        noisy = vectors[i] + 0.05 * np.asarray(rng.normal(size=vectors.shape[1]), np.float32)
        queries.append(noisy / np.linalg.norm(noisy))
    exact = FaissDenseIndex(workdir / "exact", vectors.shape[1], rag.embedder.model)
    approx = served or FaissDenseIndex(
        workdir / "approx", vectors.shape[1], rag.embedder.model, kind=kind, nprobe=nprobe
    )
    items: list[IndexedChunk] = []
    row_of: dict[str, int] = {}  # content_id -> row of `vectors`, to score any backend's hits
    for d in range(0, (n + DOC_CHUNKS - 1) // DOC_CHUNKS):
        _, chunks = _chunks_of(corpus, d, n, entities=False)  # the dense index keeps none
        lo = d * DOC_CHUNKS
        items.extend(IndexedChunk(c, vectors[lo + j]) for j, c in enumerate(chunks))
        row_of.update((c.content_id, lo + j) for j, c in enumerate(chunks))
        if len(items) >= 50_000 or lo + len(chunks) >= n:
            exact.upsert(items)
            if served is None:
                approx.upsert(items)
            items = []
    t0 = time.perf_counter()
    approx.search(queries[0], 10, ALL)  # trains and fills the approximate index
    build_s = time.perf_counter() - t0
    say(f"approximate index ({kind}) built in {build_s:.1f}s")
    finance = QueryFilter(access_tokens=frozenset({"finance"}))
    out: dict[str, Any] = {"kind": kind, "nprobe": nprobe, "build_s": round(build_s, 2)}
    if served is not None:
        out = {"kind": type(served).__name__}
    filters = (("all", ALL), ("acl", finance))
    truths: dict[str, list[_Truth]] = {}
    for label, where in filters:
        lat: list[float] = []
        truths[label] = []
        for q in queries:
            t0 = time.perf_counter()
            hits = exact.search(q, 11, where)
            lat.append((time.perf_counter() - t0) * 1000)
            truths[label].append(_Truth.of(hits))
        tied = sum(t.tied for t in truths[label])
        out[label] = {"queries": len(queries), "exact": _latency(lat), "tied_at_10": tied}

    def measure(label: str, where: QueryFilter) -> tuple[dict[str, float], dict[str, float]]:
        lat: list[float] = []
        by_score = by_id = 0
        for q, truth in zip(queries, truths[label], strict=True):
            t0 = time.perf_counter()
            got = [h.content_id for h in approx.search(q, 10, where)]
            lat.append((time.perf_counter() - t0) * 1000)
            by_id += len(truth.ids & set(got))
            scores = vectors[[row_of[c] for c in got]] @ q if got else np.zeros(0)
            by_score += int((scores >= truth.tenth - TIE_EPS).sum())
        total = 10 * len(queries)
        recall = {
            "recall@10_vs_exact": round(by_score / total, 4),
            "recall@10_ids": round(by_id / total, 4),
        }
        return recall, _latency(lat)

    for label, where in filters:
        recall, a = measure(label, where)
        e = out[label]["exact"]
        out[label] |= recall | {
            "approx": a,
            "p95_speedup": round(e["p95_ms"] / max(a["p95_ms"], 1e-6), 1),
        }
    if isinstance(approx, FaissDenseIndex) and sweep:
        out["sweep"] = []
        for probes in sweep:  # the same trained index, other probe counts
            approx._nprobe = probes
            row: dict[str, Any] = {"nprobe": probes}
            for label, where in filters:
                recall, a = measure(label, where)
                row[label] = recall | a
            out["sweep"].append(row)
            r = row["all"]
            say(f"nprobe {probes}: recall@10 {r['recall@10_vs_exact']} (ids {r['recall@10_ids']})")
        approx._nprobe = nprobe
    ivf = getattr(approx, "_ivf", None)
    if ivf is not None:
        out["nlist"] = ivf.nlist
        out["probes"] = ivf.probes(nprobe, ivf.size, ivf.size)
    return out


def run_scale(
    rag: Ragline,
    corpus: ScaleCorpus,
    n: int,
    cache: VectorCache,
    workdir: Path,
    *,
    max_embed: int,
    max_questions: int,
    approx: IndexKind,
    nprobe: int,
    say: Say,
    dense_only: bool = False,
    sweep: tuple[int, ...] = (),
) -> dict[str, Any]:
    vectors, vinfo = vectors_for(corpus, cache, rag.embedder, n, max_embed, say)
    questions = corpus.questions_within(n)[:max_questions]
    result: dict[str, Any] = {"chunks": n, "corpus": corpus.fingerprint, "vectors": vinfo}
    if dense_only:
        result["dense"] = dense_compare(
            rag,
            corpus,
            vectors,
            questions,
            approx,
            nprobe,
            workdir / "dense-compare",
            say,
            sweep=sweep,
        )
        result["memory_mb"] = dict(zip(("rss", "peak_rss"), map(round, _rss_mb()), strict=True))
        return result
    rss_before = _rss_mb()[0]
    result["ingest"] = ing = ingest(rag, corpus, vectors, say)
    if vinfo["embed_chunks_per_s"]:
        rate = 1 / (1 / vinfo["embed_chunks_per_s"] + 1 / ing["chunks_per_s"])
        ing["end_to_end_chunks_per_s_computed"] = round(rate, 1)
    data = rag.settings.data_dir
    result["disk_mb"] = {
        p.name: round(_du(p) / 2**20, 1) for p in sorted(data.iterdir()) if _du(p) > 2**16
    }
    now, peak = _rss_mb()
    result["memory_mb"] = {
        "rss": round(now),
        "peak_rss": round(peak),
        "rss_before": round(rss_before),
    }
    say(f"{len(questions)} planted questions through the pipeline")
    result["pipeline"] = pipeline_queries(rag, corpus, questions, n)
    say("dense: approximate against exact")
    served = None if rag.settings.backends.dense == "faiss" else rag.stores.dense
    result["dense"] = dense_compare(
        rag,
        corpus,
        vectors,
        questions,
        approx,
        nprobe,
        workdir / "dense-compare",
        say,
        served,
        sweep,
    )
    return result
