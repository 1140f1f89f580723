"""PDF: pypdfium2 for text (fast, content-stream reading order, per-glyph font and box),
pdfplumber's table finder only on pages whose vector lines form a grid (`pdf_tables`),
reading the page's glyphs and paths from pdfium too (`pdf_page_objects`), so a page's
content stream is interpreted once, and tables and text share one set of coordinates.

Steps per document: lines per page -> tables cut out of the text -> running headers and
footers dropped -> headings (outline, else font size / bold / numbering) -> paragraphs,
lists and code merged from lines. Line numbers count the page's text lines from the top of
the content stream, headers included, so a citation's lines stay put.
"""

from __future__ import annotations

import ctypes
import itertools
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import PurePath
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as raw

from core.errors import NeedsOCR, ParseError
from core.types import BlockKind, ParsedDocument
from ingestion.parsers._common import (
    BlockBuilder,
    clean_text,
    drop_cjk_spaces,
    generic_title,
    join_lines,
    join_marked,
    meta_title_ok,
    numbered_level,
    plausible_heading,
    render_table,
    solid_chars,
)
from ingestion.parsers.pdf_raw import char_codes, no_text
from ingestion.parsers.pdf_tables import PdfTable, extract_tables, has_grid

PARSER = f"pypdfium2/{version('pypdfium2')}+pdfplumber/{version('pdfplumber')}"
_BULLET = re.compile(r"^([•●▪■◆◇○◦‣∙·\-–—*✓✔➢►▶]|\(?\d{1,2}\)|[①-⑳]|\([a-z]\))\s*")
_PAGE_NO = re.compile(
    r"^[\s\-–—]*(page\s*)?([0-9]{1,4}|[ivxlc]{1,6})(\s*(of|/)\s*[0-9]{1,4})?[\s\-–—]*$"
    r"|^第\s*[0-9一二三四五六七八九十百]+\s*页(\s*[/共]\s*[0-9]+\s*页?)?$",
    re.IGNORECASE,
)
_CN = "\\d一二三四五六七八九十百"
_CHAPTER_ONLY = re.compile(
    rf"^(第\s*[{_CN}]+\s*[章篇部]|chapter\s+\d+|附录\s*[A-Z])$", re.IGNORECASE
)
_NUM_PREFIX = re.compile(
    rf"^(第\s*[{_CN}]+\s*[章节篇部条]|chapter\s*\d+|附录\s*[A-Z]?"
    r"|[A-Z]?\d+(\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s*",
    re.IGNORECASE,
)
_SENT_END = ".。!！?？:："
_EDGE_NO = re.compile(r"^(\d{1,4})\s|\s(\d{1,4})$")
_MONO = ("mono", "courier", "consol", "code", "typewriter", "cmtt", "sftt", "menlo")
_BOLD = ("bold", "black", "heavy", "semibold", "demi", "hei", ",b")


@dataclass(slots=True)
class _Line:
    text: str
    x0: float
    x1: float
    top: float  # PDF user space: y grows upwards
    bottom: float
    size: float
    no: int
    bold: bool = False
    mono: bool = False
    heading: int = 0  # level, 0 = not a heading
    dropped: bool = False
    table: int = -1  # index into the page's tables when inside one
    # Text pieces set apart by wide gaps, with the x where each starts; empty when the
    # line is one run of text.
    parts: list[tuple[float, str]] = field(default_factory=list)

    @property
    def height(self) -> float:
        return max(1.0, self.top - self.bottom)


@dataclass(slots=True)
class _Page:
    number: int
    lines: list[_Line]
    tables: list[PdfTable]
    chars: int = 0
    garbage: int = 0


# ------------------------------------------------------------------------------ text


def _font(tp: Any, i: int, buf: Any, flags: Any) -> tuple[bool, bool]:
    raw.FPDFText_GetFontInfo(tp, i, buf, 128, ctypes.byref(flags))
    name = buf.value.decode("latin-1").lower()
    bold = any(k in name for k in _BOLD) or b"\xba\xda\xcc\xe5" in buf.value  # 黑体 (GBK)
    bold = bold or raw.FPDFText_GetFontWeight(tp, i) >= 600 or bool(flags.value & 0x40000)
    mono = any(k in name for k in _MONO) or bool(flags.value & 1)
    return bold, mono


