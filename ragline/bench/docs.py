"""`ragline bench docs`: ingest a folder of real documents and ask questions about them
(format of shared/data/qa/examples_qa.jsonl; several question files may be given).

`pipeline` scores the first question file; `sets` scores each file on its own and
`by_kind` every kind over all files. Near-miss questions (kind `near_miss`: the words are
in the documents, the answer is not) and their answerable twins (kind `near_miss_twin`)
are reported apart in `near_miss`: refusal rate on the first, answer_contains on the
second. `citation_support` is the share of answer sentences found in the passage their
label names at the reported lines (`ragline.bench.support`); `confidence` shows how the
answers' confidence lines up with being right.

With `negatives` on, every answerable question is asked again with its answer taken away:
a filter hides its own file and every document whose text holds its answer, and the right
reply is "not covered" (`removed_answer`, overall and per question file; as in `bench
squad`).
"""

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
from ragline.bench.common import (
    OPERATOR,
    AnswerHider,
    calibration_of,
    contains_answer,
    covered_calibration,
    percentile,
    removed_report,
)
from ragline.bench.support import sentence_support

NEGATIVE_KINDS = frozenset({"negative", "near_miss"})
KEYS = (
    "hit@5",
    "answer_contains",
    "citation_page_accuracy",
    "negatives_refused",
    "citation_support",
)


def _rel(chunk_source: str, root: Path) -> str:
    path = path_from_uri(chunk_source)
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() if path else ""
    except ValueError:
        return ""


def _page_ok(chunk: Chunk, page: int | None, paged: bool) -> bool:
    return page is None or not paged or chunk.page_start <= page <= chunk.page_end


def _is_negative(q: dict[str, Any]) -> bool:
    return q["kind"] in NEGATIVE_KINDS or q.get("file") is None or q.get("answer") is None


def score_question(q: dict[str, Any], answer: Answer, root: Path) -> dict[str, float]:
    if _is_negative(q):
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
        label_page = int(c.label.rsplit("_p", 1)[1].rstrip("]").split(".")[0])
        if page is None or not paged or label_page == page or c.page_start <= page <= c.page_end:
            cited_ok = True
    return {
        "hit@5": float(hit),
        "answer_contains": float(contains_answer(answer.text, [q["answer"]])),
        "citation_page_accuracy": float(cited_ok),
    }


