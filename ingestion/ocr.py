"""OCR for PDFs without a usable text layer: pypdfium2 renders each page, Debian's
`tesseract` reads it (`tesseract - - -l chi_sim+eng`). Off by default (`ingest.ocr`).

Pages go to tesseract as binary PGM on stdin: leptonica reads PGM natively, so no image
library is needed and nothing touches the disk. Tesseract runs single-threaded
(OMP_THREAD_LIMIT=1): a parse worker owns one core, and OpenMP threads fighting over it make
OCR several times slower.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import PurePath

import numpy as np
import pypdfium2 as pdfium

from core.errors import NeedsOCR, ParseError
from core.types import ParsedDocument
from ingestion.parsers._common import (
    BlockBuilder,
    clean_text,
    drop_cjk_spaces,
    join_lines,
    numbered_level,
    plausible_heading,
)

DEBIAN_PACKAGES = "tesseract-ocr tesseract-ocr-chi-sim"
DEFAULT_LANGUAGES = "chi_sim+eng"
DPI = 300  # tesseract's accuracy drops sharply below ~300 dpi for body-size text
_PAGE_TIMEOUT_S = 120.0


def tesseract_binary() -> str | None:
    return shutil.which("tesseract")


def installed_languages(binary: str) -> set[str]:
    """Language packs tesseract has (`tesseract --list-langs`)."""
    try:
        out = subprocess.run(
            [binary, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return set()
    # First line is a header ("List of available languages in ..."), then one per line.
    return {ln.strip() for ln in out.stdout.splitlines()[1:] if ln.strip()}


def unavailable_reason(reason: str) -> str:
    """`reason` (why the PDF needs OCR) plus what to install, when tesseract is missing."""
    return (
        f"{reason}; OCR is on but tesseract is not installed "
        f"(Debian: apt-get install {DEBIAN_PACKAGES})"
    )


def ocr_pdf(
    data: bytes, name: str, languages: str = DEFAULT_LANGUAGES, *, dpi: int = DPI
) -> ParsedDocument:
    """Text of every page by OCR. Raises NeedsOCR (with the packages to install) when
    tesseract is missing, ParseError when it fails or finds no text."""
    binary = tesseract_binary()
    if binary is None:
        raise NeedsOCR(unavailable_reason("PDF has no usable text layer"))
    wanted = [lang for lang in languages.split("+") if lang]
    have = installed_languages(binary)
    usable = [lang for lang in wanted if lang in have] or sorted(have - {"osd"})[:1]
    if not usable:
        raise NeedsOCR(
            f"tesseract has no language data (Debian: apt-get install {DEBIAN_PACKAGES})"
        )
    warnings = [
        f"text from OCR (tesseract, {'+'.join(usable)}, {dpi} dpi): may contain recognition errors"
    ]
    missing = [lang for lang in wanted if lang not in have]
    if missing:
        warnings.append(
            f"OCR language data missing: {', '.join(missing)} "
            f"(Debian: apt-get install {DEBIAN_PACKAGES})"
        )
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise ParseError(f"PDF is damaged or not a PDF ({exc})") from exc
    b = BlockBuilder()
    try:
        for i in range(len(pdf)):
            page = pdf[i]
            try:
                text = _ocr_page(binary, _pgm(page, dpi), "+".join(usable))
            finally:
                page.close()
            _add_page(b, text, i + 1)
        pages = len(pdf)
    finally:
        pdf.close()
    if not b.blocks:
        raise ParseError("OCR found no text in the PDF (blank pages or unreadable scan)")
    title = b.first_heading(1) or PurePath(name).stem
    return ParsedDocument(
        tuple(b.blocks), pages, title, f"tesseract/{_version(binary)}", True, tuple(warnings)
    )


def _pgm(page: pdfium.PdfPage, dpi: int) -> bytes:
    bitmap = page.render(scale=dpi / 72, grayscale=True)
    try:
        array = bitmap.to_numpy()  # (h, w) for grey; keep one channel if given more
        pixels = np.ascontiguousarray(array[..., 0] if array.ndim == 3 else array, dtype=np.uint8)
    finally:
        bitmap.close()
    height, width = pixels.shape
    return b"P5\n%d %d\n255\n" % (width, height) + pixels.tobytes()


def _ocr_page(binary: str, image: bytes, languages: str) -> str:
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        out = subprocess.run(
            [binary, "-", "-", "-l", languages],
            input=image,
            capture_output=True,
            timeout=_PAGE_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ParseError(f"OCR of one page took longer than {_PAGE_TIMEOUT_S:g}s") from exc
    except OSError as exc:
        raise ParseError(f"tesseract could not be run: {exc}") from exc
    if out.returncode != 0:
        tail = out.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise ParseError(f"tesseract failed (exit {out.returncode}): {tail[0][:200]}")
    return out.stdout.decode("utf-8", "replace")


def _add_page(b: BlockBuilder, text: str, page: int) -> None:
    """Paragraphs are separated by blank lines in tesseract's output; lines are counted
    from the top of the page, blank lines included, as tesseract printed them."""
    lines = text.replace("\f", "").split("\n")
    para: list[tuple[int, str]] = []
    for no, raw in enumerate([*lines, ""], start=1):
        line = drop_cjk_spaces(clean_text(raw))
        if line:
            para.append((no, line))
        elif para:
            _add_paragraph(b, para, page)
            para = []


def _add_paragraph(b: BlockBuilder, para: Sequence[tuple[int, str]], page: int) -> None:
    first, last = para[0][0], para[-1][0]
    text = join_lines([t for _, t in para])
    level = numbered_level(text) if len(para) == 1 else None
    if level is not None and plausible_heading(text):
        b.heading(text, level, page, first, last)
    else:
        b.add("paragraph", text, page, first, last)


def _version(binary: str) -> str:
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    first = (out.stdout or out.stderr).split()
    return first[1] if len(first) > 1 else "?"
