"""PDF tables: pdfplumber's line-based finder on pages whose vector lines form a grid, with
the cell text made into rows a reader would recognise.

- Merged cells are repeated over every grid position they cover.
- Header labels set side by side inside one ruled box (no rules between them) are split
  by the position of their words, so every column gets its own label; a single label over
  the box (a group title) goes to every column under it.
- Tables drawn with shaded boxes inside ruled cells (a grid far finer than the table) are
  rebuilt from their outermost cells.
- Title rows spanning the table become captions, trailing spanning rows notes, and the
  header rows are resolved into one (`collapse_header`).
"""

from __future__ import annotations

import ctypes
import itertools
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pypdfium2.raw as raw

from ingestion.parsers._common import (
    collapse_header,
    drop_cjk_spaces,
    join_lines,
    normalise_rows,
)
from ingestion.parsers.pdf_raw import object_matrix, path_objects, path_points


@dataclass(slots=True)
class PdfTable:
    bbox: tuple[float, float, float, float]  # x0, bottom, x1, top in PDF user space
    rows: tuple[tuple[str, ...], ...]
    captions: list[str] = field(default_factory=list)  # title rows spanning the table
    notes: list[str] = field(default_factory=list)  # footnote rows spanning the table


def _segments(obj: Any) -> list[tuple[float, float, float, float]]:
    out: list[tuple[float, float, float, float]] = []
    prev = start = None
    for x, y, kind, closes in path_points(obj, object_matrix(obj)):
        if kind == raw.FPDF_SEGMENT_LINETO and prev:
            out.append((prev[0], prev[1], x, y))
        if kind == raw.FPDF_SEGMENT_MOVETO:
            start = (x, y)
        elif closes and start:
            out.append((x, y, start[0], start[1]))
        prev = (x, y)
    return out


