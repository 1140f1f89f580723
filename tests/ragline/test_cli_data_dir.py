"""The data dir of the CLI commands: a command that only reads refuses a data dir with
nothing ingested instead of creating an empty store there and answering "nothing"
(FINDINGS B6); a data dir that cannot be created or written is one plain line, exit 2,
not a traceback (B5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexing.stores.sql_metadata import SqlMetadataStore
from ragline.cli import app as cli

READ_ONLY = [
    ["docs"],
    ["search", "which port?"],
    ["ask", "which port?"],
    ["check"],
    ["jobs"],
    ["gaps"],
    ["audit", "export"],
    ["alerts", "check"],
    ["delete", "0123456789abcdef"],
    ["trace", "0123456789abcdef"],
    ["recall"],
]


@pytest.fixture(autouse=True)
def _no_server_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGLINE_METADATA_URL", raising=False)
    monkeypatch.delenv("RAGLINE_GATEWAY__SOURCES", raising=False)


@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: " ".join(c[:2]))
def test_a_read_only_command_refuses_a_data_dir_with_no_data(
    command: list[str], tmp_path: Path
) -> None:
    typo = tmp_path / "typo" / "dd"
    result = CliRunner().invoke(cli, [*command, "--data-dir", str(typo)])
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"error: no Ragline data in {typo} (nothing ingested there yet; "
        "check --data-dir or RAGLINE_DATA_DIR)\n"
    )
    assert not (tmp_path / "typo").exists()  # nothing created


def test_the_environment_variable_is_checked_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_DATA_DIR", str(tmp_path / "typo"))
    result = CliRunner().invoke(cli, ["docs"])
    assert result.exit_code == 2 and "no Ragline data in" in result.output
    assert not (tmp_path / "typo").exists()


def test_a_data_dir_with_a_metadata_database_is_read(tmp_path: Path) -> None:
    SqlMetadataStore(f"sqlite:///{tmp_path / 'ragline.db'}").close()
    for command in (["jobs"], ["gaps"], ["audit", "export"]):
        result = CliRunner().invoke(cli, [*command, "--data-dir", str(tmp_path)])
        assert result.exit_code == 0, (command, result.output)


def test_a_server_metadata_database_is_not_looked_for_in_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_METADATA_URL", f"sqlite:///{tmp_path / 'server' / 'meta.db'}")
    result = CliRunner().invoke(cli, ["jobs", "--data-dir", str(tmp_path / "empty")])
    assert result.exit_code == 0, result.output


def test_ingest_still_creates_its_data_dir(tmp_path: Path) -> None:
    doc = tmp_path / "note.md"
    doc.write_text("The zebra protocol uses port 9090.\n")
    fresh = tmp_path / "new" / "dd"
    result = CliRunner().invoke(cli, ["ingest", str(doc), "--data-dir", str(fresh), "--json"])
    assert result.exit_code == 0, result.output
    assert (fresh / "ragline.db").is_file()
    listed = CliRunner().invoke(cli, ["docs", "--data-dir", str(fresh)])
    assert listed.exit_code == 0 and "note" in listed.output


def test_a_data_dir_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    doc = tmp_path / "note.md"
    doc.write_text("The zebra protocol uses port 9090.\n")
    result = CliRunner().invoke(cli, ["ingest", str(doc), "--data-dir", str(blocker / "dd")])
    assert result.exit_code == 2
    assert result.output == f"error: cannot use the data dir {blocker / 'dd'}: Not a directory\n"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_data_dir_where_nothing_can_be_written_is_one_line(tmp_path: Path) -> None:
    doc = tmp_path / "note.md"
    doc.write_text("The zebra protocol uses port 9090.\n")
    result = CliRunner().invoke(cli, ["ingest", str(doc), "--data-dir", "/proc"])
    assert result.exit_code == 2
    assert result.output.startswith("error: cannot write /proc/ragline.db.schema.lock: ")
    assert "Traceback" not in result.output and result.output.count("\n") == 1
    checked = CliRunner().invoke(cli, ["check", "--data-dir", "/proc"])
    assert checked.exit_code == 2 and checked.output.startswith("error: no Ragline data in /proc")


def test_ask_with_gateway_sources_needs_no_ingested_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gateway load-sample` then `ask` (the README's gateway walk-through): the sources
    can answer with no document ingested, so the data dir is not refused."""
    sources = Path(__file__).resolve().parents[2] / "connectors" / "sample" / "gateway.toml"
    monkeypatch.setenv("RAGLINE_GATEWAY__SOURCES", str(sources))
    fresh = tmp_path / "fresh"
    result = CliRunner().invoke(cli, ["ask", "which port?", "--data-dir", str(fresh)])
    assert "no Ragline data" not in result.output
    assert result.exit_code == 0, result.output
    searched = CliRunner().invoke(cli, ["search", "which port?", "--data-dir", str(tmp_path / "x")])
    assert searched.exit_code == 2 and "no Ragline data" in searched.output  # documents only
