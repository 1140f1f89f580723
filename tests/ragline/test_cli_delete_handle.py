"""`ragline delete` takes the handle `ragline docs` shows (FINDINGS #29: `delete e2f187`
said "no document e2f187"): a unique prefix of a doc_id, at least 6 hex digits. A prefix
of several documents is refused with their ids, and nothing shorter is guessed at."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from core.types import Document, DocumentVersion
from indexing.stores.sql_metadata import SqlMetadataStore
from ragline.cli import app as cli

TWINS = ("abcdef0123456789", "abcdef9876543210")  # one handle, two documents
LONE = "1234560123456789"
WIDE = {"COLUMNS": "200"}


@pytest.fixture(autouse=True)
def _no_server_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGLINE_METADATA_URL", raising=False)
    monkeypatch.delenv("RAGLINE_GATEWAY__SOURCES", raising=False)


def _data_dir(tmp_path: Path) -> Path:
    meta = SqlMetadataStore(f"sqlite:///{tmp_path / 'ragline.db'}")
    for doc_id in (*TWINS, LONE):
        doc = Document(doc_id, f"upload:{doc_id}.md", doc_id, "markdown")
        version = DocumentVersion(doc_id, "v1", "pending", 0, 0)
        meta.stage_version(doc, version, [], np.zeros((0, 4), np.float32), [])
    meta.close()
    return tmp_path


def _live(data: Path) -> set[str]:
    meta = SqlMetadataStore(f"sqlite:///{data / 'ragline.db'}")
    try:
        return {d.doc_id for d in meta.documents()}
    finally:
        meta.close()


def test_delete_takes_the_handle_docs_shows(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    runner = CliRunner()
    listed = runner.invoke(cli, ["docs", "--data-dir", str(data)], env=WIDE)
    assert listed.exit_code == 0, listed.output
    assert LONE[:6] in listed.output

    gone = runner.invoke(cli, ["delete", LONE[:6], "--data-dir", str(data)], env=WIDE)
    assert gone.exit_code == 0, gone.output
    assert f"deleted {LONE}" in gone.output
    assert _live(data) == set(TWINS)


def test_an_ambiguous_handle_is_refused_naming_the_documents(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    runner = CliRunner()
    refused = runner.invoke(cli, ["delete", "abcdef", "--data-dir", str(data)], env=WIDE)
    assert refused.exit_code == 1
    assert "ambiguous" in refused.output
    assert all(doc_id in refused.output for doc_id in TWINS)
    assert _live(data) == {*TWINS, LONE}

    # One more digit tells them apart; the full id still works as before.
    longer = runner.invoke(cli, ["delete", "abcdef9", "--data-dir", str(data)], env=WIDE)
    assert longer.exit_code == 0, longer.output
    full = runner.invoke(cli, ["delete", TWINS[0], "--data-dir", str(data)], env=WIDE)
    assert full.exit_code == 0, full.output
    assert full.output.strip() == "deleted"
    assert _live(data) == {LONE}


@pytest.mark.parametrize("given", ["12345", "1234560123456789x", "doc123456", "zzzzzz"])
def test_nothing_else_is_guessed(tmp_path: Path, given: str) -> None:
    data = _data_dir(tmp_path)
    result = CliRunner().invoke(cli, ["delete", given, "--data-dir", str(data)], env=WIDE)
    assert result.exit_code == 1
    assert f"no document {given}" in result.output
    assert _live(data) == {*TWINS, LONE}
