"""Tika backend: XHTML -> ParsedDocument on canned server output, the client's error
handling on a mock transport, the routing in parse_bytes, and (marked `integration`) a real
Tika server at RAGLINE_TEST_TIKA_URL (`deploy/local/services up tika`)."""

from __future__ import annotations

import io
import os
import zipfile
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

from core.errors import ParseError, UnsupportedFormat
from core.types import ParsedDocument
from ingestion import tika
from ingestion.parse import (
    NativeParserFailed,
    ParseOptions,
    ParserPool,
    TikaRequired,
    detect_format,
    document_format,
    parse_bytes,
    parse_file,
)
from ingestion.tika import TikaClient, rmeta_to_document, xhtml_to_document

MB = 2**20
SHARED_DOCS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs"
RTF = rb"{\rtf1\ansi Hello Tika world\par Second paragraph about quokkas\par}"

# Shaped like Tika 3's `/tika` (Accept: text/html) output for a two-page PDF.
PDF_XHTML = """<html xmlns="http://www.w3.org/1999/xhtml"><head>
<meta name="X-TIKA:Parsed-By" content="org.apache.tika.parser.pdf.PDFParser"/>
<title>Annual Report</title></head>
<body><div class="page"><p/>
<p>Annual Report 2023
Prepared by the finance team</p>
<p>Revenue grew by twelve
percent.

Costs fell.</p>
</div>
<div class="page"><p/>
<h2>Outlook</h2>
<p>We expect growth.</p>
<table><tbody><tr><td><p>Region</p></td><td><p>Sales</p></td></tr>
<tr><td><p>North</p></td><td><p>42</p></td></tr>
<tr><td><p>South</p></td><td><p>17</p></td></tr></tbody></table>
</div></body></html>"""

# Shaped like Tika's `/rmeta/html` for an Outlook message with a Word attachment.
MSG_RMETA = [
    {
        "X-TIKA:Parsed-By": [
            "org.apache.tika.parser.DefaultParser",
            "org.apache.tika.parser.microsoft.OutlookExtractor",
        ],
        "dc:title": "Budget meeting",
        "X-TIKA:content": "<html><head><title>Budget meeting</title></head><body>"
        "<h1>Budget meeting</h1><p>Please read the attached minutes.</p>"
        "<ul><li>Agenda</li><li>Minutes</li></ul></body></html>",
    },
    {
        "resourceName": "minutes.doc",
        "Content-Type": "application/msword",
        "X-TIKA:content": "<html><body><h1>Minutes</h1><p>The board approved the budget."
        "</p></body></html>",
    },
    {"resourceName": "logo.png", "Content-Type": "image/png", "X-TIKA:content": ""},
    {
        "resourceName": "broken.xls",
        "Content-Type": "application/vnd.ms-excel",
        "X-TIKA:EXCEPTION:embedded_exception": "org.apache.poi.EncryptedDocumentException: "
        "password protected\n\tat ...",
    },
]


def test_pages_paragraphs_headings_and_tables_survive() -> None:
    doc = xhtml_to_document(PDF_XHTML, "report.pdf", "tika/3.3.2")
    assert doc.has_pages and doc.page_count == 2
    assert doc.parser == "tika/3.3.2"
    got = [(b.kind, b.page, b.line_start, b.line_end, b.text) for b in doc.blocks]
    assert got[:3] == [
        ("paragraph", 1, 1, 2, "Annual Report 2023 Prepared by the finance team"),
        # A <p> holding a blank line is two paragraphs; wrapped lines are joined.
        ("paragraph", 1, 3, 4, "Revenue grew by twelve percent."),
        ("paragraph", 1, 5, 5, "Costs fell."),
    ]
    heading, para, table = doc.blocks[3:]
    assert (heading.kind, heading.level, heading.page, heading.line_start) == ("heading", 2, 2, 1)
    assert para.section_path == ("Outlook",) and para.line_start == 2
    assert table.kind == "table" and table.page == 2
    assert table.rows == (("Region", "Sales"), ("North", "42"), ("South", "17"))
    assert (table.line_start, table.line_end) == (3, 5)
    assert table.text.splitlines()[0] == "| Region | Sales |"


def test_title_falls_back_to_first_h1_then_file_name() -> None:
    assert (
        xhtml_to_document("<html><body><h1>Policy</h1><p>x</p></body></html>", "a.rtf").title
        == "Policy"
    )
    assert xhtml_to_document("<html><body><p>text</p></body></html>", "memo.rtf").title == "memo"


