"""Apache Tika server as a parser backend, for formats the native parsers do not cover
(.doc, .ppt/.pptx, .rtf, .odt, .ods, .xls, .msg) and as a fallback when a native parser
chokes on a file.

One request per file: `PUT /rmeta/html`. The recursive-metadata endpoint returns the
container and each embedded document (an e-mail's attachments, files inside an archive) as
separate entries, each with its own XHTML; XHTML rather than plain text because it keeps
what citations and chunking need: `<div class="page">` per PDF page (`slide-content` per
slide), `<h1..h6>` headings, real `<table>`s. Tika's own OCR is switched off per request:
OCR is Ragline's decision (`ingest.ocr`), not a side effect of tesseract being installed on
the Tika host.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import Any

import httpx
import lxml.html
from lxml import etree

from core.errors import ParseError, UnsupportedFormat
from core.types import ParsedDocument
from ingestion.parsers._common import BlockBuilder, clean_text, drop_cjk_spaces, join_lines

# Output is bounded on the server: a hostile "small" file must not stream gigabytes back.
WRITE_LIMIT_CHARS = 50_000_000
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
# Containers whose class marks a page: PDF pages, PowerPoint slides.
_PAGE_CLASSES = {"page", "slide-content"}
# Slide masters and layouts repeat on every slide: boilerplate, not content.
_SKIP_CLASSES = {"slide-master-content", "slide-layout-content", "embedded"}
_SKIP_TAGS = {"head", "script", "style", "title", "meta", "img"}
_BLANK_LINE = re.compile(r"\n[ \t\u3000]*\n")
_SAFE_EXT = re.compile(r"^\.[A-Za-z0-9]{1,8}$")


# ----------------------------------------------------------------------- the client


class TikaClient:
    """Talks to one Tika server (`ingest.tika_url`). Cheap to build; close it when done."""

    def __init__(
        self, url: str, timeout_s: float = 60.0, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        if not url:
            raise UnsupportedFormat("no Tika server configured: set RAGLINE_INGEST__TIKA_URL")
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._client = httpx.Client(timeout=timeout_s, transport=transport)
        self._version = ""

    def version(self) -> str:
        """The server's version string, e.g. "Apache Tika 3.3.2" (also a health check)."""
        if not self._version:
            response = self._call("GET", "/version")
            self._version = response.text.strip() or "Apache Tika"
        return self._version

    def parse(self, data: bytes, name: str) -> ParsedDocument:
        """Parse a file's bytes; `name` gives the extension Tika's detection may use."""
        response = self._call(
            "PUT",
            "/rmeta/html",
            content=data,
            headers={
                "Accept": "application/json",
                "Content-Type": "application/octet-stream",
                # Only the extension helps detection; a non-ASCII name would need RFC 5987
                # encoding that not every Tika version reads, so the stem is not sent.
                "Content-Disposition": f'attachment; filename="document{_ascii_ext(name)}"',
                "X-Tika-OCRskipOcr": "true",
                "X-Tika-PDFOcrStrategy": "no_ocr",
                "writeLimit": str(WRITE_LIMIT_CHARS),
            },
        )
        try:
            entries = response.json()
        except ValueError as exc:
            raise ParseError(f"Tika server {self.url} sent a response that is not JSON") from exc
        if not isinstance(entries, list) or not entries:
            raise ParseError(f"Tika server {self.url} returned no result for {name}")
        return rmeta_to_document(entries, name, self._label())

    def _label(self) -> str:
        try:
            number = self.version().split()[-1]
        except ParseError:
            number = "?"
        return f"tika/{number}"

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            response = self._client.request(method, self.url + path, **kw)
        except httpx.TimeoutException as exc:
            raise ParseError(
                f"Tika server {self.url} did not answer within {self.timeout_s:g}s "
                "(RAGLINE_INGEST__TIKA_TIMEOUT_S)"
            ) from exc
        except httpx.HTTPError as exc:
            raise ParseError(
                f"Tika server {self.url} unreachable ({type(exc).__name__}); is it running? "
                "(RAGLINE_INGEST__TIKA_URL)"
            ) from exc
        if response.status_code == 415:
            raise UnsupportedFormat("Tika cannot parse this file type")
        if response.status_code == 422:
            # Tika's answer for encrypted and for corrupt files alike.
            raise ParseError("Tika could not parse the file: encrypted or damaged")
        if response.status_code >= 400:
            raise ParseError(
                f"Tika server {self.url} answered HTTP {response.status_code}: "
                f"{_first_line(response.text)}"
            )
        return response

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> TikaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ascii_ext(name: str) -> str:
    ext = PurePath(name).suffix
    return ext.lower() if _SAFE_EXT.match(ext) else ""


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


