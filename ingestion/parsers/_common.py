"""Helpers shared by the format parsers: block building, heading cues, tables, decoding."""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Sequence
from pathlib import PurePath

from core.errors import ParseError
from core.types import Block, BlockKind

_HAN = r"\u3400-\u9fff\uf900-\ufaff"
_CJK_PUNCT = r"\u3000-\u303f\uff00-\uffef"
# A space between two CJK characters is an extraction artefact (justified text, per-glyph
# positioning), never meaningful: Chinese does not separate words with spaces.
_CJK_SPACE = re.compile(rf"(?<=[{_HAN}{_CJK_PUNCT}])[ \t\u3000]+(?=[{_HAN}{_CJK_PUNCT}])")
_WS = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")

_CN_NUM = "一二三四五六七八九十百千零〇两"
# Numbering patterns that mark a heading, with the level they usually mean.
_NUMBERED: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(rf"^第\s*[{_CN_NUM}\d]+\s*[编篇部]\s*\S"), 1),
    # (a title after the number, or in brackets: "第4条（結婚祝金）", "第五條（適用範圍）")
    (re.compile(rf"^第\s*[{_CN_NUM}\d]+\s*章(\s|$|[{_HAN}（(])"), 1),
    (re.compile(rf"^第\s*[{_CN_NUM}\d]+\s*[节節](\s|$|[{_HAN}（(])"), 2),
    (re.compile(rf"^第\s*[{_CN_NUM}\d]+\s*[条條](\s|$|[{_HAN}（(])"), 3),
    (re.compile(rf"^[{_CN_NUM}]+\s*[、．.]\s*\S"), 2),
    (re.compile(rf"^[（(]\s*[{_CN_NUM}]+\s*[）)]\s*\S"), 3),
    (re.compile(r"^(?:chapter|part|section)\s+[\dIVXLC]+\b", re.IGNORECASE), 1),
    # "§ 1 Geltungsbereich", "Article 4 — Congés", "Artikel 3 Geltung"
    (re.compile(r"^§\s*\d+[a-z]?\s+[^\W\d]"), 2),
    (re.compile(r"^(?:article|artikel|art[íi]culo|articolo|artigo)\s+\d+\b", re.IGNORECASE), 2),
    (re.compile(r"^[IVX]+\.\s+[A-Z]"), 1),
)
_DOTTED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s*[A-Za-z\u3400-\u9fff]")
_SENTENCE_END = re.compile(r"[.。!！?？;；,，:：、]$")
_TOC_LEADER = re.compile(r"(\.{4,}|…{2,}|·{4,})\s*\d*\s*$")


def clean_text(text: str) -> str:
    """Collapse runs of spaces (authored spaces between CJK words are kept)."""
    return _WS.sub(" ", text).strip()


def drop_cjk_spaces(text: str) -> str:
    """Remove spaces between CJK characters: in extracted PDF text they are artefacts of
    justified text or per-glyph positioning, never meaningful."""
    return _CJK_SPACE.sub("", text)


def is_cjk(ch: str) -> bool:
    return bool(ch) and (
        "\u3400" <= ch <= "\u9fff"
        or "\uf900" <= ch <= "\ufaff"
        or "\u3000" <= ch <= "\u303f"
        or "\uff00" <= ch <= "\uffef"
    )


def join_lines(lines: Sequence[str]) -> str:
    """Join wrapped lines: no space around CJK, de-hyphenate 'infor-\\nmation'."""
    return join_marked(list(enumerate(lines)))[0]


