"""A PDF page's characters and vector paths read with pdfium, in the shape pdfplumber's
table finder reads them from pdfminer.

pdfplumber finds tables from a page's edges and fills their cells from its characters.
Reading those with pdfminer meant interpreting the page's content stream a second time in
pure Python: 40 % of the parse of the shared PDFs, for the few pages whose lines form a
grid. pdfium has already read the page, so the table finder gets the same objects from it:

- **Paths:** one curve per subpath, its points (control points included, as pdfminer gives
  them) through the object's matrix and those of the forms around it; a closed subpath
  ends at its start. pdfplumber turns each pair of points into an edge, and a rectangle's
  four sides come out as they would from pdfminer's rectangle. Paths that are neither
  filled nor stroked (clipping paths) are left out, as pdfminer leaves them out.
- **Characters:** every glyph pdfium reads as text, boxed as pdfminer boxes it: from the
  origin across the advance (pdfium's loose box), from the font's descent up one font
  size. pdfium gives space glyphs, and the word gaps it infers, as generated spaces; a
  space character goes in where the next glyph follows on the same baseline, so words
  split where pdfminer's space glyph split them.

Coordinates are pdfplumber's: from the media box's top-left corner, y growing downwards.
"""

from __future__ import annotations

import ctypes
from typing import Any, cast

import pypdfium2.raw as raw
from pdfplumber import utils
from pdfplumber.container import Container
from pdfplumber.page import Page
from pdfplumber.table import Table, TableFinder, TableSettings

from ingestion.parsers.pdf_raw import (
    Matrix,
    char_codes,
    no_text,
    on_page,
    path_objects,
    path_points,
)


class PageObjects(Container):
    """What pdfplumber's `TableFinder` and word extraction read from a page (`chars`,
    `edges` via `curves`, `bbox`), taken from a pypdfium2 page."""

    def __init__(self, page: Any, depth: int = 3) -> None:
        left, bottom, right, top = page.get_mediabox()
        self._left, self._top = left, top
        self.bbox = (0.0, 0.0, right - left, top - bottom)
        self._objects: dict[str, list[dict[str, Any]]] = {
            "char": self._chars(page),
            "curve": self._curves(page, depth),
        }

    @property
    def objects(self) -> dict[str, list[dict[str, Any]]]:
        return self._objects

    @property
    def pages(self) -> None:
        return None

    def find_tables(self) -> list[Table]:
        # The finder and its tables read only `chars`, `edges` and `bbox` of the page.
        page = cast(Page, self)
        return list(TableFinder(page, TableSettings.resolve(None)).tables)

    def extract_words(self, **kwargs: Any) -> list[dict[str, Any]]:
        return list(utils.extract_words(self.chars, **kwargs))

    # -------------------------------------------------------------------- characters

    def _chars(self, page: Any) -> list[dict[str, Any]]:
        tp = page.get_textpage()
        try:
            handle = tp.raw
            rect, matrix = raw.FS_RECTF(), raw.FS_MATRIX()
            out: list[dict[str, Any]] = []
            pending = False  # a generated space since the last glyph
            for i, u in enumerate(char_codes(handle, raw.FPDFText_CountChars(handle))):
                if u in (10, 13):
                    pending = False
                    continue
                if u == 32 and raw.FPDFText_IsGenerated(handle, i):
                    pending = True
                    continue
                if (no_text(u) and u != 2) or not raw.FPDFText_GetLooseCharBox(handle, i, rect):
                    continue
                raw.FPDFText_GetMatrix(handle, i, matrix)
                x0, x1 = rect.left - self._left, rect.right - self._left
                font_size = raw.FPDFText_GetFontSize(handle, i) or 1.0
                size = (matrix.a * matrix.a + matrix.b * matrix.b) ** 0.5 * font_size
                upright = matrix.a * matrix.d > 0 and matrix.b * matrix.c <= 0
                bottom = self._top - rect.bottom
                # pdfminer's glyph is one font size tall from the descent; pdfium's
                # loose box reaches the font's ascent instead.
                top = bottom - font_size * matrix.d if upright else self._top - rect.top
                if pending and out:
                    _space_between(out, x0, bottom)
                pending = False
                out.append(
                    {
                        "object_type": "char",
                        # pdfium marks a hyphen that ends a line as 2 (or 0xFFFE).
                        "text": "-" if u in (2, 0xFFFE) else chr(u),
                        "x0": x0,
                        "x1": x1,
                        "top": top,
                        "bottom": bottom,
                        "doctop": top,
                        "width": x1 - x0,
                        "height": bottom - top,
                        "size": size,
                        "upright": upright,
                    }
                )
            return out
        finally:
            tp.close()

    # ------------------------------------------------------------------------- paths

    def _curves(self, page: Any, depth: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for obj, outer in path_objects(page, depth):
            self._path(obj, on_page(obj, outer), out)
        return out

    def _path(self, obj: Any, m: Matrix, out: list[dict[str, Any]]) -> None:
        fill, stroke = ctypes.c_int(), ctypes.c_int()
        if not raw.FPDFPath_GetDrawMode(obj, fill, stroke) or (not fill.value and not stroke.value):
            return
        subpaths: list[list[tuple[float, float]]] = []
        for px, py, kind, closes in path_points(obj, m):
            point = (px - self._left, self._top - py)
            if kind == raw.FPDF_SEGMENT_MOVETO or not subpaths:
                subpaths.append([point])
            else:
                subpaths[-1].append(point)
            if closes and subpaths[-1][-1] != subpaths[-1][0]:
                subpaths[-1].append(subpaths[-1][0])
        for pts in subpaths:
            if len(pts) < 2:
                continue
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            top, bottom = min(ys), max(ys)
            out.append(
                {
                    "object_type": "curve",
                    "pts": pts,
                    "x0": min(xs),
                    "x1": max(xs),
                    "top": top,
                    "bottom": bottom,
                    "doctop": top,
                    "width": max(xs) - min(xs),
                    "height": bottom - top,
                }
            )


def _space_between(out: list[dict[str, Any]], x0: float, bottom: float) -> None:
    """pdfium gives space glyphs, and the word gaps it infers, as generated spaces without
    a box; pdfminer gives a space glyph as a character. A word break goes in where the next
    glyph follows on the same baseline (not where text moves back to a new line)."""
    prev = out[-1]
    if x0 >= prev["x1"] - 0.5 and abs(bottom - prev["bottom"]) <= 0.25 * prev["size"]:
        x = prev["x1"]
        out.append({**prev, "text": " ", "x0": x, "x1": x, "width": 0.0})
