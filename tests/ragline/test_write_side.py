"""`ragline ingest --tag` with unchanged bytes is a metadata update that reaches every
store before the command returns; a re-ingest without --tag never opens a document up;
with --api-key the CLI writes as that key and is checked like the API (issue 14)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.ids import doc_id_for, source_uri
from core.settings import ApiKey, ApiSettings, Settings
from core.types import Principal, QueryFilter
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
