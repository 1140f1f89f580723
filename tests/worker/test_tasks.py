"""Task semantics without a broker: retries with backoff, failures recorded, idempotence."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.ids import doc_id_for, version_of
from core.settings import Settings
from core.types import Principal
from indexing.protocols import JobRecord
from indexing.sync import SyncReport
from ragline.app import Ragline
from ragline.events import IndexEvent, LocalEventBus
from ragline.worker.runner import run_with_retries
from ragline.worker.tasks import IngestSpec, TaskContext


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[TaskContext]:
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    yield TaskContext(rag=rag, events=LocalEventBus())
    rag.close()


def _job(ctx: TaskContext, job_id: str, kind: str = "ingest") -> None:
    ctx.rag.stores.metadata.create_job(JobRecord(job_id=job_id, kind=kind, state="queued"))


def _spec(path: Path, name: str) -> dict[str, object]:
    return IngestSpec(
        path=str(path), source=f"upload:{name}", version=version_of(path.read_bytes())
    ).to_dict()


def test_store_outage_is_retried_then_recorded_as_failed(
    ctx: TaskContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def down() -> SyncReport:
        calls.append(1)
        return SyncReport(errors={"dense": "StoreError: disk unavailable"})

    monkeypatch.setattr(ctx.rag, "sync", down)
    _job(ctx, "j-outage", "sync")
    assert run_with_retries(ctx, "sync", "j-outage", {"job_id": "j-outage"}, 2, 0.01) is None
    assert len(calls) == 3  # first try + 2 retries
    job = ctx.rag.stores.metadata.job("j-outage")
    assert job is not None and job.state == "failed"
    assert "gave up after 3 attempts" in job.reason and "disk unavailable" in job.reason


def test_transient_outage_recovers_on_retry(
    ctx: TaskContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_sync = ctx.rag.sync
    outages = [SyncReport(errors={"keyword": "OperationalError: database is locked"})]
    monkeypatch.setattr(ctx.rag, "sync", lambda: outages.pop() if outages else real_sync())
    f = tmp_path / "a.md"
    f.write_text("# A\n\nThe vantablue index is 77.\n", encoding="utf-8")
    _job(ctx, "j-retry")
    out = run_with_retries(
        ctx, "ingest", "j-retry", {"job_id": "j-retry", "spec": _spec(f, "a.md")}, 3, 0.01
    )
    assert out is not None and out["state"] == "searchable"
    job = ctx.rag.stores.metadata.job("j-retry")
    assert job is not None and job.state == "searchable" and job.attempts == 2


def test_ingest_is_idempotent_and_announces_once(ctx: TaskContext, tmp_path: Path) -> None:
    seen: list[IndexEvent] = []
    ctx.events.subscribe(seen.append)
    f = tmp_path / "b.md"
    f.write_text("# B\n\nThe cobalt quota is 5 tonnes.\n", encoding="utf-8")
    for job_id in ("j1", "j2"):  # the same message delivered twice
        _job(ctx, job_id)
        out = run_with_retries(
            ctx, "ingest", job_id, {"job_id": job_id, "spec": _spec(f, "b.md")}, 0
        )
        assert out is not None and out["state"] == "searchable"
    assert [e.kind for e in seen] == ["indexed"]
    doc_id = doc_id_for("upload:b.md")
    assert seen[0].doc_id == doc_id
    assert [v.status for v in ctx.rag.stores.metadata.versions(doc_id)] == ["current"]
    assert all(d.ok for d in ctx.rag.check())


def test_a_job_delivered_too_often_is_failed_not_redelivered_forever(
    ctx: TaskContext, tmp_path: Path
) -> None:
    f = tmp_path / "c.md"
    f.write_text("# C\n\nText.\n", encoding="utf-8")
    ctx.max_attempts = 2
    ctx.rag.stores.metadata.create_job(
        JobRecord(job_id="j-lost", kind="ingest", state="parsing", attempts=2)
    )
    out = run_with_retries(
        ctx, "ingest", "j-lost", {"job_id": "j-lost", "spec": _spec(f, "c.md")}, 0
    )
    assert out is not None and out["state"] == "failed"
    job = ctx.rag.stores.metadata.job("j-lost")
    assert job is not None and job.state == "failed" and "deliveries" in job.reason


def test_ingest_writes_the_document_the_api_chose(ctx: TaskContext, tmp_path: Path) -> None:
    """An upload key may hold several documents: the task stages into the one named by
    `target` (chosen by Ragline.upload_target), next to the key's other documents."""
    f = tmp_path / "shared.md"
    f.write_text("# S\n\nThe amber quota is 7 tonnes.\n", encoding="utf-8")
    _job(ctx, "j-a")
    run_with_retries(ctx, "ingest", "j-a", {"job_id": "j-a", "spec": _spec(f, "shared.md")}, 0)
    g = tmp_path / "other.md"
    g.write_text("# S\n\nThe amber quota is 9 tonnes.\n", encoding="utf-8")
    spec = {**_spec(g, "shared.md"), "target": "feedfacefeedface"}
    _job(ctx, "j-b")
    out = run_with_retries(ctx, "ingest", "j-b", {"job_id": "j-b", "spec": spec}, 0)
    assert out is not None and out["state"] == "searchable"
    meta = ctx.rag.stores.metadata
    docs = meta.documents_at("upload:shared.md")
    assert {d.doc_id for d in docs} == {doc_id_for("upload:shared.md"), "feedfacefeedface"}
    assert meta.current_version("feedfacefeedface") == version_of(g.read_bytes())
    assert meta.current_version(doc_id_for("upload:shared.md")) == version_of(f.read_bytes())
    assert meta.job("j-b").doc_id == "feedfacefeedface"  # type: ignore[union-attr]
    assert all(d.ok for d in ctx.rag.check())