def join_marked(lines: Sequence[tuple[int, str]]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """`join_lines` of (line number, text) pairs, with where each line starts in the
    joined text (`Block.line_marks`: non-space characters before it, its number)."""
    out = ""
    marks: list[tuple[int, int]] = []
    solid = 0  # non-space characters in `out`
    for number, raw in lines:
        line = raw.strip()
        if not line:
            continue
        if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[0].islower():
            out, solid = out[:-1], solid - 1
        elif out and not (is_cjk(out[-1]) or is_cjk(line[0])):
            out += " "
        marks.append((solid, number))
        out += line
        solid += solid_chars(line)
    return out, tuple(marks)


def item_marks(items: list[str], spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """`Block.line_marks` of a list joined one item a line (`items`, each with its first
    and last source line, 0 where unknown): where each item starts (non-space characters
    before it) with its first line, and its last character with its last line (a wrapped
    item). An item is then cited at its own lines."""
    marks: list[tuple[int, int]] = []
    solid = 0
    for item, (first, last) in zip(items, spans, strict=True):
        size = solid_chars(item)
        if first:
            marks.append((solid, first))
            if last > first and size > 1:
                marks.append((solid + size - 1, last))
        solid += size
    return tuple(marks) if len(marks) > 1 else ()


def solid_chars(text: str) -> int:
    """Characters that are not white space: what `Block.line_marks` counts."""
    return sum(not ch.isspace() for ch in text)


def numbered_level(text: str) -> int | None:
    """Heading level implied by a numbering prefix (`3.2.1 Title`, `第三章`, `一、`), else None."""
    text = text.strip()
    for pattern, level in _NUMBERED:
        if pattern.match(text):
            return level
    m = _DOTTED.match(text)
    if m and "." in m.group(1):
        return min(6, m.group(1).count(".") + 1)
    return None


def plausible_heading(text: str, max_len: int = 80) -> bool:
    """Short, one line, not a sentence, not a table-of-contents entry."""
    text = text.strip()
    if not text or "\n" in text or len(text) > max_len:
        return False
    if _SENTENCE_END.search(text) or _TOC_LEADER.search(text):
        return False
    # A bare number or date is a page number / label, not a heading.
    return any(ch.isalpha() for ch in text)


def render_table(rows: Sequence[Sequence[str]]) -> str:
    """Markdown pipe table: header row, separator, body rows (one line each). A
    two-column table without a header (a glossary) reads as "term: definition" lines."""
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    if width == 2 and not any(rows[0]):
        return "\n".join(f"{k}: {v}".replace("\n", " ").strip() for k, v in rows[1:])

    def fmt(row: Sequence[str]) -> str:
        cells = [c.replace("\n", " ").replace("|", "\\|").strip() for c in row]
        cells += [""] * (width - len(cells))
        return "| " + " | ".join(cells) + " |"

    lines = [fmt(rows[0]), "|" + "---|" * width]
    lines.extend(fmt(r) for r in rows[1:])
    return "\n".join(lines)


def normalise_rows(rows: Sequence[Sequence[str | None]]) -> tuple[tuple[str, ...], ...]:
    """Clean cells, drop empty rows and columns (and columns repeating their left
    neighbour in every row), pad to a rectangle."""
    cleaned = [
        [
            clean_text(c or "")
            if "\n" not in (c or "")
            else "\n".join(clean_text(p) for p in (c or "").split("\n")).strip()
            for c in r
        ]
        for r in rows
    ]
    cleaned = [r for r in cleaned if any(r)]
    if not cleaned:
        return ()
    width = max(len(r) for r in cleaned)
    for r in cleaned:
        r.extend([""] * (width - len(r)))
    keep = [j for j in range(width) if any(r[j] for r in cleaned)]
    # A column equal to its left neighbour in every row is one merged cell drawn over a
    # finer grid (forms), not data of its own.
    keep = [j for k, j in enumerate(keep) if k == 0 or any(r[j] != r[keep[k - 1]] for r in cleaned)]
    return tuple(tuple(r[j] for j in keep) for r in cleaned)


_NUMERIC = re.compile(r"^[\s(（]*[-+−–]?[$¥€£]?\s*\d[\d,.\s]*%?[)）]?\s*$")
MAX_HEADER_ROWS = 4


def numeric_cell(cell: str) -> bool:
    return bool(_NUMERIC.match(cell))


Row = tuple[int, list[str]]  # a sheet's row with its number


def lone_value(row: Sequence[str]) -> str:
    """The one value a row holds (a title merged across a table, a note under it), or ""."""
    values = {c for c in row if c}
    return next(iter(values)) if len(values) == 1 else ""


def sheet_parts(rows: list[Row]) -> list[list[Row]]:
    """A sheet's non-empty rows cut at its empty rows where a new table (or a title, or a
    note) starts after them: a run whose first row is one value, or labels only (a header).
    A run of figures after an empty row goes on the table before it."""
    parts: list[list[Row]] = []
    for number, row in rows:
        last = parts[-1] if parts else None
        starts_new = lone_value(row) or not any(numeric_cell(c) for c in row if c)
        if last is not None and (number == last[-1][0] + 1 or not starts_new):
            last.append((number, row))  # (after an empty row: a spacer inside the table)
        else:
            parts.append([(number, row)])
    return parts


# A note under a table: marked ("※ 1)", "* ", "注1：", "Note:", "(1)") or a sentence.
_NOTE = re.compile(r"^(?:[※*†‡¹²³]|注|備註|备注|notes?\b|nota\b|hinweis|anm|\(?\d{1,2}\))", re.I)


def table_and_notes(part: list[Row]) -> tuple[list[Row], list[Row], list[Row]]:
    """A run of rows as (captions above the table, the table, notes under it): leading rows
    of one value are captions; trailing ones that read as notes (`_NOTE`, or 40 characters
    or more) are notes. A run of single values only, none of them a number, is all
    captions (a one-column table of figures stays a table)."""
    rows = list(part)
    head: list[Row] = []
    tail: list[Row] = []
    while len(rows) > 2 and lone_value(rows[0][1]):
        head.append(rows.pop(0))
    while (
        len(rows) > 2
        and (note := lone_value(rows[-1][1]))
        and (_NOTE.match(note.strip()) or len(note) >= 40)
    ):
        tail.insert(0, rows.pop())
    if all((v := lone_value(r)) and not numeric_cell(v) for _, r in rows):
        return [*head, *rows, *tail], [], []
    return head, rows, tail


def _spans(row: Sequence[str]) -> list[int]:
    """Positions j where a cell repeats sideways into j+1: a merged cell over columns."""
    return [j for j in range(len(row) - 1) if row[j] and row[j] == row[j + 1]]


_ENUMERATOR = re.compile(r"^[\[(]?(\d{1,4})[\]).]?$")
_KEY_SHAPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9&/.\-]{0,15}$")


def _code_like(cell: str) -> bool:
    """An acronym or code ("API", "DoS", "G2B", "A0200"): no spaces, two capitals or
    digits at least. A column label ("Acronym", "Term", "Name") is not."""
    return bool(_KEY_SHAPE.match(cell)) and sum(ch.isupper() or ch.isdigit() for ch in cell) >= 2


def headerless(rows: Sequence[Sequence[str]]) -> bool:
    """A glossary or acronym list drawn as a table: every row, the first included, is a
    code-like key in sorted order with its definition. Its first row is data, not a
    header (a header such as "Term" or "ID" breaks the shape or the order)."""
    if len(rows) < 4 or len(rows[0]) < 2:
        return False
    keys = [r[0] for r in rows]
    if not all(r[1] for r in rows):
        return False
    numbers = [_ENUMERATOR.match(k) for k in keys]
    if all(numbers):  # "[1]", "2.", "(3)": a numbered list such as references
        values = [int(m.group(1)) for m in numbers if m]
        return all(b > a for a, b in itertools.pairwise(values))
    if not all(_code_like(k) for k in keys):
        return False
    folded = [k.casefold() for k in keys]
    return folded == sorted(folded)


def header_rows(rows: Sequence[Sequence[str]]) -> int:
    """How many leading rows form the header: 0 for a headerless key list (see
    `headerless`), else the first row; each next row while
    the row above has a merged cell spanning columns that this row splits into distinct
    labels (a group title over sub-titles), and this row reads as labels, not data."""
    if headerless(rows):
        return 0
    n = 1
    while n < min(MAX_HEADER_ROWS, len(rows) - 1):
        above, row = rows[n - 1], rows[n]
        spans = _spans(above)
        split = any(
            row[j] and row[j + 1] and row[j] != row[j + 1] for j in spans if j + 1 < len(row)
        )
        under = {k for j in spans for k in (j, j + 1)}
        # Outside the split group cells, a header row repeats the cell above (merged
        # downwards) or is empty; a data row has values of its own there.
        merged_down = all(
            not row[j] or row[j] == above[j]
            for j in range(min(len(row), len(above)))
            if j not in under
        )
        filled = [c for c in row if c]
        numeric = sum(1 for c in filled if numeric_cell(c))
        if not split or not merged_down or not filled or numeric * 2 > len(filled):
            break
        n += 1
    return n


def join_labels(labels: Sequence[str]) -> str:
    """Stack of header labels (outermost first) as one column name; a label repeated
    downwards (a cell merged over several header rows) counts once."""
    out = last = ""
    for label in labels:
        label = " ".join(label.split())
        if not label or label == last:
            continue
        last = label
        # Levels read apart ("大型车比例μ（%） μ≤10"), except between two Han characters
        # ("编制条件路段交通量"), which Chinese writes without a space.
        han = bool(out) and _is_han(out[-1]) and _is_han(label[0])
        out = f"{out}{'' if han or not out else ' '}{label}"
    return out


def _is_han(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def resolve_header(head: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """One header string per column from several header rows (merged cells already
    repeated across the positions they cover)."""
    width = max((len(r) for r in head), default=0)
    return tuple(join_labels([r[j] if j < len(r) else "" for r in head]) for j in range(width))


def collapse_header(
    rows: Sequence[Sequence[str]], n_header: int | None = None
) -> tuple[tuple[str, ...], ...]:
    """Rows with their header rows (given, or found by `header_rows`) resolved into one
    header row, so `rows[0]` names every column on its own. A table without a header
    gets an empty first row: `rows[0]` is always the header, possibly blank."""
    if not rows:
        return ()
    n = header_rows(rows) if n_header is None else max(0, min(n_header, len(rows)))
    if n == 0:
        return (("",) * len(rows[0]), *(tuple(r) for r in rows))
    if n == 1:
        return tuple(tuple(r) for r in rows)
    return (resolve_header(rows[:n]), *(tuple(r) for r in rows[n:]))


# Headings that open a document's front matter; never the document's title.
_GENERIC_TITLES = re.compile(
    r"^(preface|foreword|contents|table of contents|introduction|abstract|summary|"
    r"acknowledge?ments?|index|appendix|overview|notes?|untitled( document)?|document\d*|"
    r"前言|序言?|序言|引言|目录|目\s*录|摘要|概述|说明|附录|致谢|版权声明|修订历史|"
    r"封面|正文|untitled)$",
    re.IGNORECASE,
)


def generic_title(text: str) -> bool:
    """A front-matter heading ("Preface", "前言", "目录") rather than a document title."""
    return bool(_GENERIC_TITLES.match(re.sub(r"[\s:：.。]+$", "", text.strip())))


def meta_title_ok(title: str) -> bool:
    """A title from document metadata worth showing: not a file name, a template
    placeholder ("Untitled", "Slide 1"), a generic heading, or too short to mean much."""
    title = title.strip()
    if len(title) < 3 or generic_title(title):
        return False
    return not re.search(
        r"\.(docx?|xlsx?|pptx?|pdf|tex|dvi|indd|rtf|odt)$|^untitled|"
        r"^(slide|page|sheet)\s*\d+$|^microsoft (word|excel)",
        title,
        re.IGNORECASE,
    )


def workbook_title(meta: str, name: str) -> str:
    """Title for a workbook: metadata when meaningful, else the file name (its headings
    are its sheets' names)."""
    return clean_text(meta) if meta_title_ok(meta) else PurePath(name).stem


# Cells read from one sheet at most: a sheet "used" to row 1,048,576 by formatting alone
# is not data.
MAX_SHEET_CELLS = 2_000_000


def spread_merged(grid: list[list[str]], row: int, col: int, rows: int, cols: int) -> None:
    """A merged cell's value (at `row`, `col`) in every position of the `rows` x `cols`
    block it covers, as far as the grid goes: parsers give it once, a reader of any of
    those rows or columns needs it."""
    value = grid[row][col]
    for r in range(row, min(row + rows, len(grid))):
        for c in range(col, min(col + cols, len(grid[r]))):
            grid[r][c] = value


def document_title(meta: str, blocks: Sequence[Block], name: str) -> str:
    """Title for page-less formats: metadata when meaningful, else the first top-level
    heading unless it is generic front matter, else the file name."""
    if meta_title_ok(meta):
        return clean_text(meta)
    for b in blocks:
        if b.kind == "heading" and b.level == 1:
            if not generic_title(b.text):
                return b.text
            break
    return PurePath(name).stem


class BlockBuilder:
    """Accumulates blocks in reading order and tracks the enclosing headings."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._stack: list[tuple[int, str]] = []

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self._stack)

    def heading(
        self, text: str, level: int, page: int = 1, line_start: int = 1, line_end: int | None = None
    ) -> None:
        text = clean_text(text)
        if not text:
            return
        level = max(1, min(6, level))
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self.blocks.append(
            Block("heading", text, page, line_start, line_end or line_start, level, self.path)
        )
        self._stack.append((level, text))

    def add(
        self,
        kind: BlockKind,
        text: str,
        page: int = 1,
        line_start: int = 1,
        line_end: int | None = None,
        rows: tuple[tuple[str, ...], ...] = (),
        line_marks: tuple[tuple[int, int], ...] = (),
    ) -> None:
        if kind != "code":
            text = text.strip()
        if not text.strip():
            return
        end = line_end or line_start
        self.blocks.append(Block(kind, text, page, line_start, end, 0, self.path, rows, line_marks))

    def table(
        self,
        rows: Sequence[Sequence[str | None]],
        page: int = 1,
        line_start: int = 1,
        line_end: int | None = None,
        n_header: int | None = None,
    ) -> None:
        """A table block; `rows` may start with several header rows (`n_header` when the
        format says how many, else they are detected): they become one resolved row."""
        norm = normalise_rows(rows)
        # Leading rows holding one value across the table are its title, not a header.
        while len(norm) > 2 and len(norm[0]) > 1 and len({c for c in norm[0] if c}) == 1:
            title = next(c for c in norm[0] if c)
            self.add("paragraph", title.replace("\n", " "), page, line_start, line_start)
            norm = norm[1:]
            n_header = None if n_header is None else n_header - 1
        clean = collapse_header(norm, n_header)
        if not clean:
            return
        self.add("table", render_table(clean), page, line_start, line_end, clean)

    def reset_sections(self) -> None:
        self._stack.clear()

    def first_heading(self, level: int = 1) -> str:
        return next((b.text for b in self.blocks if b.kind == "heading" and b.level == level), "")


def add_sheet_part(b: BlockBuilder, part: list[Row], page: int) -> None:
    """A run of a sheet's rows (`sheet_parts`; a CSV's run between empty rows) as blocks:
    its captions and notes as paragraphs, each its one value once (a merged title is
    spread over every cell it spans), and its table as one (`table_and_notes`)."""
    head, body, tail = table_and_notes(part)
    for line, row in head:
        b.add("paragraph", lone_value(row), page, line)
    if body:
        b.table([row for _, row in body], page, body[0][0], body[-1][0])
    for line, row in tail:
        b.add("paragraph", lone_value(row), page, line)


# What text never holds much of: C0 controls other than whitespace and ESC (ANSI colours
# in logs), DEL, C1 controls, and U+FFFD (bytes no encoding could decode).
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]")
# Binary decodes to 22% or more of them (images, gzip, random bytes ~25%, executables 50%+);
# text to none, a crafted file with invalid bytes on every line (the hostile corpus) to 8%.
_MAX_NOT_TEXT = 0.15
_MIN_NOT_TEXT = 16  # a note with a stray NUL or bell is text with flaws, not binary


def decode(data: bytes) -> tuple[str, str]:
    """Decode text of unknown encoding. Returns (text, encoding name). Bytes that are
    clearly binary (an executable, an archive, random data named .txt or .md) raise
    ParseError: every encoding "decodes" them, GB18030 into CJK-looking garbage that would
    be indexed and match queries, so they must fail like a damaged PDF does."""
    text, encoding = _decode(data)
    _refuse_binary(text)
    return text, encoding


def _refuse_binary(text: str) -> None:
    """Raise ParseError when over 15% of decoded text is control characters and
    undecodable bytes. Text in any encoding, decoded with the right one, holds almost
    none; a few stray ones (a NUL, a bell) are left to the sanitiser, which removes and
    counts them."""
    bad = len(text) - len(_NOT_TEXT.sub("", text))
    if bad >= _MIN_NOT_TEXT and bad > _MAX_NOT_TEXT * len(text):
        share = round(100 * bad / len(text))
        raise ParseError(
            f"binary content, not text ({share}% of the characters are control or invalid ones)"
        )


def _decode(data: bytes) -> tuple[str, str]:
    """BOM first (UTF-8/16/32), then UTF-16 without one (many NULs in alternating
    positions: ASCII in UTF-16 is valid UTF-8 too, NULs between the letters), then strict
    UTF-8, then charset-normalizer. Chinese guesses are widened to GB18030 (a superset of
    GBK/GB2312 that never fails on rare characters).
    A Japanese or Korean guess wins when its text reads as that language: the double-byte
    CJK encodings decode each other's bytes without error, so "decodes cleanly" proves
    nothing, while kana or spaced Hangul never come out of Chinese bytes by accident.
    """
    for bom, enc in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(enc, errors="replace"), enc
    if len(data) >= 4 and data[1::2].count(0) > len(data) // 4:
        return data.decode("utf-16-le", errors="replace"), "utf-16-le"
    if len(data) >= 4 and data[0::2].count(0) > len(data) // 4:
        return data.decode("utf-16-be", errors="replace"), "utf-16-be"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = from_bytes(data[:200_000])
    best = matches.best()
    enc = (best.encoding if best else "gb18030").lower()
    if enc in ("gbk", "gb2312", "hz", "cp936", "gb18030"):
        enc = "gb18030"
    elif enc not in ("big5", "big5hkscs", "cp950"):
        # The detector's Japanese or Korean guesses (best first) that read as such.
        for cand in (m.encoding.lower() for m in matches):
            if cand in _JAPANESE or cand in _KOREAN:
                text = _strict(data, cand)
                if text is not None and _reads_as(text, japanese=cand in _JAPANESE):
                    return text, cand
        # A legacy Chinese encoding is the common case for non-UTF-8 text here; prefer it
        # when it decodes cleanly, since detectors confuse GB18030 with Latin code pages.
        for cand in ("gb18030", "big5"):
            text = _strict(data, cand)
            if text is not None and _han_ratio(text) > 0.3:
                return text, cand
    return data.decode(enc, errors="replace"), enc


_MIN_LETTERS = 8  # non-ASCII characters needed before a text's language is trusted
_HANGUL_WORD_END = re.compile("[\uac00-\ud7a3][ \t]+(?=[\uac00-\ud7a3])")
# Korean's most frequent syllables (particles, endings, common roots): about 60% of the
# syllables of real Korean text, about 5% of Chinese text read as EUC-KR.
_COMMON_HANGUL = frozenset(
    "이다의는에하을고가기지서한로를리사자도시수어인나대니들여정있으게보아과해면부주적일상요"
    "거전우라만성내그제것원장구위문동없또말와국마방화소경계중무비세연조실안분생관학결발개공회"
    "심진예습었했할된되"
)
# charset-normalizer's names of the Japanese and Korean encodings it can answer.
_JAPANESE = frozenset(
    (
        "cp932",
        "shift_jis",
        "shift_jis_2004",
        "shift_jisx0213",
        "euc_jp",
        "euc_jis_2004",
        "euc_jisx0213",
        "iso2022_jp",
        "iso2022_jp_1",
        "iso2022_jp_2",
        "iso2022_jp_2004",
        "iso2022_jp_3",
        "iso2022_jp_ext",
    )
)
_KOREAN = frozenset(("cp949", "euc_kr", "johab", "iso2022_kr"))


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _reads_as(text: str, *, japanese: bool) -> bool:
    """Whether `text` reads as Japanese (else Korean). The double-byte CJK encodings
    decode each other's bytes, so the text itself must show it: Japanese has hiragana
    (Chinese or Korean bytes read as Shift-JIS/EUC-JP give none, or half-width katakana);
    Korean has spaces between words and its most common syllables (Chinese bytes read as
    EUC-KR/Johab give unspaced, rare syllables). Too short a text shows nothing."""
    letters = [ch for ch in text if not ch.isspace() and not ch.isascii()]
    if len(letters) < _MIN_LETTERS:
        return False
    if japanese:
        hiragana = sum("\u3041" <= ch <= "\u309f" for ch in letters)
        half_width = sum("\uff61" <= ch <= "\uff9f" for ch in letters)
        return hiragana >= 0.1 * len(letters) and half_width < 0.05 * len(letters)
    hangul = [ch for ch in letters if "\uac00" <= ch <= "\ud7a3"]
    common = sum(ch in _COMMON_HANGUL for ch in hangul)
    words = len(_HANGUL_WORD_END.findall(text))
    return len(hangul) >= 0.5 * len(letters) and common >= 0.25 * len(hangul) and words > 0


def _han_ratio(text: str) -> float:
    letters = [ch for ch in text if not ch.isspace() and not ch.isascii()]
    if not letters:
        return 0.0
    return sum(1 for ch in letters if "\u4e00" <= ch <= "\u9fff") / len(letters)
