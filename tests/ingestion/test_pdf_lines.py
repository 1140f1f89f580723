"""A PDF paragraph is text joined from several source lines; each sentence of it is cited
at its own lines (a five-line paragraph of one sentence a line was cited l2-6 for any of
its sentences; sentences of the shared PDFs were cited over 8 lines on average)."""

from __future__ import annotations

from pathlib import Path

from core.settings import ChunkSettings
from core.types import Block, Chunk
from generation.passages import candidates
from ingestion.chunker import chunk_blocks
from ingestion.parse import parse_bytes
from ingestion.parsers._common import join_lines, join_marked
from tests.ingestion.conftest import pages_pdf

SENTENCES = [
    "Visitors park on level two of the west garage.",
    "Staff park in the north lot behind the canteen.",
    "Delivery vans use the loading bay at gate four.",
    "Motorcycles are parked in the marked area next to the bicycle racks.",
    "Overnight parking requires written approval from facility management.",
]


def test_joined_lines_say_where_each_line_starts() -> None:
    text, marks = join_marked(
        [(3, "The infor-"), (4, "mation is here."), (5, "中文"), (6, "测试 ok")]
    )
    assert (
        text
        == "The information is here.中文测试 ok"
        == join_lines(["The infor-", "mation is here.", "中文", "测试 ok"])
    )
    # Non-space characters before each line: "Theinfor" (the hyphen gone), ...
    assert marks == ((0, 3), (8, 4), (21, 5), (23, 6))


def _chunk_of(blocks: tuple[Block, ...]) -> Chunk:
    (draft,) = [d for d in chunk_blocks(blocks, ChunkSettings()) if d.kind == "text"]
    return Chunk(
        content_id="c" * 32, doc_id="d", version="v", ordinal=0, kind="text",
        text=draft.text, page_start=draft.page_start, page_end=draft.page_end,
        line_start=draft.line_start, line_end=draft.line_end, source="file:///p.pdf",
        title="Parking", doc_type="pdf", line_map=draft.line_map,
    )  # fmt: skip


def test_each_sentence_of_a_pdf_paragraph_is_cited_at_its_own_line() -> None:
    ops = [f"BT /F1 11 Tf 72 {760 - 16 * i} Td ({s}) Tj ET" for i, s in enumerate(SENTENCES)]
    doc = parse_bytes(pages_pdf(["\n".join(ops)]), Path("parking.pdf"))
    (para,) = [b for b in doc.blocks if b.kind == "paragraph"]
    assert para.line_marks and len(para.line_marks) == len(SENTENCES)
    chunk = _chunk_of(doc.blocks)
    cited = {}
    for cand in candidates(chunk, 0):
        page, first, _ = chunk.line_map[cand.first_line]
        _, _, last = chunk.line_map[cand.last_line]
        cited[cand.text] = (page, first, last)
    first_line = para.line_start
    for k, sentence in enumerate(SENTENCES):
        assert cited[sentence] == (1, first_line + k, first_line + k), (sentence, cited)


def test_a_sentence_wrapped_over_two_lines_is_cited_at_both() -> None:
    text, marks = join_marked(
        [
            (10, "The first rule applies to every visitor."),
            (11, "The second rule applies to staff"),
            (12, "who stay after eight. A third rule is short."),
        ]
    )
    block = Block("paragraph", text, page=2, line_start=10, line_end=12, line_marks=marks)
    chunk = _chunk_of((block,))
    spans = {
        c.text: (chunk.line_map[c.first_line][1], chunk.line_map[c.last_line][2])
        for c in candidates(chunk, 0)
    }
    assert spans == {
        "The first rule applies to every visitor.": (10, 10),
        "The second rule applies to staff who stay after eight.": (11, 12),
        "A third rule is short.": (12, 12),
    }


def test_each_item_of_a_pdf_list_is_cited_at_its_own_lines() -> None:
    """A list was cited at all its lines for any item; an item wrapped over two lines is
    cited at both, and the list's text (one item a line, bullets as "- ") is unchanged."""
    lines = [
        "Before leaving the lab:",
        "* Switch off the centrifuge and unplug it.",
        "* Return the samples to freezer B, shelf three, and",
        "log them in the register.",
        "* Lock the door.",
    ]
    ops = [f"BT /F1 11 Tf 72 {760 - 16 * i} Td ({s}) Tj ET" for i, s in enumerate(lines)]
    doc = parse_bytes(pages_pdf(["\n".join(ops)]), Path("lab.pdf"))
    (listed,) = [b for b in doc.blocks if b.kind == "list"]
    assert listed.text == (
        "- Switch off the centrifuge and unplug it.\n"
        "- Return the samples to freezer B, shelf three, and log them in the register.\n"
        "- Lock the door."
    )
    first = listed.line_start
    chunk = _chunk_of(doc.blocks)
    cited = {
        c.text: (chunk.line_map[c.first_line][1], chunk.line_map[c.last_line][2])
        for c in candidates(chunk, 0)
        if c.list_item
    }
    assert cited == {
        "- Switch off the centrifuge and unplug it.": (first, first),
        "- Return the samples to freezer B, shelf three, and log them in the register.": (
            first + 1,
            first + 2,
        ),
        "- Lock the door.": (first + 3, first + 3),
    }, cited


def test_a_footnote_mark_after_punctuation_is_no_part_of_the_next_sentence() -> None:
    """A raised, smaller "6" after "action." made one sentence of two ("…action.6 The FAA
    sent…"); it is dropped. A number on the line's baseline after a full stop stays."""
    ops = [
        "BT /F1 11 Tf 72 700 Td (The FAA issued an emergency directive as an interim action.) Tj"
        " /F1 7 Tf 4 Ts (6) Tj /F1 11 Tf 0 Ts ( The FAA sent it to all owners.) Tj ET",
        "BT /F1 11 Tf 72 680 Td (The limit was raised in version 2.5 of the rules today.) Tj ET",
    ]
    doc = parse_bytes(pages_pdf(["\n".join(ops)]), Path("ad.pdf"))
    text = " ".join(b.text for b in doc.blocks)
    assert "interim action. The FAA sent it to all owners." in text, text
    assert "version 2.5 of the rules" in text, text
    sentences = {c.text for c in candidates(_chunk_of(doc.blocks), 0)}
    assert "The FAA sent it to all owners." in sentences, sentences