# ------------------------------------------------------------ response -> document


def _meta(entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key, "")
    if isinstance(value, list):
        value = value[-1] if value else ""
    return str(value).strip()


def rmeta_to_document(
    entries: Sequence[Mapping[str, Any]], name: str, label: str = "tika"
) -> ParsedDocument:
    """Turn `/rmeta/html` entries (container first, then embedded documents) into one
    document: the container's blocks, then each attachment's under its file name."""
    container = entries[0]
    failure = _meta(container, "X-TIKA:EXCEPTION:container_exception")
    conv = _Converter()
    warnings: list[str] = []
    conv.add_xhtml(_meta(container, "X-TIKA:content"))
    if failure and not conv.b.blocks:
        raise ParseError(f"Tika could not parse the file ({_first_line(failure)})")
    if failure:
        warnings.append(f"Tika reported an error, text may be incomplete: {_first_line(failure)}")
    for entry in entries[1:]:
        attachment = _meta(entry, "resourceName") or "attachment"
        if _meta(entry, "Content-Type").startswith("image/"):
            continue  # no text without OCR, and OCR of embedded images is off
        error = _meta(entry, "X-TIKA:EXCEPTION:embedded_exception")
        if error:
            warnings.append(f"attachment {attachment!r} skipped: {_first_line(error)}")
            continue
        conv.add_xhtml(_meta(entry, "X-TIKA:content"), prefix=(attachment,))
    if any(_meta(e, "X-TIKA:EXCEPTION:write_limit_reached") == "true" for e in entries):
        warnings.append(f"text cut at {WRITE_LIMIT_CHARS:,} characters (Tika write limit)")
    if not conv.b.blocks:
        raise ParseError(f"Tika found no text in {PurePath(name).name} (scanned or empty?)")
    parsed_by = _meta(container, "X-TIKA:Parsed-By").rsplit(".", 1)[-1]
    title = _meta(container, "dc:title") or conv.b.first_heading(1) or PurePath(name).stem
    return ParsedDocument(
        tuple(conv.b.blocks),
        max(1, conv.pages),
        clean_text(title),
        f"{label}:{parsed_by}" if parsed_by else label,
        has_pages=conv.pages > 0,
        warnings=tuple(warnings),
    )


def xhtml_to_document(xhtml: str, name: str, label: str = "tika") -> ParsedDocument:
    """One XHTML document (`PUT /tika` with `Accept: text/html`) as a ParsedDocument."""
    return rmeta_to_document([{"X-TIKA:content": xhtml}], name, label)


