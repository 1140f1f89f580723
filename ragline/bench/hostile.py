"""`ragline bench hostile`: ingest a seeded corpus of hostile files next to good documents
and check that Ragline stays whole (issue 14).

The verdict, per file: `failed` with a reason, or `indexed` with chunks (warnings allowed),
or `unchanged` (identical bytes seen before); never an internal error, never longer than
the limits allow. Then: every parse worker stayed under its memory cap, `ragline check`
finds every store in agreement, and each good document still answers a question taken
from its own text. The hostile files are ingested under an ACL tag the probing principal
lacks, so only the good documents can answer it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import RaglineError
from core.text import split_sentences
from core.types import Principal, QueryFilter
from ragline.app import Ragline
from ragline.bench.common import doc_ranking
from ragline.bench.hostile_corpus import HostileFile, generate
from ragline.ingest import FileOutcome

HOSTILE_TAG = "hostile-corpus"
_OK = ("failed", "indexed", "unchanged")


def verdict(outcome: FileOutcome) -> str:
    """'' when the outcome is acceptable for a hostile file, else what is wrong."""
    if outcome.status not in _OK:
        return f"unexpected status {outcome.status}"
    if outcome.status == "failed":
        if not outcome.reason:
            return "failed without a reason"
        if outcome.reason.startswith("internal error"):
            return f"crash: {outcome.reason[:200]}"
    if outcome.status == "indexed" and outcome.chunks == 0:
        return "indexed with zero chunks"
    return ""


def _probe(rag: Ragline, doc_id: str) -> str | None:
    """A question from the middle of a document's own text: a sentence of 20+ characters
    from a text chunk, or None when it has none."""
    meta = rag.stores.metadata
    version = meta.current_version(doc_id)
    if version is None:
        return None
    chunks = [i.chunk for i in meta.version_items(doc_id, version) if i.chunk.kind == "text"]
    for chunk in chunks[len(chunks) // 2 :] + chunks[: len(chunks) // 2]:
        body = chunk.text.split("\n", 1)[-1]  # past the heading breadcrumb
        for sentence in split_sentences(body):
            if 20 <= len(sentence) <= 300:
                return sentence
    return None


def probe_good(rag: Ragline, good_ids: Sequence[str]) -> dict[str, Any]:
    """Each good document, asked a sentence of its own, by a principal who cannot see the
    hostile corpus: found in the top 5 (search) and cited (ask)?"""
    principal = Principal(user="hostile-bench")
    where = QueryFilter.for_principal(principal)
    found = cited = asked = 0
    misses = []
    for doc_id in good_ids:
        question = _probe(rag, doc_id)
        if question is None:
            continue
        asked += 1
        ranking = doc_ranking(rag.search(question, principal, where=where).hits)
        hit = doc_id in ranking[:5]
        answer = rag.ask(question, principal, where=where)
        doc = rag.stores.metadata.document(doc_id)
        cite = doc is not None and any(c.source == doc.source for c in answer.citations)
        found += hit
        cited += cite
        if not (hit and cite):
            misses.append({"doc_id": doc_id, "question": question, "top5": hit, "cited": cite})
    return {"asked": asked, "found_top5": found, "cited": cited, "misses": misses}


def run_hostile(
    rag: Ragline,
    root: Path,
    sources: Sequence[Path],
    good: Sequence[Path],
    mutated: int,
    seed: int = 14,
    scale: float = 1.0,
) -> dict[str, Any]:
    """Generate the corpus under `root`, ingest `good` then the corpus, and report."""
    gen_start = time.perf_counter()
    files = generate(sources, root / "hostile", mutated, seed, scale)
    gen_s = time.perf_counter() - gen_start
    good_out, _ = rag.ingest(list(good))
    good_ids = [o.doc_id for o in good_out if o.status == "indexed"]
    start, cpu_start = time.perf_counter(), _cpu_s()
    outcomes, report = rag.ingest([root / "hostile"], tags=[HOSTILE_TAG])
    ingest_s, ingest_cpu_s = time.perf_counter() - start, _cpu_s() - cpu_start
    by_path = {Path(o.path): o for o in outcomes}
    limits = rag.settings.ingest_limits
    bound_s = rag.settings.ingest.parse_timeout_s + limits.max_embed_s_per_file + 60.0
    rows, problems = [], []
    for f in files:
        o = by_path.get(f.path)
        problem = "no outcome" if o is None else verdict(o)
        if o is not None and not problem and o.seconds > bound_s:
            problem = f"took {o.seconds:.0f}s, over the {bound_s:.0f}s the limits allow"
        rows.append(_row(f, o, problem))
        if problem:
            problems.append({"file": f.path.name, "kind": f.kind, "problem": problem})
    peak = rag.ingestor.parser_peak_rss_mb
    cap = limits.worker_memory_mb
    divergences = [d for d in rag.check() if not d.ok]
    probes = probe_good(rag, good_ids)
    statuses = Counter(r["status"] for r in rows)
    return {
        "files": len(files),
        "corpus_dir": str(root / "hostile"),
        "seed": seed,
        "scale": scale,
        "good_documents": len(good_ids),
        "statuses": dict(sorted(statuses.items())),
        "indexed_with_warnings": sum(
            r["status"] == "indexed" and bool(r["warnings"]) for r in rows
        ),
        "by_kind": _by_kind(rows),
        "problems": problems,
        "generate_s": round(gen_s, 1),
        "ingest_s": round(ingest_s, 1),
        # CPU of this process and its finished parse workers: on a shared machine the wall
        # time says more about the neighbours than about Ragline.
        "ingest_cpu_s": round(ingest_cpu_s, 1),
        "max_file_s": round(max((r["seconds"] for r in rows), default=0.0), 1),
        "file_bound_s": bound_s,
        "worker_peak_rss_mb": round(peak, 1),
        "worker_memory_cap_mb": cap,
        "under_memory_cap": cap <= 0 or peak <= cap,
        "sync_errors": report.errors,
        "check_clean": not divergences,
        "divergences": [d.store for d in divergences],
        "good_probes": probes,
        "ok": not problems
        and not divergences
        and not report.errors
        and (cap <= 0 or peak <= cap)
        and probes["found_top5"] == probes["asked"]
        and probes["cited"] == probes["asked"],
        "files_detail": rows,
    }


def parse_only(
    rag: Ragline,
    root: Path,
    sources: Sequence[Path],
    mutated: int,
    seed: int = 14,
    scale: float = 1.0,
) -> dict[str, Any]:
    """Only the parse step of the same corpus, through one worker pool under the configured
    limits: the workers' true peak memory and the slowest parses, without embedding."""
    from ingestion.parse import MB, ParseOptions, ParserPool, parse_file

    files = generate(sources, root / "hostile", mutated, seed, scale)
    settings = rag.settings
    options = ParseOptions.from_settings(settings.ingest, settings.ingest_limits)
    rows: list[dict[str, Any]] = []
    outcomes: Counter[str] = Counter()
    with ParserPool() as pool:
        for f in files:
            start = time.perf_counter()
            try:
                parse_file(
                    f.path,
                    max_bytes=int(settings.ingest.max_file_mb * MB),
                    timeout_s=settings.ingest.parse_timeout_s,
                    pool=pool,
                    options=options,
                )
                outcome = "parsed"
            except RaglineError as exc:
                outcome = type(exc).__name__
            outcomes[outcome] += 1
            rows.append(
                {
                    "file": f.path.name,
                    "outcome": outcome,
                    "seconds": round(time.perf_counter() - start, 2),
                }
            )
        peak = pool.peak_rss_mb
    cap = settings.ingest_limits.worker_memory_mb
    return {
        "files": len(files),
        "outcomes": dict(sorted(outcomes.items())),
        "worker_peak_rss_mb": round(peak, 1),
        "worker_memory_cap_mb": cap,
        "under_memory_cap": cap <= 0 or peak <= cap,
        "slowest": sorted(rows, key=lambda r: -r["seconds"])[:5],
        "ok": cap <= 0 or peak <= cap,
        "files_detail": rows,
    }


def _cpu_s() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _row(f: HostileFile, o: FileOutcome | None, problem: str) -> dict[str, Any]:
    return {
        "file": f.path.name,
        "kind": f.kind,
        "origin": f.origin,
        "bytes": f.path.stat().st_size,
        "status": o.status if o else "missing",
        "chunks": o.chunks if o else 0,
        "seconds": round(o.seconds, 2) if o else 0.0,
        "reason": o.reason if o else "",
        "warnings": list(o.warnings) if o else [],
        "problem": problem,
    }


def _by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter[str]] = {}
    for r in rows:
        key = r["status"] + ("+warning" if r["status"] == "indexed" and r["warnings"] else "")
        out.setdefault(r["kind"], Counter())[key] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}
