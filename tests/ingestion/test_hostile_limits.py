"""Hostile-file defences at the parser boundary (issue 14): text sanitising, the total
ZIP expansion bound, and the parse worker's memory cap."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from core.errors import ParseError
from core.types import Block, ParsedDocument
from ingestion.parse import MB, ParseOptions, ParserPool, check_zip, parse_bytes, parse_file
from ingestion.sanitize import sanitize_document, sanitize_text
from ragline.bench.hostile_corpus import many_members_xlsx


def test_sanitize_removes_surrogates_controls_and_nonchars() -> None:
    text = "a\udc43b\x00c\x07d\ufffee\U0010ffff f\u0085g\tkeep\nlines\r\n中文"
    cleaned, removed = sanitize_text(text)
    assert cleaned == "abcde fg\tkeep\nlines\r\n中文"
    assert removed == 6
    cleaned.encode("utf-8")  # what failed before: "surrogates not allowed"
    assert sanitize_text("page\x0cbreak") == ("page\nbreak", 0)


def test_sanitize_document_cleans_every_string_and_says_so() -> None:
    doc = ParsedDocument(
        blocks=(
            Block("heading", "Ti\x00tle", level=1),
            Block("paragraph", "\udcff\x01", section_path=("Ti\x00tle",)),
            Block("table", "| a\udc80 |", rows=(("a\udc80",),), section_path=("Title",)),
        ),
        page_count=1,
        title="T\x00",
        parser="test",
    )
    out = sanitize_document(doc)
    assert [b.text for b in out.blocks] == ["Title", "| a |"]  # the all-invalid block goes
    assert out.blocks[1].rows == (("a",),)
    assert out.title == "T"
    assert out.warnings and "removed 5 invalid character(s)" in out.warnings[-1]
    assert out.blocks[0].section_path == () and out.blocks[1].section_path == ("Title",)


def test_every_format_is_sanitised_at_the_boundary() -> None:
    md = b"# Notes\x00\n\nBody with a bell\x07 and a lone surrogate byte run.\n"
    doc = parse_bytes(md, Path("notes.md"))
    assert "\x00" not in doc.blocks[0].text and "\x07" not in doc.blocks[1].text
    assert any("invalid character" in w for w in doc.warnings)


def test_many_medium_members_are_bounded_in_total() -> None:
    data = many_members_xlsx(8, 16)  # eight 16 MB sheets, each alone under any ratio check
    assert len(data) < MB
    with pytest.raises(ParseError, match=r"expand \d+x in all, to 128\.0 MB") as info:
        check_zip(data)
    assert "across 9 members" in str(info.value)
    with pytest.raises(ParseError, match="zip bomb"):  # before any parser opens it
        parse_bytes(data, Path("sheets.xlsx"))


def test_zip_limits_are_settings_and_messages_state_real_numbers() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("word/document.xml", b"<w/>" + b" " * (40 * MB))
    data = buf.getvalue()
    check_zip(data, max_unzipped=1024 * MB, max_ratio=10_000)  # generous: passes
    with pytest.raises(ParseError) as info:
        check_zip(data, max_unzipped=40 * MB, max_ratio=10_000)
    msg = str(info.value)
    assert "to 40.0 MB in all (41,943,044 bytes), over the 40.0 MB limit (41,943,040 bytes" in msg
    assert "RAGLINE_INGEST_LIMITS__MAX_UNZIPPED_MB" in msg


def test_real_office_files_pass_the_guard() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("word/document.xml", b"<w:p>text</w:p>" * 10_000)
    check_zip(buf.getvalue())


def test_worker_memory_cap_fails_the_file_and_replaces_the_worker(tmp_path: Path) -> None:
    big = tmp_path / "one-line.md"
    big.write_bytes(b"# Big\n\n" + b"word " * (8 * MB) + b"\n")  # 40 MB of text
    small = tmp_path / "ok.md"
    small.write_text("# Fine\n\nA small file parses after the big one failed.\n")
    capped = ParseOptions(worker_memory_mb=300)
    with ParserPool() as pool:
        with pytest.raises(ParseError, match=r"out of memory.*300 MB limit") as info:
            parse_file(big, max_bytes=100 * MB, timeout_s=120, pool=pool, options=capped)
        assert "RAGLINE_INGEST_LIMITS__WORKER_MEMORY_MB" in str(info.value)
        # The worker that ran out was not kept: only its fresh replacement waits.
        assert [w.uses for w in pool.idle] == [0]
        doc = parse_file(small, max_bytes=MB, timeout_s=120, pool=pool, options=capped)
        assert doc.blocks[0].text == "Fine"
        assert 0 < pool.peak_rss_mb < 300
