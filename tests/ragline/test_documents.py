"""Uploads and deletes as jobs (ragline/documents.py): the rules every door shares, with
the refusals each door maps to its own status."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import NotFound, TooLarge, Unavailable
from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.documents import DocumentJobs, UploadForm, split_tags
from ragline.jobs import DELETED, FAILED, QUEUED
from ragline.writes import WriteDenied

WRITER = Principal("wade", tags=frozenset({"finance"}), can_write=True)
OUTSIDER = Principal("olga", can_write=True)
READER = Principal("rita", tags=frozenset({"finance"}))


class Runner:
    """A task queue that records what it was given, or is down."""

    def __init__(self) -> None:
        self.submitted: list[tuple[str, str, dict[str, Any]]] = []
        self.down = False

    def submit(self, task: str, job_id: str, **kwargs: Any) -> None:
        if self.down:
            raise ConnectionError("broker refused the connection")
        self.submitted.append((task, job_id, kwargs))

    def ping(self) -> str | None:
        return "down" if self.down else None

    def close(self) -> None:
        pass


@pytest.fixture()
def rag(tmp_path: Path) -> Iterator[Ragline]:
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        yield rag
    finally:
        rag.close()


def _jobs(rag: Ragline, runner: Runner, changes: list[int], max_bytes: int = 1 << 20) -> Any:
    return DocumentJobs(rag, runner, lambda: changes.append(1), max_bytes)


def _stored(rag: Ragline) -> list[str]:
    return sorted(p.name for p in rag.uploads.dir.glob("*")) if rag.uploads.dir.is_dir() else []


def test_an_upload_is_stored_and_queued_for_its_own_document(rag: Ragline) -> None:
    runner, changes = Runner(), []
    body = b"# Plan\n\nThe budget is 40 units.\n"
    receipt = _jobs(rag, runner, changes).upload(
        WRITER, UploadForm(filename="plan.md", tags=["finance"], batch_id="b1"), io.BytesIO(body)
    )
    assert receipt.job.state == QUEUED and receipt.source == "upload:plan.md"
    assert receipt.size == len(body) and receipt.batch_id == "b1"
    [(task, job_id, kwargs)] = runner.submitted
    assert task == "ingest" and job_id == receipt.job.job_id
    spec = kwargs["spec"]
    assert spec["target"] == receipt.doc_id and spec["tags"] == ["finance"]
    assert Path(spec["path"]).read_bytes().startswith(b"# Plan")
    assert rag.stores.metadata.job(job_id).owner == "wade"  # type: ignore[union-attr]


def test_a_refused_write_stores_nothing_and_queues_nothing(rag: Ragline) -> None:
    runner, changes = Runner(), []
    jobs = _jobs(rag, runner, changes, max_bytes=64)
    with pytest.raises(WriteDenied, match="can_write"):
        jobs.upload(READER, UploadForm(filename="a.md"), io.BytesIO(b"# A\n\ntext\n"))
    with pytest.raises(WriteDenied, match="tags you hold"):
        jobs.upload(WRITER, UploadForm(filename="a.md", tags=["legal"]), io.BytesIO(b"# A\n"))
    with pytest.raises(TooLarge, match="RAGLINE_API__MAX_UPLOAD_MB"):
        jobs.upload(WRITER, UploadForm(filename="big.md"), io.BytesIO(b"x" * 65))
    assert _stored(rag) == [] and runner.submitted == []
    assert not [p for p in rag.uploads.dir.iterdir() if p.name.startswith(".upload-")]


def test_a_queue_that_is_down_fails_the_job_with_its_reason(rag: Ragline) -> None:
    runner, changes = Runner(), []
    runner.down = True
    with pytest.raises(Unavailable, match="try again later"):
        _jobs(rag, runner, changes).upload(
            WRITER, UploadForm(filename="a.md"), io.BytesIO(b"# A\n\ntext\n")
        )
    [job] = rag.stores.metadata.jobs(limit=10)
    assert job.state == FAILED and "broker refused the connection" in job.reason


def test_a_delete_unserves_at_once_and_queues_the_stores(rag: Ragline, tmp_path: Path) -> None:
    doc = tmp_path / "docs" / "ledger.md"
    doc.parent.mkdir()
    doc.write_text("# Ledger\n\nThe ledger closes on Fridays.\n", encoding="utf-8")
    [outcome], _ = rag.ingest([doc], tags=["finance"])
    runner, changes = Runner(), []
    jobs = _jobs(rag, runner, changes)
    denied = rag.metrics.acl_denials.labels(endpoint="/v1/documents", reason="hidden")
    before = denied._value.get()
    with pytest.raises(NotFound):  # hidden: the same answer as an unknown id
        jobs.delete(OUTSIDER, outcome.doc_id)
    assert denied._value.get() == before + 1
    with pytest.raises(NotFound):
        jobs.delete(WRITER, "no-such-document")
    with pytest.raises(WriteDenied, match="can_write"):  # before any lookup
        jobs.delete(READER, "no-such-document")
    assert rag.stores.metadata.document(outcome.doc_id) is not None and changes == []

    runner.down = True  # the truth is right anyway; a later sync converges
    job = jobs.delete(WRITER, outcome.doc_id)
    assert rag.stores.metadata.document(outcome.doc_id) is None and changes == [1]
    assert rag.stores.metadata.job(job.job_id).state == DELETED  # type: ignore[union-attr]


def test_tags_come_repeated_or_comma_separated() -> None:
    assert split_tags(["b, a", "a", " ", "c,"]) == ["a", "b", "c"]


def test_a_reindex_names_a_source_the_caller_sees_a_full_repair_needs_an_admin(
    rag: Ragline, tmp_path: Path
) -> None:
    doc = tmp_path / "docs" / "ledger.md"
    doc.parent.mkdir()
    doc.write_text("# Ledger\n\nThe ledger closes on Fridays.\n", encoding="utf-8")
    [outcome], _ = rag.ingest([doc], tags=["finance"])
    source = rag.stores.metadata.document(outcome.doc_id).source  # type: ignore[union-attr]
    runner, changes = Runner(), []
    jobs = _jobs(rag, runner, changes)
    with pytest.raises(WriteDenied, match="can_write"):
        jobs.sync(READER)
    with pytest.raises(WriteDenied, match="admin key"):
        jobs.reindex(WRITER, "")
    with pytest.raises(NotFound, match="no document with source"):
        jobs.reindex(OUTSIDER, source)  # hidden from it: as if there were none
    with pytest.raises(NotFound):
        jobs.reindex(WRITER, str(tmp_path / "docs"))  # a path on this server is no source
    assert runner.submitted == []

    job = jobs.reindex(WRITER, source)
    admin = Principal("ada", roles=frozenset({"admin"}), can_write=True)
    repair = jobs.reindex(admin, "")
    assert runner.submitted == [
        ("reindex", job.job_id, {"source": source}),
        ("reindex", repair.job_id, {"source": ""}),
    ]
    runner.down = True
    with pytest.raises(Unavailable):
        jobs.sync(WRITER)
    failed = [j for j in rag.stores.metadata.jobs(limit=10) if j.kind == "sync"]
    assert [(j.state, j.reason) for j in failed] == [
        (FAILED, "could not queue the sync: broker refused the connection")
    ]


def test_the_same_bytes_keep_the_format_they_were_read_as(rag: Ragline, tmp_path: Path) -> None:
    """Re-uploading unchanged bytes with another doc_type is no new reading of them: the
    text stays text (it was relabelled a PDF, served as one and matched pdf filters)."""
    body = b"plain words about Trombulator maintenance\n"
    bare = tmp_path / "notes"
    bare.write_bytes(body)
    first = rag.ingestor.ingest(bare, source="upload:notes")
    assert first.status == "indexed"
    labelled = tmp_path / "notes.pdf"
    labelled.write_bytes(body)
    again = rag.ingestor.ingest(labelled, source="upload:notes")
    assert again.status == "unchanged", again
    doc = rag.stores.metadata.document(first.doc_id)
    assert doc is not None and doc.doc_type == "text"


def test_a_given_title_outlives_new_versions_a_parsed_one_follows_them(
    rag: Ragline, tmp_path: Path
) -> None:
    """A writer's title stays on a new version uploaded without one (it took the new
    version's parsed heading instead); a parsed title follows the content."""
    path = tmp_path / "plan.md"

    def write(version: int, title: str | None) -> str:
        path.write_text(f"# Rollout draft {version}\n\nStep {version}: ship the Quorbex.\n")
        out = rag.ingestor.ingest(path, source="upload:plan", title=title)
        assert out.status == "indexed", out
        doc = rag.stores.metadata.document(out.doc_id)
        assert doc is not None
        return doc.title

    assert write(1, None) == "Rollout draft 1"  # parsed
    assert write(2, None) == "Rollout draft 2"  # parsed again, from the new content
    assert write(3, "Quorbex rollout plan") == "Quorbex rollout plan"
    assert write(4, None) == "Quorbex rollout plan"  # given: kept
    assert write(5, "Plan B") == "Plan B"  # given again: replaced
    rag.sync()
    hit = rag.search("Quorbex", WRITER).hits[0]
    assert hit.chunk.title == "Plan B" and "Step 5" in hit.chunk.text

    # Giving the title it has already (a parsed one) pins it: a metadata update.
    other = tmp_path / "other.md"
    other.write_text("# Spare parts\n\nKeep two Quorbex gaskets.\n")
    assert rag.ingestor.ingest(other, source="upload:other").status == "indexed"
    pinned = rag.ingestor.ingest(other, source="upload:other", title="Spare parts")
    assert (pinned.status, pinned.reason) == ("updated", "metadata updated: title")
    other.write_text("# Spare parts, 2027\n\nKeep three Quorbex gaskets.\n")
    assert rag.ingestor.ingest(other, source="upload:other").status == "indexed"
    doc = rag.stores.metadata.document(pinned.doc_id)
    assert doc is not None and doc.title == "Spare parts" and doc.title_stated
