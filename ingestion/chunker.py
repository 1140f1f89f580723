"""Structure-aware chunking: parsed blocks → anchor units → budgeted chunk drafts.

Stages, each a small pure function:

1. Anchor (`_anchor_units`): a text unit starts at every heading of level <=
   `anchor_levels` and holds the blocks up to the next such heading. A table is always a
   unit of its own (never mixed with text); a short caption right before it moves with it.
2. Merge (`_merge_small`): text units under `min_tokens` join the next unit of the same
   parent section, or the previous one when they end their section, if the result fits.
3. Budget (`_pack_text`, `_table_drafts`): text units over `max_tokens` are cut at block
   boundaries; a block over budget was already cut into sentences (code: lines), and a
   sentence over budget into character runs. Tables over budget are split by rows, every
   part re-rendered with the header row and sharing one `table_id`.
4. Optional compression (`summarize_units`): one sentence per draft from an injected LLM.

Every chunk starts with a short breadcrumb line ("Guide > Install") so it reads alone, and
carries the page and line span of its first and last block for citations. Token budgets are
counted additively, each piece with its separator, so a chunk is counted once per piece and
not once per candidate join. For `approx_tokens` the sum of the parts is >= the count of the
joined text, so `max_tokens` holds exactly; for a real tokenizer the sum is a close and
usually conservative estimate. The one allowed excess is a table row over budget on its own:
a row is never cut.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from core.settings import ChunkSettings
from core.text import approx_tokens, split_sentences
from core.types import Block, ChunkKind
from ingestion.parsers._common import render_table, solid_chars

log = logging.getLogger(__name__)

TokenCounter = Callable[[str], int]

# "表 3 …", "续表 2-1", "Table 3: …", "Tab. IV" — the number keeps "Table of contents" out.
_CAPTION = re.compile(
    r"^(?:续?表|table|tab\.)\s*(?:\d+(?:[.\-–]\d+)*|[ivxlc]+|[一二三四五六七八九十]+)"
    r"(?:$|[\s:：.、])",
    re.IGNORECASE,
)
_CAPTION_MAX_CHARS = 80
_SENTENCE_ENDS = (".", "。", "!", "！", "?", "？", ";", "；")
_SEPARATOR_ROW = re.compile(r"^\|?\s*:?-{3,}")
_CRUMB_JOIN = " > "


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk before it has ids: what `ingestion.chunk` hands to indexing."""

    kind: ChunkKind
    text: str
    page_start: int
    page_end: int
    line_start: int
    line_end: int
    section_path: tuple[str, ...] = ()
    table_id: str = ""
    # Table drafts only: resolved header per column, and this part's body rows.
    table_header: tuple[str, ...] = ()
    table_rows: tuple[tuple[str, ...], ...] = ()
    # Where each line of `text` came from: (page, first source line, last source line),
    # one entry per "\n"-separated line; (page, 0, 0) for a line with no source of its own
    # (a breadcrumb). Lets a citation name the lines of one sentence, not the whole chunk.
    line_map: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class _Span:
    """A piece of text with its origin: what text units are packed from.

    A whole block when it fits the budget, else one sentence (or line of code, or character
    run of an overlong sentence) of it.
    """

    text: str
    page: int
    line_start: int
    line_end: int
    tokens: int
    sep: str = "\n"  # joiner before this span when it follows another in a chunk
    block: int = -1  # source block index: overlap never crosses blocks
    context: tuple[str, ...] = ()  # section path a chunk starting here is labelled with
    # The source lines of each line of `text`, when known apart from the span's range (a
    # paragraph put one sentence a line: `_marked_spans`).
    line_ranges: tuple[tuple[int, int], ...] = ()


def _span(
    text: str,
    page: int,
    lines: tuple[int, int],
    count: TokenCounter,
    *,
    sep: str = "\n",
    block: int = -1,
    context: tuple[str, ...] = (),
) -> _Span:
    # The separator is counted with the text: summed span counts then bound the count of
    # the joined chunk (see the module docstring).
    return _Span(text, page, lines[0], lines[1], count(sep + text), sep, block, context)


@dataclass(slots=True)
class _TextUnit:
    path: tuple[str, ...]  # the section that contains the whole unit
    header: str  # breadcrumb line printed first; "" when the unit has no section
    head: _Span | None  # the anchor heading's position (its text is in `header`)
    spans: list[_Span] = field(default_factory=list)
    # Merging stays inside the parent section of the unit that needed it.
    parent: tuple[str, ...] = ()
    header_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.header_tokens + sum(s.tokens for s in self.spans)


