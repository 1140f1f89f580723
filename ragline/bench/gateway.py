"""`ragline bench gateway`: routing accuracy, answer accuracy and latency per kind of source
on a labelled set of mixed questions (bench/questions/gateway_qa.jsonl): rows from the
sample business database, live status from the sample ticket service and from Ragline's
own jobs API (served by a real HTTP server started here), and the documents in --docs.

Baseline, measured in the same run: the same questions answered from documents only (what
Ragline did before the gateway).
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from connectors.config import PACKAGED_SAMPLE
from connectors.sample.database import load_sample
from connectors.sample.status_service import StatusService
from core.settings import ApiKey, ApiSettings, GatewaySettings, MonitoringSettings, Settings
from core.types import Principal
from indexing.protocols import JobRecord
from ragline.app import Ragline
from ragline.bench.common import normalise, percentile
from ragline.bench.processes import free_port
from ragline.jobs import FAILED, SEARCHABLE

QUESTIONS = Path(__file__).resolve().parents[2] / "bench" / "questions" / "gateway_qa.jsonl"
# An agent's key: analyst (every row template), support (tickets), operator (jobs).
PRINCIPAL = Principal("bench", roles=frozenset({"analyst", "support", "operator"}))
_KEY = "bench-gateway-key"


@contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _api(settings: Settings) -> Iterator[str]:
    """Ragline's own HTTP API on a free port: the `jobs` status source calls it."""
    import uvicorn

    from ragline.api import create_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API server for the jobs source did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _jobs(rag: Ragline) -> dict[str, str]:
    now = datetime.now(UTC)
    ok, failed = uuid.uuid4().hex, uuid.uuid4().hex
    meta = rag.stores.metadata
    meta.create_job(
        JobRecord(
            ok,
            "ingest",
            SEARCHABLE,
            owner="bench",
            source="upload:a.md",
            created_at=now,
            updated_at=now,
        )
    )
    meta.create_job(
        JobRecord(
            failed,
            "ingest",
            FAILED,
            owner="bench",
            source="upload:b.pdf",
            reason="not a PDF: the file starts with '<html>'",
            created_at=now,
            updated_at=now,
        )
    )
    return {"job_ok": ok, "job_failed": failed}


def _contains(answer: str, expected: str | None) -> bool:
    if expected is None:  # routing-only item: no answer to check
        return True
    return normalise(expected).replace(",", "") in normalise(answer).replace(",", "")


def run_gateway(root: Path, docs: Path, questions: Path = QUESTIONS) -> dict[str, Any]:
    data = root / "data"
    items = [json.loads(line) for line in questions.read_text("utf-8").splitlines() if line]
    settings = Settings(
        data_dir=data,
        api=ApiSettings(keys=[ApiKey(key=_KEY, user="bench", roles=["operator"])]),
        gateway=GatewaySettings(sources=str(PACKAGED_SAMPLE)),
        monitoring=MonitoringSettings(interval_s=0),
    )
    load_sample(f"sqlite:///{data / 'sample.db'}")
    tickets = StatusService().start()
    try:
        with _env(RAGLINE_SAMPLE_STATUS_URL=tickets.url, RAGLINE_SELF_API_KEY=_KEY):
            rag = Ragline(settings)
            try:
                outcomes, _ = rag.ingest([docs])
                failed = [o for o in outcomes if o.status == "failed"]
                ids = _jobs(rag)
                with _api(settings) as api_url, _env(RAGLINE_SELF_URL=api_url):
                    rag.ask("warm up the embedder", PRINCIPAL)
                    rows = [_one(rag, q, ids) for q in items]
            finally:
                rag.close()
    finally:
        tickets.stop()
    return _summary(rows, len(outcomes), len(failed))


def _one(rag: Ragline, q: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    question = q["question"].format(**ids)
    t0 = time.perf_counter()
    answer = rag.ask(question, PRINCIPAL)
    ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    baseline = rag.answerer.answer(  # documents only: the pipeline before the gateway
        question, *_docs(rag, question)
    )
    base_ms = (time.perf_counter() - t1) * 1000
    kind = answer.knowledge.get("kind", "documents")
    answered_by = answer.knowledge.get("answered_by", "documents")
    return {
        "id": q["id"],
        "expect": q["expect"],
        "routed": kind,
        "answered_by": answered_by,
        "route_ok": kind == q["expect"],
        "answer_ok": _contains(answer.text, q["answer"]),
        "baseline_ok": _contains(baseline.text, q["answer"]),
        "ms": ms,
        "baseline_ms": base_ms,
        "answer": answer.text[:300],
    }


def _docs(rag: Ragline, question: str) -> tuple[Any, ...]:
    import asyncio

    result = asyncio.run(rag.asearch(question, PRINCIPAL))
    return (result.hits, result.covered, result.route, result.timings_ms, "baseline")


def _summary(rows: list[dict[str, Any]], files: int, failed: int) -> dict[str, Any]:
    n = len(rows)

    def p95(kind: str) -> float:
        return round(percentile([r["ms"] for r in rows if r["answered_by"] == kind], 95), 1)

    by_kind = {
        kind: {
            "questions": sum(r["expect"] == kind for r in rows),
            "routing_accuracy": _share([r["route_ok"] for r in rows if r["expect"] == kind]),
            "answer_accuracy": _share([r["answer_ok"] for r in rows if r["expect"] == kind]),
            "baseline_answer_accuracy": _share(
                [r["baseline_ok"] for r in rows if r["expect"] == kind]
            ),
        }
        for kind in ("rows", "status", "documents")
    }
    answer = _share([r["answer_ok"] for r in rows])
    baseline = _share([r["baseline_ok"] for r in rows])
    return {
        "gateway": {
            "routing_accuracy": _share([r["route_ok"] for r in rows]),
            "answer_accuracy": answer,
            "questions": n,
            "latency_ms_p95": {k: p95(k) for k in ("documents", "rows", "status")},
            "baseline_documents_only": {
                "routing_accuracy": _share([r["expect"] == "documents" for r in rows]),
                "answer_accuracy": baseline,
                "latency_ms_p95": round(percentile([r["baseline_ms"] for r in rows], 95), 1),
            },
            "answer_accuracy_vs_baseline": round(answer / baseline, 2) if baseline else None,
            "by_kind": by_kind,
            "files_ingested": files,
            "files_failed": failed,
            "misses": [
                {k: r[k] for k in ("id", "expect", "routed", "answer")}
                for r in rows
                if not (r["route_ok"] and r["answer_ok"])
            ],
        }
    }


def _share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0
