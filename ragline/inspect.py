"""`ragline inspect FILE`: what ingestion would make of one file, for a person to check.

Parse (with the configured isolation, Tika and OCR), mask PII, chunk; then report the block
tree, the chunks, the tables and the page spans. Nothing is embedded and no store is
opened, so it is safe to run against a live data directory.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from core.errors import ParseError
from core.ids import source_uri
from core.settings import Settings
from core.text import approx_tokens
from core.types import Block
from ingestion.chunker import ChunkDraft, chunk_blocks, table_id
from ingestion.parse import MB, ParseOptions, check_size, document_format, parse_file
from ingestion.pii import PiiMasker
from ragline.ingest import (
    chunk_limit_warning,
    headings_only_warning,
    no_chunks_reason,
    special_kind,
)

PREVIEW = 80
_SEPARATOR = re.compile(r"^\|(-{3}\|)+$")


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def _block(b: Block) -> dict[str, Any]:
    return {
        "kind": b.kind,
        "level": b.level,
        "page": b.page,
        "lines": [b.line_start, b.line_end],
        "section_path": list(b.section_path),
        "text": _preview(b.text),
    }


def _first_row(text: str) -> str:
    """A table chunk's first body row: every part of a split table starts with the same
    breadcrumb and header, so this is what tells the parts apart."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if _SEPARATOR.match(line):
            return _preview(lines[i + 1])
    return ""


def _chunk(i: int, d: ChunkDraft) -> dict[str, Any]:
    return {
        "ordinal": i,
        "kind": d.kind,
        "pages": [d.page_start, d.page_end],
        "lines": [d.line_start, d.line_end],
        "tokens": approx_tokens(d.text),
        "table_id": d.table_id,
        "section_path": list(d.section_path),
        "text": _preview(d.text),
        "first_row": _first_row(d.text) if d.kind == "table" else "",
    }


def _table(i: int, b: Block) -> dict[str, Any]:
    return {
        "table_id": table_id(i + 1),  # the same name the table's chunks carry
        "page": b.page,
        "lines": [b.line_start, b.line_end],
        "rows": len(b.rows),
        "columns": max((len(r) for r in b.rows), default=0),
        "header": list(b.rows[0]) if b.rows else [],
        "section_path": list(b.section_path),
    }


def _refuse_special(path: Path) -> None:
    """A FIFO, socket or device is refused before it is opened: opening a FIFO waits for
    a writer, reading a device may never end. (A path that cannot be looked at is left
    to the parse, which says why.)"""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    kind = special_kind(mode)
    if kind is not None:
        raise ParseError(f"not a regular file ({kind})")


def inspect_file(path: Path, settings: Settings) -> dict[str, Any]:
    """The parse of `path` as plain data (see the module docstring). Raises ParseError
    (a RaglineError) with the reason when the file cannot be parsed."""
    limits = settings.ingest
    max_bytes = int(limits.max_file_mb * MB)
    options = ParseOptions.from_settings(limits, settings.ingest_limits)
    start = time.perf_counter()
    _refuse_special(path)
    check_size(path, max_bytes)
    with path.open("rb") as f:
        head = f.read(4096)
    fmt = document_format(path, head, options)
    parsed = parse_file(
        path,
        max_bytes=max_bytes,
        timeout_s=limits.parse_timeout_s,
        isolate=limits.isolate,
        options=options,
    )
    parse_s = time.perf_counter() - start
    # Shown masked, as it would be indexed: the report may be pasted into a ticket.
    masker = PiiMasker(limits.pii_rules or None, limits.pii_salt)
    blocks, pii = masker.mask_blocks(parsed.blocks, source_uri(path))
    drafts = chunk_blocks(blocks, settings.chunk, approx_tokens, has_pages=parsed.has_pages)
    tables = [b for b in blocks if b.kind == "table"]
    # The same verdicts ingest would record, so a person sees them before ingesting.
    warnings = list(parsed.warnings)
    size = path.stat().st_size
    if not drafts:
        warnings.append(no_chunks_reason(parsed, fmt, size))
    elif (bare := headings_only_warning(parsed, size)) is not None:
        warnings.append(bare)
    cap = settings.ingest_limits.max_chunks_per_file
    if 0 < cap < len(drafts):
        warnings.append(chunk_limit_warning(drafts[:cap], len(drafts)))
    return {
        "file": str(path),
        "format": fmt,
        "parser": parsed.parser,
        "title": parsed.title,
        "pages": parsed.page_count,
        "has_pages": parsed.has_pages,
        "parse_seconds": round(parse_s, 3),
        "warnings": warnings,
        "pii": pii,
        "counts": {
            "blocks": len(blocks),
            "headings": sum(b.kind == "heading" for b in blocks),
            "tables": len(tables),
            "chunks": len(drafts),
            "table_chunks": sum(d.kind == "table" for d in drafts),
        },
        "blocks": [_block(b) for b in blocks],
        "chunks": [_chunk(i, d) for i, d in enumerate(drafts)],
        "tables": [_table(i, b) for i, b in enumerate(tables)],
    }


