"""A real Redis (RAGLINE_TEST_REDIS_URL, from `deploy/local/services up redis`) and real
`ragline worker` processes. The API runs in this process (TestClient) with the Celery
runner, so it talks to the worker only through Redis and the shared data directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.settings import ApiKey, ApiSettings, Settings, WorkerSettings
from ragline.api import create_app
from ragline.bench.processes import stop_group

KEY = {"Authorization": "Bearer worker-test-key"}
ROOT = Path(__file__).resolve().parents[2]


def service_settings(data_dir: Path, redis_url: str) -> Settings:
    return Settings(
        data_dir=data_dir,
        api=ApiSettings(keys=[ApiKey(key="worker-test-key", user="tester", can_write=True)]),
        worker=WorkerSettings(broker_url=redis_url, result_backend=redis_url, max_retries=3),
    )


class WorkerProcess:
    """`ragline worker` in its own process group, so SIGKILL takes the pool with it."""

    def __init__(self, settings: Settings, queue: str, log: Path) -> None:
        self.settings = settings
        self.queue = queue
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            RAGLINE_DATA_DIR=str(self.settings.data_dir),
            RAGLINE_WORKER__BROKER_URL=self.settings.worker.broker_url,
            RAGLINE_WORKER__RESULT_BACKEND=self.settings.worker.result_backend,
            RAGLINE_WORKER__MAX_RETRIES=str(self.settings.worker.max_retries),
        )
        return env

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "ragline.worker.main",
                    "worker",
                    "--queue",
                    self.queue,
                    "--visibility-timeout",
                    "3",
                ],
                cwd=ROOT,
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, grace_s=20)


class Service:
    def __init__(self, client: TestClient, worker: WorkerProcess, settings: Settings) -> None:
        self.client = client
        self.worker = worker
        self.settings = settings

    def upload(self, name: str, body: bytes, **form: Any) -> dict[str, Any]:
        r = self.client.post("/v1/documents", headers=KEY, files={"file": (name, body)}, data=form)
        assert r.status_code == 202, r.text
        return dict(r.json())

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self.client.get(f"/v1/jobs/{job_id}", headers=KEY).json())

    def wait(self, job_id: str, timeout_s: float = 90.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        job: dict[str, Any] = {}
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if job.get("done"):
                return job
            time.sleep(0.05)
        log = self.worker.log.read_text(errors="replace")[-3000:]
        raise AssertionError(f"job {job_id} not done in {timeout_s}s: {job}\n--- worker log\n{log}")

    def ask(self, question: str) -> dict[str, Any]:
        r = self.client.post("/v1/ask", headers=KEY, json={"question": question})
        assert r.status_code == 200, r.text
        return dict(r.json())


@pytest.fixture
def service(redis_url: str, tmp_path: Path) -> Iterator[Service]:
    """A fresh data dir, a queue of its own (tests never see each other's messages), one
    worker process, and the API in this process."""
    queue = f"ragline-test-{uuid.uuid4().hex[:8]}"
    settings = service_settings(tmp_path / "data", redis_url)
    worker = WorkerProcess(settings, queue, tmp_path / "worker.log")
    worker.start()
    try:
        with TestClient(create_app(settings, queue=queue, cache_ttl_s=300)) as client:
            yield Service(client, worker, settings)
    finally:
        worker.stop()


def dense_payload_ids(data_dir: Path) -> list[str]:
    meta = json.loads((data_dir / "dense" / "dense.json").read_text(encoding="utf-8"))
    return [row[0] for row in meta["payload"]]
