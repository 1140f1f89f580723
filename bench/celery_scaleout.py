"""Celery scale-out: ingest throughput through `ragline worker` with 1 and then 2 worker
processes on one queue (a real Redis broker), same documents, same machine, same run.

    eval "$(deploy/local/env.sh)"       # RAGLINE_TEST_REDIS_URL
    python bench/celery_scaleout.py --paragraphs 120 --workers 1,2 --json out.json

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
from ragline.api import create_app

KEY = {"Authorization": "Bearer bench-key"}
ROOT = Path(__file__).resolve().parents[1]


def _paragraphs(path: Path, n: int) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = [p["context"] for art in data["data"] for p in art["paragraphs"]]
    return out[:n]


def _run(redis_url: str, texts: list[str], concurrency: int, workdir: Path) -> dict[str, Any]:
    queue = f"ragline-bench-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=workdir / "data",
        api=ApiSettings(keys=[ApiKey(key="bench-key", user="bench", can_write=True)]),
        worker=WorkerSettings(broker_url=redis_url, result_backend=redis_url),
    )
    env = dict(
        os.environ,
        RAGLINE_DATA_DIR=str(settings.data_dir),
        RAGLINE_WORKER__BROKER_URL=redis_url,
        RAGLINE_WORKER__RESULT_BACKEND=redis_url,
    )
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
        try:
            started = time.monotonic()
            pending = set(jobs)
            failed = 0
            while pending:
                for job_id in list(pending):
                    job = client.get(f"/v1/jobs/{job_id}", headers=KEY).json()
                    if job.get("done"):
                        pending.discard(job_id)
                        failed += job.get("state") != "searchable"
                time.sleep(0.2)
            seconds = time.monotonic() - started
        finally:
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
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/cmrc2018/train.json")
    ap.add_argument("--paragraphs", type=int, default=120)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    redis_url = os.environ.get("RAGLINE_TEST_REDIS_URL") or os.environ.get(
        "RAGLINE_WORKER__BROKER_URL", ""
    )
    if not redis_url:
        sys.exit('set RAGLINE_TEST_REDIS_URL (eval "$(deploy/local/env.sh)")')
    texts = _paragraphs(args.corpus, args.paragraphs)
    runs = []
    for n in (int(x) for x in args.workers.split(",")):
        with tempfile.TemporaryDirectory(prefix="ragline-celery-") as tmp:
            run = _run(redis_url, texts, n, Path(tmp))
        print(
            f"{n} worker process(es): {run['documents_per_s']} documents/s "
            f"({run['documents']} in {run['seconds']} s, {run['failed']} failed)",
            flush=True,
        )
        runs.append(run)
    base = runs[0]["documents_per_s"]
    result = {"runs": runs, "ratio_vs_first": [round(r["documents_per_s"] / base, 2) for r in runs]}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