@dataclass(frozen=True, slots=True)
class _TableUnit:
    block: Block
    path: tuple[str, ...]
    caption: _Span | None
    table_id: str


_Unit = _TextUnit | _TableUnit


def table_id(ordinal: int) -> str:
    """The name of a document's `ordinal`-th table (1-based, in reading order): "t1".
    Chunks carry it and `ragline inspect` lists tables by it: one numbering everywhere."""
    return f"t{ordinal}"


def chunk_blocks(
    blocks: Sequence[Block],
    settings: ChunkSettings,
    count_tokens: TokenCounter = approx_tokens,
    *,
    has_pages: bool = True,
) -> list[ChunkDraft]:
    """Chunk a parsed document's blocks (in reading order) into drafts, deterministically."""
    units = _anchor_units(blocks, settings, count_tokens)
    units = _merge_small(_drop_bare_headings(units), settings, count_tokens)
    # Overlap only helps page-less formats: with pages, a citation span must stay exact.
    overlap = 0 if has_pages else settings.overlap_tokens
    drafts: list[ChunkDraft] = []
    for unit in units:
        if isinstance(unit, _TableUnit):
            drafts.extend(_table_drafts(unit, settings, count_tokens))
        else:
            drafts.extend(_pack_text(unit, settings, count_tokens, overlap))
    return [d for d in drafts if d.text.strip()]


def summarize_units(
    drafts: Sequence[ChunkDraft], summarize: Callable[[str], str] | None
) -> list[str]:
    """One-sentence summary per draft from an injected summarizer (an LLM call); "" without.

    Compression is an optional enrichment: a failed call leaves that summary empty rather
    than failing the whole document's ingest.
    """
    if summarize is None:
        return [""] * len(drafts)
    out: list[str] = []
    for i, draft in enumerate(drafts):
        try:
            raw = summarize(draft.text)
        except Exception as exc:  # any client error: degrade, never block ingest
            log.warning("summarizer failed on draft %d: %s", i, type(exc).__name__)
            raw = ""
        sentences = split_sentences(" ".join(raw.split()))
        out.append(sentences[0] if sentences else "")
    return out


# ---------------------------------------------------------------------------- stage 1


def _anchor_units(
    blocks: Sequence[Block], settings: ChunkSettings, count: TokenCounter
) -> list[_Unit]:
    units: list[_Unit] = []
    stack: list[tuple[int, str]] = []  # open headings, for parsers that give no paths
    heading_ctx: tuple[str, ...] = ()  # path of the nearest heading so far
    anchor_ctx: tuple[str, ...] = ()  # path of the nearest anchor heading so far
    current: _TextUnit | None = None
    tables = 0
    budget = _span_budget(settings)
    for i, block in enumerate(blocks):
        if block.kind == "table":
            tables += 1
            caption = _detach_table_lead(current, blocks, i)
            path = _clean_path(block.section_path) or heading_ctx
            units.append(_TableUnit(block, path, caption, table_id(tables)))
            current = None  # text after the table is a new unit: chunks stay in order
            continue
        if block.kind == "heading":
            title = " ".join(block.text.split())
            if not title:
                continue
            level = max(block.level, 1)
            heading_ctx = _heading_path(block, title, level, stack)
            head = _span(
                title,
                block.page,
                (block.line_start, block.line_end),
                count,
                block=i,
                context=heading_ctx[:-1],
            )
            if level <= settings.anchor_levels:
                anchor_ctx = heading_ctx
                current = _new_unit(heading_ctx, heading_ctx, head, settings, count)
                units.append(current)
            else:
                # A heading outside the open unit's section (the text after a table, under
                # the heading before it) opens the unit its text will go to: it is not
                # left as the last line of the one before.
                if current is None or (current.path and not _within(heading_ctx, current.path)):
                    section = _section(heading_ctx, anchor_ctx)
                    current = _open_unit(units, section, heading_ctx[:-1], settings, count)
                current.spans.append(head)
            continue
        text = _normalise(block.text, code=block.kind == "code")
        if not text:
            continue
        path = _clean_path(block.section_path) or heading_ctx
        # A parser path outside the open unit (a new sheet, an e-mail attachment) is a
        # section change even without a heading block.
        if current is None or (block.section_path and not _within(path, current.path)):
            current = _open_unit(units, _section(path, anchor_ctx), path, settings, count)
        current.spans.extend(_block_spans(i, block, text, path, budget, count))
    return units


