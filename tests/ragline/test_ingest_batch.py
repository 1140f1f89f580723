"""Files of one `ingest` call are prepared one by one and their passages embedded
together (issue 13, ingest throughput), while each file still succeeds or fails alone and
progress is reported file by file, in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.settings import IngestSettings, Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.ingest import FileOutcome

OPERATOR = Principal("ops", superuser=True)


def _note(i: int, extra: str = "") -> str:
    return (
        f"# Note {i}\n\nForm F-{i} is filed with registry office {i} within {i + 2} days. {extra}"
    )


def test_one_bad_file_fails_alone_and_the_others_share_embedding_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(_note(1))
    (folder / "b.pdf").write_bytes(b"%PDF-1.4 this is not a pdf at all")
    (folder / "c.md").write_text(_note(3))
    (folder / "d.md").write_text(_note(4, "POISON"))
    (folder / "e.md").write_text(_note(5))
    # The test replaces the in-process embedder: groups are embedded in this process.
    rag = Ragline(Settings(data_dir=tmp_path / "data", ingest=IngestSettings(embed_worker=False)))
    calls: list[list[str]] = []
    real = rag.embedder.embed_passages

    def embed(texts: Any) -> Any:
        calls.append(list(texts))
        if any("POISON" in t for t in texts):
            raise RuntimeError("the embedder broke on this text")
        return real(texts)

    monkeypatch.setattr(rag.embedder, "embed_passages", embed)
    seen: list[tuple[FileOutcome, int, int]] = []
    try:
        outcomes, _ = rag.ingest([folder], progress=lambda *shown: seen.append(shown))
        assert [Path(o.path).name for o in outcomes] == ["a.md", "b.pdf", "c.md", "d.md", "e.md"]
        assert [o.status for o in outcomes] == ["indexed", "failed", "indexed", "failed", "indexed"]
        assert "the embedder broke on this text" in outcomes[3].reason
        assert outcomes[1].reason  # the parser's reason, not the neighbours'
        # Progress gives each file's own outcome as it is done, in order, with the count.
        assert seen == [(o, n, 5) for n, o in enumerate(outcomes, start=1)]
        # The first call embedded the four parsed files' passages together; after it
        # failed, each file was embedded on its own to find the one it belongs to.
        assert sum("Form F-" in t for t in calls[0]) == 4
        assert [len(c) for c in calls[1:]] == [1, 1, 1, 1]
        for i in (1, 3, 5):
            hits = rag.search(f"form F-{i} registry office {i}", OPERATOR, top_k=1).hits
            assert hits and f"F-{i} " in hits[0].chunk.text
        assert all("POISON" not in h.chunk.text for h in rag.search("POISON", OPERATOR).hits)
        log = {Path(r.source).name: r.status for r in rag.stores.metadata.ingest_log()}
        assert log["d.md"] == "failed" and log["e.md"] == "indexed"
        # Unchanged files are neither parsed nor embedded again.
        calls.clear()
        again, _ = rag.ingest([folder])
        assert [o.status for o in again if o.path.endswith(".md")].count("unchanged") == 3
        assert all("POISON" in t for c in calls for t in c)  # only the failed one retried
    finally:
        rag.close()


def test_use_embedder_threads_give_the_same_vectors() -> None:
    from indexing.embedders import UseEmbedder

    texts = [f"第{i}条 规定了登记机关在{i}日内办理的手续 and form F-{i}" for i in range(70)]
    one, two = UseEmbedder(workers=1), UseEmbedder(workers=2)
    a, b = one.embed_passages(texts), two.embed_passages(texts)
    assert a.shape == b.shape == (70, 512)
    assert float(abs(a - b).max()) < 1e-5
    assert float(abs(two.embed_query(texts[5]) - b[5]).max()) < 1e-5


def test_the_next_file_is_parsed_while_this_one_is_chunked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from ragline.ingest import DocumentIngestor

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.md").write_text(_note(ord(name)))
    b_parsing = threading.Event()
    seen_during_a: list[bool] = []
    real_parse, real_prepare = DocumentIngestor._parse, DocumentIngestor._prepare

    def parse(self: DocumentIngestor, job: Any) -> Any:
        if job.path.name == "b.md":
            b_parsing.set()
        return real_parse(self, job)

    def prepare(self: DocumentIngestor, job: Any, read: Any, parsing: Any) -> Any:
        if job.path.name == "a.md":
            seen_during_a.append(b_parsing.wait(10))
        return real_prepare(self, job, read, parsing)

    monkeypatch.setattr(DocumentIngestor, "_parse", parse)
    monkeypatch.setattr(DocumentIngestor, "_prepare", prepare)
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        outcomes, _ = rag.ingest([folder])
    finally:
        rag.close()
    assert [o.status for o in outcomes] == ["indexed"] * 3
    assert seen_during_a == [True]


def test_the_next_group_is_embedded_while_this_one_is_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedder does not wait for a group's staging: the next group is sent to it
    first, and groups are still staged (and reported) in order."""
    import threading

    from ragline.ingest import DocumentIngestor

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.md").write_text(_note(ord(name)))
    # One file per group; groups embedded in this process.
    settings = Settings(
        data_dir=tmp_path / "data", ingest=IngestSettings(embed_worker=False, embed_group=1)
    )
    rag = Ragline(settings)
    b_embedding = threading.Event()
    real_embed = rag.embedder.embed_passages

    def embed(texts: Any) -> Any:
        if any(f"F-{ord('b')} " in t for t in texts):
            b_embedding.set()
        return real_embed(texts)

    monkeypatch.setattr(rag.embedder, "embed_passages", embed)
    real_stage = DocumentIngestor._stage
    staged: list[str] = []
    b_seen_while_staging_a: list[bool] = []

    def stage(self: DocumentIngestor, prepared: Any, vectors: Any) -> Any:
        name = prepared.job.path.name
        if name == "a.md":
            b_seen_while_staging_a.append(b_embedding.wait(5))
        staged.append(name)
        return real_stage(self, prepared, vectors)

    monkeypatch.setattr(DocumentIngestor, "_stage", stage)
    seen: list[str] = []
    try:
        outcomes, _ = rag.ingest([folder], progress=lambda o, *_: seen.append(Path(o.path).name))
    finally:
        rag.close()
    assert [o.status for o in outcomes] == ["indexed"] * 3
    assert b_seen_while_staging_a == [True]
    assert staged == seen == ["a.md", "b.md", "c.md"]


