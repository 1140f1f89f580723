"""`ragline bench ingest --end-to-end` ingests the same files twice into fresh data dirs
(one file at a time with one embedding thread, then as configured) and reports both."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragline.cli import app as cli


def test_end_to_end_ingest_bench_reports_both_runs_per_format(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nForm F-{i} goes to office {i}.\n")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 not a pdf")
    squad = tmp_path / "squad.json"
    paras = [{"context": f"第{i}段。登记机关在{i}日内办理。", "qas": []} for i in range(4)]
    squad.write_text(json.dumps({"data": [{"title": "t", "paragraphs": paras}]}))
    out = tmp_path / "e2e.json"
    result = CliRunner().invoke(
        cli,
        [
            "bench",
            "ingest",
            "--end-to-end",
            "--docs",
            str(docs),
            "--squad",
            str(squad),
            "--paragraphs",
            "3",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    for run in ("baseline", "candidate"):
        r = data[run]
        assert r["files"] == 7 and r["failed"] == 1 and r["chunks"] == 6
        assert set(r["per_format"]) == {"md", "pdf", "txt"}
        assert r["per_format"]["txt"]["files"] == 3 and r["per_format"]["pdf"]["failed"] == 1
        assert {f["rate_from"] for f in r["per_format"].values()} == {"file seconds"}
        assert r["chunks_per_s"] > 0
    assert data["ratio_chunks_per_s"] > 0
    assert data["target"]["chunks_per_s"] == 100.0


def test_a_run_of_one_format_reports_its_wall_rate(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nForm F-{i} goes to office {i}.\n")
    out = tmp_path / "e2e.json"
    args = ["bench", "ingest", "--end-to-end", "--docs", str(docs), "--json", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    run = json.loads(out.read_text())["candidate"]
    md = run["per_format"]["md"]
    assert md["rate_from"] == "wall"
    assert md["chunks_per_s"] == run["chunks_per_s"] and md["pages_per_s"] == run["pages_per_s"]