def _section(path: tuple[str, ...], anchor_ctx: tuple[str, ...]) -> tuple[str, ...]:
    """The section a unit without its own anchor heading belongs to: the enclosing anchor
    section, or the parser's path where that lies outside it."""
    return anchor_ctx if anchor_ctx and _within(path, anchor_ctx) else path


def _new_unit(
    path: tuple[str, ...],
    context: tuple[str, ...],
    head: _Span | None,
    settings: ChunkSettings,
    count: TokenCounter,
) -> _TextUnit:
    header = _breadcrumb(context, _header_cap(settings), count)
    return _TextUnit(
        path, header, head, parent=path[:-1], header_tokens=_header_tokens(header, count)
    )


def _open_unit(
    units: list[_Unit],
    path: tuple[str, ...],
    context: tuple[str, ...],
    settings: ChunkSettings,
    count: TokenCounter,
) -> _TextUnit:
    """A unit without its own anchor heading: the preamble, or the text after a table.
    It belongs to section `path` and is labelled with the more specific `context`."""
    unit = _new_unit(path, context, None, settings, count)
    units.append(unit)
    return unit


def _heading_path(
    block: Block, title: str, level: int, stack: list[tuple[int, str]]
) -> tuple[str, ...]:
    """Path of a heading including itself. The parser's path (its ancestors) wins; the
    level stack is the fallback for parsers that leave `section_path` empty."""
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, title))
    parser = _clean_path(block.section_path)
    if not parser:
        return tuple(t for _, t in stack)
    return parser if parser[-1] == title else (*parser, title)


def _detach_table_lead(current: _TextUnit | None, blocks: Sequence[Block], i: int) -> _Span | None:
    """Take the caption of table `i` out of the text before it, and drop the headings
    right before the table: its breadcrumb names them, and left in place they would
    dangle at the end of the previous chunk."""
    caption = _take_caption(current, blocks, i)
    if current is not None:
        first = caption.block if caption else i
        while (
            current.spans
            and current.spans[-1].block == first - 1
            and (blocks[first - 1].kind == "heading")
        ):
            current.spans.pop()
            first -= 1
    return caption


def _take_caption(current: _TextUnit | None, blocks: Sequence[Block], i: int) -> _Span | None:
    """Move the paragraph right before a table into the table's chunk when it is its
    caption: short, one line, and either numbered like one ("表 3", "Table 3:") or the only
    text between a heading (or another table) and the table and not a sentence (a sheet's
    merged title row, a "Results" or "如下表所示：" line)."""
    if current is None or not current.spans:
        return None
    last = current.spans[-1]
    if last.block != i - 1 or blocks[i - 1].kind != "paragraph":
        return None
    if "\n" in last.text or len(last.text) > _CAPTION_MAX_CHARS:
        return None
    before = current.spans[-2] if len(current.spans) > 1 else current.head
    after_heading = before is not None and before.block == i - 2 and blocks[i - 2].kind == "heading"
    # (A title line between two tables, as a sheet writes a second table's name under the
    # first: "Meadowbrook Care health plan" names the table after it.)
    after_table = i >= 2 and blocks[i - 2].kind == "table" and len(current.spans) == 1
    titled = (after_heading or after_table) and not last.text.endswith(_SENTENCE_ENDS)
    if not (_CAPTION.match(last.text) or titled):
        return None
    return current.spans.pop()


def _block_spans(
    i: int, block: Block, text: str, path: tuple[str, ...], budget: int, count: TokenCounter
) -> list[_Span]:
    if block.line_marks and block.kind == "list":
        return _listed_spans(i, block, text, path, budget, count)
    if block.line_marks and block.kind != "code":
        return _marked_spans(i, block, text, path, budget, count)
    whole = _span(
        text, block.page, (block.line_start, block.line_end), count, block=i, context=path
    )
    if whole.tokens <= budget:
        return [whole]
    return _explode(i, block, path, budget, count)


def _line_finder(block: Block) -> Callable[[int], int]:
    """The source line of the non-space character at an offset of the block's text."""
    starts = [solid for solid, _ in block.line_marks]
    numbers = [number for _, number in block.line_marks]

    def line_at(solid: int) -> int:
        return numbers[max(0, bisect.bisect_right(starts, solid) - 1)]

    return line_at


