"""`ragline inspect FILE` and `ragline bench ingest`: what they report, and that they touch
no store."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import threading
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from core.errors import RaglineError
from core.settings import Settings
from ragline.bench.ingest import run_ingest_bench
from ragline.cli import app as cli
from ragline.inspect import inspect_file, render

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCX = EXAMPLES / "en-docling-word_sample.docx"
PDF = EXAMPLES / "en-nics-background-checks-2015-11.pdf"
WITH_PII = """# Contacts

## Support

Call the support desk on 13812345678 or write to help.desk@example.com for access.
"""


def test_report_holds_block_tree_chunks_tables_and_spans() -> None:
    report = inspect_file(DOCX, Settings())
    assert report["format"] == "docx" and report["parser"].startswith("python-docx/")
    assert report["title"] == "Swimming in the lake"
    headings = [(b["level"], b["text"]) for b in report["blocks"] if b["kind"] == "heading"]
    assert headings == [(1, "Swimming in the lake"), (1, "Let’s swim!"), (2, "Let’s eat")]
    [table] = report["tables"]
    assert table["header"] == ["", "Food", "Calories per portion"]
    assert (table["rows"], table["columns"], table["lines"]) == (4, 3, [20, 23])
    assert table["section_path"] == ["Let’s swim!", "Let’s eat"]
    chunks = report["chunks"]
    assert [c["ordinal"] for c in chunks] == list(range(len(chunks)))
    [table_chunk] = [c for c in chunks if c["kind"] == "table"]
    # One numbering: the Tables section names the table as its chunks do.
    assert table_chunk["table_id"] == table["table_id"] == "t1"
    assert table_chunk["table_id"] and table_chunk["first_row"].startswith("| Leaves |")
    assert table_chunk["lines"] == [20, 23] and table_chunk["pages"] == [1, 1]
    assert all(len(c["text"]) <= 80 and c["tokens"] > 0 for c in chunks)
    assert report["counts"]["chunks"] == len(chunks)


def test_pdf_pages_and_pii_are_reported_masked(tmp_path: Path) -> None:
    report = inspect_file(PDF, Settings())
    assert report["has_pages"] and report["pages"] == 1
    assert {c["pages"][0] for c in report["chunks"]} == {1}
    assert report["counts"]["table_chunks"] >= 2  # the big table is split by rows

    doc = tmp_path / "contacts.md"
    doc.write_text(WITH_PII, "utf-8")
    report = inspect_file(doc, Settings())
    assert report["pii"] == {"cn_mobile": 1, "email": 1}
    shown = json.dumps(report, ensure_ascii=False)
    assert "13812345678" not in shown and "help.desk@example.com" not in shown
    assert "138****5678" in shown


def test_cli_inspect_prints_json_and_opens_no_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGLINE_DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(cli, ["inspect", str(DOCX), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"]["tables"] == 1
    assert not (tmp_path / "data").exists()
    assert not (tmp_path / ".ragline").exists()


def test_cli_inspect_fails_with_the_reason(tmp_path: Path) -> None:
    rtf = tmp_path / "memo.rtf"
    rtf.write_bytes(rb"{\rtf1\ansi Hello\par}")
    result = CliRunner().invoke(cli, ["inspect", str(rtf), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "file": str(rtf),
        "error": ".rtf (RTF) needs a Tika server: set RAGLINE_INGEST__TIKA_URL",
    }


def test_cli_inspect_refuses_binary_content_named_txt(tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_bytes(random.Random(5).randbytes(5000))
    result = CliRunner().invoke(cli, ["inspect", str(junk), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"].startswith("binary content, not text (")


def test_inspect_refuses_a_fifo_instead_of_waiting_on_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    errors: list[str] = []

    def run() -> None:
        try:
            inspect_file(fifo, Settings())
        except RaglineError as exc:
            errors.append(str(exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():  # blocked opening the FIFO for a writer: give it one, then EOF
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("inspect waited on the FIFO")
    assert errors == ["not a regular file (a FIFO)"]
    result = CliRunner().invoke(cli, ["inspect", str(fifo)])
    assert result.exit_code == 1
    assert result.output.strip() == f"cannot parse {fifo}: not a regular file (a FIFO)"


def test_render_shows_every_section() -> None:
    out = io.StringIO()
    render(inspect_file(DOCX, Settings()), Console(file=out, width=120, color_system=None))
    text = out.getvalue()
    for part in ("Blocks", "Chunks", "Tables", "[H2] p1 l16  Let’s eat", "PII masked: none"):
        assert part in text, part
    assert "#2 table p1 l20-23" in text and "| Leaves | Ash, Elm, Maple | 50 |" in text


def test_bench_ingest_reports_rates_per_format(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for f in (PDF, DOCX, EXAMPLES / "zh-个人信息保护法-2021.md"):
        shutil.copy(f, docs / f.name)
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj garbage")
    result = run_ingest_bench(docs, Settings())
    assert sorted(result["per_format"]) == ["docx", "markdown", "pdf"]
    pdf = result["per_format"]["pdf"]
    assert (pdf["files"], pdf["pages"]) == (1, 1)
    assert pdf["chunks"] > 0 and pdf["pages_per_s"] > 0 and pdf["chunks_per_s"] > 0
    assert pdf["seconds"] == pytest.approx(
        pdf["parse_s"] + pdf["mask_s"] + pdf["chunk_s"], abs=0.01
    )
    total = result["total"]
    assert total["files"] == 3
    assert total["chunks"] == sum(f["chunks"] for f in result["per_format"].values())
    [broken] = [f for f in result["files"] if "error" in f]
    assert broken["file"] == "broken.pdf" and "damaged" in broken["error"]
    assert result["target"]["pdf_pages_per_s"] == 20.0
    assert isinstance(result["target"]["met"], bool)


def test_cli_bench_ingest_writes_json(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DOCX, docs / DOCX.name)
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(cli, ["bench", "ingest", "--docs", str(docs), "--json", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text("utf-8"))
    assert written["per_format"]["docx"]["chunks"] == 4
