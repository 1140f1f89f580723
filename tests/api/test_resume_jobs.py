"""Uploads a server accepted (202) and had not finished when it stopped or was killed are
taken up by the next server to start on the same data: they used to stay queued, or
parsing, forever."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from ragline.api import create_app
from ragline.worker.runner import process_token
from tests.api.conftest import ALICE, HeldRunner, api_settings, upload, wait_job


def test_an_upload_left_by_a_stopped_server_is_searchable_after_a_restart(tmp_path: Path) -> None:
    settings = api_settings(tmp_path / "data")
    held = HeldRunner()  # accepts, never runs: the server stops before it does
    with TestClient(create_app(settings, runner=held)) as client:
        up = upload(client, "ferry.txt", b"The Snorkelwick ferry departs at 6 am.\n", ALICE)
        assert up["state"] == "queued"
        # As the in-process runner keeps it, under a process that has ended since.
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        gone = process_token(child.pid)
        child.wait()
        [(task, job_id, kwargs)] = held.tasks
        meta = client.app.state.ctx.rag.stores.metadata  # type: ignore[attr-defined]
        meta.hold_job_task(job_id, gone, json.dumps({"task": task, "kwargs": kwargs}))
    with TestClient(create_app(settings)) as restarted:
        job = wait_job(restarted, up["job_id"], ALICE)
        assert job["state"] == "searchable", job
        r = restarted.post(
            "/v1/ask", headers=ALICE, json={"question": "When does the Snorkelwick ferry depart?"}
        )
        assert r.json()["covered"] and "6 am" in r.json()["answer"], r.text
