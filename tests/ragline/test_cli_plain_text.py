"""The command line prints titles, file names, ids and messages as they are: brackets in
them are text, not markup (rich dropped "[Draft]" and crashed on "[/ops]"), and no
message shows markup tags such as "[red]". Progress shows when the output is no terminal."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from indexing.stores.sql_metadata import SqlMetadataStore
from ragline.cli import app as cli

WIDE = {"COLUMNS": "200"}


def test_bracketed_titles_and_names_are_printed_as_written(tmp_path: Path) -> None:
    data = tmp_path / "data"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "[v2] pumps.md").write_text(
        "# [Draft] Pumps [/ops]\n\nThe pump rota changes every Monday at the north plant.\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    ingest = runner.invoke(cli, ["ingest", str(docs), "--data-dir", str(data)], env=WIDE)
    assert ingest.exit_code == 0, ingest.output
    assert "[v2] pumps.md" in ingest.output
    # Not a terminal: a plain progress line per file, not a bar that never shows.
    assert "1/1 indexed [v2] pumps.md: 1 chunks" in ingest.output

    listed = runner.invoke(cli, ["docs", "--data-dir", str(data)], env=WIDE)
    assert listed.exit_code == 0, listed.output
    assert "[Draft] Pumps [/ops]" in listed.output

    found = runner.invoke(
        cli, ["search", "When does the pump rota change?", "--data-dir", str(data)], env=WIDE
    )
    assert found.exit_code == 0, found.output
    assert "[Draft] Pumps [/ops]" in found.output


def test_an_id_with_brackets_is_reported_not_parsed(tmp_path: Path) -> None:
    SqlMetadataStore(f"sqlite:///{tmp_path / 'ragline.db'}").close()  # a data dir with data
    result = CliRunner().invoke(cli, ["delete", "[/x]", "--data-dir", str(tmp_path)])
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1
    assert "no document [/x]" in result.output


def test_errors_carry_no_markup_tags(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nname = "x"\nkind = "nope"\nthreshold = 1\n')
    SqlMetadataStore(f"sqlite:///{tmp_path / 'd' / 'ragline.db'}").close()
    runner = CliRunner()
    broken = runner.invoke(
        cli,
        ["alerts", "check", "--data-dir", str(tmp_path / "d")],
        env={"RAGLINE_MONITORING__ALERT_RULES": str(rules)},
    )
    assert broken.exit_code == 2
    assert broken.output.startswith("error: ") and "[red]" not in broken.output
    assert "nope" in broken.output  # the rules file's error, not the data dir's

    both = runner.invoke(
        cli, ["repair", "--uploads-only", "--rebuild", "dense", "--data-dir", str(tmp_path / "d")]
    )
    assert both.exit_code == 2
    assert "error: --uploads-only rebuilds nothing" in both.output