def test_plain_text_content_splits_on_blank_lines() -> None:
    doc = xhtml_to_document("First line\nstill first\n\n\nSecond", "notes.rtf")
    assert [(b.text, b.line_start, b.line_end) for b in doc.blocks] == [
        ("First line still first", 1, 2),
        ("Second", 3, 3),
    ]
    assert not doc.has_pages


def test_attachments_follow_under_their_name_and_errors_become_warnings() -> None:
    doc = rmeta_to_document(MSG_RMETA, "meeting.msg", "tika/3.3.2")
    assert doc.title == "Budget meeting"
    assert doc.parser == "tika/3.3.2:OutlookExtractor"
    assert not doc.has_pages
    kinds = [(b.kind, b.text, b.section_path) for b in doc.blocks]
    assert kinds == [
        ("heading", "Budget meeting", ()),
        ("paragraph", "Please read the attached minutes.", ("Budget meeting",)),
        ("list", "- Agenda\n- Minutes", ("Budget meeting",)),
        ("heading", "Minutes", ("minutes.doc",)),
        ("paragraph", "The board approved the budget.", ("minutes.doc", "Minutes")),
    ]
    # Lines keep counting through the attachment in a page-less document.
    assert [b.line_start for b in doc.blocks] == [1, 2, 3, 5, 6]
    assert doc.warnings == (
        "attachment 'broken.xls' skipped: org.apache.poi.EncryptedDocumentException: "
        "password protected",
    )


def test_attachment_of_a_paged_document_starts_a_new_page() -> None:
    entries = [
        {"X-TIKA:content": PDF_XHTML},
        {
            "resourceName": "note.txt",
            "X-TIKA:content": "<html><body><p>Attached note</p></body></html>",
        },
    ]
    doc = rmeta_to_document(entries, "report.pdf")
    last = doc.blocks[-1]
    assert (last.text, last.page, last.line_start, last.section_path) == (
        "Attached note",
        3,
        1,
        ("note.txt",),
    )
    assert doc.page_count == 3


def test_container_failure_without_text_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="Tika could not parse the file"):
        rmeta_to_document(
            [{"X-TIKA:EXCEPTION:container_exception": "TikaException: boom", "X-TIKA:content": ""}],
            "x.doc",
        )
    with pytest.raises(ParseError, match="no text"):
        xhtml_to_document("<html><body><p>  </p></body></html>", "empty.doc")


def test_write_limit_is_reported() -> None:
    entries = [
        {
            "X-TIKA:content": "<html><body><p>cut here</p></body></html>",
            "X-TIKA:EXCEPTION:write_limit_reached": "true",
        }
    ]
    assert any("write limit" in w for w in rmeta_to_document(entries, "big.doc").warnings)


# ------------------------------------------------------------------ client, mocked


def _client(handler: httpx.MockTransport) -> TikaClient:
    return TikaClient("http://tika.test:9998/", 5.0, transport=handler)


def test_client_sends_the_file_with_ocr_off_and_reads_rmeta() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/version":
            return httpx.Response(200, text="Apache Tika 3.3.2\n")
        return httpx.Response(200, json=MSG_RMETA)

    with _client(httpx.MockTransport(handle)) as client:
        doc = client.parse(b"fake bytes", "会议纪要.msg")
    put = next(r for r in seen if r.method == "PUT")
    assert put.url.path == "/rmeta/html" and put.content == b"fake bytes"
    assert put.headers["X-Tika-OCRskipOcr"] == "true"
    assert put.headers["Content-Disposition"] == 'attachment; filename="document.msg"'
    assert doc.parser == "tika/3.3.2:OutlookExtractor"


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(422, text="encrypted"), "encrypted or damaged"),
        (httpx.Response(500, text="java.lang.OutOfMemoryError\n\tat x"), "HTTP 500"),
        (httpx.Response(200, text="not json"), "not JSON"),
        (httpx.Response(200, json=[]), "no result"),
    ],
)
def test_client_errors_carry_a_reason(response: httpx.Response, message: str) -> None:
    client = _client(httpx.MockTransport(lambda request: response))
    with pytest.raises(ParseError, match=message):
        client.parse(b"x", "a.doc")


def test_unsupported_media_type_is_unsupported_format() -> None:
    client = _client(httpx.MockTransport(lambda request: httpx.Response(415)))
    with pytest.raises(UnsupportedFormat, match="cannot parse this file type"):
        client.parse(b"x", "a.xyz")


