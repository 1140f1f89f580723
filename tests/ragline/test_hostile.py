"""Hostile corpus, quick variant (issue 14): a few dozen seeded hostile files next to good
documents. Every file ends failed with a reason or indexed with chunks (warnings allowed);
no crash, no hang past the limits, workers under the memory cap; afterwards the stores agree
and the good documents still answer. The full 300+ file run is `ragline bench hostile`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import RaglineError
from core.settings import IngestLimitSettings, IngestSettings, Settings
from ragline.app import Ragline
from ragline.bench.hostile import run_hostile
from ragline.bench.hostile_corpus import find_shared_docs
from ragline.inspect import inspect_file

DOCS = find_shared_docs(Path(__file__).resolve())
# Small and varied: every format, pages and sections, Chinese and English.
SOURCES = (
    "md/zh-个人信息保护法-2021.md",
    "html/zh-gmw-science.html",
    "docx/en-docling-word_sample.docx",
    "xlsx/en-IDA_Statement_Of_Cash_Flows__FY2011.xlsx",
    "pdf/en-nics-background-checks-2015-11.pdf",
    "pdf/zh-安徽省建设用地使用标准-表7.5.pdf",
    "md/zh-tidb-hardware-and-software-requirements.md",
)
GOOD = ("md/zh-个人信息保护法-2021.md", "pdf/en-nics-background-checks-2015-11.pdf")


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if DOCS is None:
        pytest.skip("shared/data/docs not found beside the repository")
    root = tmp_path_factory.mktemp("hostile")
    settings = Settings(
        data_dir=root / "data",
        ingest=IngestSettings(parse_timeout_s=60),
        ingest_limits=IngestLimitSettings(
            worker_memory_mb=1024,
            max_chunks_per_file=20,
            max_embed_s_per_file=120,
            defer_files_over_mb=1,
        ),
    )
    rag = Ragline(settings)
    try:
        sources = [DOCS / s for s in SOURCES]
        return run_hostile(rag, root, sources, [DOCS / g for g in GOOD], 12, seed=14, scale=0.05)
    finally:
        rag.close()


def test_every_file_ends_failed_with_reason_or_indexed_with_chunks(result: dict) -> None:
    assert result["files"] >= 30
    assert result["problems"] == []
    for row in result["files_detail"]:
        if row["status"] == "failed":
            assert row["reason"] and not row["reason"].startswith("internal error"), row
        else:
            assert row["status"] in ("indexed", "unchanged"), row
            assert row["status"] == "unchanged" or row["chunks"] > 0, row


def test_known_hostile_cases_get_their_reasons(result: dict) -> None:
    rows = {r["file"]: r for r in result["files_detail"]}
    many = rows["c-many-sheets.xlsx"]  # eight 16 MB sheets in ~300 KB: total bounded
    assert many["status"] == "failed" and "in all" in many["reason"], many
    assert "zip bomb" in rows["c-zip-bomb.docx"]["reason"]
    assert rows["c-empty.txt"]["reason"] == "file is empty (0 bytes)"
    for name in ("c-script-only.html", "c-blank.md"):  # non-empty, nothing to index
        assert rows[name]["status"] == "failed", rows[name]
        assert rows[name]["reason"].startswith("nothing to index"), rows[name]
    for name in ("c-empty.xlsx", "c-huge-pre.html"):  # if only headings survive: said so
        row = rows[name]
        if row["status"] == "indexed" and row["chunks"] == 1:
            assert any("only 1 heading(s) and no body text" in w for w in row["warnings"]), row
    surrogate = rows["c-surrogate-font.pdf"]
    assert surrogate["status"] == "indexed", surrogate
    assert any("invalid character" in w for w in surrogate["warnings"]), surrogate
    control = rows["c-control.txt"]
    assert control["status"] == "indexed", control
    assert any("invalid character" in w for w in control["warnings"]), control
    long_line = rows["c-one-line.md"]  # 1 MB on one line: capped at 20 chunks, said so
    assert long_line["status"] == "indexed" and long_line["chunks"] == 20, long_line
    assert any("only the first 20" in w for w in long_line["warnings"]), long_line


def test_byte_flips_never_reach_the_embedder_as_invalid_text(result: dict) -> None:
    flipped = [r for r in result["files_detail"] if r["kind"] in ("flip", "zero", "truncate")]
    assert flipped
    assert not any("UnicodeEncodeError" in r["reason"] for r in flipped)


def test_limits_memory_stores_and_good_documents(result: dict) -> None:
    assert result["max_file_s"] <= result["file_bound_s"]
    assert 0 < result["worker_peak_rss_mb"] <= result["worker_memory_cap_mb"]
    assert result["sync_errors"] == {}
    assert result["check_clean"], result["divergences"]
    probes = result["good_probes"]
    assert probes["asked"] == len(GOOD)
    assert probes["found_top5"] == probes["asked"], probes["misses"]
    assert probes["cited"] == probes["asked"], probes["misses"]
    assert result["ok"]


def test_inspect_never_crashes_on_the_corpus(result: dict) -> None:
    """`ragline inspect` (in-process here, for speed): a report or a reason, nothing else;
    a report with no chunks says why."""
    settings = Settings(ingest=IngestSettings(isolate=False))
    for path in sorted(Path(result["corpus_dir"]).iterdir()):
        try:
            report = inspect_file(path, settings)
        except RaglineError as exc:
            assert str(exc), path
            continue
        assert report["counts"]["chunks"] > 0 or report["warnings"], path
        json.dumps(report, ensure_ascii=False).encode("utf-8")  # no lone surrogates