def _merge(lines: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Join collinear touching segments: tables drawn cell by cell become full rules."""
    groups: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for a, b, c in lines:
        groups[round(c)].append((min(a, b), max(a, b)))
    out = []
    for c, spans in groups.items():
        spans.sort()
        lo, hi = spans[0]
        for a, b in spans[1:]:
            if a <= hi + 3:
                hi = max(hi, b)
            else:
                out.append((lo, hi, float(c)))
                lo, hi = a, b
        out.append((lo, hi, float(c)))
    return out


def has_grid(page: Any) -> bool:
    """Cheap pre-check for pdfplumber's (slow) line-based table finder: is some horizontal
    rule crossed by vertical rules at three or more x positions (two or more columns)?"""
    hs: list[tuple[float, float, float]] = []
    vs: list[tuple[float, float, float]] = []
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    for obj, _ in path_objects(page, max_depth=3):
        if not raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            continue
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
        w, h = x1 - x0, y1 - y0
        if h < 3 and w > 5:
            hs.append((x0, x1, (y0 + y1) / 2))
        elif w < 3 and h > 5:
            vs.append((y0, y1, (x0 + x1) / 2))
        elif w > 5 and h > 5:
            if raw.FPDFPath_CountSegments(obj) <= 6:  # a rectangle
                hs += [(x0, x1, y0), (x0, x1, y1)]
                vs += [(y0, y1, x0), (y0, y1, x1)]
                continue
            for a, b, c, d in _segments(obj):
                if abs(b - d) < 1 and abs(c - a) > 5:
                    hs.append((a, c, b))
                elif abs(a - c) < 1 and abs(d - b) > 5:
                    vs.append((b, d, a))
    if len(hs) < 2 or len(vs) < 3:
        return False
    vs = _merge(vs)
    for lo, hi, y in _merge(hs):
        xs = {round(x / 3) for (b, t, x) in vs if b - 2 <= y <= t + 2 and lo - 2 <= x <= hi + 2}
        if len(xs) >= 3:
            return True
    return False


def _split_bands(rows: list[list[str]]) -> list[list[str]]:
    """A row whose cells all hold the same number (>= 3) of lines is several visual rows
    drawn without rules between them (e.g. five states per ruled band): split it."""
    out: list[list[str]] = []
    for row in rows:
        parts = [c.split("\n") if c else [] for c in row]
        counts = {len(p) for p in parts if p}
        filled = sum(1 for p in parts if p)
        if len(counts) == 1 and (k := counts.pop()) >= 3 and filled >= 3:
            out.extend([p[j] if p else "" for p in parts] for j in range(k))
        else:
            out.append(row)
    return out


def _word_clusters(words: list[dict[str, Any]]) -> list[list[tuple[float, float, str]]]:
    """Words of one cell as text lines (top to bottom), each line cut into clusters where
    the gap between words is wider than a space: separate labels set side by side."""
    lines: list[list[dict[str, Any]]] = []
    for w in sorted(words, key=lambda w: (round(w["top"]), w["x0"])):
        if lines and abs(lines[-1][0]["top"] - w["top"]) <= 2:
            lines[-1].append(w)
        else:
            lines.append([w])
    out: list[list[tuple[float, float, str]]] = []
    for line in lines:
        line.sort(key=lambda w: w["x0"])
        height = statistics.median(w["bottom"] - w["top"] for w in line)
        clusters: list[tuple[float, float, str]] = []
        for w in line:
            if clusters and w["x0"] - clusters[-1][1] <= max(2.0, 0.6 * height):
                x0, _, text = clusters[-1]
                clusters[-1] = (x0, w["x1"], f"{text} {w['text']}")
            else:
                clusters.append((w["x0"], w["x1"], w["text"]))
        out.append(clusters)
    return out


def _split_spanning(
    cell: tuple[float, float, float, float],
    cols: list[tuple[int, float, float]],
    words: list[dict[str, Any]],
) -> dict[int, str] | None:
    """Per-column text of a cell spanning several columns whose labels were set without
    rules between them ("Permit Handgun Long Gun" in one box, or a group title over
    sub-titles): each label goes to the column under it, a single centred label to all.
    None when the cell holds one label only (a real merged cell)."""
    x0, top, x1, bottom = cell
    inside = [
        w
        for w in words
        if x0 <= (w["x0"] + w["x1"]) / 2 <= x1 and top <= (w["top"] + w["bottom"]) / 2 <= bottom
    ]
    lines = _word_clusters(inside)
    if not any(len(line) > 1 for line in lines):
        return None
    labels: dict[int, list[str]] = {j: [] for j, _, _ in cols}
    for line in lines:
        if len(line) == 1:  # one label over the whole span: a group title
            for j in labels:
                labels[j].append(line[0][2])
            continue
        for cx0, cx1, text in line:
            centre = (cx0 + cx1) / 2
            j = min(
                cols,
                key=lambda c: (
                    0 if c[1] <= centre <= c[2] else min(abs(centre - c[1]), abs(centre - c[2]))
                ),
            )[0]
            labels[j].append(text)
    return {j: "\n".join(v) for j, v in labels.items()}


def _split_header_cells(
    cells: list[Any],
    xs: list[tuple[float, float] | None],
    grid_row: list[str | None],
    words: list[dict[str, Any]],
) -> None:
    for j, cell in enumerate(cells):
        if cell is None:
            continue
        cols = [
            (k, span[0], span[1])
            for k, span in enumerate(xs)
            if k >= j and span is not None and cell[0] - 1 <= (span[0] + span[1]) / 2 <= cell[2] + 1
        ]
        if len(cols) < 2:
            continue
        split = _split_spanning(cell, cols, words)
        if split is None:
            continue
        for k, text in split.items():
            if k < len(grid_row):
                grid_row[k] = text


def _inside(a: tuple[float, ...], b: tuple[float, ...], tol: float = 1.0) -> bool:
    return (
        a != b
        and b[0] - tol <= a[0]
        and a[2] <= b[2] + tol
        and b[1] - tol <= a[1]
        and a[3] <= b[3] + tol
    )


def _cell_text(words: list[dict[str, Any]], box: tuple[float, ...]) -> str:
    inside = [
        w
        for w in words
        if box[0] <= (w["x0"] + w["x1"]) / 2 <= box[2]
        and box[1] <= (w["top"] + w["bottom"]) / 2 <= box[3]
    ]
    return "\n".join(" ".join(t for _, _, t in line) for line in _word_clusters(inside))


def _nested_grid(tb: Any, words: list[dict[str, Any]]) -> list[list[str | None]] | None:
    """Tables whose cells are drawn as shaded boxes inside ruled cells (one box per text
    line) give pdfplumber a grid far finer than the table. Rebuild it from the outermost
    cells: rows are the bands of the key (leftmost) column, columns the x-bands of the
    outer cells; boxes in one row band and column are one cell. None when no cell lies
    inside another (the ordinary case)."""
    boxes = [tuple(c) for c in tb.cells]
    outer = [c for c in boxes if not any(_inside(c, o) for o in boxes)]
    if len(outer) == len(boxes):
        return None
    xs = sorted({round(v, 1) for c in outer for v in (c[0], c[2])})
    cols = [(a, b) for a, b in itertools.pairwise(xs) if b - a > 1]
    left = min(c[0] for c in outer)
    # Row bands: the cells of the leftmost column, top to bottom.
    keys = sorted((c for c in outer if abs(c[0] - left) <= 1), key=lambda c: c[1])
    bands = [(c[1], c[3]) for c in keys]
    if len(bands) < 2 or len(cols) < 2:
        return None
    grid: list[list[list[str]]] = [[[] for _ in cols] for _ in bands]
    for c in sorted(outer, key=lambda c: (c[1], c[0])):
        cy = (c[1] + c[3]) / 2
        band = next((k for k, (t, b) in enumerate(bands) if t - 1 <= cy <= b + 1), None)
        if band is None:
            continue
        text = _cell_text(words, c)
        for j, (a, b) in enumerate(cols):
            if c[0] - 1 <= (a + b) / 2 <= c[2] + 1 and text:
                grid[band][j].append(text)
    rows = [["\n".join(parts) for parts in row] for row in grid]
    # Columns drawn as padding strips or split by the inner boxes: merge a column into
    # its left neighbour while no row holds two different values in them.
    j = 1
    while j < len(rows[0]):
        if all(not r[j] or not r[j - 1] or r[j] == r[j - 1] for r in rows):
            for r in rows:
                r[j - 1] = r[j - 1] or r[j]
                del r[j]
        else:
            j += 1
    return [list(r) for r in rows]


def extract_tables(pl_page: Any, mb_top: float, mb_left: float) -> list[PdfTable]:
    """The tables pdfplumber's finder sees on a page (`PageObjects`, or pdfplumber's own
    `Page`), in PDF user space given the media box's top and left."""
    out: list[PdfTable] = []
    found = pl_page.find_tables()
    words: list[dict[str, Any]] = pl_page.extract_words() if found else []
    for tb in found:
        nested = _nested_grid(tb, words)
        if nested is not None:
            out.extend(_finish_table(tb, nested, mb_top, mb_left))
            continue
        grid: list[list[str | None]] = [list(r) for r in tb.extract()]
        if len(grid) < 2:
            continue
        # pdfplumber gives None for grid positions covered by a merged cell: repeat the
        # merged cell's value there (found via the cell whose box covers the position).
        # Row/column extents come from the cells anchored there that do not span further.
        cells = [
            (c, grid[i][j])
            for i, row in enumerate(tb.rows)
            for j, c in enumerate(row.cells)
            if c is not None and j < len(grid[i])
        ]
        width = max(len(r.cells) for r in tb.rows)
        xs: list[tuple[float, float] | None] = [None] * width
        for row in tb.rows:
            for j, c in enumerate(row.cells):
                if c is not None:
                    lo, hi = xs[j] or (c[0], c[2])
                    xs[j] = (min(lo, c[0]), min(hi, c[2]))
        for i, row in enumerate(tb.rows):
            anchored = [c for c in row.cells if c is not None]
            if not anchored:
                continue
            cy = (min(c[1] for c in anchored) + min(c[3] for c in anchored)) / 2
            for j, cell in enumerate(row.cells):
                span = xs[j]
                if cell is None and j < len(grid[i]) and span is not None:
                    cx = (span[0] + span[1]) / 2
                    grid[i][j] = next(
                        (t for (x0, t0, x1, b0), t in cells if x0 <= cx <= x1 and t0 <= cy <= b0),
                        "",
                    )
            if i < 4:  # header rows: labels set side by side inside one merged box
                _split_header_cells(row.cells, xs, grid[i], words)
        out.extend(_finish_table(tb, grid, mb_top, mb_left))
    return out


