"""Hostile and odd inputs: every one ends in a parse or a ParseError with a usable reason."""

from __future__ import annotations

import io
import sys
import time
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # until pyproject sets pytest's pythonpath
    sys.path.insert(0, str(ROOT))

from core.errors import NeedsOCR, ParseError, UnsupportedFormat  # noqa: E402
from ingestion.parse import (  # noqa: E402
    MB,
    ParserPool,
    detect_format,
    parse_bytes,
    parse_file,
)
from ragline.bench.hostile_corpus import pdf_bytes  # noqa: E402

ZH = "第一章 总则\n\n为了保护个人信息权益，规范个人信息处理活动，促进个人信息合理利用，制定本法。\n"
ZH_TW = "第一章 總則\n\n為了保護個人資訊權益，規範個人資訊處理活動，促進個人資訊合理利用。\n"


@pytest.fixture(scope="module")
def pool():  # type: ignore[no-untyped-def]
    with ParserPool() as workers:
        yield workers


def _pdf(objs: list[bytes], trailer_extra: bytes = b"") -> bytes:
    return pdf_bytes(objs, trailer_extra=trailer_extra)


PAGE_OBJS = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
]


def test_zero_byte_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    with pytest.raises(ParseError, match="empty"):
        parse_file(path, max_bytes=MB, timeout_s=30, isolate=False)


def test_corrupt_pdf(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="damaged") as info:
        parse_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage", Path("x.pdf"))
    assert not isinstance(info.value, NeedsOCR)


def test_encrypted_pdf() -> None:
    enc = (
        b"<< /Filter /Standard /V 1 /R 2 /O <" + b"11" * 32 + b"> /U <" + b"22" * 32 + b"> /P -4 >>"
    )
    data = _pdf([*PAGE_OBJS, enc], b"/Encrypt 4 0 R /ID [<%s><%s>]" % (b"ab" * 16, b"ab" * 16))
    with pytest.raises(ParseError, match="encrypted"):
        parse_bytes(data, Path("secret.pdf"))


def test_pdf_without_text_needs_ocr() -> None:
    with pytest.raises(NeedsOCR, match="OCR"):
        parse_bytes(_pdf(PAGE_OBJS), Path("scan.pdf"))


