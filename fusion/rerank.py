"""Reranking: an optional cross-encoder, then cheap signals every deployment has —
query coverage, character-bigram overlap, timeliness and source trust.

Runs with no model at all; with one (bge-reranker-v2-m3 via FlagEmbedding in production)
its score is blended in. The signal weights were measured against BM25 alone in the same
benchmark run (bench/RESULTS.md); change them only with a new measurement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from core.errors import ModelMissing
from core.text import char_bigrams, query_terms
from core.types import Chunk, Hit


class CrossEncoder(Protocol):
    def score(self, question: str, passages: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class SignalWeights:
    fused: float = 1.0
    coverage: float = 0.10
    bigrams: float = 0.40
    bigrams_idf: float = 1.60
    cross_encoder: float = 0.5
    timeliness: float = 0.02
    trust: float = 0.05


def searchable_text(chunk: Chunk) -> str:
    return f"{chunk.title}\n{' '.join(chunk.section_path)}\n{chunk.text}".lower()


def coverage(terms: Sequence[str], text: str) -> float:
    """Share of the query's content terms that occur in the text (longer terms weigh more,
    since jieba's search mode also emits their sub-words)."""
    if not terms:
        return 0.0
    total = sum(len(t) for t in terms)
    return sum(len(t) for t in terms if t in text) / total


def bigram_overlap(query_grams: set[str], text_grams: set[str]) -> float:
    if not query_grams:
        return 0.0
    return len(query_grams & text_grams) / len(query_grams)


def rare_bigram_overlap(query_grams: set[str], candidates: Sequence[set[str]]) -> list[float]:
    """Query bigrams weighted by how rare they are among the candidates (an idf that needs
    no corpus statistics): a bigram every candidate shares says nothing about which one
    answers; one that only the right passage has says a lot."""
    n = len(candidates)
    weight = {g: math.log(1 + n / (1 + sum(g in c for c in candidates))) for g in query_grams}
    total = sum(weight.values())
    if not total:
        return [0.0] * n
    return [sum(w for g, w in weight.items() if g in c) / total for c in candidates]


def timeliness(modified: date | None, today: date) -> float:
    """1.0 for today, 0.5 after a year, towards 0 for old material; 0.5 when unknown."""
    if modified is None:
        return 0.5
    age_years = max((today - modified).days, 0) / 365.0
    return 1.0 / (1.0 + age_years)


class SignalReranker:
    def __init__(
        self,
        weights: SignalWeights | None = None,
        cross_encoder: CrossEncoder | None = None,
        today: date | None = None,
    ) -> None:
        self.weights = weights or SignalWeights()
        self._ce = cross_encoder
        self._today = today

    def rerank(self, question: str, hits: Sequence[Hit], fused_max: float) -> list[Hit]:
        w = self.weights
        terms = query_terms(question)
        grams = char_bigrams(question)
        today = self._today or date.today()
        ce_scores = (
            self._ce.score(question, [h.chunk.text for h in hits]) if self._ce and hits else None
        )
        texts = [searchable_text(h.chunk) for h in hits]
        text_grams = [char_bigrams(t) for t in texts]
        rare = rare_bigram_overlap(grams, text_grams)
        for i, hit in enumerate(hits):
            s = hit.signals
            s["fused"] = hit.score / fused_max if fused_max > 0 else 0.0
            s["coverage"] = coverage(terms, texts[i])
            s["bigrams"] = bigram_overlap(grams, text_grams[i])
            s["bigrams_idf"] = rare[i]
            s["timeliness"] = timeliness(hit.chunk.modified, today)
            s["trust"] = hit.chunk.source_trust
            score = (
                w.fused * s["fused"]
                + w.coverage * s["coverage"]
                + w.bigrams * s["bigrams"]
                + w.bigrams_idf * s["bigrams_idf"]
                + w.timeliness * s["timeliness"]
                + w.trust * (s["trust"] - 1.0)
            )
            if ce_scores is not None:
                s["cross_encoder"] = ce_scores[i]
                score += w.cross_encoder * ce_scores[i]
            hit.score = score
        return sorted(hits, key=lambda h: (-h.score, h.chunk.content_id))


class FlagCrossEncoder:
    """bge-reranker-v2-m3 (or any FlagEmbedding reranker) from a local directory."""

    def __init__(self, model_path: str, use_fp16: bool = False) -> None:
        if not Path(model_path).expanduser().is_dir():
            raise ModelMissing(
                f"RAGLINE_RETRIEVAL__RERANKER_PATH={model_path!r} is not a directory; point it "
                "at a downloaded bge-reranker-v2-m3, or leave it empty to rerank without a model"
            )
        self._path = str(Path(model_path).expanduser())
        self._fp16 = use_fp16
        self._model: Any = None

    def score(self, question: str, passages: Sequence[str]) -> list[float]:
        if self._model is None:
            try:
                from FlagEmbedding import FlagReranker
            except ImportError as exc:
                raise ModelMissing(
                    "a reranker path is set but FlagEmbedding is missing: "
                    "pip install 'ragline[bge]'"
                ) from exc
            self._model = FlagReranker(self._path, use_fp16=self._fp16)
        scores = self._model.compute_score([[question, p] for p in passages], normalize=True)
        return [float(s) for s in (scores if isinstance(scores, list) else [scores])]
