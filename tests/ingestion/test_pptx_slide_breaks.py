"""A quote never runs from one slide into the next (FINDINGS #22: slide 1's subtitle
"地点：杭州国际博览中心" was glued to slide 2's title "核心功能" into one quote cited p1-2).
Small slides still share a chunk, but a slide that opens with its title is set off by a
blank line, so it is never read as one paragraph with the slide before."""

from __future__ import annotations

import io
from pathlib import Path

from pptx import Presentation

from core.settings import ChunkSettings
from core.types import Chunk
from generation.passages import candidates
from ingestion.chunker import ChunkDraft, chunk_blocks
from ingestion.parse import parse_bytes


def _deck() -> bytes:
    prs = Presentation()
    cover = prs.slides.add_slide(prs.slide_layouts[0])
    cover.shapes.title.text = "天枢 AI 平台 2025 产品发布会"
    cover.placeholders[1].text = "发布日期：2025年4月18日 地点：杭州国际博览中心"
    features = prs.slides.add_slide(prs.slide_layouts[1])
    features.shapes.title.text = "核心功能"
    body = features.placeholders[1].text_frame
    body.text = "支持 128K 上下文窗口"
    body.add_paragraph().text = "推理延迟降低 40%"
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def _chunk(draft: ChunkDraft) -> Chunk:
    return Chunk(
        content_id="c" * 16,
        doc_id="d" * 16,
        version="v1",
        ordinal=0,
        kind=draft.kind,
        text=draft.text,
        page_start=draft.page_start,
        page_end=draft.page_end,
        line_start=draft.line_start,
        line_end=draft.line_end,
        source="deck.pptx",
        title="deck",
        doc_type="pptx",
        section_path=draft.section_path,
        line_map=draft.line_map,
    )


def test_a_quote_stays_on_its_slide() -> None:
    doc = parse_bytes(_deck(), Path("deck.pptx"))
    drafts = chunk_blocks(doc.blocks, ChunkSettings(), has_pages=doc.has_pages)
    assert len(drafts) == 1  # the slides still share a chunk
    draft = drafts[0]
    assert "地点：杭州国际博览中心\n\n核心功能" in draft.text
    assert len(draft.line_map) == draft.text.count("\n") + 1
    quotes = candidates(_chunk(draft), 0)
    venue = next(c for c in quotes if "杭州国际博览中心" in c.text)
    assert "核心功能" not in venue.text
    assert venue.page == 1
    assert all(c.page == 2 for c in quotes if "核心功能" in c.text or "128K" in c.text)


def test_a_section_on_the_same_page_is_not_set_apart() -> None:
    text = "# Guide\n\nShort intro.\n\n## Install\n\nRun the installer.\n"
    doc = parse_bytes(text.encode(), Path("guide.md"))
    (draft,) = chunk_blocks(doc.blocks, ChunkSettings(), has_pages=doc.has_pages)
    assert "\n\n" not in draft.text
