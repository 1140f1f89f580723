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


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"RAGLINE_API__MAX_IN_FLIGHT": "abc"}, "RAGLINE_API__MAX_IN_FLIGHT='abc': Input should"),
        ({"RAGLINE_API__MAX_INFLIGHT": "5"}, "RAGLINE_API__MAX_INFLIGHT: no such setting"),
        # A misspelt key field would leave the key without its rate limit, silently.
        (
            {"RAGLINE_API__KEYS": '[{"key": "k", "user": "u", "rate_per_sec": 1, "brust": 1}]'},
            "RAGLINE_API__KEYS[0].brust: no such setting",
        ),
        ({"RAGLINE_API__KEYS": "not json"}, "RAGLINE_API__* variables is not valid JSON"),
        ({"RAGLINE_EMBEDDER__KIND": "nosuch"}, "RAGLINE_EMBEDDER__KIND='nosuch'"),
        ({"RAGLINE_API__MAX_IN_FLIGHT": "-3"}, "greater than or equal to 0"),
        ({"RAGLINE_API__RETRY_AFTER_S": "-5"}, "RAGLINE_API__RETRY_AFTER_S='-5'"),
    ],
)
def test_settings_that_cannot_be_used_are_one_line_naming_the_variable(
    data_dir: Path, env: dict[str, str], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["docs", "--data-dir", str(data_dir)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and said in result.output, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


def test_a_config_file_that_is_not_toml_is_named(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "ragline.toml"
    bad.write_text("[api\n")
    monkeypatch.setenv("RAGLINE_CONFIG_FILE", str(bad))
    result = CliRunner().invoke(cli, ["docs", "--data-dir", str(data_dir)])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {bad} is not valid TOML"), result.output


def test_serve_refuses_a_damaged_store_in_one_line_before_any_worker_starts(
    tmp_path: Path,
) -> None:
    from core.settings import Settings
    from ragline.app import Ragline

    data = tmp_path / "data"
    (tmp_path / "a.md").write_text("# A\n\nThe quorbex quota is 7.\n")
    rag = Ragline(Settings(data_dir=data))
    try:
        rag.ingest([tmp_path / "a.md"])
    finally:
        rag.close()
    (data / "dense" / "dense.json").write_text('{"format": 1,')
    result = CliRunner().invoke(cli, ["serve", "--workers", "2", "--data-dir", str(data)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: dense index in "), result.output
    assert "ragline repair --rebuild dense" in result.output and "Traceback" not in result.output


def test_sigterm_interrupts_like_ctrl_c_and_says_which() -> None:
    import os
    import signal
    import time

    from ragline.cli.commands import _interruptible, _Stop

    stop, before = _Stop(), signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), _interruptible(stop):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)  # the handler runs first
    assert stop.signal == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before  # the earlier handler is back