def _finish_table(
    tb: Any, grid: list[list[str | None]], mb_top: float, mb_left: float
) -> list[PdfTable]:
    """Cell texts to a table: bands split, title and footnote rows taken out, header
    rows resolved, position converted to PDF user space."""
    text_rows = [[(c or "").strip() for c in r] for r in grid]
    text_rows = _split_bands(text_rows)
    rows = [[drop_cjk_spaces(join_lines(c.split("\n"))) for c in r] for r in text_rows]
    captions: list[str] = []
    # Leading rows with a single distinct value are a title spanning the table.
    while len(rows) > 2 and len({c for c in rows[0] if c}) <= 1:
        title = next((c for c in rows.pop(0) if c), "")
        if title:
            captions.append(title)
    notes: list[str] = []
    # ... and trailing ones are footnotes spanning its width.
    while len(rows) > 2 and len({c for c in rows[-1] if c}) <= 1:
        note = next((c for c in rows.pop() if c), "")
        if note:
            notes.insert(0, note)
    norm = collapse_header(normalise_rows(rows))
    if len(norm) < 2 or len(norm[0]) < 2:
        return []  # a framed paragraph, not a table: leave its text as text
    x0, top, x1, bottom = tb.bbox
    return [
        PdfTable((x0 + mb_left, mb_top - bottom, x1 + mb_left, mb_top - top), norm, captions, notes)
    ]
