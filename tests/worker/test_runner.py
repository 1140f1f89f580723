"""The in-process runner keeps each job's task, so that the jobs a stopped or killed
server accepted are taken up by the next one (a broker would have kept them)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.ids import version_of
from core.settings import Settings
from indexing.protocols import JobRecord
from ragline.app import Ragline
from ragline.events import LocalEventBus
from ragline.worker.runner import InProcessRunner, process_gone, process_token
from ragline.worker.tasks import IngestSpec, TaskContext


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[TaskContext]:
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    yield TaskContext(rag=rag, events=LocalEventBus())
    rag.close()


def _ended_process_token() -> str:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    token = process_token(child.pid)
    child.wait()
    return token


def test_a_process_is_gone_once_it_ended_or_its_pid_was_reused() -> None:
    assert not process_gone(process_token())
    assert process_gone(_ended_process_token())
    host, pid, started = process_token().rsplit(":", 2)
    assert started  # /proc gives the start time here
    assert process_gone(f"{host}:{pid}:{int(started) + 1}")  # this pid, another process
    # Another host's process is never known to be gone; nor is a token that names none.
    assert not process_gone(f"elsewhere-{socket.gethostname()}:1:1")
    assert not process_gone("")


def _held_ingest(ctx: TaskContext, tmp_path: Path, job_id: str, runner: str) -> None:
    f = tmp_path / f"{job_id}.md"
    f.write_text(f"# {job_id}\n\nThe {job_id} quota is 7 crates.\n", encoding="utf-8")
    spec = IngestSpec(path=str(f), source=f"upload:{job_id}.md", version=version_of(f.read_bytes()))
    meta = ctx.rag.stores.metadata
    meta.create_job(JobRecord(job_id=job_id, kind="ingest", state="queued"))
    task = {"task": "ingest", "kwargs": {"spec": spec.to_dict()}}
    meta.hold_job_task(job_id, runner, json.dumps(task))


def test_a_stopped_servers_jobs_are_taken_up_once_a_live_ones_are_not(
    ctx: TaskContext, tmp_path: Path
) -> None:
    _held_ingest(ctx, tmp_path, "orphan", _ended_process_token())
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _held_ingest(ctx, tmp_path, "alive", process_token(live.pid))
        first, second = InProcessRunner(ctx, 0), InProcessRunner(ctx, 0)
        try:
            assert first.resume() == 1
            assert second.resume() == 0  # taken already: by a live process
            first.drain()
        finally:
            first.close()
            second.close()
    finally:
        live.kill()
        live.wait()
    meta = ctx.rag.stores.metadata
    orphan, alive = meta.job("orphan"), meta.job("alive")
    assert orphan is not None and orphan.state == "searchable", orphan
    assert alive is not None and alive.state == "queued"


def test_a_submitted_job_keeps_its_task_until_it_is_done(ctx: TaskContext, tmp_path: Path) -> None:
    f = tmp_path / "kept.md"
    f.write_text("# Kept\n\nThe kept quota is 3 crates.\n", encoding="utf-8")
    spec = IngestSpec(path=str(f), source="upload:kept.md", version=version_of(f.read_bytes()))
    ctx.rag.stores.metadata.create_job(JobRecord(job_id="kept", kind="ingest", state="queued"))
    runner = InProcessRunner(ctx, 0)
    try:
        runner.submit("ingest", "kept", spec=spec.to_dict())
        [(job_id, holder, task)] = ctx.rag.stores.metadata.held_job_tasks(["queued", "parsing"])
        assert (job_id, holder) == ("kept", runner.token) and '"ingest"' in task
        runner.drain()
    finally:
        runner.close()
    assert ctx.rag.stores.metadata.held_job_tasks(["queued", "parsing", "indexing"]) == []