def _span(pair: list[int], prefix: str) -> str:
    return f"{prefix}{pair[0]}" if pair[0] == pair[1] else f"{prefix}{pair[0]}-{pair[1]}"


def render(report: dict[str, Any], console: Console) -> None:
    """The report for a terminal: summary, block tree, chunks, tables, PII, warnings."""
    c = report["counts"]
    console.print(report["file"], style="bold", markup=False, highlight=False)
    console.print(
        f"format {report['format']}  parser {report['parser']}  title {report['title']!r}\n"
        f"{report['pages']} page(s){'' if report['has_pages'] else ' (no pages: sections)'}"
        f", {c['blocks']} blocks, {c['headings']} headings, {c['tables']} tables, "
        f"{c['chunks']} chunks ({c['table_chunks']} table chunks), "
        f"parsed in {report['parse_seconds']:.2f}s",
        markup=False,
        highlight=False,
    )
    console.print("\nBlocks", style="bold", markup=False)
    for b in report["blocks"]:
        indent = "  " * len(b["section_path"])
        level = f"H{b['level']}" if b["kind"] == "heading" else b["kind"]
        console.print(
            f"{indent}[{level}] p{b['page']} {_span(b['lines'], 'l')}  {b['text']}",
            markup=False,
            highlight=False,
            no_wrap=True,
            overflow="ellipsis",
        )
    console.print("\nChunks", style="bold", markup=False)
    console.print(
        "# kind pages lines ~tokens [table_id] (section) text; a table part shows its first row",
        markup=False,
        highlight=False,
        style="dim",
    )
    for ch in report["chunks"]:
        table_id = f" {ch['table_id']}" if ch["table_id"] else ""
        section = f" ({' > '.join(ch['section_path'])})" if ch["section_path"] else ""
        console.print(
            f"#{ch['ordinal']} {ch['kind']} {_span(ch['pages'], 'p')} {_span(ch['lines'], 'l')}"
            f" ~{ch['tokens']}t{table_id}{section}  {ch['first_row'] or ch['text']}",
            markup=False,
            highlight=False,
            no_wrap=True,
            overflow="ellipsis",
        )
    if report["tables"]:
        tables = Table(
            "table_id", "page", "lines", "rows×cols", "header", title="Tables", title_justify="left"
        )
        for t in report["tables"]:
            tables.add_row(
                t["table_id"],
                str(t["page"]),
                _span(t["lines"], ""),
                f"{t['rows']}×{t['columns']}",
                _preview(" | ".join(t["header"])),
            )
        console.print(tables)
    pii = ", ".join(f"{k} {v}" for k, v in report["pii"].items()) or "none found"
    console.print(f"PII masked: {pii}", markup=False, highlight=False)
    for w in report["warnings"]:
        console.print(f"warning: {w}", style="yellow", markup=False, highlight=False)
