"""`ragline alerts check` exit codes and `ragline audit export` end to end, on a data
directory holding a real SQLite metadata store."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from alert_rows import add_outbox, add_query, ago
from typer.testing import CliRunner

from indexing.stores.sql_metadata import SqlMetadataStore
from ragline.cli import app as cli


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    SqlMetadataStore(f"sqlite:///{d / 'ragline.db'}").close()
    return d


def _store(data_dir: Path) -> SqlMetadataStore:
    return SqlMetadataStore(f"sqlite:///{data_dir / 'ragline.db'}")


def test_alerts_check_exit_codes(data_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(cli, ["alerts", "check", "--data-dir", str(data_dir)])
    assert ok.exit_code == 0, ok.output
    assert "none firing" in ok.output

    store = _store(data_dir)
    add_outbox(store, "graph", attempts=3, error="neo4j: connection refused")
    store.close()
    firing = runner.invoke(cli, ["alerts", "check", "--data-dir", str(data_dir)])
    assert firing.exit_code == 1, firing.output
    assert "outbox_failures" in firing.output and "graph" in firing.output
    as_json = runner.invoke(cli, ["alerts", "check", "--json", "--data-dir", str(data_dir)])
    assert as_json.exit_code == 1 and '"name": "outbox_failures"' in as_json.output

    bad = tmp_path / "rules.toml"
    bad.write_text('[[rule]]\nname = "x"\nkind = "nope"\nthreshold = 1\n')
    broken = runner.invoke(
        cli,
        ["alerts", "check", "--data-dir", str(data_dir)],
        env={"RAGLINE_MONITORING__ALERT_RULES": str(bad)},
    )
    assert broken.exit_code == 2
    # A rules file of its own, whose one rule the crafted row does not trip.
    calm = tmp_path / "calm.toml"
    calm.write_text('[[rule]]\nname = "jobs"\nkind = "failed_jobs"\nthreshold = 0\n')
    quiet = runner.invoke(
        cli,
        ["alerts", "check", "--data-dir", str(data_dir)],
        env={"RAGLINE_MONITORING__ALERT_RULES": str(calm)},
    )
    assert quiet.exit_code == 0, quiet.output


def test_audit_export_to_file_and_stdout(data_dir: Path, tmp_path: Path) -> None:
    store = _store(data_dir)
    add_query(store, at=ago(days=3), user="amy", question="old")
    add_query(store, at=ago(hours=1), user="amy", question="=1+1")
    add_query(store, at=ago(hours=1), user="bob", question="bob's")
    store.close()
    since = ago(days=1).isoformat() + "+00:00"
    out = tmp_path / "audit.csv"
    result = CliRunner().invoke(
        cli,
        [
            "audit",
            "export",
            "--log",
            "queries",
            "--since",
            since,
            "--user",
            "amy",
            "--out",
            str(out),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open(newline="", encoding="utf-8")))
    assert [(r["user"], r["question"]) for r in rows] == [("amy", "'=1+1")]

    printed = CliRunner().invoke(
        cli, ["audit", "export", "--log", "queries", "--data-dir", str(data_dir)]
    )
    assert printed.exit_code == 0
    lines = [line for line in printed.stdout.splitlines() if not line.endswith(" rows")]
    assert len(list(csv.DictReader(io.StringIO("\n".join(lines))))) == 3

    bad = CliRunner().invoke(
        cli, ["audit", "export", "--since", "yesterday", "--data-dir", str(data_dir)]
    )
    assert bad.exit_code == 2 and "ISO 8601" in bad.output
