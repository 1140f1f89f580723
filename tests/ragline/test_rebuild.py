"""`ragline repair --rebuild`: the command the dense index's embedder-mismatch error names."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from core.errors import EmbedderMismatch
from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.cli import app

DOC = "# Ledger\n\nThe quillwort ledger closes on the third of March.\n"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGLINE_CONFIG_FILE", str(tmp_path / "none.toml"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ledger.md").write_text(DOC, encoding="utf-8")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        rag.ingest([tmp_path / "docs"])
    finally:
        rag.close()
    return tmp_path / "data"


def _served(data_dir: Path, question: str) -> list[str]:
    rag = Ragline(Settings(data_dir=data_dir))
    try:
        assert all(d.ok for d in rag.check())
        return [h.chunk.text for h in rag.search(question, Principal("x")).hits]
    finally:
        rag.close()


def test_changed_embedder_is_refused_then_rebuilt(data_dir: Path) -> None:
    sidecar = data_dir / "dense" / "dense.json"
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    meta["model"] = "some-older-model"  # as if the index had been built by another embedder
    sidecar.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(EmbedderMismatch, match="ragline repair --rebuild dense"):
        Ragline(Settings(data_dir=data_dir))

    result = CliRunner().invoke(app, ["repair", "--rebuild", "dense", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    assert "dense 1/1 chunks" in result.output  # progress, for the hours a large one takes
    assert "dense    rebuilt: 1 chunks" in result.output
    assert json.loads(sidecar.read_text(encoding="utf-8"))["model"] == "use-multilingual-v3"
    assert not (data_dir / "dense.previous").exists()
    assert any("quillwort" in t for t in _served(data_dir, "When does the quillwort ledger close?"))

    rag = Ragline(Settings(data_dir=data_dir))
    try:  # the truth now holds the configured embedder's vectors
        item = rag.stores.metadata.items(sorted(rag.stores.metadata.serving_ids()))[0]
        assert np.allclose(
            item.vector, rag.embedder.embed_passages([item.chunk.text])[0], atol=1e-5
        )
    finally:
        rag.close()


def test_repair_puts_this_hosts_earlier_uploads_into_the_database(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedded deployment moving to shared uploads: what it accepted before."""
    (data_dir / "uploads").mkdir()
    (data_dir / "uploads" / "c0ffee.md").write_text(DOC, encoding="utf-8")
    before = CliRunner().invoke(app, ["repair", "--data-dir", str(data_dir)])
    assert before.exit_code == 0, before.output
    assert "uploads" not in before.output  # not shared: nothing to do
    monkeypatch.setenv("RAGLINE_API__UPLOAD_STORE", "database")
    first = CliRunner().invoke(app, ["repair", "--data-dir", str(data_dir)])
    assert first.exit_code == 0, first.output
    assert "uploads  1 from this host now kept in the database too" in first.output
    again = CliRunner().invoke(app, ["repair", "--data-dir", str(data_dir)])
    assert "uploads" not in again.output
    rag = Ragline(Settings(data_dir=data_dir))
    try:
        assert rag.uploads.shared is not None and rag.uploads.shared.find("c0ffee") == "c0ffee.md"
    finally:
        rag.close()


def test_keyword_rebuild_restores_a_damaged_index(data_dir: Path) -> None:
    rag = Ragline(Settings(data_dir=data_dir))
    try:
        rag.stores.keyword.delete(sorted(rag.stores.keyword.content_ids()))
        assert not all(d.ok for d in rag.check())
    finally:
        rag.close()
    result = CliRunner().invoke(
        app, ["repair", "--rebuild", "keyword", "--rebuild", "graph", "--data-dir", str(data_dir)]
    )
    assert result.exit_code == 0, result.output
    assert any("quillwort" in t for t in _served(data_dir, "quillwort ledger"))


def test_unknown_store_is_a_clear_error(data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["repair", "--rebuild", "faiss", "--data-dir", str(data_dir)])
    assert result.exit_code == 2 and "cannot rebuild" in result.output