def test_pdf_that_is_really_html(tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(
        b"<!DOCTYPE html><html><head><title>T</title></head><body>"
        b"<nav>Home | About</nav><h1>Quarterly report</h1>"
        b"<p>Revenue grew by 12 percent in the third quarter.</p></body></html>"
    )
    doc = parse_file(path, max_bytes=MB, timeout_s=30, isolate=False)
    assert doc.parser.startswith("lxml/")
    assert [b.kind for b in doc.blocks] == ["heading", "paragraph"]
    assert "Home" not in doc.blocks[1].text


def test_legacy_word_needs_tika() -> None:
    with pytest.raises(UnsupportedFormat, match="RAGLINE_INGEST__TIKA_URL"):
        detect_format(Path("old.doc"), b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100)
    with pytest.raises(UnsupportedFormat, match=r"unsupported file type \.bin"):
        detect_format(Path("blob.bin"), b"\x00\x01\x02\x03" * 100)


def test_zip_bomb_docx_rejected(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open("word/document.xml", "w") as member:
            chunk = b"\0" * MB
            for _ in range(200):
                member.write(chunk)
    data = buf.getvalue()
    assert len(data) < 2 * MB
    path = tmp_path / "bomb.docx"
    path.write_bytes(data)
    with pytest.raises(ParseError, match="zip bomb"):
        parse_file(path, max_bytes=10 * MB, timeout_s=30, isolate=False)


def test_corrupt_docx(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="zip"):
        parse_bytes(b"PK\x03\x04word/" + b"\x00" * 200, Path("broken.docx"))


def test_oversize_file_checked_before_reading(tmp_path: Path, pool: ParserPool) -> None:
    path = tmp_path / "huge.pdf"
    with path.open("wb") as f:
        f.truncate(250 * MB)  # sparse: no disk used, never read
    with pytest.raises(ParseError) as info:
        parse_file(path, max_bytes=200 * MB, timeout_s=30, pool=pool)
    assert str(info.value) == (
        "file is 250.0 MB, over the 200 MB limit (RAGLINE_INGEST__MAX_FILE_MB)"
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (ZH.encode("gbk"), "为了保护个人信息权益"),
        (ZH.encode("gb18030"), "为了保护个人信息权益"),
        (ZH_TW.encode("big5"), "為了保護個人資訊權益"),
        (ZH.encode("utf-16"), "为了保护个人信息权益"),
        (ZH.encode("utf-8-sig"), "为了保护个人信息权益"),
    ],
)
def test_text_encodings(data: bytes, expected: str) -> None:
    doc = parse_bytes(data, Path("notes.txt"))
    assert doc.blocks[0].kind == "heading" and doc.blocks[0].text.startswith("第一章")
    assert doc.blocks[1].text.startswith(expected)
    assert doc.blocks[1].section_path == (doc.blocks[0].text,)
    assert doc.blocks[1].line_start == 3


JA = "これはテスト文書です。倉庫の管理について説明します。"
JA_2 = "日本語の文章です。東京都の天気は晴れです。"  # in EUC-JP, the detector says Korean
KO = "이것은 테스트 문서입니다. 창고 관리에 대해 설명합니다."


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        pytest.param(JA, "shift_jis", id="ja-shift_jis"),
        pytest.param(JA, "cp932", id="ja-cp932"),
        pytest.param(JA, "euc_jp", id="ja-euc_jp"),
        pytest.param(JA_2, "shift_jis", id="ja2-shift_jis"),
        pytest.param(JA_2, "euc_jp", id="ja2-euc_jp"),
        pytest.param(KO, "euc_kr", id="ko-euc_kr"),
        pytest.param(KO, "cp949", id="ko-cp949"),
    ],
)
def test_japanese_and_korean_legacy_encodings_are_not_read_as_chinese(
    text: str, encoding: str
) -> None:
    """GB18030 decodes Shift-JIS, EUC-JP and EUC-KR bytes without an error, into Han
    characters: it must not override a detector that read them right."""
    from ingestion.parsers._common import decode

    data = f"# {text[:6]}\n\n{text}\n".encode(encoding)
    decoded, used = decode(data)
    assert decoded == data.decode(encoding) and used != "gb18030"
    doc = parse_bytes(data, Path("notes.txt"))
    assert text in [b.text for b in doc.blocks]


@pytest.mark.parametrize("encoding", ["gbk", "gb18030", "big5"])
def test_short_chinese_text_the_detector_calls_korean_stays_chinese(encoding: str) -> None:
    """Too little text to show a language: the Chinese default wins over a detector's
    Japanese or Korean guess (GBK "第十一条 国" reads as spaced Hangul in Johab)."""
    from ingestion.parsers._common import decode

    for text in ("第十一条 国", "北京欢迎你", "。\n\n第五十条 个人", "8 版本", "牌 光明报系 更多&"):
        data = text.encode(encoding, errors="ignore")
        assert decode(data)[0] == data.decode(encoding), text


def test_csv_is_one_table() -> None:
    doc = parse_bytes("城市,人口\n北京,2189\n上海,2487\n".encode("gbk"), Path("cities.csv"))
    (table,) = doc.blocks
    assert table.kind == "table" and table.rows == (
        ("城市", "人口"),
        ("北京", "2189"),
        ("上海", "2487"),
    )