def test_progress_keeps_skipped_files_in_found_order(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(_note(1))
    (folder / "b.xyz").write_text("not an ingest format")
    (folder / "c.md").write_text(_note(3))
    (folder / "d.xyz").write_text("not one either")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    seen: list[str] = []
    try:
        outcomes, _ = rag.ingest([folder], progress=lambda o, *_: seen.append(Path(o.path).name))
    finally:
        rag.close()
    assert seen == ["a.md", "b.xyz", "c.md", "d.xyz"]
    assert [o.status for o in outcomes] == ["indexed", "skipped", "indexed", "skipped"]


def test_groups_embedded_in_the_embed_worker_match_in_process_vectors(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(6):
        (folder / f"n{i}.md").write_text(_note(i, "第{i}条 登记机关在三日内办理。"))
    vectors = {}
    for worker in (True, False):
        settings = Settings(
            data_dir=tmp_path / f"data-{worker}", ingest=IngestSettings(embed_worker=worker)
        )
        rag = Ragline(settings)
        try:
            outcomes, _ = rag.ingest([folder])
            assert [o.status for o in outcomes] == ["indexed"] * 6
            group = rag.ingestor._group_embedder
            assert group is not rag.embedder if worker else group is rag.embedder
            if worker:
                assert not group.in_process  # type: ignore[union-attr]
            meta = rag.stores.metadata
            vectors[worker] = {
                item.chunk.content_id: item.vector
                for o in outcomes
                for item in meta.version_items(o.doc_id, o.version)
            }
        finally:
            rag.close()
    assert vectors[True].keys() == vectors[False].keys() and len(vectors[True]) >= 6
    for cid, vec in vectors[True].items():
        assert float(abs(vec - vectors[False][cid]).max()) < 1e-5
