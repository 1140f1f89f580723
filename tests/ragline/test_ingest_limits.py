"""Work limits after parsing (issue 14): zero chunks from a non-empty file is never a
success, the per-file chunk cap and embedding time limit record their reasons (ingest
line, ingest log, job, inspect), and large files wait for the rest of the batch."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ragline.ingest as ingest_mod
from core.settings import IngestLimitSettings, Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.bench.hostile_corpus import pdf_surrogate_font
from ragline.cli import app as cli
from ragline.ingest import defer_large
from ragline.inspect import inspect_file

OPERATOR = Principal("ops", superuser=True)


def _sections(n: int) -> str:
    return "# Handbook\n\n" + "\n\n".join(
        f"## Rule {i}\n\nRule {i} says that form F-{i} is filed with the registry office "
        f"within {i} days, signed by the applicant and countersigned by a second person."
        for i in range(n)
    )


@pytest.fixture
def rag(tmp_path: Path) -> Any:
    r = Ragline(
        Settings(
            data_dir=tmp_path / "data",
            ingest_limits=IngestLimitSettings(max_chunks_per_file=3, max_embed_s_per_file=60),
        )
    )
    yield r
    r.close()


def test_zero_chunks_from_a_non_empty_file_fails_with_the_reason(
    rag: Ragline, tmp_path: Path
) -> None:
    page = tmp_path / "script.html"
    page.write_text("<html><body><script>var a = 1;</script><img src='x.png'></body></html>")
    (outcome,), _ = rag.ingest([page])
    assert outcome.status == "failed" and outcome.chunks == 0
    assert outcome.reason.startswith("nothing to index: html file of 70 bytes")
    log = rag.stores.metadata.ingest_log()
    assert log[0].status == "failed" and log[0].reason == outcome.reason
    report = inspect_file(page, rag.settings)
    assert report["counts"]["chunks"] == 0
    assert any(w.startswith("nothing to index") for w in report["warnings"])


def test_chunk_cap_keeps_the_first_chunks_and_says_what_was_left_out(
    rag: Ragline, tmp_path: Path
) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text(_sections(12))
    (outcome,), _ = rag.ingest([doc])
    assert outcome.status == "indexed" and outcome.chunks == 3
    (warning,) = outcome.warnings
    assert warning.startswith("only the first 3 of ") and "MAX_CHUNKS_PER_FILE" in warning
    assert outcome.note == "warning: " + warning
    assert rag.stores.metadata.ingest_log()[0].reason == outcome.note
    report = inspect_file(doc, rag.settings)
    assert any(w.startswith("only the first 3 of ") for w in report["warnings"])


def test_cli_ingest_line_shows_the_warning(tmp_path: Path) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text(_sections(12))
    env = {"RAGLINE_INGEST_LIMITS__MAX_CHUNKS_PER_FILE": "2"}
    out = CliRunner().invoke(
        cli, ["ingest", str(doc), "--data-dir", str(tmp_path / "d"), "--json"], env=env
    )
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.output)["files"]
    assert row["status"] == "indexed" and row["chunks"] == 2
    assert row["warnings"][0].startswith("only the first 2 of ")


def test_embedding_past_the_time_limit_fails_the_file_and_keeps_the_old_version(
    rag: Ragline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "handbook.md"
    doc.write_text(_sections(2))
    (first,), _ = rag.ingest([doc])
    assert first.status == "indexed"
    real = rag.embedder.embed_passages

    def slow(texts: Any) -> Any:
        time.sleep(0.3)
        return real(texts)

    monkeypatch.setattr(rag.embedder, "embed_passages", slow)
    monkeypatch.setattr(ingest_mod, "EMBED_SLICE", 1)
    rag.settings.ingest_limits.max_embed_s_per_file = 0.2
    doc.write_text(_sections(3))
    (second,), _ = rag.ingest([doc])
    assert second.status == "failed"
    assert second.reason.startswith("embedding took longer than 0.2s for this file (1 of 3")
    assert rag.stores.metadata.current_version(first.doc_id) == first.version


def test_large_files_go_last_smallest_first(tmp_path: Path) -> None:
    sizes = {"a": 3, "b": 1, "c": 2, "d": 0}  # MB
    paths = []
    for name, mb in sizes.items():
        p = tmp_path / f"{name}.txt"
        p.write_bytes(b"x" * (mb * 2**20 + 10))
        paths.append(p)
    order, deferred = defer_large(paths, over_mb=1)
    # b (1 MB + 10 bytes) and the rest over 1 MB are deferred, smallest first; d stays.
    assert [paths[i].stem for i in order] == ["d", "b", "c", "a"]
    assert deferred == 3
    assert defer_large(paths, over_mb=0) == ([0, 1, 2, 3], 0)


def test_batch_reports_in_found_order_after_deferring(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a-big.md").write_text(_sections(1) + "\n\n" + "filler words here. " * 70_000)
    (folder / "b-small.md").write_text(_sections(1))
    settings = Settings(
        data_dir=tmp_path / "data",
        ingest_limits=IngestLimitSettings(max_chunks_per_file=2, defer_files_over_mb=1),
    )
    seen: list[str] = []
    with_rag = Ragline(settings)
    try:
        outcomes, _ = with_rag.ingest(
            [folder], progress=lambda o, *_: seen.append(Path(o.path).name)
        )
    finally:
        with_rag.close()
    assert seen == ["b-small.md", "a-big.md"]  # the big one waited
    assert [Path(o.path).name for o in outcomes] == ["a-big.md", "b-small.md"]
    assert all(o.status == "indexed" for o in outcomes)


def test_a_file_of_headings_only_is_indexed_with_a_warning(rag: Ragline, tmp_path: Path) -> None:
    page = tmp_path / "log.html"
    page.write_text("<html><body><h1>Server log</h1><pre></pre></body></html>")
    (outcome,), _ = rag.ingest([page])
    assert outcome.status == "indexed" and outcome.chunks == 1
    assert outcome.warnings[-1].startswith("only 1 heading(s) and no body text")


def test_pdf_whose_font_maps_to_lone_surrogates_indexes_and_answers(
    rag: Ragline, tmp_path: Path
) -> None:
    """Issue 14, item 5: this ended with `UnicodeEncodeError: surrogates not allowed`."""
    pdf = tmp_path / "damaged-font.pdf"
    pdf.write_bytes(pdf_surrogate_font())
    (outcome,), _ = rag.ingest([pdf])
    assert outcome.status == "indexed" and outcome.chunks == 1, outcome
    assert any("invalid character" in w for w in outcome.warnings)
    hits = rag.search("retention of wombat invoices", OPERATOR).hits
    assert hits and "\udc43" not in hits[0].chunk.text
    report = inspect_file(pdf, rag.settings)  # inspect crashed on the same file
    assert any("invalid character" in w for w in report["warnings"])