def test_a_failed_upload_keeps_bytes_another_document_still_stores(
    ctx: TaskContext, tmp_path: Path
) -> None:
    """Uploads are content-addressed: when one document's ingestion of some bytes fails,
    the stored file stays while any live document holds that version, however old the
    job that put it there (it may have left the recent job list long ago), and while
    another upload that accepted the same bytes after the failed job was queued may not
    have queued its own."""
    from ragline.worker.tasks import release_upload

    uploads = ctx.rag.uploads
    uploads.dir.mkdir(parents=True)
    data = b"# S\n\nThe cobalt quota is 4 tonnes.\n"
    f = uploads.dir / f"{hashlib.sha256(data).hexdigest()}.md"  # as the API stores it
    f.write_bytes(data)
    _job(ctx, "j-first")
    run_with_retries(ctx, "ingest", "j-first", {"job_id": "j-first", "spec": _spec(f, "a.md")}, 0)
    meta = ctx.rag.stores.metadata
    # The first document's job is no longer among the recent ones.
    meta.update_job("j-first", "failed", "archived")
    spec = IngestSpec(
        path=str(f), source="upload:b.md", version=version_of(f.read_bytes()), target="b" * 16
    )
    _job(ctx, "j-b")
    release_upload(ctx, "j-b", spec)
    assert f.exists()
    assert meta.delete_document(doc_id_for("upload:a.md"), [])
    uploads.keep(f)  # another upload accepts the same bytes: its job is not queued yet
    release_upload(ctx, "j-b", spec)
    assert f.exists()
    long_ago = time.time() - 3600
    os.utime(f, (long_ago, long_ago))  # accepted before "j-b" was queued, and not since
    release_upload(ctx, "j-b", spec)
    assert not f.exists()