def _listed_spans(
    i: int, block: Block, text: str, path: tuple[str, ...], budget: int, count: TokenCounter
) -> list[_Span]:
    """A list, one item a line, whose items carry their source lines
    (`Block.line_marks`): an item is cited at its own lines, not the whole list's. Cut
    as any block when over the budget."""
    whole = _span(
        text, block.page, (block.line_start, block.line_end), count, block=i, context=path
    )
    if whole.tokens > budget:
        return _explode(i, block, path, budget, count)
    if solid_chars(whole.text) != solid_chars(block.text):
        return [whole]  # (not the text the marks count)
    line_at = _line_finder(block)
    ranges: list[tuple[int, int]] = []
    solid = 0
    for line in whole.text.split("\n"):
        inner = solid_chars(line)
        ranges.append((line_at(solid), line_at(solid + max(inner - 1, 0))))
        solid += inner
    return [replace(whole, line_ranges=tuple(ranges))]


def _marked_spans(
    i: int, block: Block, text: str, path: tuple[str, ...], budget: int, count: TokenCounter
) -> list[_Span]:
    """A paragraph joined from several source lines (a PDF's), one sentence a line, each
    with the source lines it spans (`Block.line_marks`): a quote of it is cited at its
    own lines, not the paragraph's. Whole when it fits the budget, else a span per
    sentence (an overlong one cut, as `_explode` cuts)."""
    line_at = _line_finder(block)
    sentences: list[tuple[str, tuple[int, int]]] = []
    solid, pos = 0, 0
    for start, end in _piece_offsets(text, False):
        solid += solid_chars(text[pos:start])
        inner = solid_chars(text[start:end])
        piece = _normalise(text[start:end], code=False).replace("\n", " ")
        if piece:
            sentences.append((piece, (line_at(solid), line_at(solid + max(inner - 1, 0)))))
        solid, pos = solid + inner, end
    if not sentences:
        return []
    whole = _span(
        "\n".join(s for s, _ in sentences),
        block.page,
        (block.line_start, block.line_end),
        count,
        block=i,
        context=path,
    )
    if whole.tokens <= budget:
        return [replace(whole, line_ranges=tuple(lines for _, lines in sentences))]
    spans: list[_Span] = []
    for sentence, lines in sentences:
        spans += _runs(sentence, "\n", lines, i, block.page, path, budget, count)
    return spans


def _runs(
    piece: str,
    sep: str,
    lines: tuple[int, int],
    block: int,
    page: int,
    path: tuple[str, ...],
    budget: int,
    count: TokenCounter,
) -> list[_Span]:
    """A sentence (or line of code) of a block as spans of at most `budget` tokens, the
    first joined to what came before with `sep` (one token of room is kept for it)."""
    return [
        _span(run, page, lines, count, sep=sep if j == 0 else run_sep, block=block, context=path)
        for j, (run_sep, run) in enumerate(_hard_split(piece, budget - 1, count))
    ]


def _explode(
    i: int, block: Block, path: tuple[str, ...], budget: int, count: TokenCounter
) -> list[_Span]:
    """Cut an over-budget block into sentences (code: lines), with exact line numbers when
    the block's text keeps its source line breaks."""
    raw = block.text
    code = block.kind == "code"
    exact_lines = block.line_end - block.line_start == raw.count("\n")
    spans: list[_Span] = []
    prev_end: int | None = None
    newlines = 0  # newlines before the current piece, counted incrementally: O(n) in all
    for start, end in _piece_offsets(raw, code):
        newlines += raw.count("\n", prev_end or 0, start)
        piece = _normalise(raw[start:end], code=code)
        if not piece:
            continue
        lines = (block.line_start, block.line_end)
        if exact_lines:
            first = block.line_start + newlines
            lines = (first, first + raw.count("\n", start, end))
        sep = "\n" if prev_end is None else _gap_sep(raw[prev_end:start], code)
        spans += _runs(piece, sep, lines, i, block.page, path, budget, count)
        newlines += raw.count("\n", start, end)
        prev_end = end
    return spans


