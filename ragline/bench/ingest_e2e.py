"""`ragline bench ingest --end-to-end`: parse + mask + chunk + entities + embed + stage +
sync to every store, into a fresh embedded data directory, per format.

Two runs in the same process on the same files: the baseline ingests one file at a time
with one embedding thread (how ingest ran before issue 13's batching:
`RAGLINE_INGEST__EMBED_GROUP=0`, `RAGLINE_EMBEDDER__PASSAGE_THREADS=1`), the candidate
with the settings as configured. Models, tokeniser dictionaries and the parse worker
processes are loaded before either clock starts (a server or Celery worker loads them
once). The total is wall time, syncs included. Where a run holds one format, that format's
rates are the wall rates too: what ingesting only such files gives (`rate_from: "wall"`).
In a mix they come from each file's own time (its parse, chunking and staging, plus its
share of its group's embedding, which in the candidate overlaps the next files'
preparation, so these sums do not show the overlap and understate the rate:
`rate_from: "file seconds"`).
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from core.settings import Settings
from ragline.bench.squad import load_squad, write_corpus

TARGET_CHUNKS_PER_S = 100.0
TARGET_PDF_PAGES_PER_S = 40.0


def _warm_up() -> None:
    """Load the process-wide tokeniser dictionaries (each run loads its own model)."""
    from core.text import keyword_tokens, load_dictionaries
    from indexing.entities import extract_entities

    load_dictionaries()
    extract_entities("预热分词词典 warm up the dictionaries")
    keyword_tokens("预热分词词典 warm up")


def _one(settings: Settings, folders: list[Path]) -> dict[str, Any]:
    from ragline.app import Ragline

    rag = Ragline(settings)
    try:
        rag.embedder.load()
        rag.ingestor.start_workers(wait=True)  # like the model: loaded once per process
        t0 = time.perf_counter()
        outcomes, report = rag.ingest(folders)
        wall = time.perf_counter() - t0
    finally:
        rag.close()
    per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    outcomes = [o for o in outcomes if o.status != "skipped"]  # not an ingest format
    for o in outcomes:
        fmt = Path(o.path).suffix.lower().lstrip(".") or "none"
        row = per[fmt]
        row["files"] += 1
        row["failed"] += o.status == "failed"
        row["chunks"] += o.chunks
        row["pages"] += o.pages
        row["seconds"] += o.seconds
    alone = len(per) == 1

    def rates(row: dict[str, float]) -> dict[str, Any]:
        seconds = wall if alone else row["seconds"]
        return {
            "chunks_per_s": round(row["chunks"] / seconds, 1) if seconds else 0.0,
            "pages_per_s": round(row["pages"] / seconds, 1) if seconds else 0.0,
            "rate_from": "wall" if alone else "file seconds",
        }

    formats = {
        fmt: {
            **{k: int(v) if k != "seconds" else round(v, 2) for k, v in row.items()},
            **rates(row),
        }
        for fmt, row in sorted(per.items())
    }
    chunks = sum(o.chunks for o in outcomes)
    pages = sum(o.pages for o in outcomes)
    return {
        "files": len(outcomes),
        "failed": sum(o.status == "failed" for o in outcomes),
        "chunks": chunks,
        "pages": pages,
        "wall_s": round(wall, 2),
        "chunks_per_s": round(chunks / wall, 1) if wall else 0.0,
        "pages_per_s": round(pages / wall, 1) if wall else 0.0,
        "sync_errors": len(report.errors),
        "per_format": formats,
    }


def run_end_to_end(
    docs: Path | None, squad: Path | None, paragraphs: int, settings: Settings
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragline-ingest-e2e-") as tmp:
        root = Path(tmp)
        folders = [docs] if docs is not None else []
        if squad is not None:
            paras, _ = load_squad(squad)
            keep = dict(list(paras.items())[:paragraphs] if paragraphs else paras.items())
            write_corpus(keep, root / "paragraphs")
            folders.append(root / "paragraphs")
        _warm_up()
        baseline_settings = settings.model_copy(deep=True)
        baseline_settings.ingest.embed_group = 0
        baseline_settings.embedder.passage_threads = 1
        runs = {}
        for name, s in (("baseline", baseline_settings), ("candidate", settings)):
            s = s.model_copy(update={"data_dir": root / f"data-{name}"})
            runs[name] = _one(s, folders)
    base, cand = runs["baseline"], runs["candidate"]
    pdf = cand["per_format"].get("pdf", {})
    return {
        "benchmark": "ingest end to end (parse, mask, chunk, entities, embed, stage, sync)",
        "inputs": {
            "docs": str(docs) if docs else None,
            "squad": str(squad) if squad else None,
            "paragraphs": paragraphs or None,
        },
        "embedder": settings.embedder.kind,
        "baseline": {"settings": "ingest.embed_group=0, embedder.passage_threads=1", **base},
        "candidate": {
            "settings": (
                f"ingest.embed_group={settings.ingest.embed_group}, "
                f"embedder.passage_threads={settings.embedder.passage_threads} (0 = per core)"
            ),
            **cand,
        },
        "ratio_chunks_per_s": (
            round(cand["chunks_per_s"] / base["chunks_per_s"], 2) if base["chunks_per_s"] else None
        ),
        "target": {
            "chunks_per_s": TARGET_CHUNKS_PER_S,
            "met": cand["chunks_per_s"] >= TARGET_CHUNKS_PER_S,
            "pdf_pages_per_s": TARGET_PDF_PAGES_PER_S,
            "pdf_met": None if not pdf else pdf["pages_per_s"] >= TARGET_PDF_PAGES_PER_S,
        },
    }
