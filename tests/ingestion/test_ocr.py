"""OCR of scanned PDFs (`ingest.ocr`): off by default, tesseract when installed, a reason
naming the Debian packages when not. The tesseract tests skip where it is absent."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from core.errors import NeedsOCR
from ingestion import ocr
from ingestion.parse import ParseOptions, ParserPool, parse_bytes, parse_file

MB = 2**20
# shared/data/docs beside the checkout or an ancestor of it (worktrees sit one level deeper).
SHARED_DOCS = next(
    (
        p / "shared" / "data" / "docs"
        for p in Path(__file__).resolve().parents
        if (p / "shared" / "data" / "docs").is_dir()
    ),
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs",
)
LINES = (
    "Scanned Retention Policy",
    "Invoices are kept for seven years.",
    "Contact the archive team before deleting records.",
)


def _needs_tesseract(*languages: str) -> None:
    binary = ocr.tesseract_binary()
    if binary is None:
        pytest.skip(f"tesseract not installed (Debian: {ocr.DEBIAN_PACKAGES})")
    missing = set(languages) - ocr.installed_languages(binary)
    if missing:
        pytest.skip(f"tesseract language data missing: {sorted(missing)}")


def _scanned_pdf(lines: tuple[str, ...] = LINES) -> bytes:
    """An A4 page at 300 dpi holding only an image of the text: no text layer at all."""
    image_mod = pytest.importorskip("PIL.Image")
    draw_mod = pytest.importorskip("PIL.ImageDraw")
    font_mod = pytest.importorskip("PIL.ImageFont")
    img = image_mod.new("L", (2480, 3508), 255)
    draw = draw_mod.Draw(img)
    font = font_mod.load_default(size=56)
    for i, line in enumerate(lines):
        # A blank line's worth of space after the title: OCR reports it as its own paragraph.
        draw.text((200, 300 + 100 * i + (100 if i else 0)), line, font=font, fill=0)
    buf = io.BytesIO()
    img.save(buf, "PDF", resolution=300)
    return buf.getvalue()


def _image_only_copy(pdf_path: Path, page_index: int) -> bytes:
    """One page of a real PDF, rendered and re-wrapped as an image-only PDF (a "scan")."""
    pytest.importorskip("PIL")
    src = pdfium.PdfDocument(pdf_path.read_bytes())
    try:
        img = src[page_index].render(scale=300 / 72, grayscale=True).to_pil()
    finally:
        src.close()
    buf = io.BytesIO()
    img.save(buf, "PDF", resolution=300)
    return buf.getvalue()


def test_scan_needs_ocr_and_says_how_when_ocr_is_off() -> None:
    data = _scanned_pdf()
    with pytest.raises(NeedsOCR, match="no usable text layer") as info:
        parse_bytes(data, Path("scan.pdf"))
    assert "RAGLINE_INGEST__OCR" in str(info.value)
    assert "tesseract-ocr tesseract-ocr-chi-sim" in str(info.value)


def test_ocr_on_without_tesseract_names_the_debian_packages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ocr, "tesseract_binary", lambda: None)
    with pytest.raises(NeedsOCR, match="apt-get install tesseract-ocr tesseract-ocr-chi-sim"):
        parse_bytes(_scanned_pdf(), Path("scan.pdf"), ParseOptions(ocr=True))


def test_ocr_reads_an_english_scan_with_pages_and_lines(tmp_path: Path) -> None:
    _needs_tesseract("eng")
    path = tmp_path / "scan.pdf"
    path.write_bytes(_scanned_pdf())
    with ParserPool() as pool:  # the isolated path, as ingestion runs it
        doc = parse_file(
            path,
            max_bytes=10 * MB,
            timeout_s=120,
            pool=pool,
            options=ParseOptions(ocr=True, ocr_languages="eng"),
        )
    assert doc.parser.startswith("tesseract/")
    assert doc.has_pages and doc.page_count == 1
    assert any("OCR" in w for w in doc.warnings)
    texts = [b.text for b in doc.blocks]
    assert texts[0] == LINES[0]
    assert " ".join(texts[1:]) == f"{LINES[1]} {LINES[2]}"
    assert all(b.page == 1 for b in doc.blocks)
    assert doc.blocks[0].line_start == 1 and doc.blocks[1].line_start > doc.blocks[0].line_end


def test_ocr_reads_chinese_from_a_scanned_page_of_a_real_document() -> None:
    _needs_tesseract("chi_sim", "eng")
    pdf = SHARED_DOCS / "pdf" / "zh-lshort-zh-cn.pdf"
    if not pdf.is_file():
        pytest.skip(f"shared document not present: {pdf}")
    doc = parse_bytes(_image_only_copy(pdf, 0), Path("lshort-scan.pdf"), ParseOptions(ocr=True))
    text = "".join(b.text for b in doc.blocks)
    # The title page: "一份不太简短的 LATEX 2ε 介绍" ... "中文翻译：中文 TEX 学会" ...
    assert "一份不太简短的" in text
    assert "中文翻译" in text and "二零零七年九月" in text
    assert doc.has_pages and {b.page for b in doc.blocks} == {1}


def test_missing_language_data_falls_back_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _needs_tesseract("eng")
    monkeypatch.setattr(ocr, "installed_languages", lambda binary: {"eng", "osd"})
    doc = parse_bytes(_scanned_pdf(), Path("scan.pdf"), ParseOptions(ocr=True))
    assert doc.blocks[0].text == LINES[0]
    assert any("chi_sim" in w and "tesseract-ocr-chi-sim" in w for w in doc.warnings)
