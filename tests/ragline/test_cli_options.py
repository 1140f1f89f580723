"""Option values the CLI cannot use end in one plain line and exit 2, never a traceback:
an `audit export --out` that cannot be written (FINDINGS B5), a `--limit` too large for
SQLite (B12), a choice outside its list (worded plainly, not as pydantic does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexing.stores.sql_metadata import SqlMetadataStore
from ragline.cli import app as cli

HUGE = "99999999999999999999"  # over SQLite's 64-bit integers


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    SqlMetadataStore(f"sqlite:///{data / 'ragline.db'}").close()
    return data


@pytest.mark.parametrize(
    ("where", "reason"),
    [("missing/audit.csv", "No such file or directory"), (".", "Is a directory")],
)
def test_audit_export_to_a_path_it_cannot_write_is_one_line(
    data_dir: Path, tmp_path: Path, where: str, reason: str
) -> None:
    out = tmp_path / where
    result = CliRunner().invoke(
        cli, ["audit", "export", "--log", "ingest", "--out", str(out), "--data-dir", str(data_dir)]
    )
    assert result.exit_code == 2
    assert result.output == f"error: cannot write {out}: {reason}\n"


@pytest.mark.parametrize(
    ("command", "bound"),
    [(["jobs"], "100000"), (["gaps"], "100000"), (["audit", "export"], "10000000")],
)
def test_a_limit_too_large_is_refused_plainly(
    data_dir: Path, command: list[str], bound: str
) -> None:
    result = CliRunner().invoke(cli, [*command, "--limit", HUGE, "--data-dir", str(data_dir)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # not an OverflowError
    assert f"Invalid value for '--limit': Input should be less than or equal to {bound}" in (
        result.output
    )
    at_bound = CliRunner().invoke(cli, [*command, "--limit", bound, "--data-dir", str(data_dir)])
    assert at_bound.exit_code == 0, at_bound.output


@pytest.mark.parametrize(
    ("command", "option", "choices"),
    [
        (["gaps"], "--status", "open, closed, all"),
        (["audit", "export"], "--log", "passages, queries, ingest, alerts, gateway"),
    ],
)
def test_a_choice_outside_the_list_is_worded_plainly(
    data_dir: Path, command: list[str], option: str, choices: str
) -> None:
    result = CliRunner().invoke(cli, [*command, option, "weird", "--data-dir", str(data_dir)])
    assert result.exit_code == 2
    assert f"Invalid value for '{option}': must be one of {choices}" in result.output
    assert "Value error" not in result.output
    last = choices.split(", ")[-1]
    chosen = CliRunner().invoke(cli, [*command, option, last, "--data-dir", str(data_dir)])
    assert chosen.exit_code == 0, chosen.output


@pytest.mark.parametrize("command", ["search", "ask"])
def test_an_unknown_doc_type_is_refused_plainly(data_dir: Path, command: str) -> None:
    """Before the stores open: a filter no document can match is a mistake to name, not a
    "not covered"."""
    args = [command, "which port?", "--doc-type", "pfd", "--data-dir", str(data_dir)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --doc-type: 'pfd' is not a document format; known:")
