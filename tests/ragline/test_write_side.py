"""`ragline ingest --tag` with unchanged bytes is a metadata update that reaches every
store before the command returns; a re-ingest without --tag never opens a document up;
with --api-key the CLI writes as that key and is checked like the API (issue 14)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from core.errors import DocumentChanged
from core.ids import doc_id_for, source_uri
from core.settings import ApiKey, ApiSettings, Settings
from core.types import Document, DocumentVersion, Principal, QueryFilter
from indexing.protocols import Expect
from ragline.app import Ragline
from ragline.cli import app as cli

NOBODY = Principal("nobody")
HR = Principal("hanna", tags=frozenset({"hr"}))
QUESTION = "What is the quillfeather salary band?"


@pytest.fixture
def rag(tmp_path: Path) -> Iterator[Ragline]:
    app = Ragline(Settings(data_dir=tmp_path / "data"))
    yield app
    app.close()


def _seen_by(rag: Ragline, principal: Principal, doc_id: str) -> bool:
    hits = rag.search(QUESTION, principal).hits
    return any(h.chunk.doc_id == doc_id for h in hits)


def _stores_hold(rag: Ragline, doc_id: str, tags: frozenset[str]) -> None:
    """Every derived store filters the document's chunks by `tags` now."""
    version = rag.stores.metadata.current_version(doc_id)
    assert version
    items = rag.stores.metadata.version_items(doc_id, version)
    cids = {i.chunk.content_id for i in items}
    nobody = QueryFilter.for_principal(NOBODY)
    holder = QueryFilter(access_tokens=tags or frozenset({"x"}))
    public = not tags
    keyword = {h.content_id for h in rag.stores.keyword.search("quillfeather", 20, nobody)}
    dense = {h.content_id for h in rag.stores.dense.search(items[0].vector, 50, nobody)}
    graph = {h.content_id for h in rag.stores.graph.search(["QF-2291"], 20, nobody)}
    assert bool(cids & keyword) == public and bool(cids & dense) == public
    assert bool(cids & graph) == public
    assert cids & {h.content_id for h in rag.stores.keyword.search("quillfeather", 20, holder)}


def test_tag_change_with_same_bytes_is_applied_everywhere(rag: Ragline, tmp_path: Path) -> None:
    f = tmp_path / "salary.md"
    f.write_text("# Salaries\n\nThe quillfeather salary band QF-2291 tops at 88000 euros.\n")
    doc_id = doc_id_for(source_uri(f))
    (first,), _ = rag.ingest([f])
    assert first.status == "indexed"
    assert _seen_by(rag, NOBODY, doc_id)

    (tagged,), report = rag.ingest([f], tags=["hr"])
    assert tagged.status == "updated" and tagged.reason == "metadata updated: acl_tags"
    assert not report.errors and (doc_id, first.version) in report.relabelled
    assert not _seen_by(rag, NOBODY, doc_id) and _seen_by(rag, HR, doc_id)
    _stores_hold(rag, doc_id, frozenset({"hr"}))
    assert not any(rag.stores.metadata.pending(s) for s in rag.stores.derived)
    assert all(d.ok for d in rag.check())

    (again,), _ = rag.ingest([f])  # no --tag: keeps hr, nothing to do
    assert again.status == "unchanged"
    assert not _seen_by(rag, NOBODY, doc_id)
    (folder,), _ = rag.ingest([tmp_path / "salary.md"], tags=None)
    assert folder.status == "unchanged"

    (opened,), _ = rag.ingest([f], tags=[])  # --public
    assert opened.status == "updated"
    assert _seen_by(rag, NOBODY, doc_id)
    _stores_hold(rag, doc_id, frozenset())
    versions = rag.stores.metadata.versions(doc_id)
    assert [v.status for v in versions] == ["current"]  # never re-parsed nor re-staged


def test_cli_tag_then_api_key_writes_are_checked(tmp_path: Path) -> None:
    f = tmp_path / "pay.md"
    f.write_text("# Pay\n\nThe quillfeather salary band QF-2291 tops at 88000 euros.\n")
    keys = [
        ApiKey(key="hr-writer", user="hanna", tags=["hr"], can_write=True),
        ApiKey(key="it-writer", user="ivan", tags=["it"], can_write=True),
    ]
    env = {
        "RAGLINE_DATA_DIR": str(tmp_path / "data"),
        "RAGLINE_API__KEYS": json.dumps([k.model_dump() for k in keys]),
    }
    runner = CliRunner()

    def run(*args: str) -> dict:  # type: ignore[type-arg]
        r = runner.invoke(cli, [*args], env=env)
        assert r.exit_code in (0, 1), r.output
        return dict(json.loads(r.stdout)) if "--json" in args else {"output": r.output}

    out = run("ingest", str(f), "--json")
    assert out["files"][0]["status"] == "indexed"
    out = run("ingest", str(f), "--tag", "hr", "--json")
    assert out["files"][0]["status"] == "updated"
    doc_id = out["files"][0]["doc_id"]

    denied = run("ingest", str(f), "--tag", "it", "--api-key", "it-writer", "--json")
    assert denied["files"][0]["status"] == "failed"
    assert "no access" in denied["files"][0]["reason"]
    allowed = run(
        "ingest", str(f), "--tag", "hr", "--tag", "it", "--api-key", "hr-writer", "--json"
    )
    assert allowed["files"][0]["status"] == "failed"  # "it" is not hanna's to grant
    assert "not: ['it']" in allowed["files"][0]["reason"]
    r = runner.invoke(cli, ["delete", doc_id, "--api-key", "it-writer"], env=env)
    assert r.exit_code == 1 and "no document" in r.output
    r = runner.invoke(cli, ["delete", doc_id, "--api-key", "hr-writer"], env=env)
    assert r.exit_code == 0 and "deleted" in r.output
    settings = Settings(data_dir=tmp_path / "data", api=ApiSettings(keys=keys))
    rag = Ragline(settings)
    try:
        assert rag.stores.metadata.document(doc_id) is None
    finally:
        rag.close()