def test_a_delete_during_an_ingest_wins(
    ctx: TaskContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The delete came after the new version was accepted: the version must not bring the
    document back, and its job must not say "searchable"."""
    import threading

    import ragline.ingest as ingest

    first, second = tmp_path / "v1.md", tmp_path / "v2.md"
    first.write_text("# A\n\nThe vantablue index is 77.\n", encoding="utf-8")
    second.write_text("# A\n\nThe vantablue index is 78.\n", encoding="utf-8")
    _job(ctx, "j-v1")
    assert run_with_retries(
        ctx, "ingest", "j-v1", {"job_id": "j-v1", "spec": _spec(first, "a.md")}, 0
    )
    doc_id = doc_id_for("upload:a.md")
    prepared, deleted = threading.Event(), threading.Event()
    real = ingest.DocumentIngestor._prepare

    def prepare_then_wait(self: ingest.DocumentIngestor, *args: object) -> object:
        out = real(self, *args)  # type: ignore[arg-type]
        prepared.set()
        deleted.wait(10)
        return out

    monkeypatch.setattr(ingest.DocumentIngestor, "_prepare", prepare_then_wait)
    _job(ctx, "j-v2")
    worker = threading.Thread(
        target=run_with_retries,
        args=(ctx, "ingest", "j-v2", {"job_id": "j-v2", "spec": _spec(second, "a.md")}, 0),
    )
    worker.start()
    assert prepared.wait(10)
    ctx.rag.stores.metadata.delete_document(doc_id, ctx.rag.stores.derived)
    deleted.set()
    worker.join(10)
    job = ctx.rag.stores.metadata.job("j-v2")
    assert job is not None and job.state == "failed" and "deleted" in job.reason
    assert ctx.rag.stores.metadata.document(doc_id) is None
    assert not ctx.rag.search("vantablue index", Principal("p", superuser=True)).hits


def _upload_job(ctx: TaskContext, job_id: str, doc_id: str) -> None:
    ctx.rag.stores.metadata.create_job(
        JobRecord(job_id=job_id, kind="ingest", state="queued", doc_id=doc_id)
    )
    time.sleep(0.01)  # the next job is accepted strictly later


def test_the_newest_accepted_upload_stays_current(ctx: TaskContext, tmp_path: Path) -> None:
    """An upload that runs after a newer one of the same document (its worker was lost
    and it was redelivered, or a second worker took the newer one) does not replace it:
    it ends superseded, and the newer content stays current."""
    old, new = tmp_path / "old.md", tmp_path / "new.md"
    old.write_text("# Plan\n\nThe turbine is inspected every 31 hours.\n", encoding="utf-8")
    new.write_text("# Plan\n\nThe turbine is inspected every 37 hours.\n", encoding="utf-8")
    doc_id = doc_id_for("upload:plan.md")
    _upload_job(ctx, "j-old", doc_id)
    _upload_job(ctx, "j-new", doc_id)
    for job_id, f in (("j-new", new), ("j-old", old)):  # the older one runs last
        spec = _spec(f, "plan.md")
        run_with_retries(ctx, "ingest", job_id, {"job_id": job_id, "spec": spec}, 0)
    meta = ctx.rag.stores.metadata
    assert meta.job("j-new").state == "searchable"  # type: ignore[union-attr]
    stale = meta.job("j-old")
    assert stale is not None and stale.state == "superseded" and "j-new" in stale.reason
    assert meta.current_version(doc_id) == version_of(new.read_bytes())
    answer = ctx.rag.ask("How often is the turbine inspected?", Principal("ops", superuser=True))
    assert "37 hours" in answer.text and "31" not in answer.text


def test_an_upload_overtaken_while_it_is_parsed_is_not_staged(
    ctx: TaskContext, tmp_path: Path
) -> None:
    """The newer upload is accepted (and done) while the older one is being parsed: the
    older one checks again before staging, and stays out."""
    old, new = tmp_path / "old.md", tmp_path / "new.md"
    old.write_text("# Plan\n\nThe turbine is inspected every 41 hours.\n", encoding="utf-8")
    new.write_text("# Plan\n\nThe turbine is inspected every 43 hours.\n", encoding="utf-8")
    doc_id = doc_id_for("upload:plan.md")
    _upload_job(ctx, "j-slow", doc_id)
    ingest = ctx.rag.ingestor.ingest

    def overtaken(*args: object, **kw: object) -> object:
        if kw.get("superseded") is not None and not ctx.rag.stores.metadata.job("j-fast"):
            _upload_job(ctx, "j-fast", doc_id)
            spec = _spec(new, "plan.md")
            run_with_retries(ctx, "ingest", "j-fast", {"job_id": "j-fast", "spec": spec}, 0)
        return ingest(*args, **kw)  # type: ignore[arg-type]

    ctx.rag.ingestor.ingest = overtaken  # type: ignore[method-assign]
    spec = _spec(old, "plan.md")
    out = run_with_retries(ctx, "ingest", "j-slow", {"job_id": "j-slow", "spec": spec}, 0)
    assert out is not None and out["state"] == "superseded", out
    assert ctx.rag.stores.metadata.current_version(doc_id) == version_of(new.read_bytes())


def test_a_redelivered_job_that_was_indexed_already_does_not_say_unchanged(
    ctx: TaskContext, tmp_path: Path
) -> None:
    """Its worker was lost after the version was staged: the redelivery finds the bytes
    current, and the job says searchable without calling the upload "unchanged"."""
    f = tmp_path / "d.md"
    f.write_text("# D\n\nThe zinc quota is 3 tonnes.\n", encoding="utf-8")
    _job(ctx, "j-first")
    run_with_retries(ctx, "ingest", "j-first", {"job_id": "j-first", "spec": _spec(f, "d.md")}, 0)
    ctx.rag.stores.metadata.create_job(
        JobRecord(job_id="j-again", kind="ingest", state="indexing", attempts=1)
    )
    out = run_with_retries(
        ctx, "ingest", "j-again", {"job_id": "j-again", "spec": _spec(f, "d.md")}, 0
    )
    assert out is not None and out["state"] == "searchable"
    assert ctx.rag.stores.metadata.job("j-again").reason == ""  # type: ignore[union-attr]
