"""Plain text (.txt/.log/.rst/.json) and CSV: encoding detection, paragraphs, numbered headings."""

from __future__ import annotations

import csv
import io
from pathlib import PurePath

from core.types import ParsedDocument
from ingestion.parsers._common import (
    BlockBuilder,
    clean_text,
    decode,
    document_title,
    join_lines,
    numbered_level,
    plausible_heading,
)

PARSER = "ragline-text/1"


def parse(data: bytes, name: str) -> ParsedDocument:
    text, encoding = decode(data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # NUL: the sanitiser counts it
    stem = PurePath(name).stem
    if PurePath(name).suffix.lower() == ".csv":
        return _parse_csv(text, stem, encoding)
    b = BlockBuilder()
    lines = text.split("\n")
    para: list[str] = []
    start = 0

    def flush(end: int) -> None:
        if para:
            b.add(
                "paragraph",
                join_lines(para) if len(para) > 1 else clean_text(para[0]),
                1,
                start,
                end,
            )
            para.clear()

    for i, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            flush(i - 1)
            continue
        level = numbered_level(line)
        if level is not None and plausible_heading(line, 60):
            flush(i - 1)
            b.heading(line, level, 1, i)
            continue
        if not para:
            start = i
        para.append(line)
    flush(len(lines))
    title = document_title("", b.blocks, stem)
    return ParsedDocument(tuple(b.blocks), 1, title, f"{PARSER} ({encoding})")


def _parse_csv(text: str, stem: str, encoding: str) -> ParsedDocument:
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096], ",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    b = BlockBuilder()
    b.table(rows, 1, 1, max(1, len(rows)))
    return ParsedDocument(tuple(b.blocks), 1, stem, f"{PARSER} ({encoding})")
