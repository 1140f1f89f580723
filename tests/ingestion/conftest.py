"""Shared by the ingestion tests: PDFs built from content streams."""

from __future__ import annotations

from ragline.bench.hostile_corpus import pdf_bytes

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def one_page_pdf(
    content: str, title: str = "", form: str = "", form_matrix: str = "1 0 0 1 0 0"
) -> bytes:
    """An A4 page drawing `content` (Helvetica as /F1), with /Title `title` in its /Info;
    with `form`, a form XObject /X1 drawing that, placed by `form_matrix`, which `content`
    can paint with `/X1 Do`."""
    stream = content.encode("latin-1")
    xobject = b" /XObject << /X1 7 0 R >>" if form else b""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >>%s >> >>" % xobject,
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        _FONT,
        f"<< /Title ({title}) >>".encode("latin-1"),
    ]
    if form:
        inner = form.encode("latin-1")
        objs.append(
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 595 842] /Matrix [%s] "
            b"/Resources << /Font << /F1 5 0 R >> >> /Length %d >>\nstream\n"
            % (form_matrix.encode(), len(inner))
            + inner
            + b"\nendstream"
        )
    return pdf_bytes(objs, trailer_extra=b"/Info 6 0 R")


def pages_pdf(contents: list[str]) -> bytes:
    """A PDF of A4 pages, each drawing one content stream (Helvetica as /F1)."""
    n = len(contents)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode(),
    ]
    font = 3 + 2 * n
    for content in contents:
        stream = content.encode("latin-1")
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (len(objs) + 2, font)
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objs.append(_FONT)
    return pdf_bytes(objs)