def _piece_offsets(raw: str, code: bool) -> list[tuple[int, int]]:
    offsets: list[tuple[int, int]] = []
    if code:
        pos = 0
        for line in raw.split("\n"):
            if line.strip():
                offsets.append((pos, pos + len(line)))
            pos += len(line) + 1
        return offsets
    cursor = 0
    for sentence in split_sentences(raw):
        # split_sentences only strips whitespace, so each piece is found in order.
        start = max(raw.find(sentence, cursor), cursor)
        cursor = start + len(sentence)
        offsets.append((start, cursor))
    return offsets


def _gap_sep(gap: str, code: bool) -> str:
    """Rebuild the separator between two pieces from the source gap: lines keep their
    newline, English sentences a space, Chinese sentences (no gap) nothing."""
    if "\n" in gap:
        return "\n\n" if code and gap.count("\n") > 1 else "\n"
    return " " if gap else ""


def _hard_split(text: str, budget: int, count: TokenCounter) -> list[tuple[str, str]]:
    """(separator, run) pairs of at most `budget` tokens each, preferring to cut at a space
    (the separator is then " ", so rejoined runs read as the original)."""
    if count(text) <= budget:  # the common case: one sentence that fits
        return [("", text)]
    parts: list[tuple[str, str]] = []
    rest, sep = text, ""
    while rest:
        # Measuring prefixes (not the whole rest) keeps a long run linear overall.
        cut = _fit_prefix(rest, budget, count)
        if cut >= len(rest):
            parts.append((sep, rest))
            break
        cut = max(1, cut)
        space = rest.rfind(" ", 0, cut + 1)
        if space > cut * 3 // 4:  # only when it costs at most a quarter of the run
            cut = space
        parts.append((sep, rest[:cut].strip()))
        sep = " " if rest[cut : cut + 1].isspace() else ""
        rest = rest[cut:].strip()
    return [(p_sep, p) for p_sep, p in parts if p]


def _fit_prefix(text: str, budget: int, count: TokenCounter) -> int:
    return _longest(len(text), lambda n: count(text[:n]) <= budget)


def _fit_suffix(text: str, budget: int, count: TokenCounter) -> int:
    return _longest(len(text), lambda n: count(text[len(text) - n :]) <= budget)


def _longest(n: int, fits: Callable[[int], bool]) -> int:
    """Largest k in [0, n] with fits(k), for a monotone `fits` (gallop, then bisect), so a
    long run costs O(log n) counts instead of n."""
    hi = 1
    while hi < n and fits(hi):
        hi *= 2
    lo, hi = hi // 2, min(hi, n)
    if fits(hi):
        return hi
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------------------- stage 2


def _drop_bare_headings(units: list[_Unit]) -> list[_Unit]:
    """A heading with no text of its own, followed by something inside its section (a
    subsection, its table), adds nothing: the follower's breadcrumb already names it.
    A unit whose only text became a table caption has nothing left at all."""
    out: list[_Unit] = []
    for k, unit in enumerate(units):
        if isinstance(unit, _TextUnit) and not unit.spans:
            nxt = units[k + 1] if k + 1 < len(units) else None
            if unit.head is None or (nxt is not None and _within(nxt.path, unit.path)):
                continue
        out.append(unit)
    return out


def _merge_small(units: list[_Unit], settings: ChunkSettings, count: TokenCounter) -> list[_Unit]:
    out: list[_Unit] = []
    k = 0
    while k < len(units):
        unit = units[k]
        k += 1
        if not isinstance(unit, _TextUnit):
            out.append(unit)
            continue
        # Forward: absorb following units of the same parent while small and fitting.
        while unit.tokens < settings.min_tokens and k < len(units):
            nxt = units[k]
            if not (isinstance(nxt, _TextUnit) and _within(nxt.path, unit.parent)):
                break
            merged = _merge(unit, nxt, count)
            if merged.tokens > settings.max_tokens:
                break
            unit, k = merged, k + 1
        # Backward: a small unit that ends its section joins the one before it.
        prev = out[-1] if out else None
        if (
            unit.tokens < settings.min_tokens
            and isinstance(prev, _TextUnit)
            and _within(prev.path, unit.parent)
        ):
            merged = _merge(prev, unit, count)
            if merged.tokens <= settings.max_tokens:
                out[-1] = merged
                continue
        out.append(unit)
    return out


