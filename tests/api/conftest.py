"""The API on the embedded default: in-process task runner, no Redis, real stores."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.settings import ApiKey, ApiSettings, Settings
from ragline.api import create_app

ALICE = {"Authorization": "Bearer alice-key"}  # no tags: sees public documents only
FIN = {"X-API-Key": "fin-key"}  # holds the "finance" tag
READER = {"X-API-Key": "reader-key"}  # may read, not upload or delete


def api_settings(data_dir: Path, **api: Any) -> Settings:
    return Settings(
        data_dir=data_dir,
        api=ApiSettings(
            keys=[
                ApiKey(key="alice-key", user="alice", can_write=True),
                ApiKey(
                    key="fin-key", user="fred", roles=["analyst"], tags=["finance"], can_write=True
                ),
                ApiKey(key="reader-key", user="rita"),
            ],
            **api,
        ),
    )


@pytest.fixture(scope="package")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = api_settings(
        tmp_path_factory.mktemp("api-data"), max_upload_mb=0.05, max_query_chars=200, max_top_k=5
    )
    app = create_app(settings, cache_ttl_s=300)
    # Server errors must come back as 500 responses, as a real client would see them.
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def wait_job(client: TestClient, job_id: str, headers: dict[str, str], timeout_s: float = 60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
        if job.get("done"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} not done within {timeout_s}s: {job}")


def upload(
    client: TestClient,
    name: str,
    body: bytes,
    headers: dict[str, str],
    **form: Any,
) -> dict[str, Any]:
    r = client.post("/v1/documents", headers=headers, files={"file": (name, body)}, data=form)
    assert r.status_code == 202, r.text
    return dict(r.json())


class HeldRunner:
    """A task queue that only records: the tasks run later (a worker that comes later, or
    on another host), when the test runs them."""

    def __init__(self) -> None:
        self.tasks: list[tuple[str, str, dict[str, Any]]] = []

    def submit(self, task: str, job_id: str, **kwargs: Any) -> None:
        self.tasks.append((task, job_id, kwargs))

    def ping(self) -> str | None:
        return None

    def resume(self) -> int:
        return 0

    def close(self) -> None:
        pass
