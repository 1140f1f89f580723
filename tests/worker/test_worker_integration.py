"""Upload -> Redis -> Celery worker process -> searchable, with crashes and poison files."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections import Counter

import pytest

from core.settings import Settings
from ragline.app import Ragline
from tests.worker.conftest import Service, dense_payload_ids

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def _doc(fact: str, padding: int = 1) -> bytes:
    filler = "\n\n".join(
        f"Section {i} discusses routine maintenance item {i} of the facility."
        for i in range(padding)
    )
    return f"# Report\n\n{fact}\n\n{filler}\n".encode()


def test_upload_becomes_searchable_through_a_worker(service: Service) -> None:
    name = f"kestrel-{uuid.uuid4().hex[:6]}.md"
    up = service.upload(name, _doc("The kestrel turbine spins at 3,450 rpm."), title="Kestrel")
    assert up["state"] == "queued"
    job = service.wait(up["job_id"])
    assert job["state"] == "searchable", job
    answer = service.ask("How fast does the kestrel turbine spin?")
    assert "3,450 rpm" in answer["answer"]
    assert answer["citations"][0]["source"] == f"upload:{name}"
    ready = service.client.get("/readyz").json()
    assert ready["checks"]["broker"]["ok"], ready


def test_poison_file_fails_with_reason_and_the_batch_completes(service: Service) -> None:
    batch = uuid.uuid4().hex[:10]
    good = [
        service.upload(
            f"ok{i}.md", _doc(f"Good fact {i}: the quill index is {i * 7}."), batch_id=batch
        )
        for i in range(3)
    ]
    poison = service.upload("poison.pdf", b"%PDF-1.7\n1 0 obj << garbage", batch_id=batch)
    for up in [*good, poison]:
        service.wait(up["job_id"])
    view = service.client.get(
        "/v1/jobs", headers={"X-API-Key": "worker-test-key"}, params={"batch_id": batch}
    ).json()
    assert view["total"] == 4 and view["done"]
    assert view["states"] == {"failed": 1, "searchable": 3}
    failed = next(j for j in view["jobs"] if j["state"] == "failed")
    assert failed["job_id"] == poison["job_id"] and failed["reason"]
    assert failed["attempts"] == 1  # a parse failure is final: not retried


def test_cached_answer_is_not_served_after_an_update(service: Service) -> None:
    name = f"rate-{uuid.uuid4().hex[:6]}.md"
    q = "What is the ferrowisp exchange rate?"
    service.wait(service.upload(name, _doc("The ferrowisp exchange rate is 1.25."))["job_id"])
    assert "1.25" in service.ask(q)["answer"]
    assert service.ask(q)["cached"] is True

    job = service.wait(service.upload(name, _doc("The ferrowisp exchange rate is 1.75."))["job_id"])
    assert job["state"] == "searchable"
    after = service.ask(q)
    assert after["cached"] is False
    assert "1.75" in after["answer"] and "1.25" not in after["answer"]


def test_worker_killed_mid_ingest_indexes_exactly_once_after_restart(service: Service) -> None:
    # Big enough that parsing + embedding take a while: the kill lands mid-task.
    body = _doc("The obsidian archive holds 8,812 ledgers.", padding=4000)
    up = service.upload("obsidian.md", body)
    deadline = time.monotonic() + 60
    while service.job(up["job_id"])["state"] == "queued":
        assert time.monotonic() < deadline, "the worker never started the job"
        time.sleep(0.02)
    assert service.job(up["job_id"])["state"] in ("parsing", "indexing")
    service.worker.kill()
    assert service.job(up["job_id"])["state"] in ("parsing", "indexing")

    service.worker.start()  # the unacknowledged message is delivered again
    job = service.wait(up["job_id"], timeout_s=120)
    assert job["state"] == "searchable", job
    assert job["attempts"] >= 2  # proof the task really ran again after the kill
    assert "8,812" in service.ask("How many ledgers does the obsidian archive hold?")["answer"]

    service.worker.stop()
    data = service.settings.data_dir
    rag = Ragline(Settings(data_dir=data))
    try:
        meta = rag.stores.metadata
        version = meta.current_version(up["doc_id"])
        assert version == up["version"]
        expected = set(meta.version_content_ids(up["doc_id"], version))
        assert [v.status for v in meta.versions(up["doc_id"])] == ["current"]
        assert all(d.ok for d in rag.check()), rag.check()
    finally:
        rag.close()
    # Each content_id exactly once per store, counted in each store's own storage.
    dense = Counter(dense_payload_ids(data))
    assert {c for c in expected if dense[c] != 1} == set()
    with sqlite3.connect(data / "ragline.db") as db:
        kw = Counter(r[0] for r in db.execute("SELECT content_id FROM kw_chunks"))
        fts_rows = db.execute("SELECT count(*) FROM kw_fts").fetchone()[0]
        graph = Counter(r[0] for r in db.execute("SELECT content_id FROM g_chunk"))
    assert {c for c in expected if kw[c] != 1} == set()
    assert fts_rows == sum(kw.values())
    assert {c for c in expected if graph[c] != 1} == set()
