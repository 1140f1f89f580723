"""A delete of a document whose upload is still queued (no worker has taken it yet)
cancels it: the delete is the newest write, so the upload ends superseded and the
document never becomes searchable. Before, the delete answered 404 and the upload was
indexed once a worker came."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from ragline.api import create_app
from ragline.events import LocalEventBus
from ragline.worker.runner import run_with_retries
from ragline.worker.tasks import TaskContext
from tests.api.conftest import ALICE, FIN, HeldRunner, api_settings, upload


def test_deleting_a_queued_upload_cancels_it(tmp_path: Path) -> None:
    runner = HeldRunner()
    with TestClient(create_app(api_settings(tmp_path / "data"), runner=runner)) as client:
        up = upload(client, "ferry.txt", b"The Snorkelwick ferry departs at 6 am.\n", ALICE)
        assert up["state"] == "queued"
        # Someone else cannot learn of it, nor cancel it.
        assert client.delete(f"/v1/documents/{up['doc_id']}", headers=FIN).status_code == 404
        r = client.delete(f"/v1/documents/{up['doc_id']}", headers=ALICE)
        assert r.status_code == 202, r.text
        assert r.json()["state"] == "deleted" and "cancelled 1 upload" in r.json()["reason"]
        rag = client.app.state.ctx.rag  # type: ignore[attr-defined]
        ctx = TaskContext(rag=rag, events=LocalEventBus())
        for task, job_id, kwargs in runner.tasks:  # the worker comes
            run_with_retries(ctx, task, job_id, {"job_id": job_id, **kwargs}, 0)
        job = client.get(f"/v1/jobs/{up['job_id']}", headers=ALICE).json()
        assert job["state"] == "superseded" and "a delete" in job["reason"], job
        assert rag.stores.metadata.document(up["doc_id"]) is None
        answer = client.post(
            "/v1/ask", json={"question": "When does the Snorkelwick ferry depart?"}, headers=ALICE
        ).json()
        assert not answer["covered"]