def test_unreachable_and_slow_servers_name_the_setting() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    def stall(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(ParseError, match=r"unreachable.*RAGLINE_INGEST__TIKA_URL"):
        _client(httpx.MockTransport(refuse)).parse(b"x", "a.doc")
    with pytest.raises(ParseError, match=r"within 5s.*TIKA_TIMEOUT_S"):
        _client(httpx.MockTransport(stall)).parse(b"x", "a.doc")


# ---------------------------------------------------------------- routing in parse


def test_without_tika_those_formats_fail_with_the_setting_to_fill_in(tmp_path: Path) -> None:
    path = tmp_path / "memo.rtf"
    path.write_bytes(RTF)
    with pytest.raises(TikaRequired, match="RAGLINE_INGEST__TIKA_URL") as info:
        parse_file(path, max_bytes=MB, timeout_s=30, isolate=False)
    assert info.value.fmt == "rtf"
    for name in ("memo.doc", "mail.msg"):
        with pytest.raises(TikaRequired, match="needs a Tika server"):
            detect_format(Path(name), b"PK\x03\x04" + b"\0" * 64)
    # PowerPoint and OpenDocument text and sheets are parsed natively (ingestion/parsers).
    for name, fmt in (("deck.pptx", "pptx"), ("letter.odt", "odf"), ("slides.odp", "odf")):
        assert detect_format(Path(name), b"PK\x03\x04" + b"\0" * 64) == fmt
    assert document_format(path, RTF, ParseOptions(tika_url="http://t")) == "rtf"


@pytest.fixture
def tika_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace TikaClient inside parse_bytes by a fake; the list records what it parsed."""
    calls: list[str] = []

    class FakeTika:
        def __init__(self, url: str, timeout_s: float) -> None:
            self.url = url

        def __enter__(self) -> FakeTika:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def parse(self, data: bytes, name: str) -> ParsedDocument:
            calls.append(name)
            return xhtml_to_document("<html><body><p>from tika</p></body></html>", name, "tika/x")

    monkeypatch.setattr(tika, "TikaClient", FakeTika)
    return calls


def test_tika_formats_go_to_tika_when_configured(tika_calls: list[str]) -> None:
    doc = parse_bytes(RTF, Path("memo.rtf"), ParseOptions(tika_url="http://t"))
    assert doc.parser == "tika/x" and tika_calls == ["memo.rtf"]


def test_native_library_failure_falls_back_to_tika(
    tika_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ingestion.parsers import text

    def choke(data: bytes, name: str) -> ParsedDocument:
        raise KeyError("library bug")

    monkeypatch.setattr(text, "parse", choke)
    with pytest.raises(NativeParserFailed, match="KeyError"):
        parse_bytes(b"hello", Path("a.txt"))
    doc = parse_bytes(b"hello", Path("a.txt"), ParseOptions(tika_url="http://t"))
    assert doc.blocks[0].text == "from tika"
    assert doc.warnings[0].startswith("native text parser failed")


def test_hostile_files_never_go_to_tika(tika_calls: list[str], tmp_path: Path) -> None:
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf,
        zf.open("word/document.xml", "w") as member,
    ):
        for _ in range(200):
            member.write(b"\0" * MB)
    options = ParseOptions(tika_url="http://t")
    with pytest.raises(ParseError, match="zip"):
        parse_bytes(buf.getvalue(), Path("bomb.docx"), options)
    big = tmp_path / "big.pdf"
    big.write_bytes(b"%PDF-1.4\n" + b"0" * 2 * MB)
    with pytest.raises(ParseError, match="over the"):
        parse_file(big, max_bytes=MB, timeout_s=30, isolate=False, options=options)
    assert tika_calls == []


def test_email_attachment_needing_tika_is_reported_without_it() -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "a@example.com", "b@example.com", "Minutes"
    msg.set_content("See attached.")
    msg.add_attachment(RTF, maintype="application", subtype="rtf", filename="minutes.rtf")
    doc = parse_bytes(msg.as_bytes(), Path("mail.eml"))
    assert any("minutes.rtf" in w and "Tika" in w for w in doc.warnings)


# ---------------------------------------------------------- a real Tika server


def _tika_url() -> str:
    url = os.environ.get("RAGLINE_TEST_TIKA_URL", "")
    if not url:
        pytest.skip(
            "RAGLINE_TEST_TIKA_URL not set (deploy/local/services up tika; "
            'eval "$(deploy/local/env.sh)")'
        )
    try:
        with TikaClient(url, 10) as client:
            client.version()
    except ParseError as exc:
        pytest.skip(f"no Tika server answering at {url}: {exc}")
    return url


def _odt() -> bytes:
    content = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.2">
<office:body><office:text>
<text:h text:outline-level="1">Quarterly Report</text:h>
<text:p>Revenue grew by twelve percent.</text:p>
<text:h text:outline-level="2">Regions</text:h>
<table:table table:name="T1"><table:table-column table:number-columns-repeated="2"/>
<table:table-row><table:table-cell><text:p>Region</text:p></table:table-cell>
<table:table-cell><text:p>Sales</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>North</text:p></table:table-cell>
<table:table-cell><text:p>42</text:p></table:table-cell></table:table-row>
</table:table>
<text:p>第一条 为了保护个人信息权益，制定本法。</text:p>
</office:text></office:body></office:document-content>"""
    manifest = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
 manifest:version="1.2">
<manifest:file-entry manifest:full-path="/"
 manifest:media-type="application/vnd.oasis.opendocument.text"/>
<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
</manifest:manifest>"""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.text")  # stored, first
        zf.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
        zf.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
    return buf.getvalue()


@pytest.mark.integration
def test_real_tika_parses_hand_written_rtf_in_a_worker(tmp_path: Path) -> None:
    url = _tika_url()
    path = tmp_path / "memo.rtf"
    path.write_bytes(RTF)
    with ParserPool() as pool:  # the isolated path: Tika is called from the worker
        doc = parse_file(
            path, max_bytes=MB, timeout_s=60, pool=pool, options=ParseOptions(tika_url=url)
        )
    assert doc.parser.startswith("tika/") and doc.parser.endswith(":RTFParser")
    assert [b.text for b in doc.blocks] == ["Hello Tika world", "Second paragraph about quokkas"]
    assert [(b.line_start, b.line_end) for b in doc.blocks] == [(1, 1), (2, 2)]


@pytest.mark.integration
def test_real_tika_keeps_odt_headings_tables_and_chinese(tmp_path: Path) -> None:
    # Ingest parses ODT natively now (ingestion/parsers/odf.py, checked on the same file
    # below); Tika's reading of it is still what the fallback gives.
    url = _tika_url()
    with TikaClient(url, 60) as client:
        doc = client.parse(_odt(), "report.odt")
    assert doc.parser.startswith("tika/")
    _assert_quarterly_report(doc)
    path = tmp_path / "report.odt"
    path.write_bytes(_odt())
    native = parse_file(
        path, max_bytes=MB, timeout_s=60, isolate=False, options=ParseOptions(tika_url=url)
    )
    assert native.parser.startswith("lxml-odf/")
    _assert_quarterly_report(native)


def _assert_quarterly_report(doc: ParsedDocument) -> None:
    assert doc.title == "Quarterly Report"
    headings = [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings == [(1, "Quarterly Report"), (2, "Regions")]
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.rows == (("Region", "Sales"), ("North", "42"))
    assert table.section_path == ("Quarterly Report", "Regions")
    assert doc.blocks[-1].text == "第一条 为了保护个人信息权益，制定本法。"


@pytest.mark.integration
def test_real_tika_pdf_keeps_page_numbers() -> None:
    url = _tika_url()
    pdf = SHARED_DOCS / "pdf" / "en-federal-register-2020-17221.pdf"
    if not pdf.is_file():
        pytest.skip(f"shared document not present: {pdf}")
    with TikaClient(url, 60) as client:
        doc = client.parse(pdf.read_bytes(), pdf.name)
        native = parse_file(pdf, max_bytes=50 * MB, timeout_s=60, isolate=False)
    assert doc.has_pages and doc.page_count == native.page_count > 1
    assert {b.page for b in doc.blocks} == set(range(1, doc.page_count + 1))


@pytest.mark.integration
def test_real_tika_parses_an_email_attachment(tmp_path: Path) -> None:
    url = _tika_url()
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "a@example.com", "b@example.com", "Minutes"
    msg.set_content("See attached.")
    msg.add_attachment(RTF, maintype="application", subtype="rtf", filename="minutes.rtf")
    path = tmp_path / "mail.eml"
    path.write_bytes(msg.as_bytes())
    doc = parse_file(
        path, max_bytes=MB, timeout_s=60, isolate=False, options=ParseOptions(tika_url=url)
    )
    attached = [b for b in doc.blocks if b.section_path[:1] == ("minutes.rtf",)]
    assert [b.text for b in attached] == ["Hello Tika world", "Second paragraph about quokkas"]
    assert not doc.warnings, doc.warnings


@pytest.mark.integration
def test_real_tika_version_is_the_health_check() -> None:
    url = _tika_url()
    with TikaClient(url, 10) as client:
        assert client.version().startswith("Apache Tika")