class _Converter:
    """Walks Tika's XHTML into blocks. Lines are counted per page (per whole text for
    page-less formats), one per text line Tika emitted, so a citation's lines are stable
    for the same file and server version.

    Pages come from the container's page divs. In a paged container each attachment starts
    on a new page (its own page divs continue the count); in a page-less one (an e-mail)
    attachments stay page-less too, so the e-mail body is not mixed into some page 1.
    """

    def __init__(self) -> None:
        self.b = BlockBuilder()
        self.pages = 0  # pages opened so far (0 = a page-less document)
        self.page = 1
        self.line = 1
        self.inline: list[str] = []
        self.follow_pages = True  # False once a page-less container was seen
        self.reuse_page = False  # an attachment opened a page its first page div takes
        self.pdf_spacing = False  # text laid out glyph by glyph: CJK spaces are artefacts

    def add_xhtml(self, xhtml: str, prefix: tuple[str, ...] = ()) -> None:
        if not xhtml.strip():
            return
        start, pages_before = len(self.b.blocks), self.pages
        self.b.reset_sections()
        # Only PDF output has page divs; there a space between two Han characters comes
        # from glyph positioning, while in Word/ODF/RTF text it was typed and is kept.
        self.pdf_spacing = 'class="page"' in xhtml
        if prefix and self.pages:
            self._new_page()
            self.reuse_page = True
        if "<body" not in xhtml[:20_000].lower():
            self._paragraphs(xhtml)  # plain-text content: blank lines separate paragraphs
        else:
            try:
                root = lxml.html.document_fromstring(xhtml)
            except (etree.ParserError, ValueError):
                return
            body = root.find("body")
            self._walk(body if body is not None else root)
            self._flush()
        self.reuse_page = False
        if not prefix:
            self.follow_pages = self.pages > 0
        elif len(self.b.blocks) == start:
            self.pages = pages_before  # an attachment without text opens no page
        if prefix:
            self.b.blocks[start:] = [
                replace(b, section_path=(*prefix, *b.section_path)) for b in self.b.blocks[start:]
            ]

    def _new_page(self) -> None:
        if self.reuse_page:
            self.reuse_page = False
        else:
            self.pages += 1
        self.page, self.line = self.pages, 1

    # -- structure ---------------------------------------------------------------
    def _walk(self, el: etree._Element) -> None:
        self._inline(el.text)
        for child in el:
            tag = child.tag.lower() if isinstance(child.tag, str) else ""
            classes = set((child.get("class") or "").split())
            if not tag or tag in _SKIP_TAGS or classes & _SKIP_CLASSES:
                self._inline(child.tail)
                continue
            if classes & _PAGE_CLASSES and self.follow_pages:
                self._flush()
                self._new_page()
                self._walk(child)
                self._flush()
            elif tag in _HEADINGS:
                self._flush()
                text = " ".join(_text(child).split())
                self.b.heading(text, _HEADINGS[tag], self.page, self.line)
                self.line += 1 if text else 0
            elif tag == "p":
                self._flush()
                self._paragraphs(_text(child))
            elif tag in ("ul", "ol"):
                self._flush()
                self._list(child, tag == "ol")
            elif tag == "pre":
                self._flush()
                code = child.text_content().strip("\n")
                self._add("code", code, code.count("\n") + 1)
            elif tag == "table":
                self._flush()
                self._table(child)
            elif tag in ("br", "hr"):
                self._flush()
            elif tag in ("div", "section", "article", "body", "blockquote", "li", "td"):
                self._flush()
                self._walk(child)
                self._flush()
            else:  # inline markup: span, b, i, a ...
                self._inline(_text(child))
            self._inline(child.tail)

    def _inline(self, text: str | None) -> None:
        if text and text.strip():
            self.inline.append(text)

    def _flush(self) -> None:
        if self.inline:
            self._paragraphs("".join(self.inline))
            self.inline.clear()

    def _paragraphs(self, text: str) -> None:
        # A Tika <p> may hold several paragraphs separated by blank lines (PDF, RTF).
        for part in _BLANK_LINE.split(text.replace("\r\n", "\n")):
            lines = [ln for ln in (clean_text(x) for x in part.split("\n")) if ln]
            if lines:
                text = join_lines(lines)
                self._add(
                    "paragraph", drop_cjk_spaces(text) if self.pdf_spacing else text, len(lines)
                )

    def _list(self, el: etree._Element, ordered: bool) -> None:
        items = [" ".join(_text(li).split()) for li in el if li.tag == "li"]
        items = [t for t in items if t]
        lines = [f"{i}. {t}" if ordered else f"- {t}" for i, t in enumerate(items, 1)]
        self._add("list", "\n".join(lines), len(lines))

    def _table(self, el: etree._Element) -> None:
        rows: list[list[str]] = []
        for tr in el.iter("tr"):
            cells = [c for c in tr if c.tag in ("td", "th")]
            rows.append([" ".join(_text(c).split()) for c in cells])
        rows = [r for r in rows if any(r)]
        if not rows:
            return
        if max(len(r) for r in rows) <= 1:  # a one-column layout table is just text
            for r in rows:
                self._paragraphs(r[0] if r else "")
            return
        self.b.table(rows, self.page, self.line, self.line + len(rows) - 1)
        self.line += len(rows)

    def _add(self, kind: Any, text: str, n_lines: int) -> None:
        if not text.strip():
            return
        n_lines = max(1, n_lines)
        self.b.add(kind, text, self.page, self.line, self.line + n_lines - 1)
        self.line += n_lines


def _text(el: etree._Element) -> str:
    """Text of an element with <br>/<p> as line breaks."""
    parts: list[str] = []
    for node in el.iter():
        if node is not el and node.tag in ("br", "p", "div", "li", "tr"):
            parts.append("\n")
        if node.text and isinstance(node.tag, str):
            parts.append(node.text)
        if node is not el and node.tail:
            parts.append(node.tail)
    return "".join(parts)
