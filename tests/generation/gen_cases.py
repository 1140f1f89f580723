"""Hand-made chunks and hits for the generation tests (imported by name, like store_cases)."""

from __future__ import annotations

import re

from core.types import Chunk, Hit

# A label anywhere in an answer.
LABEL = re.compile(r"\[Doc[0-9a-z]+_p\d+(?:\.\d+)?\]")


def make_chunk(
    text: str,
    *,
    doc_id: str = "ab12cd0000000000",
    page_start: int = 1,
    page_end: int | None = None,
    kind: str = "text",
    title: str = "Test document",
    ordinal: int = 0,
    section_path: tuple[str, ...] = (),
    line_start: int = 1,
    line_map: tuple[tuple[int, int, int], ...] = (),
    table_header: tuple[str, ...] = (),
    table_rows: tuple[tuple[str, ...], ...] = (),
) -> Chunk:
    return Chunk(
        content_id=f"{doc_id}{ordinal:04d}{page_start:04d}".ljust(32, "0"),
        doc_id=doc_id,
        version="v1",
        ordinal=ordinal,
        kind=kind,  # type: ignore[arg-type]
        text=text,
        page_start=page_start,
        page_end=page_start if page_end is None else page_end,
        line_start=line_start,
        line_end=max((b for _, _, b in line_map), default=line_start + text.count("\n")),
        source=f"file:///docs/{doc_id}.pdf",
        title=title,
        doc_type="pdf",
        section_path=section_path,
        line_map=line_map,
        table_header=table_header,
        table_rows=table_rows,
    )


def make_table(
    header: tuple[str, ...], rows: tuple[tuple[str, ...], ...], *, caption: str = ""
) -> Chunk:
    """A table chunk as the chunker writes one: a Markdown table (under its caption, if
    any), with its header and rows."""
    lines = ["| " + " | ".join(r) + " |" for r in (header, *rows)]
    lines.insert(1, "|" + "---|" * len(header))
    text = "\n".join([caption, *lines] if caption else lines)
    return make_chunk(text, kind="table", table_header=header, table_rows=rows)


def make_hits(*chunks: Chunk) -> list[Hit]:
    """Hits in the given order, scores falling with rank."""
    return [Hit(chunk=c, score=1.0 / (i + 1)) for i, c in enumerate(chunks)]


def squash(text: str) -> str:
    """Whitespace removed: PDF lines wrap with or without a space, so compare without it."""
    return "".join(text.split())


def quoted_parts(answer: str) -> list[str]:
    """The sentences of an extractive answer, labels taken out."""
    return [p.strip() for p in LABEL.split(answer) if p.strip()]
