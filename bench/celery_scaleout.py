"""Celery scale-out: ingest throughput through `ragline worker` with 1 and then 2 worker
processes on one queue (a real Redis broker), same documents, same machine, same run.

    eval "$(deploy/local/env.sh)"       # RAGLINE_TEST_REDIS_URL
    python bench/celery_scaleout.py --paragraphs 120 --workers 1,2 --json out.json

With `--profile production` the stores are PostgreSQL (a scratch database per run),
Elasticsearch (keyword and, with RAGLINE_BACKENDS__DENSE=elasticsearch, the vectors) and
Neo4j, taken from RAGLINE_METADATA_URL and RAGLINE_BACKENDS__* as `ragline bench
--profile production` does; the workers get the same settings through the environment.

Documents are CMRC train paragraphs written as Markdown files, all uploaded through the API
(in this process, Celery runner) before the workers start; the clock runs from the
workers' start (model load included) until every job is done. Each run has a fresh data
directory and queue. Prints documents/s and chunks/s per worker count and the ratio to
one worker.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from core.settings import ApiKey, ApiSettings, Settings, WorkerSettings
from indexing.stores.sql_metadata import SqlMetadataStore
from ragline.api import create_app
from ragline.bench.cli import _settings as bench_settings
from ragline.jobs import FAILED, TERMINAL

KEY = {"Authorization": "Bearer bench-key"}
ROOT = Path(__file__).resolve().parents[1]


def _paragraphs(path: Path, n: int) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = [p["context"] for art in data["data"] for p in art["paragraphs"]]
    return out[:n]


def _worker_env(settings: Settings, redis_url: str) -> dict[str, str]:
    """The environment that makes `ragline worker` open the stores `settings` names."""
    env = dict(
        os.environ,
        RAGLINE_DATA_DIR=str(settings.data_dir),
        RAGLINE_WORKER__BROKER_URL=redis_url,
        RAGLINE_WORKER__RESULT_BACKEND=redis_url,
    )
    if settings.metadata_url:
        env["RAGLINE_METADATA_URL"] = settings.metadata_url
    for name, value in settings.backends.model_dump().items():
        env[f"RAGLINE_BACKENDS__{name.upper()}"] = (
            str(value).lower() if isinstance(value, bool) else str(value)
        )
    return env


def _run(redis_url: str, texts: list[str], concurrency: int, base: Settings) -> dict[str, Any]:
    queue = f"ragline-bench-{uuid.uuid4().hex[:8]}"
    workdir = base.data_dir.parent
    settings = base.model_copy(
        update={
            "api": ApiSettings(keys=[ApiKey(key="bench-key", user="bench", can_write=True)]),
            "worker": WorkerSettings(broker_url=redis_url, result_backend=redis_url),
        }
    )
    env = _worker_env(settings, redis_url)
    log = (workdir / "worker.log").open("ab")
    with TestClient(create_app(settings, queue=queue, cache_ttl_s=0)) as client:
        # Every document is queued before the workers start: the run measures the
        # workers, not the client's upload rate.
        t0 = time.monotonic()
        jobs = []
        for i, text in enumerate(texts):
            r = client.post(
                "/v1/documents",
                headers=KEY,
                files={"file": (f"p{i:05d}.md", f"# P{i}\n\n{text}\n".encode())},
            )
            r.raise_for_status()
            jobs.append(r.json()["job_id"])
        upload_s = time.monotonic() - t0
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ragline.worker.main",
                "worker",
                "--queue",
                queue,
                "--concurrency",
                str(concurrency),
                "--log-level",
                "WARNING",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # Progress is read as one count query on the metadata store: polling each job
        # through the API would spend this process's (and so the workers') CPU.
        meta = SqlMetadataStore(settings.resolved_metadata_url)
        try:
            started = time.monotonic()
            first = 0.0
            while True:
                counts = meta.job_counts()
                finished = sum(n for state, n in counts.items() if state in TERMINAL)
                if finished and not first:
                    first = time.monotonic()
                if finished >= len(jobs):
                    break
                time.sleep(0.25)
            seconds = time.monotonic() - started
            failed = counts.get(FAILED, 0)
            steady = time.monotonic() - first
        finally:
            meta.close()
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
            log.close()
    return {
        "workers": concurrency,
        "documents": len(texts),
        "failed": failed,
        "upload_seconds": round(upload_s, 1),
        "seconds": round(seconds, 1),  # from the workers' start (model load included)
        "documents_per_s": round(len(texts) / seconds, 2),
        # From the first document done to the last: the workers' rate once models are loaded.
        "steady_documents_per_s": round((len(texts) - 1) / max(steady, 1e-3), 2),
    }


def _drop_indexes(settings: Settings) -> None:
    """Production: this run's Elasticsearch indexes and Neo4j namespace go with it."""
    if settings.profile != "production":
        return
    from ragline.app import Ragline

    rag = Ragline(settings)
    try:
        for store in (rag.stores.keyword, rag.stores.graph, rag.stores.dense):
            drop = getattr(store, "drop", None)
            if drop is not None:
                drop()
    finally:
        rag.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/cmrc2018/train.json")
    ap.add_argument("--paragraphs", type=int, default=120)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--profile", choices=("embedded", "production"), default="embedded")
    args = ap.parse_args()
    redis_url = os.environ.get("RAGLINE_TEST_REDIS_URL") or os.environ.get(
        "RAGLINE_WORKER__BROKER_URL", ""
    )
    if not redis_url:
        sys.exit('set RAGLINE_TEST_REDIS_URL (eval "$(deploy/local/env.sh)")')
    texts = _paragraphs(args.corpus, args.paragraphs)
    runs = []
    for n in (int(x) for x in args.workers.split(",")):
        with (
            tempfile.TemporaryDirectory(prefix="ragline-celery-") as tmp,
            bench_settings(Path(tmp), args.profile) as settings,
        ):
            try:
                run = _run(redis_url, texts, n, settings)
            finally:
                _drop_indexes(settings)
        print(
            f"{n} worker process(es): {run['documents_per_s']} documents/s "
            f"({run['documents']} in {run['seconds']} s, {run['failed']} failed); "
            f"{run['steady_documents_per_s']} documents/s after the first was done",
            flush=True,
        )
        runs.append(run)
    base = runs[0]["documents_per_s"]
    result = {
        "profile": args.profile,
        "runs": runs,
        "ratio_vs_first": [round(r["documents_per_s"] / base, 2) for r in runs],
        "steady_ratio_vs_first": [
            round(r["steady_documents_per_s"] / runs[0]["steady_documents_per_s"], 2) for r in runs
        ],
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
