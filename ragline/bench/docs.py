"""`ragline bench docs`: ingest a folder of real documents and ask questions about them
(format of shared/data/qa/examples_qa.jsonl)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from core.ids import path_from_uri
from core.types import Answer, Chunk
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, contains_answer, percentile


def _rel(chunk_source: str, root: Path) -> str:
    path = path_from_uri(chunk_source)
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() if path else ""
    except ValueError:
        return ""


def _page_ok(chunk: Chunk, page: int | None, paged: bool) -> bool:
    return page is None or not paged or chunk.page_start <= page <= chunk.page_end


def score_question(q: dict[str, Any], answer: Answer, root: Path) -> dict[str, float]:
    if q["kind"] == "negative" or q["file"] is None:
        return {"negatives_refused": float(not answer.covered)}
    paged = q["file"].lower().endswith(".pdf")
    top5 = answer.hits[:5]
    hit = any(
        _rel(h.chunk.source, root) == q["file"] and _page_ok(h.chunk, q["page"], paged)
        for h in top5
    )
    by_label = {h.chunk.content_id: h.chunk for h in answer.hits}
    cited_ok = False
    for c in answer.citations:
        chunk = by_label.get(c.content_id)
        if chunk is None or _rel(chunk.source, root) != q["file"]:
            continue
        page = q["page"]
        label_page = int(c.label.rsplit("_p", 1)[1].rstrip("]"))
        if page is None or not paged or label_page == page or c.page_start <= page <= c.page_end:
            cited_ok = True
    return {
        "hit@5": float(hit),
        "answer_contains": float(contains_answer(answer.text, [q["answer"]])),
        "citation_page_accuracy": float(cited_ok),
    }


def run_docs(rag: Ragline, docs: Path, questions_file: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    outcomes, report = rag.ingest([docs])
    ingest_s = time.perf_counter() - t0
    questions = [
        json.loads(line)
        for line in questions_file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    per_q: list[tuple[dict[str, Any], dict[str, float], Answer, float]] = []

    async def run_all() -> None:
        for q in questions:
            t = time.perf_counter()
            answer = await rag.aask(q["question"], OPERATOR, top_k=8)
            per_q.append(
                (q, score_question(q, answer, docs), answer, (time.perf_counter() - t) * 1000)
            )

    asyncio.run(run_all())

    def mean(rows: list[dict[str, float]], key: str) -> float | None:
        vals = [r[key] for r in rows if key in r]
        return round(sum(vals) / len(vals), 4) if vals else None

    scores = [s for _, s, _, _ in per_q]
    keys = ("hit@5", "answer_contains", "citation_page_accuracy", "negatives_refused")
    pipeline: dict[str, Any] = {k: mean(scores, k) for k in keys}
    pipeline.update(
        ingested=sum(o.status in ("indexed", "unchanged") for o in outcomes),
        failed=sum(o.status == "failed" for o in outcomes),
        questions=len(questions),
        latency_ms_p50=round(percentile([ms for *_, ms in per_q], 50), 2),
        latency_ms_p95=round(percentile([ms for *_, ms in per_q], 95), 2),
        ingest_seconds=round(ingest_s, 1),
    )
    by_kind_rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q, s, _, _ in per_q:
        by_kind_rows[q["kind"]].append(s)
    by_kind = {
        kind: {k: v for k in keys if (v := mean(rows, k)) is not None} | {"n": len(rows)}
        for kind, rows in sorted(by_kind_rows.items())
    }
    files = {
        _rel(Path(o.path).resolve().as_uri(), docs) or o.path: {
            "status": o.status,
            "reason": o.reason,
            "chunks": o.chunks,
            "tables": o.tables,
            "pages": o.pages,
            "seconds": round(o.seconds, 2),
        }
        for o in outcomes
    }
    details = [
        {"id": q["id"], "kind": q["kind"], **s, "covered": a.covered, "answer": a.text[:300]}
        for q, s, a, _ in per_q
    ]
    return {
        "pipeline": pipeline,
        "by_kind": by_kind,
        "files": files,
        "questions": details,
        "sync_errors": report.errors,
    }
