"""pdfium page objects by raw handle, for the PDF parser's hot paths: a text page's
character codes and which of them are no text, and a page's path objects with the
matrices of the forms around them. No pdfplumber here: the parser imports that only for a
page whose lines form a grid."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from typing import Any

import pypdfium2.raw as raw

Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def no_text(code: int) -> bool:
    """A glyph code that is no text: a control character (pdfium's 0 for a glyph its font
    does not map), a private-use glyph, U+FFFD. pdfium's own markers (line breaks, 2 and
    0xFFFE for a hyphen ending a line) are told apart before this."""
    return code <= 8 or 14 <= code <= 31 or 0xE000 <= code <= 0xF8FF or code == 0xFFFD


def char_codes(tp: Any, n: int) -> list[int]:
    """Every character's code on a text page (its raw handle, `n` characters): one call
    for the page's text where it lines up with pdfium's characters one to one (nearly
    always), else one call per character (a page whose text leaves characters out, such as
    glyphs with no Unicode value, or gives one as two UTF-16 units)."""
    buf = (ctypes.c_ushort * (n + 1))()
    if n and raw.FPDFText_GetText(tp, 0, n, buf) == n + 1:
        return buf[:n]
    get_unicode = raw.FPDFText_GetUnicode
    return [get_unicode(tp, i) for i in range(n)]


def times(m: Matrix, outer: Matrix) -> Matrix:
    """`m` applied first, then `outer` (PDF row-vector convention)."""
    a, b, c, d, e, f = m
    oa, ob, oc, od, oe, of = outer
    return (
        a * oa + b * oc,
        a * ob + b * od,
        c * oa + d * oc,
        c * ob + d * od,
        e * oa + f * oc + oe,
        e * ob + f * od + of,
    )


def object_matrix(obj: Any) -> Matrix:
    m = raw.FS_MATRIX()
    if not raw.FPDFPageObj_GetMatrix(obj, m):
        return _IDENTITY
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def path_points(obj: Any, m: Matrix) -> Iterator[tuple[float, float, int, bool]]:
    """Each segment of a path object: its point through `m`, its kind (`FPDF_SEGMENT_*`),
    and whether it closes its subpath."""
    a, b, c, d, e, f = m
    x, y = ctypes.c_float(), ctypes.c_float()
    for k in range(raw.FPDFPath_CountSegments(obj)):
        seg = raw.FPDFPath_GetPathSegment(obj, k)
        raw.FPDFPathSegment_GetPoint(seg, x, y)
        yield (
            a * x.value + c * y.value + e,
            b * x.value + d * y.value + f,
            raw.FPDFPathSegment_GetType(seg),
            bool(raw.FPDFPathSegment_GetClose(seg)),
        )


def on_page(obj: Any, outer: Matrix | None) -> Matrix:
    """The object's matrix on the page: its own, then the forms' around it (`outer`)."""
    return object_matrix(obj) if outer is None else times(object_matrix(obj), outer)


def path_objects(page: Any, max_depth: int = 3) -> Iterator[tuple[Any, Matrix | None]]:
    """The page's path objects (raw handles) in content order, with the matrix of the
    forms around each (None at the page's level); forms are entered to `max_depth` levels,
    as `PdfPage.get_objects(max_depth=...)` does, without a Python object per page object."""
    handle = page.raw
    count = raw.FPDFPage_CountObjects(handle)
    yield from _paths([raw.FPDFPage_GetObject(handle, k) for k in range(count)], None, max_depth)


def _paths(
    objs: list[Any], outer: Matrix | None, depth: int
) -> Iterator[tuple[Any, Matrix | None]]:
    for obj in objs:
        kind = raw.FPDFPageObj_GetType(obj)
        if kind == raw.FPDF_PAGEOBJ_PATH:
            yield obj, outer
        elif kind == raw.FPDF_PAGEOBJ_FORM and depth > 1:
            m = on_page(obj, outer)
            inner = range(raw.FPDFFormObj_CountObjects(obj))
            yield from _paths([raw.FPDFFormObj_GetObject(obj, k) for k in inner], m, depth - 1)