def _load(paths: list[Path]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append((path.name, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not a JSON line ({exc})") from exc
    return out


def _mean(rows: list[dict[str, float]], key: str) -> float | None:
    vals = [r[key] for r in rows if key in r]
    return round(sum(vals) / len(vals), 4) if vals else None


def _metrics(rows: list[dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: _mean(rows, k) for k in KEYS if k != "citation_support"}
    supported = sum(r.get("_supported", 0.0) for r in rows)
    sentences = sum(r.get("_sentences", 0.0) for r in rows)
    out["citation_support"] = round(supported / sentences, 4) if sentences else None
    out["answer_sentences"] = int(sentences)
    return out


def _documents(rag: Ragline, root: Path) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Every served document's text by doc_id, and the doc_ids of each file (relative to
    the documents folder)."""
    metadata = rag.stores.metadata
    texts: dict[str, list[str]] = defaultdict(list)
    of_file: dict[str, set[str]] = defaultdict(set)
    for chunk in metadata.serving(sorted(metadata.serving_ids())).values():
        texts[chunk.doc_id].append(chunk.text)
        of_file[_rel(chunk.source, root)].add(chunk.doc_id)
    return {d: "\n".join(t) for d, t in texts.items()}, of_file


def run_docs(
    rag: Ragline, docs: Path, questions_files: Path | list[Path], negatives: bool = True
) -> dict[str, Any]:
    files_in = questions_files if isinstance(questions_files, list) else [questions_files]
    t0 = time.perf_counter()
    outcomes, report = rag.ingest([docs])
    ingest_s = time.perf_counter() - t0
    questions = _load(files_in)
    per_q: list[tuple[str, dict[str, Any], dict[str, float], Answer, float]] = []
    texts, of_file = _documents(rag, docs) if negatives else ({}, {})
    hider = AnswerHider(texts)
    removed: dict[str, list[tuple[float, bool]]] = defaultdict(list)

    async def run_all() -> None:
        for set_name, q in questions:
            t = time.perf_counter()
            answer = await rag.aask(q["question"], OPERATOR, top_k=8)
            ms = (time.perf_counter() - t) * 1000
            score = score_question(q, answer, docs)
            ok, n = sentence_support(answer)
            if n and not _is_negative(q):
                score["_supported"], score["_sentences"] = float(ok), float(n)
            per_q.append((set_name, q, score, answer, ms))
            if negatives and not _is_negative(q):
                own = of_file.get(q["file"], set())
                away = await hider.ask(rag, q["question"], [q["answer"]], *own, top_k=8)
                if away is not None:
                    removed[set_name].append(away)

    asyncio.run(run_all())

    main = files_in[0].name
    main_rows = [
        s
        for name, q, s, _, _ in per_q
        if name == main and q["kind"] not in ("near_miss", "near_miss_twin")
    ]
    pipeline: dict[str, Any] = _metrics(main_rows)
    main_ms = [ms for name, *_, ms in per_q if name == main]
    pipeline.update(
        ingested=sum(o.status in ("indexed", "unchanged") for o in outcomes),
        failed=sum(o.status == "failed" for o in outcomes),
        questions=len(main_rows),
        latency_ms_p50=round(percentile(main_ms, 50), 2),
        latency_ms_p95=round(percentile(main_ms, 95), 2),
        ingest_seconds=round(ingest_s, 1),
    )
    by_kind_rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    by_set_rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for name, q, s, _, _ in per_q:
        by_kind_rows[q["kind"]].append(s)
        by_set_rows[name].append(s)
    by_kind = {
        kind: {k: v for k, v in _metrics(rows).items() if v} | {"n": len(rows)}
        for kind, rows in sorted(by_kind_rows.items())
    }
    sets = {name: _metrics(rows) | {"n": len(rows)} for name, rows in by_set_rows.items()}
    misses = [s for _, q, s, _, _ in per_q if q["kind"] == "near_miss"]
    twins = [s for _, q, s, _, _ in per_q if q["kind"] == "near_miss_twin"]
    near_miss = (
        {
            "negatives": len(misses),
            "refused": _mean(misses, "negatives_refused"),
            "twins": len(twins),
            "twins_answer_contains": _mean(twins, "answer_contains"),
            "twins_citation_page_accuracy": _mean(twins, "citation_page_accuracy"),
        }
        if misses or twins
        else {}
    )
    calibration = calibration_of(
        [
            (a.confidence, bool(s.get("negatives_refused", s.get("answer_contains", 0.0))))
            for _, _, s, a, _ in per_q
        ]
    )
    answerable = [
        (a.confidence, a.covered and s.get("answer_contains", 0.0) >= 1.0)
        for _, q, s, a, _ in per_q
        if not _is_negative(q)
    ]
    removed_rows = [r for rows in removed.values() for r in rows]
    covered = covered_calibration(
        [
            (a.confidence, a.covered, not _is_negative(q) and s.get("answer_contains", 0.0) >= 1.0)
            for _, q, s, a, _ in per_q
        ],
        removed_rows,
    )
    removed_answer = removed_report(removed_rows, answerable) | {
        "sets": {name: removed_report(rows, [])["refused"] for name, rows in removed.items()}
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
        {
            "set": name,
            "id": q["id"],
            "kind": q["kind"],
            **{k: v for k, v in s.items() if not k.startswith("_")},
            "covered": a.covered,
            "confidence": a.confidence,
            "reason": a.reason,
            **(
                {"sentences_supported": f"{int(s['_supported'])}/{int(s['_sentences'])}"}
                if "_sentences" in s
                else {}
            ),
            "answer": a.text[:300],
        }
        for name, q, s, a, _ in per_q
    ]
    return {
        "pipeline": pipeline,
        "by_kind": by_kind,
        "sets": sets,
        "near_miss": near_miss,
        "confidence": calibration,
        "confidence_covered": covered,
        **({"removed_answer": removed_answer} if negatives else {}),
        "files": files,
        "questions": details,
        "sync_errors": report.errors,
    }