# FPDFText_GetTextObject giving the object's address as an int (a dict key), where
# pypdfium2's binding gives a new pointer object on every call.
_text_object = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(
    ctypes.cast(raw.FPDFText_GetTextObject, ctypes.c_void_p).value or 0
)


def _glyph_size(handle: Any, i: int, matrix: Any) -> float:
    """The font size as set, scaled by the text matrix (to half points): producers that
    draw every glyph at size 1 and scale with the matrix still give real sizes."""
    raw.FPDFText_GetMatrix(handle, i, matrix)
    scale = (matrix.a * matrix.a + matrix.b * matrix.b) ** 0.5 or 1.0
    return round(raw.FPDFText_GetFontSize(handle, i) * scale * 2) / 2


# Digits right after punctuation: where a footnote's reference mark stands ("action.6 The").
_AFTER_PUNCT_DIGITS = re.compile(r"[.,;:!?)\]”’\"'](\d{1,3})(?=\s|$|[,.;:)])")


def _without_note_marks(line: str, bottoms: list[float], tops: list[float]) -> str:
    """The line without its footnote reference marks: digits after punctuation, raised
    above the line's baseline by a third of its glyphs' height and smaller than its tall
    glyphs ("corrective action.6 The FAA" read as one sentence with "6 The FAA").
    `bottoms`/`tops`: one per glyph that is not a space, in order; a digit on the
    baseline ("2.5", "(1) 3") or of the text's own size stays."""
    glyphs = [i for i, ch in enumerate(line) if ch != " "]
    if len(glyphs) != len(bottoms) or len(bottoms) < 8:
        return line
    heights = sorted(t - b for b, t in zip(bottoms, tops, strict=True))
    base = statistics.median(bottoms)
    rise, tall = heights[len(heights) // 2] / 3, heights[int(0.9 * (len(heights) - 1))]
    at = {pos: k for k, pos in enumerate(glyphs)}
    cut: list[tuple[int, int]] = []
    for m in _AFTER_PUNCT_DIGITS.finditer(line):
        a, b = m.span(1)
        marks = [at[i] for i in range(a, b)]
        if all(bottoms[k] - base >= rise and tops[k] - bottoms[k] <= 0.8 * tall for k in marks):
            cut.append((a, b))
    for a, b in reversed(cut):
        line = line[:a] + line[b:]
    return line


def _lines(page: Any, number: int, tables: list[PdfTable]) -> _Page:
    tp = page.get_textpage()
    n = raw.FPDFText_CountChars(tp)
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    buf, flags = ctypes.create_string_buffer(128), ctypes.c_int()
    matrix = raw.FS_MATRIX()
    rects = [t.bbox for t in tables]
    out: list[_Line] = []
    text: list[str] = []
    idx: list[int] = []  # char indices of visible glyphs in the current line
    # The current line's glyph boxes and font sizes, reduced when the line ends.
    lefts: list[float] = []
    rights: list[float] = []
    bottoms: list[float] = []
    tops: list[float] = []
    sizes: list[float] = []
    in_table: Counter[int] = Counter()
    chars = garbage = 0
    # Wide horizontal gaps inside a line (column-set text such as a glossary without
    # rules): (position in the line's text, x where the text resumes).
    gaps: list[tuple[int, float]] = []
    prev_right: float | None = None  # right edge of the previous visible glyph

    def finish() -> None:
        line = "".join(text)
        if not gaps and _AFTER_PUNCT_DIGITS.search(line):
            line = _without_note_marks(line, bottoms, tops)
        if idx and (line.strip() or in_table):
            if lefts:
                box = (min(lefts), max(rights), min(bottoms), max(tops))
            else:  # only table glyphs: the line keeps its number, not its text
                box = (1e9, -1e9, 1e9, -1e9)
            size = Counter(sizes).most_common(1)[0][0] if sizes else box[3] - box[2]
            probes = {idx[0], idx[len(idx) // 2], idx[-1]}
            fonts = [_font(tp.raw, i, buf, flags) for i in probes]
            ln = _Line(
                drop_cjk_spaces(clean_text(line)),
                box[0],
                box[1],
                box[3],
                box[2],
                size,
                len(out) + 1,
                all(b for b, _ in fonts),
                all(m for _, m in fonts),
            )
            if gaps:
                cuts = [0, *(g for g, _ in gaps), len(line)]
                pieces = [
                    drop_cjk_spaces(clean_text(line[a:b])) for a, b in itertools.pairwise(cuts)
                ]
                xs = [box[0], *(x for _, x in gaps)]
                ln.parts = [(x, t) for x, t in zip(xs, pieces, strict=True) if t]
            if in_table:
                ln.table = in_table.most_common(1)[0][0]
            out.append(ln)
        for part in (text, gaps, idx, lefts, rights, bottoms, tops, sizes):
            part.clear()
        in_table.clear()

    # Per glyph: the C calls and list methods bound once, the text page passed as its raw
    # handle and the out-parameters as objects (ctypes takes their address itself). This
    # loop is most of a text page's parse.
    handle = tp.raw
    get_box, get_object = raw.FPDFText_GetCharBox, _text_object
    add_text, add_idx, add_size = text.append, idx.append, sizes.append
    add_left, add_right, add_bottom, add_top = (
        lefts.append,
        rights.append,
        bottoms.append,
        tops.append,
    )
    # A text object draws all its glyphs in one font at one size and matrix, so its size
    # is worked out once, at its first glyph.
    object_sizes: dict[int, float] = {}
    for i, u in enumerate(char_codes(handle, n)):
        if u == 10:
            finish()
            prev_right = None
            continue
        # pdfium generates only spaces and line breaks (\r\n) between glyphs, so a
        # generated character needs no FPDFText_IsGenerated call to be told apart.
        if u == 32:
            add_text(" ")
            continue
        if u == 13 or u == 2 or u == 0xFFFE:
            continue
        chars += 1
        if no_text(u):
            garbage += 1
            continue
        get_box(handle, i, left, right, bottom, top)
        x0, x1, y0, y1 = left.value, right.value, bottom.value, top.value
        if rects:
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            hit = next(
                (k for k, (a, b, c, d) in enumerate(rects) if a <= cx <= c and b <= cy <= d),
                -1,
            )
            if hit >= 0:
                in_table[hit] += 1
                add_idx(i)  # keeps the line (and its number) but not its text
                continue
        if prev_right is not None and x0 - prev_right > 2.5 * max(1.0, y1 - y0) and text:
            gaps.append((len(text), x0))
        prev_right = x1
        add_text(chr(u))
        add_idx(i)
        obj = get_object(handle, i)
        size = object_sizes.get(obj) if obj else None
        if size is None:
            size = _glyph_size(handle, i, matrix)
            if obj:
                object_sizes[obj] = size
        add_size(size)
        add_left(x0)
        add_right(x1)
        add_bottom(y0)
        add_top(y1)
    finish()
    for ln in out:
        if not ln.text and ln.table < 0:
            ln.dropped = True
    tp.close()
    return _Page(number, out, tables, chars, garbage)


# -------------------------------------------------------------------- page furniture


def _furniture(pages: list[_Page]) -> None:
    """Drop running headers/footers and page numbers (top/bottom lines that repeat)."""
    if len(pages) < 3:
        for p in pages:
            _drop_page_numbers(p)
        return
    keys: Counter[str] = Counter()
    edges: dict[int, list[_Line]] = {}
    for p in pages:
        live = sorted(
            (ln for ln in p.lines if not ln.dropped and ln.table < 0), key=lambda ln: -ln.top
        )
        edge = live[:2] + live[-2:] if len(live) > 4 else live[:1] + live[-1:]
        edges[p.number] = edge
        for k in {_key(ln.text) for ln in edge}:
            keys[k] += 1
    # Anywhere on the page: a line repeated on most pages is furniture too (margin notes
    # such as "This publication is available free of charge from: ...").
    anywhere: Counter[str] = Counter()
    for p in pages:
        anywhere.update({_key(ln.text) for ln in p.lines if not ln.dropped and ln.table < 0})
    threshold = max(3, int(len(pages) * 0.3))
    for p in pages:
        for ln in edges[p.number]:
            if keys[_key(ln.text)] >= threshold and len(ln.text) < 150:
                ln.dropped = True
        for ln in p.lines:
            if len(ln.text) < 150 and anywhere[_key(ln.text)] >= max(4, len(pages) * 0.5):
                ln.dropped = True
        _drop_page_numbers(p)
    _drop_numbered_edges(pages)
    _drop_bands(pages, top=True)
    _drop_bands(pages, top=False)


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", "", text.lower()))


def _drop_page_numbers(page: _Page) -> None:
    live = [ln for ln in page.lines if not ln.dropped and ln.table < 0]
    if not live:
        return
    for ln in (max(live, key=lambda x: x.top), min(live, key=lambda x: x.top)):
        if _PAGE_NO.match(ln.text):
            ln.dropped = True


def _drop_numbered_edges(pages: list[_Page]) -> None:
    """Headers/footers carrying the printed page number ("6.3 Spacing 91"): the number
    tracks the page index at a fixed offset on many pages."""
    found: list[tuple[_Line, int]] = []
    for p in pages:
        live = [ln for ln in p.lines if not ln.dropped and ln.table < 0]
        if len(live) < 2:
            continue
        for ln in {
            id(x): x for x in (max(live, key=lambda x: x.top), min(live, key=lambda x: x.top))
        }.values():
            m = _EDGE_NO.search(ln.text)
            if m and len(ln.text) < 120:
                found.append((ln, p.number - int(m.group(1) or m.group(2))))
    offsets = Counter(off for _, off in found)
    if not offsets:
        return
    best, count = offsets.most_common(1)[0]
    if count >= max(3, len(pages) * 0.3):
        for ln, off in found:
            if off == best:
                ln.dropped = True


def _drop_bands(pages: list[_Page], top: bool) -> None:
    """Running headers that change per chapter ("1.4 Structure 5"): the outermost line sits
    at the same height on most pages, set apart from the body by a wider gap."""
    cands: dict[int, list[tuple[_Line, float]]] = defaultdict(list)
    for p in pages:
        live = sorted(
            (ln for ln in p.lines if not ln.dropped and ln.table < 0), key=lambda ln: -ln.top
        )
        if len(live) < 4:
            continue
        pitches = [a.bottom - b.top for a, b in itertools.pairwise(live)]
        pitch = statistics.median(x for x in pitches if x > -1) if pitches else 0.0
        edge, nxt = (live[0], live[1]) if top else (live[-1], live[-2])
        gap = edge.bottom - nxt.top if top else nxt.bottom - edge.top
        if len(edge.text) < 120 and gap > max(2.0, pitch * 1.6):
            cands[round(edge.top / 4)].append((edge, gap))
    for band in cands.values():
        if len(band) >= max(4, len(pages) // 2):
            for ln, _ in band:
                ln.dropped = True


# -------------------------------------------------------------------------- headings


def _norm(text: str) -> str:
    return re.sub(r"[\s\u3000]+", "", text).lower()


def _outline_headings(pdf: Any, pages: list[_Page]) -> tuple[int, int]:
    """Mark lines matching the PDF's bookmarks. Returns (entries, matched)."""
    by_page: dict[int, list[tuple[int, str, float | None]]] = defaultdict(list)
    total = 0
    try:
        toc = list(pdf.get_toc(max_depth=6))
    except Exception:  # a broken outline must not cost the document
        return 0, 0
    for item in toc:
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        title = clean_text(item.get_title() or "")
        if index is None or not title or index >= len(pages):
            continue
        y: float | None = None
        view = dest.get_view()
        if view and len(view[1]) >= 2 and view[0] in (1, 2):  # XYZ / FitH: (x, y) / (y)
            y = view[1][1] if view[0] == 1 else view[1][0]
        by_page[index].append((item.level + 1, title, y))
        total += 1
    matched = 0
    for index, entries in by_page.items():
        lines = [ln for ln in pages[index].lines if not ln.dropped and ln.table < 0]
        for level, title, y in entries:
            ln = _match(lines, title, y)
            if ln is not None:
                ln.heading = min(level, 6)
                matched += 1
    return total, matched


def _match(lines: list[_Line], title: str, y: float | None) -> _Line | None:
    want = _norm(title)
    bare = _norm(_NUM_PREFIX.sub("", title)) or want
    best: tuple[float, _Line] | None = None
    for k, ln in enumerate(lines):
        if ln.heading or len(ln.text) > len(title) + 40:
            continue
        have = _norm(ln.text)
        merged = have + (_norm(lines[k + 1].text) if k + 1 < len(lines) else "")
        ok = have in (want, bare) or _norm(_NUM_PREFIX.sub("", ln.text)) in (want, bare)
        if not ok and merged in (want, bare) and len(have) >= 2:
            ok = True
            ln.text = (
                clean_text(ln.text + " " + lines[k + 1].text)
                if not _is_cjk_pair(ln.text, lines[k + 1].text)
                else ln.text + lines[k + 1].text
            )
            lines[k + 1].dropped = True
        if not ok:
            continue
        dist = abs((y if y is not None else ln.top) - ln.top)
        if best is None or dist < best[0]:
            best = (dist, ln)
    if best is not None:
        k = lines.index(best[1])
        if k > 0 and _CHAPTER_ONLY.match(lines[k - 1].text) and not lines[k - 1].heading:
            # "第 1 章" on its own line above the title: one heading "第 1 章 基础知识".
            best[1].text = f"{lines[k - 1].text} {best[1].text}"
            lines[k - 1].dropped = True
        return best[1]
    return None


def _is_cjk_pair(a: str, b: str) -> bool:
    return bool(a and b) and ord(a[-1]) > 0x2E80 and ord(b[0]) > 0x2E80


def _font_headings(pages: list[_Page], body: float) -> None:
    """No usable outline: headings from size, bold and numbering, with short-line guards."""
    cands: list[tuple[_Line, int | None]] = []
    for p in pages:
        live = [ln for ln in p.lines if not ln.dropped and ln.table < 0]
        for k, ln in enumerate(live):
            if not plausible_heading(ln.text, 80) or _PAGE_NO.match(ln.text) or ln.mono:
                continue
            if sum(ch.isdigit() for ch in ln.text) > len(ln.text) / 2:
                continue
            level = numbered_level(ln.text)
            bigger = ln.size >= body * 1.15
            nxt = live[k + 1] if k + 1 < len(live) else None
            # A heading is a line of its own: the next line is not a wrapped continuation
            # in the same font (which would make this the first line of a paragraph).
            alone = (
                nxt is None
                or nxt.size != ln.size
                or nxt.bold != ln.bold
                or (ln.bottom - nxt.top) > ln.height * 0.6
            )
            if not alone:
                continue
            styled = bigger or (ln.bold and (level is not None or len(ln.text) <= 60))
            # Numbering alone (body font) only for chapter-like or dotted "3.2" numbers.
            numbered = (
                level is not None
                and len(ln.text) <= 40
                and not _BULLET.match(ln.text)
                and (level == 1 or bool(re.match(r"^\d+\.\d", ln.text)))
            )
            if styled or numbered:
                cands.append((ln, level))
    sizes = sorted({ln.size for ln, _ in cands if ln.size >= body * 1.15}, reverse=True)
    rank = {s: i + 1 for i, s in enumerate(sizes[:5])}
    for ln, level in cands:
        by_size = rank.get(ln.size, len(rank) + 1)
        ln.heading = min(6, level if level is not None else by_size)


# ------------------------------------------------------------------------ assembling


_Pairs = list[tuple[str, str, _Line]]


def _term_runs(lines: list[_Line]) -> dict[int, tuple[_Pairs, int]]:
    """Glossaries and definition lists set in two columns without rules: runs of three
    or more lines that each hold a short term, a wide gap, then its definition, with
    terms and definitions starting at the same x on every line. A following line that
    starts at the definition column continues the definition above. Returns the pairs by
    the index of the run's first line, with the run's last line number; the run's other
    lines are consumed."""
    runs: dict[int, tuple[_Pairs, int]] = {}
    k = 0
    while k < len(lines):
        ln = lines[k]
        if not _term_line(ln):
            k += 1
            continue
        term_x, def_x = ln.parts[0][0], ln.parts[1][0]
        pairs: _Pairs = []
        j = k
        while j < len(lines):
            cur = lines[j]
            if cur.dropped or cur.table >= 0:
                break
            if (
                _term_line(cur)
                and abs(cur.parts[0][0] - term_x) <= 4
                and abs(cur.parts[1][0] - def_x) <= 4
            ):
                pairs.append((cur.parts[0][1], cur.parts[1][1], cur))
            elif pairs and not cur.parts and abs(cur.x0 - def_x) <= 4:
                term, definition, first = pairs[-1]
                pairs[-1] = (term, join_lines([definition, cur.text]), first)
            else:
                break
            j += 1
        if len(pairs) >= 3:
            runs[k] = (pairs, lines[j - 1].no)
            for m in range(k + 1, j):
                lines[m].dropped = True
            k = j
        else:
            k += 1
    return runs


def _term_line(ln: _Line) -> bool:
    if ln.dropped or ln.table >= 0 or len(ln.parts) != 2:
        return False
    term = ln.parts[0][1]
    return len(term) <= 30 and len(term.split()) <= 4 and not term.endswith(tuple(_SENT_END))


def _assemble(pages: list[_Page]) -> BlockBuilder:
    b = BlockBuilder()
    for p in pages:
        placed: set[int] = set()
        group: list[_Line] = []
        mode = ""
        runs = _term_runs(p.lines)
        for pos, ln in enumerate(p.lines):
            if pos in runs:
                mode = _flush(b, p.number, group, mode)
                pairs, last = runs[pos]
                b.add("list", "\n".join(f"{t}: {d}" for t, d, _ in pairs), p.number, ln.no, last)
                continue
            if ln.table >= 0:
                if ln.table not in placed:
                    mode = _flush(b, p.number, group, mode)
                    placed.add(ln.table)
                    _emit_table(b, p, ln.table)
                continue
            if ln.dropped:
                continue
            if ln.heading:
                mode = _flush(b, p.number, group, mode)
                b.heading(ln.text, ln.heading, p.number, ln.no)
                continue
            kind = "code" if ln.mono else "list" if _BULLET.match(ln.text) else "paragraph"
            if group and _breaks(group, ln, mode, kind):
                mode = _flush(b, p.number, group, mode)
            if not group:
                mode = kind
            group.append(ln)
        _flush(b, p.number, group, mode)
        for k in range(len(p.tables)):
            if k not in placed:  # a table whose text pdfium did not report: still keep it
                _emit_table(b, p, k)
    return b


def _flush(b: BlockBuilder, page: int, group: list[_Line], mode: str) -> str:
    """Emit the lines gathered so far as one block; returns the reset mode."""
    if group:
        if mode == "code":
            b.add("code", "\n".join(ln.text for ln in group), page, group[0].no, group[-1].no)
        else:
            listed = mode == "list"
            pairs = [(ln.no, ln.text) for ln in group]
            text, marks = _list_text(group) if listed else join_marked(pairs)
            kind: BlockKind = "list" if listed else "paragraph"
            line_marks = marks if len(marks) > 1 else ()
            b.add(kind, text, page, group[0].no, group[-1].no, line_marks=line_marks)
        group.clear()
    return ""


def _continue_tables(pages: list[_Page]) -> None:
    """A table that goes on at the top of the next page without its header gets the
    header of the table it continues: otherwise its first data row is read as the header
    ("Air handler AHU-2 | 3 months | ..."), and every row below it is quoted under the
    wrong column names. It continues the previous page's last table when nothing but
    footnotes (two lines at most, no heading) follows that table, nothing but running
    headers comes before it, it has no caption of its own and as many columns, and its
    first row is no header: none at all, or one holding more numbers than the header it
    would replace (a repeated header row is a header, and stays one)."""
    for before, page in itertools.pairwise(pages):
        last, first = _table_lines(before), _table_lines(page)
        if not last or not first:
            continue
        k = max(last, key=lambda t: last[t][1])
        j = min(first, key=lambda t: first[t][0])
        after_last = [ln for ln in _live(before) if ln.no > last[k][1]]
        above_first = [ln for ln in _live(page) if ln.no < first[j][0]]
        if above_first or len(after_last) > 2 or any(ln.heading for ln in after_last):
            continue
        prev, table = before.tables[k], page.tables[j]
        header, top = prev.rows[0], table.rows[0]
        if table.captions or len(top) != len(header):
            continue
        if not any(top):
            rows = table.rows[1:]  # read as headerless: the header is missing
        elif _digit_cells(top) > _digit_cells(header):
            rows = table.rows  # its first data row was taken for a header
        else:
            continue
        page.tables[j] = replace(table, rows=(header, *rows))


def _table_lines(page: _Page) -> dict[int, tuple[int, int]]:
    """Each table's first and last line number on the page (tables with lines only)."""
    spans: dict[int, tuple[int, int]] = {}
    for ln in page.lines:
        if ln.table >= 0:
            lo, hi = spans.get(ln.table, (ln.no, ln.no))
            spans[ln.table] = (min(lo, ln.no), max(hi, ln.no))
    return spans


def _live(page: _Page) -> list[_Line]:
    """The page's text outside tables, running headers and footers left out."""
    return [ln for ln in page.lines if not ln.dropped and ln.table < 0 and ln.text.strip()]


def _digit_cells(row: tuple[str, ...]) -> int:
    return sum(any(ch.isdigit() for ch in cell) for cell in row)


def _emit_table(b: BlockBuilder, p: _Page, k: int) -> None:
    t = p.tables[k]
    nos = [ln.no for ln in p.lines if ln.table == k] or [1]
    for caption in t.captions:
        b.add("paragraph", caption.replace("\n", " "), p.number, min(nos), min(nos))
    b.add("table", render_table(t.rows), p.number, min(nos), max(nos), t.rows)
    for note in t.notes:
        b.add("paragraph", note.replace("\n", " "), p.number, max(nos), max(nos))


def _breaks(group: list[_Line], ln: _Line, mode: str, kind: str) -> bool:
    prev = group[-1]
    if mode == "code" or kind == "code":
        return mode != kind or (prev.bottom - ln.top) > prev.height * 1.5
    if kind == "list" and mode == "list":
        return (prev.bottom - ln.top) > prev.height * 1.5
    if kind == "list" or (
        mode == "list" and ln.x0 < group[0].x0 + 2 and prev.text[-1:] in _SENT_END
    ):
        return True
    if ln.top > prev.top + 2:  # moved up: next column or a new region
        return True
    if abs(ln.size - prev.size) > max(prev.size, 1) * 0.15:
        return True
    if (prev.bottom - ln.top) > max(prev.height, ln.height) * 0.8:  # vertical gap
        return True
    right = max(x.x1 for x in group)
    short = prev.x1 < right - 3 * prev.size and prev.text[-1:] in _SENT_END
    indent = ln.x0 > min(x.x0 for x in group) + 1.5 * ln.size
    return bool(short or (indent and len(group) > 1 and prev.text[-1:] in _SENT_END))


def _list_text(group: list[_Line]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The list's items, one a line (a bullet sign becomes "- "), with where each source
    line starts in it (`Block.line_marks`), so that an item is cited at its own lines."""
    items: list[list[tuple[int, str]]] = []
    for ln in group:
        if _BULLET.match(ln.text) or not items:
            items.append([(ln.no, ln.text)])
        else:
            items[-1].append((ln.no, ln.text))
    out: list[str] = []
    marks: list[tuple[int, int]] = []
    solid = 0
    for parts in items:
        text, item_marks = join_marked(parts)
        shift = 0
        m = _BULLET.match(text)
        if m and not re.match(r"\(?\d|[①-⑳]|\(", m.group(1)):
            shift = 1 - solid_chars(m.group(0))
            text = "- " + text[m.end() :]
        marks += [(solid + max(0, at + shift) if at else solid, no) for at, no in item_marks]
        out.append(text)
        solid += solid_chars(text)
    return "\n".join(out), tuple(marks)


# ------------------------------------------------------------------------------ entry


def _title(pdf: Any, pages: list[_Page], body: float, name: str) -> str:
    """The document's title: its metadata /Title when meaningful, else the first text
    page's title block, else the file name. Never a running header (dropped lines are
    not candidates), an all-capitals agency or section line, or a generic heading such as
    "Preface" / "前言" / "目录"."""
    meta = clean_text(pdf.get_metadata_dict().get("Title", "") or "")
    meta = re.sub(r"^microsoft (word|powerpoint) - ", "", meta, flags=re.IGNORECASE)
    if meta_title_ok(meta):
        return meta
    first = next((p for p in pages if p.chars >= 20), None)
    if first is not None:
        block = _title_block(first, body)
        if block:
            return block
        # A title row spanning the page's first table ("NICS Firearm Background Checks").
        caption = next((c for t in first.tables[:1] for c in t.captions[:1]), "")
        if _title_text_ok(caption):
            return caption
    return PurePath(name).stem


def _title_block(page: _Page, body: float) -> str:
    """The largest styled group of lines on the page (bigger than the page's body text,
    or bold at body size), at most three lines; the longest wins among groups of one
    size."""
    live = [ln for ln in page.lines if not ln.dropped and ln.table < 0 and ln.text]
    weights: Counter[float] = Counter()
    for ln in live:
        weights[ln.size] += len(ln.text)
    body = weights.most_common(1)[0][0] if weights else body
    groups: list[list[_Line]] = []
    for ln in live:
        prev = groups[-1][-1] if groups else None
        if (
            prev is not None
            and prev.size == ln.size
            and prev.bold == ln.bold
            and 0 <= prev.bottom - ln.top <= ln.size * 0.8
        ):
            groups[-1].append(ln)
        else:
            groups.append([ln])
    # Bold marks a title only where most text is not bold.
    bold_share = sum(len(ln.text) for ln in live if ln.bold) / max(
        1, sum(len(ln.text) for ln in live)
    )
    best: tuple[float, int, str] | None = None
    for group in groups:
        size, bold = group[0].size, group[0].bold
        styled = size >= body * 1.3 or (bold and size >= body and bold_share < 0.5)
        if len(group) > 3 or not styled:
            continue
        text = join_lines([ln.text for ln in group])
        if not _title_text_ok(text):
            continue
        key = (size, len(text), text)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else ""


def _title_text_ok(text: str) -> bool:
    if not (3 <= len(text) <= 200) or generic_title(text) or _PAGE_NO.match(text):
        return False
    if text.endswith(("。", ".", "；", ";", "，", ",")) and len(text) > 60:
        return False  # a sentence in bold, not a title
    letters = [ch for ch in text if ch.isalpha()]
    if not letters or sum(ch.isdigit() for ch in text) > len(letters):
        return False
    latin = [ch for ch in letters if ch.isascii()]
    # "DEPARTMENT OF TRANSPORTATION": an all-capitals line names an agency or section.
    shouting = len(latin) == len(letters) and all(ch.isupper() for ch in latin)
    return not (len(latin) >= 8 and shouting)


def parse(data: bytes, name: str) -> ParsedDocument:
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise ParseError(
                "PDF is encrypted with a password; provide an unprotected copy"
            ) from exc
        raise ParseError(f"PDF is damaged or not a PDF ({exc})") from exc
    try:
        return _parse(pdf, name)
    finally:
        pdf.close()


def _parse(pdf: Any, name: str) -> ParsedDocument:
    warnings: list[str] = []
    pages: list[_Page] = []
    for i in range(len(pdf)):
        page = pdf[i]
        tables: list[PdfTable] = []
        if has_grid(page):
            mb = page.get_mediabox()
            # pdfplumber is imported only for a page whose lines form a grid (~0.1 s).
            from ingestion.parsers.pdf_page_objects import PageObjects

            try:
                tables = extract_tables(PageObjects(page), mb[3], mb[0])
            except Exception as exc:  # table finder failure: keep the text anyway
                warnings.append(f"page {i + 1}: table detection failed ({exc})")
        pages.append(_lines(page, i + 1, tables))
        page.close()
    chars = sum(p.chars for p in pages)
    if len(pdf) and chars < 16 * len(pdf):
        raise NeedsOCR(
            f"PDF has no usable text layer ({chars} characters on {len(pdf)} "
            "pages: scanned images?) - needs OCR"
        )
    if sum(p.garbage for p in pages) > 0.3 * chars:
        raise NeedsOCR("PDF text decodes to garbage (fonts without a Unicode map) - needs OCR")
    empty = [p.number for p in pages if p.chars < 5]
    if empty:
        shown = ", ".join(map(str, empty[:20])) + (" ..." if len(empty) > 20 else "")
        warnings.append(f"pages without text (images only?): {shown}")
    _furniture(pages)
    weights: Counter[float] = Counter()
    for p in pages:
        for ln in p.lines:
            if not ln.dropped and ln.table < 0:
                weights[ln.size] += len(ln.text)
    body = weights.most_common(1)[0][0] if weights else 10.0
    total, matched = _outline_headings(pdf, pages)
    if total < 3 or matched < total * 0.3:
        for p in pages:
            for ln in p.lines:
                ln.heading = 0
        _font_headings(pages, body)
    _continue_tables(pages)
    b = _assemble(pages)
    title = _title(pdf, pages, body, name)
    return ParsedDocument(tuple(b.blocks), len(pdf), title, PARSER, True, tuple(warnings))
