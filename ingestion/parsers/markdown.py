"""Markdown via markdown-it-py (CommonMark + GFM tables): its token stream carries line maps,
so every block gets exact source lines, and fenced code never yields headings."""

from __future__ import annotations

import re
from importlib.metadata import version

from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.types import ParsedDocument
from ingestion.parsers._common import (
    BlockBuilder,
    clean_text,
    decode,
    document_title,
    item_marks,
)
from ingestion.sanitize import remove_invalid, removed_warning

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*\n", re.DOTALL)
_FM_TITLE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)
_TAG = re.compile(r"<[^>]+>")
_BREAK_TAG = re.compile(r"<\s*(br|li|p|tr|div)\b", re.IGNORECASE)


def _md() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _inline_text(tok: Token) -> str:
    """Plain text of an inline token: markup dropped, inline HTML list items as commas."""
    parts: list[str] = []
    for child in tok.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "html_inline" and _BREAK_TAG.match(child.content) and parts:
            parts.append(", ")
        elif child.type == "image":
            parts.append(child.content)
    text = "".join(parts)
    text = re.sub(r"^(,\s*)+|(,\s*)+$", "", text.strip())
    return "\n".join(clean_text(line) for line in text.split("\n")).strip()


def _lines(tok: Token, offset: int) -> tuple[int, int]:
    if tok.map:
        return tok.map[0] + 1 + offset, max(tok.map[0] + 1, tok.map[1]) + offset
    return 1 + offset, 1 + offset


def parse(data: bytes, name: str) -> ParsedDocument:
    text, _ = decode(data)
    # Cleaned before markdown-it reads it: it turns NUL into U+FFFD, a valid character
    # the sanitiser would keep ("Hello\ufffdWorld").
    text, removed = remove_invalid(text.replace("\r\n", "\n").replace("\r", "\n"))
    title = ""
    fm = _FRONT_MATTER.match(text)
    offset = 0
    if fm:
        m = _FM_TITLE.search(fm.group(1))
        if m:
            title = m.group(1).strip("'\"")
        offset = fm.group(0).count("\n")
        text = text[fm.end() :]
    tokens = _md().parse(text)
    b = BlockBuilder()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        start, end = _lines(tok, offset)
        if tok.type == "heading_open":
            b.heading(
                _inline_text(tokens[i + 1]).replace("\n", " "), int(tok.tag[1]), 1, start, end
            )
            i += 3
            continue
        if tok.type == "paragraph_open":
            b.add("paragraph", _inline_text(tokens[i + 1]), 1, start, end)
            i += 3
            continue
        if tok.type in ("fence", "code_block"):
            b.add("code", tok.content.rstrip("\n"), 1, start, end)
        elif tok.type == "html_block":
            if not tok.content.lstrip().startswith("<!--"):
                b.add("paragraph", clean_text(_TAG.sub(" ", tok.content)), 1, start, end)
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            i = _list(tokens, i, b, start, end, offset)
            continue
        elif tok.type == "table_open":
            i = _table(tokens, i, b, start, end)
            continue
        i += 1
    title = document_title(title, b.blocks, name)
    return ParsedDocument(
        tuple(b.blocks),
        1,
        title,
        f"markdown-it-py/{version('markdown-it-py')}",
        warnings=removed_warning(removed),
    )


def _list(tokens: list[Token], i: int, b: BlockBuilder, start: int, end: int, offset: int) -> int:
    """One list block for a whole (possibly nested) list; items indented by depth, each
    with its source lines (`Block.line_marks`), so that an item is cited at its own."""
    depth = 0
    items: list[str] = []
    spans: list[tuple[int, int]] = []  # each item's first and last source line
    markers: list[str] = []
    counters: list[int] = []
    while i < len(tokens):
        tok = tokens[i]
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
            markers.append("-" if tok.type == "bullet_list_open" else "1.")
            counters.append(int(tok.attrs.get("start", 1) or 1) - 1)
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
            markers.pop()
            counters.pop()
            if depth == 0:
                break
        elif tok.type == "list_item_open":
            counters[-1] += 1
            marker = "-" if markers[-1] == "-" else f"{counters[-1]}."
            items.append("  " * (depth - 1) + marker + " ")
            spans.append((0, 0))
        elif tok.type == "inline" and items:
            body = _inline_text(tok).replace("\n", " ")
            items[-1] += body if items[-1].endswith(" ") else " " + body
            if tok.map:
                first, last = _lines(tok, offset)
                spans[-1] = (spans[-1][0] or first, last)
        elif tok.type in ("fence", "code_block") and items:
            items[-1] += " " + tok.content.strip()
        i += 1
    items = [item.rstrip() for item in items]
    b.add("list", "\n".join(items), 1, start, end, line_marks=item_marks(items, spans))
    return i + 1


def _table(tokens: list[Token], i: int, b: BlockBuilder, start: int, end: int) -> int:
    rows: list[list[str]] = []
    head = 0  # rows in the table's header (GFM: one, blank when the author left it empty)
    in_head = False
    while i < len(tokens) and tokens[i].type != "table_close":
        tok = tokens[i]
        if tok.type in ("thead_open", "thead_close"):
            in_head = tok.type == "thead_open"
        elif tok.type == "tr_open":
            rows.append([])
            head += in_head
        elif tok.type == "inline" and rows:
            rows[-1].append(_inline_text(tok).replace("\n", " "))
        i += 1
    # The syntax says which row is the header: no guessing. A blank header row is no
    # header (it is dropped as empty, and the rows below are all data).
    n_header = 1 if head and any(c.strip() for c in rows[0]) else 0
    b.table(rows, 1, start, end, n_header)
    return i + 1