def test_markdown_code_fence_and_setext() -> None:
    md = (
        b"---\ntitle: Guide\n---\nIntro\n=====\n\nText.\n\n```bash\n# not a heading\n```\n\n"
        b"Sub\n---\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    doc = parse_bytes(md, Path("guide.md"))
    assert doc.title == "Guide"
    kinds = [(b.kind, b.text.splitlines()[0]) for b in doc.blocks]
    assert kinds == [
        ("heading", "Intro"),
        ("paragraph", "Text."),
        ("code", "# not a heading"),
        ("heading", "Sub"),
        ("table", "| a | b |"),
    ]
    assert doc.blocks[0].line_start == 4 and doc.blocks[3].level == 2


def test_docx_headings_inferred_without_styles() -> None:
    import docx

    d = docx.Document()
    d.add_paragraph("第一章 总则")
    d.add_paragraph("这是一个普通的段落，说明本制度的目的和适用范围，内容比较长。")
    d.add_paragraph().add_run("Scope of this policy").bold = True
    d.add_paragraph("Ordinary body text that explains things in a full sentence.")
    buf = io.BytesIO()
    d.save(buf)
    doc = parse_bytes(buf.getvalue(), Path("policy.docx"))
    assert [(b.kind, b.level) for b in doc.blocks] == [
        ("heading", 1),
        ("paragraph", 0),
        ("heading", 2),
        ("paragraph", 0),
    ]


def test_eml_with_attachment() -> None:
    msg = EmailMessage()
    msg["From"] = "alice@example.com"
    msg["To"] = "bob@example.com"
    msg["Subject"] = "Quarterly numbers"
    msg["Date"] = "Mon, 02 Mar 2026 10:00:00 +0000"
    msg.set_content("Hi Bob,\n\nnumbers attached.\n")
    msg.add_attachment(
        b"region,revenue\nnorth,10\nsouth,20\n", maintype="text", subtype="csv", filename="q3.csv"
    )
    doc = parse_bytes(bytes(msg), Path("mail.eml"))
    assert doc.title == "Quarterly numbers"
    assert doc.blocks[0].text.startswith("From: alice@example.com")
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.section_path == ("q3.csv",) and table.rows[1] == ("north", "10")


def test_isolated_parse_matches_in_process(tmp_path: Path, pool: ParserPool) -> None:
    path = tmp_path / "doc.md"
    path.write_text("# Title\n\nSome text.\n", encoding="utf-8")
    isolated = parse_file(path, max_bytes=MB, timeout_s=60, pool=pool)
    assert isolated == parse_file(path, max_bytes=MB, timeout_s=60, isolate=False)


def test_timeout_kills_worker_and_next_file_still_parses(tmp_path: Path, pool: ParserPool) -> None:
    slow = tmp_path / "slow.txt"
    # ~8 MB of short numbered lines: well over a second of parsing.
    slow.write_text(
        "".join(f"{i}.1 Heading {i}\nbody line {i}.\n\n" for i in range(300_000)), encoding="utf-8"
    )
    ok = tmp_path / "ok.txt"
    ok.write_text("hello world\n", encoding="utf-8")
    # Warm a worker first: the timeout measures parse time only.
    parse_file(ok, max_bytes=MB, timeout_s=60, pool=pool)
    started = time.monotonic()
    with pytest.raises(
        ParseError,
        match=r"parse took longer than 0.2s "
        r"\(RAGLINE_INGEST__PARSE_TIMEOUT_S\)",
    ):
        parse_file(slow, max_bytes=100 * MB, timeout_s=0.2, pool=pool)
    assert time.monotonic() - started < 5
    assert parse_file(ok, max_bytes=MB, timeout_s=60, pool=pool).blocks[0].text == "hello world"


def test_worker_error_keeps_its_type(tmp_path: Path, pool: ParserPool) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(_pdf(PAGE_OBJS))
    with pytest.raises(NeedsOCR):
        parse_file(path, max_bytes=MB, timeout_s=60, pool=pool)
    missing = tmp_path / "missing.pdf"
    with pytest.raises(ParseError, match="not found"):
        parse_file(missing, max_bytes=MB, timeout_s=60, pool=pool)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("nul.md", b"# T\n\nHello\x00World md\x07bell text.\n"),
        ("nul.html", b"<html><body><p>Hello\x00World html text\x07bell</p></body></html>"),
        ("nul.txt", b"Hello\x00World plain text. Also bell\x07here.\n"),
    ],
)
def test_control_characters_are_removed_and_counted_in_every_text_format(
    name: str, data: bytes
) -> None:
    """Markdown kept NUL as U+FFFD (markdown-it's doing), HTML removed both without a
    warning, and plain text said 1 removed for 2."""
    doc = parse_bytes(data, Path(name))
    text = " ".join(b.text for b in doc.blocks)
    assert "HelloWorld" in text and "\ufffd" not in text
    assert any("removed 2 invalid character(s)" in w for w in doc.warnings), doc.warnings