def _merge(first: _TextUnit, second: _TextUnit, count: TokenCounter) -> _TextUnit:
    """`first` followed by `second`, whose heading is kept as a line relative to the
    section both share ("Configure" under "Guide", not "Guide > Configure" again)."""
    common = _common_prefix(first.path, second.path)
    spans = list(first.spans)
    relative = _CRUMB_JOIN.join(second.path[len(common) :])
    anchor = second.head or (second.spans[0] if second.spans else None)
    if relative and anchor is not None:
        # A section that opens a later page (a slide's title) is set off by a blank line:
        # read as one paragraph with the page before, a quote would run on into it.
        last = spans[-1] if spans else first.head
        sep = "\n\n" if second.head and last and anchor.page > last.page else "\n"
        spans.append(
            _span(
                relative,
                anchor.page,
                (anchor.line_start, anchor.line_end),
                count,
                sep=sep,
                context=common,
            )
        )
    spans.extend(second.spans)
    return _TextUnit(common, first.header, first.head, spans, first.parent, first.header_tokens)


def _pack_text(
    unit: _TextUnit, settings: ChunkSettings, count: TokenCounter, overlap: int
) -> list[ChunkDraft]:
    """Greedy packing of spans into chunks of at most `max_tokens`, in order."""
    drafts: list[ChunkDraft] = []
    header, used = unit.header, unit.header_tokens
    head: list[_Span] = [unit.head] if unit.head else []
    body: list[_Span] = []
    cap = _header_cap(settings)
    for span in unit.spans:
        if body and used + span.tokens > settings.max_tokens:
            moved = _dangling(body, span, cap, settings.max_tokens, count)
            if moved is not None:
                body.pop()
            drafts.append(_text_draft(header, head, body, unit.path))
            carry = [moved] if moved is not None else _overlap(body, span, overlap, count)
            header = _breadcrumb((moved or span).context, cap, count)
            used = _header_tokens(header, count) + sum(s.tokens for s in carry)
            while moved is None and carry and used + span.tokens > settings.max_tokens:
                used -= carry.pop(0).tokens
            head, body = [], carry
        body.append(span)
        used += span.tokens
    if body or head:
        drafts.append(_text_draft(header, head, body, unit.path))
    return drafts


# A sentence that goes on in the next block: no closing mark at its end, and the next
# block opens in lower case (a paragraph cut by a page break: "place PEPs at the" /
# "access points of each application").
_OPEN_END = re.compile(r"[A-Za-z0-9,]\s*$")
_GOES_ON = re.compile(r"^[a-z]")


def _dangling(
    body: list[_Span], nxt: _Span, cap: int, max_tokens: int, count: TokenCounter
) -> _Span | None:
    """The last span of a full chunk when it is half a sentence that `nxt` finishes and
    the two fit in the next chunk together: it moves there, so no chunk ends mid-sentence
    (an answer quoting it would stop at "at the")."""
    last = body[-1]
    if len(body) < 2 or not _OPEN_END.search(last.text) or not _GOES_ON.match(nxt.text):
        return None
    header = _breadcrumb(last.context, cap, count)
    if _header_tokens(header, count) + last.tokens + nxt.tokens > max_tokens:
        return None
    return last


def _overlap(body: list[_Span], nxt: _Span, budget: int, count: TokenCounter) -> list[_Span]:
    """Trailing spans of the block `nxt` continues, about `budget` tokens: whole sentences
    when they fit, else the tail of the last one."""
    if budget <= 0 or nxt.block < 0 or body[-1].block != nxt.block:
        return []
    carry: list[_Span] = []
    used = 0
    for span in reversed(body):
        if span.block != nxt.block or used + span.tokens > budget:
            break
        carry.insert(0, span)
        used += span.tokens
    if carry:
        return carry
    last = body[-1]
    tail = last.text[len(last.text) - _fit_suffix(last.text, budget - 1, count) :]
    space = tail.find(" ")
    if 0 <= space < len(tail) // 4:  # start at a word when that costs little
        tail = tail[space:]
    tail = tail.strip()
    if not tail:
        return []
    return [
        _span(
            tail,
            last.page,
            (last.line_end, last.line_end),
            count,
            block=last.block,
            context=last.context,
        )
    ]


def _span_line_map(span: _Span) -> list[tuple[int, int, int]]:
    """Source lines of each line of a span's text: exact when the span has as many text
    lines as source lines, else every line gets the span's whole range (still true)."""
    n = span.text.count("\n") + 1
    if len(span.line_ranges) == n:
        return [(span.page, a, b) for a, b in span.line_ranges]
    if span.line_end - span.line_start + 1 == n:
        return [(span.page, span.line_start + k, span.line_start + k) for k in range(n)]
    return [(span.page, span.line_start, span.line_end)] * n


