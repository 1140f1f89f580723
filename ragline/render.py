"""Plain-data views of results, shared by the CLI's --json output and the HTTP API."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from core.blocks import ContentBlock, GatewayResult, RowSet
from core.types import Answer, Chunk, Hit, Route
from fusion.pipeline import SearchResult


def route_view(route: Route) -> dict[str, Any]:
    """The routing decision as returned in every response: rule, strategy, each source with
    its weight and timeout in ms, filters, boosts, synonyms applied and any fallback."""
    view = asdict(route)
    view["sources"] = [
        {"name": s.name, "weight": s.weight, "timeout_ms": s.timeout_ms, "top_k": s.top_k}
        for s in route.sources
    ]
    return view


def passage_view(c: Chunk) -> dict[str, Any]:
    """A passage where it lives: its label, kind, pages, lines, headings and text."""
    return {
        "content_id": c.content_id,
        "label": c.label,
        "kind": c.kind,
        "page_start": c.page_start,
        "page_end": c.page_end,
        "line_start": c.line_start,
        "line_end": c.line_end,
        "section_path": list(c.section_path),
        "text": c.text,
    }


def hit_view(hit: Hit) -> dict[str, Any]:
    c = hit.chunk
    return {
        **passage_view(c),
        "doc_id": c.doc_id,
        "score": round(hit.score, 6),
        "source": c.source,
        "title": c.title,
        "ranks": hit.ranks,
        "signals": {k: round(v, 4) for k, v in hit.signals.items()},
        "source_class": hit.source_class,
        "trust": round(hit.signals.get("trust", c.source_trust), 4),
        "modified": c.modified.isoformat() if c.modified else None,
    }


def search_view(result: SearchResult) -> dict[str, Any]:
    return {
        "question": result.question,
        "covered": result.covered,
        "route": route_view(result.route),
        "intent": asdict(result.intent),
        "hits": [hit_view(h) for h in result.hits],
        "sources": [
            {
                "name": o.name,
                "status": o.status,
                "hits": len(o.hits),
                "ms": round(o.ms, 2),
                "error": o.error,
            }
            for o in result.outcomes
        ],
        "timings_ms": {k: round(v, 2) for k, v in result.timings_ms.items()},
        "warnings": result.warnings,
    }


def answer_view(answer: Answer) -> dict[str, Any]:
    return {
        "question": answer.question,
        "answer": answer.text,
        "covered": answer.covered,
        "confidence": answer.confidence,
        "reason": answer.reason,
        "mode": answer.mode,
        "citations": [asdict(c) for c in answer.citations],
        "sentences": [asdict(s) for s in answer.sentences],
        "removed_labels": list(answer.removed_labels),
        "hits": [hit_view(h) for h in answer.hits],
        "route": route_view(answer.route),
        "timings_ms": {k: round(v, 2) for k, v in answer.timings_ms.items()},
        "trace_id": answer.trace_id,
        "warnings": list(answer.warnings),
        "knowledge": answer.knowledge,
        "blocks": [block_view(b) for b in answer.blocks],
        "model": asdict(answer.model) if answer.model else None,
        "conflicts": list(answer.conflicts),
    }


def block_view(block: ContentBlock) -> dict[str, Any]:
    """One content block: the same shape for documents, rows, status and memory."""
    content: Any = block.content
    if isinstance(content, RowSet):
        content = {
            "columns": list(content.columns),
            "rows": [list(r) for r in content.rows],
            "truncated": content.truncated,
        }
    return {
        "source_id": block.source_id,
        "source_kind": block.source_kind,
        "label": block.label,
        "title": block.title,
        "content": content,
        "text": block.text(),
        "confidence": block.confidence,
        "permission_tags": list(block.permission_tags),
        "accessed_at": block.accessed_at.isoformat(),
        "freshness": {
            "age_s": None if block.freshness.age_s is None else round(block.freshness.age_s, 1),
            "window_s": block.freshness.window_s,
            "stale": block.freshness.stale,
            "note": block.freshness.note(),
        },
        "authoritative": block.authoritative,
        "locator": block.locator,
    }


def gateway_view(result: GatewayResult) -> dict[str, Any]:
    return {
        "trace_id": result.trace_id,
        "operation": result.operation,
        "status": result.status,
        "message": result.message,
        "source_id": result.source_id,
        "blocks": [block_view(b) for b in result.blocks],
        "detail": result.detail,
    }
