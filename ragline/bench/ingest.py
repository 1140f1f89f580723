"""`ragline bench ingest`: parse + PII mask + chunk throughput per format, on one core.

Embedding and the stores are excluded: this measures the document pipeline that runs
before them. Parsing runs in-process (isolate=False) so the numbers are the parser's, not
the worker round-trip's; the process is pinned to one CPU for the run where the OS allows
it, so "per core" holds even for libraries that would spawn threads. Each file is timed
`repeat` times and its fastest run is kept (the usual way to take scheduler noise out).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import RaglineError
from core.ids import source_uri
from core.settings import Settings
from core.text import approx_tokens
from ingestion.chunker import chunk_blocks
from ingestion.parse import (
    MB,
    TIKA_EXTENSIONS,
    ParseOptions,
    document_format,
    parse_file,
    preload_parsers,
)
from ingestion.pii import PiiMasker
from ragline.ingest import walk

TARGET_PDF_PAGES_PER_S = 20.0


@dataclass(slots=True)
class _Run:
    fmt: str
    pages: int
    chunks: int
    parse_s: float
    mask_s: float
    chunk_s: float

    @property
    def seconds(self) -> float:
        return self.parse_s + self.mask_s + self.chunk_s


@contextlib.contextmanager
def one_core() -> Iterator[str]:
    """Pin this process to one CPU for the block; yields a description of what held."""
    if not hasattr(os, "sched_setaffinity"):
        yield "not pinned (no sched_setaffinity on this OS)"
        return
    before = os.sched_getaffinity(0)
    cpu = min(before)
    os.sched_setaffinity(0, {cpu})
    try:
        yield f"pinned to cpu {cpu}"
    finally:
        os.sched_setaffinity(0, before)


def _measure(path: Path, settings: Settings, masker: PiiMasker, options: ParseOptions) -> _Run:
    limits = settings.ingest
    max_bytes = int(limits.max_file_mb * MB)
    with path.open("rb") as f:
        fmt = document_format(path, f.read(4096), options)
    t0 = time.perf_counter()
    parsed = parse_file(
        path, max_bytes=max_bytes, timeout_s=limits.parse_timeout_s, isolate=False, options=options
    )
    t1 = time.perf_counter()
    blocks, _ = masker.mask_blocks(parsed.blocks, source_uri(path))
    t2 = time.perf_counter()
    drafts = chunk_blocks(blocks, settings.chunk, approx_tokens, has_pages=parsed.has_pages)
    t3 = time.perf_counter()
    return _Run(fmt, parsed.page_count, len(drafts), t1 - t0, t2 - t1, t3 - t2)


def _rates(runs: list[_Run]) -> dict[str, Any]:
    seconds = sum(r.seconds for r in runs)
    pages, chunks = sum(r.pages for r in runs), sum(r.chunks for r in runs)
    return {
        "files": len(runs),
        "pages": pages,
        "chunks": chunks,
        "seconds": round(seconds, 3),
        "parse_s": round(sum(r.parse_s for r in runs), 3),
        "mask_s": round(sum(r.mask_s for r in runs), 3),
        "chunk_s": round(sum(r.chunk_s for r in runs), 3),
        "pages_per_s": round(pages / seconds, 2) if seconds else 0.0,
        "chunks_per_s": round(chunks / seconds, 2) if seconds else 0.0,
    }


def run_ingest_bench(docs: Path, settings: Settings, repeat: int = 1) -> dict[str, Any]:
    """Per-format and total pages/s and chunks/s over every supported file under `docs`.
    `pages` is the parser's page count: real pages for PDF, sheets for XLSX, 1 otherwise."""
    options = ParseOptions.from_settings(settings.ingest)
    masker = PiiMasker(settings.ingest.pii_rules or None, settings.ingest.pii_salt)
    extensions = list(settings.ingest.extensions)
    if options.tika_url:
        extensions += TIKA_EXTENSIONS
    preload_parsers()  # import time is not parse time
    runs: list[_Run] = []
    files: list[dict[str, Any]] = []
    with one_core() as cpu:
        for path, supported in walk([docs], extensions):
            if not supported:
                continue
            try:
                best = min(
                    (_measure(path, settings, masker, options) for _ in range(max(1, repeat))),
                    key=lambda r: r.seconds,
                )
            except RaglineError as exc:
                files.append({"file": str(path.relative_to(docs)), "error": str(exc)})
                continue
            runs.append(best)
            files.append(
                {
                    "file": str(path.relative_to(docs)),
                    "format": best.fmt,
                    "pages": best.pages,
                    "chunks": best.chunks,
                    "seconds": round(best.seconds, 4),
                }
            )
    per_format = {
        fmt: _rates([r for r in runs if r.fmt == fmt]) for fmt in sorted({r.fmt for r in runs})
    }
    pdf_rate = per_format.get("pdf", {}).get("pages_per_s")
    return {
        "benchmark": "ingest (parse + PII mask + chunk; no embedding, no stores)",
        "docs": str(docs),
        "cpu": cpu,
        "repeat": max(1, repeat),
        "per_format": per_format,
        "total": _rates(runs),
        "target": {
            "pdf_pages_per_s": TARGET_PDF_PAGES_PER_S,
            "met": None if pdf_rate is None else pdf_rate >= TARGET_PDF_PAGES_PER_S,
        },
        "files": files,
    }