def _text_line_map(
    header: str, head: list[_Span], body: list[_Span]
) -> tuple[tuple[int, int, int], ...]:
    out: list[tuple[int, int, int]] = []
    if header:
        first = head[0] if head else (body[0] if body else None)
        page = first.page if first else 1
        # The breadcrumb ends with the anchor heading when the chunk starts at it.
        entry = (page, head[0].line_start, head[0].line_end) if head else (page, 0, 0)
        out.extend([entry] * (header.count("\n") + 1))
    for k, span in enumerate(body):
        lines = _span_line_map(span)
        if k and "\n" not in span.sep and out:
            # Joined onto the previous line (a sentence of the same block).
            pg, a, b = out[-1]
            out[-1] = (pg, min(a, lines[0][1]) if a else lines[0][1], max(b, lines[0][2]))
            lines = lines[1:]
        else:
            out.extend([out[-1]] * (span.sep.count("\n") - 1) if k and out else [])
        out.extend(lines)
    return tuple(out)


def _text_draft(
    header: str, head: list[_Span], body: list[_Span], path: tuple[str, ...]
) -> ChunkDraft:
    parts = [header] if header else []
    if body:
        parts.append(body[0].text + "".join(s.sep + s.text for s in body[1:]))
    spans = head + body
    line_map = _text_line_map(header, head, body)
    text = "\n".join(parts)
    return ChunkDraft(
        kind="text",
        text=text,
        page_start=min(s.page for s in spans),
        page_end=max(s.page for s in spans),
        line_start=spans[0].line_start,
        line_end=spans[-1].line_end,
        section_path=path,
        line_map=line_map if len(line_map) == text.count("\n") + 1 else (),
    )


def _table_drafts(
    unit: _TableUnit, settings: ChunkSettings, count: TokenCounter
) -> list[ChunkDraft]:
    """One draft per table, or per group of rows when over budget; each part is a valid
    table (header row repeated) preceded by the breadcrumb and caption."""
    block = unit.block
    context = [_breadcrumb(unit.path, _header_cap(settings), count)]
    if unit.caption:
        context.append(unit.caption.text)
    prefix = "\n".join(c for c in context if c)
    header, rows, render = _table_parts(block)
    if not header and not rows:
        return []
    fixed = _header_tokens(prefix, count) + sum(count("\n" + h) for h in header)
    groups: list[list[int]] = [[]]
    used = fixed
    for r, line in enumerate(rows):
        tokens = count("\n" + line)
        if groups[-1] and used + tokens > settings.max_tokens:
            groups.append([])
            used = fixed
        groups[-1].append(r)  # a row over budget still goes whole: rows are never cut
        used += tokens
    row_lines = _row_lines(block, len(rows))
    caption = unit.caption
    drafts = []
    for g, group in enumerate(groups):
        table = render(group)
        first_line = block.line_start if g == 0 or row_lines is None else row_lines[group[0]]
        last_line = block.line_end if row_lines is None or not group else row_lines[group[-1]]
        lead = caption if g == 0 and caption else None  # the caption opens the first part
        text = f"{prefix}\n{table}" if prefix else table
        line_map = _table_line_map(block, context, unit.caption, group, row_lines, text)
        drafts.append(
            ChunkDraft(
                kind="table",
                text=text,
                page_start=lead.page if lead else block.page,
                page_end=block.page,
                line_start=lead.line_start if lead else first_line,
                line_end=last_line,
                section_path=unit.path,
                table_id=unit.table_id,
                # Empty for a table without a header row (a glossary: rows are key, value).
                table_header=tuple(block.rows[0]) if block.rows and any(block.rows[0]) else (),
                table_rows=tuple(tuple(block.rows[1 + i]) for i in group) if block.rows else (),
                line_map=line_map,
            )
        )
    return drafts