def _during_embedding(rag: Ragline, action: Any) -> None:
    """Run `action` once, while the next ingest embeds (after its post-parse permission
    check, before it stages): a concurrent re-tag by someone else."""
    ingestor = rag.ingestor
    embed = ingestor._embed

    def racing(texts: list[str], *rest: Any) -> Any:
        ingestor._embed = embed  # type: ignore[method-assign]
        action()
        return embed(texts, *rest)

    ingestor._embed = racing  # type: ignore[method-assign]


def test_an_acl_tightened_while_a_writer_embeds_refuses_its_staging(
    rag: Ragline, tmp_path: Path
) -> None:
    """Issue 14: the write is decided again on the live document in the staging
    transaction: a writer who lost access meanwhile stages nothing, and a concurrent
    re-tag is never reverted by an ingest that read the old tags."""
    ann = Principal("ann", tags=frozenset({"alpha"}), can_write=True)
    f = tmp_path / "plan.md"
    f.write_text("# Plan\n\nThe quillfeather salary band QF-2291 tops at 88000 euros.\n")
    doc_id = doc_id_for(source_uri(f))
    (first,), _ = rag.ingest([f], tags=["alpha"])
    meta = rag.stores.metadata
    before = meta.document(doc_id)
    assert first.status == "indexed" and before is not None

    def tighten() -> None:  # an admin restricts it to hr while ann's new bytes embed
        assert meta.update_document(replace(before, acl_tags=frozenset({"hr"})), [])

    f.write_text("# Plan\n\nThe quillfeather salary band QF-2291 tops at 91000 euros.\n")
    _during_embedding(rag, tighten)
    (second,), _ = rag.ingest([f], principal=ann)
    assert second.status == "failed" and "no access" in second.reason
    assert [v.status for v in meta.versions(doc_id)] == ["current"]  # nothing staged
    doc = meta.document(doc_id)
    assert doc is not None and doc.acl_tags == frozenset({"hr"})

    # The operator's ingest of new bytes (tags kept) during a re-tag keeps the re-tag.
    retagged = replace(doc, acl_tags=frozenset({"hr", "finance"}))
    _during_embedding(rag, lambda: meta.update_document(retagged, []))
    f.write_text("# Plan\n\nThe quillfeather salary band QF-2291 tops at 95000 euros.\n")
    (third,), _ = rag.ingest([f])
    assert third.status == "indexed", third.reason
    doc = meta.document(doc_id)
    assert doc is not None and doc.acl_tags == frozenset({"hr", "finance"})
    assert not _seen_by(rag, NOBODY, doc_id) and _seen_by(rag, HR, doc_id)


def test_a_stale_expectation_writes_nothing(rag: Ragline) -> None:
    """The store-level guard itself: staging or a metadata update against a document
    that is no longer the expected one raises DocumentChanged and changes nothing."""
    meta = rag.stores.metadata
    doc = Document("d" * 16, "upload:x.md", "X", "markdown", acl_tags=frozenset({"a"}))
    v = DocumentVersion(doc.doc_id, "v1", "pending", 0, 0)
    with pytest.raises(DocumentChanged):
        meta.stage_version(doc, v, [], np.zeros((0, 4), np.float32), [], None, Expect(doc))
    assert meta.document(doc.doc_id) is None
    meta.stage_version(doc, v, [], np.zeros((0, 4), np.float32), [], None, Expect(None))
    live = meta.document(doc.doc_id)
    assert live == doc
    with pytest.raises(DocumentChanged):
        meta.update_document(replace(doc, acl_tags=frozenset()), [], Expect(None))
    assert meta.update_document(replace(doc, title="Y"), [], Expect(live))
    with pytest.raises(DocumentChanged):  # the title changed since `live` was read
        meta.update_document(replace(doc, acl_tags=frozenset()), [], Expect(live))
    assert meta.document(doc.doc_id) == replace(doc, title="Y")