def _table_line_map(
    block: Block,
    context: list[str],
    caption: _Span | None,
    group: list[int],
    row_lines: list[int] | None,
    text: str,
) -> tuple[tuple[int, int, int], ...]:
    """Source lines per line of a table draft: prefix (breadcrumb, caption), then the
    header lines, then one line per body row. Empty when the rendering does not have one
    line per row (a caller then falls back to the chunk's span)."""
    whole = (block.page, block.line_start, block.line_end)
    out: list[tuple[int, int, int]] = []
    if context[0]:
        out.extend([(block.page, 0, 0)] * (context[0].count("\n") + 1))
    if caption is not None:
        out.extend(
            [(caption.page, caption.line_start, caption.line_end)] * (caption.text.count("\n") + 1)
        )
    n_lines = text.count("\n") + 1
    n_head = n_lines - len(out) - len(group)
    if n_head < 1:
        return ()
    if row_lines is not None:
        head_end = row_lines[0] - 1 if row_lines else block.line_end
        out.extend([(block.page, block.line_start, max(block.line_start, head_end))] * n_head)
        out.extend((block.page, row_lines[r], row_lines[r]) for r in group)
    else:
        out.extend([whole] * (n_head + len(group)))
    return tuple(out) if len(out) == n_lines else ()


def _table_parts(
    block: Block,
) -> tuple[list[str], list[str], Callable[[list[int]], str]]:
    """Header lines, one line per body row, and a renderer for a subset of body rows.

    From `rows` when the parser gave them (re-rendered with the parser's own renderer, so
    every part is a table in the same format); from the text lines otherwise.
    """
    if block.rows:
        head_row, body = block.rows[0], block.rows[1:]
        lines = render_table(block.rows).split("\n")
        n_head = len(lines) - len(body)  # 2 (header, separator), 0 without a header
        return (
            lines[:n_head],
            lines[n_head:],
            lambda idx: render_table([head_row, *(body[i] for i in idx)]),
        )
    text_lines = [" ".join(line.split()) for line in block.text.split("\n") if line.strip()]
    n_head = 2 if len(text_lines) > 1 and _SEPARATOR_ROW.match(text_lines[1]) else 1
    head, body_lines = text_lines[:n_head], text_lines[n_head:]
    return head, body_lines, lambda idx: "\n".join([*head, *(body_lines[i] for i in idx)])


def _row_lines(block: Block, n_body: int) -> list[int] | None:
    """Source line of each body row when the block's line span matches its rows exactly:
    a Markdown table (header, separator, rows), a sheet/CSV (header, rows), or rows
    alone (a headerless table, or one going on from the page before under its header)."""
    if not block.rows:
        return None
    span = block.line_end - block.line_start + 1
    if span == n_body + 2:
        offset = 2
    elif span == n_body + 1:
        offset = 1
    elif span == n_body:
        offset = 0
    else:
        return None
    return [block.line_start + offset + r for r in range(n_body)]


# ---------------------------------------------------------------------------- helpers


def _normalise(text: str, code: bool) -> str:
    """Collapse whitespace inside lines and drop blank lines; code keeps its indentation
    and single blank lines, since layout is meaning there."""
    if code:
        out: list[str] = []
        for line in text.split("\n"):
            line = line.rstrip()
            if line or (out and out[-1]):
                out.append(line)
        return "\n".join(out).strip("\n")
    return "\n".join(" ".join(line.split()) for line in text.split("\n") if line.strip())


def _clean_path(path: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(" ".join(p.split()) for p in path if p.strip())


def _within(path: tuple[str, ...], section: tuple[str, ...]) -> bool:
    return path[: len(section)] == section


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _header_cap(settings: ChunkSettings) -> int:
    """Breadcrumbs get at most an eighth of the budget: context, not content."""
    return max(8, settings.max_tokens // 8)


def _header_tokens(header: str, count: TokenCounter) -> int:
    return count(header + "\n") if header else 0


def _span_budget(settings: ChunkSettings) -> int:
    """Most tokens one span may count so that it fits a chunk beside the largest
    breadcrumb and its newline."""
    return max(1, settings.max_tokens - _header_cap(settings) - 1)


def _breadcrumb(path: tuple[str, ...], cap: int, count: TokenCounter) -> str:
    """ "A > B > C", dropping outer levels first ("… > C"), then shortening the last."""
    if not path:
        return ""
    parts = list(path)
    text = _CRUMB_JOIN.join(parts)
    while len(parts) > 1 and count(text) > cap:
        parts.pop(0)
        text = "…" + _CRUMB_JOIN + _CRUMB_JOIN.join(parts)
    if count(text) > cap:
        last = parts[-1]
        text = last[: max(1, _fit_prefix(last, cap - 1, count))] + "…"
    return text
