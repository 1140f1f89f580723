"""Weighted reciprocal rank fusion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.settings import FusionSettings
from core.types import Chunk, ScoredId
from fusion.trust import TrustPolicy


@dataclass(slots=True)
class Fused:
    content_id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)


def weighted_rrf(
    rankings: Mapping[str, Sequence[ScoredId]], weights: Mapping[str, float], k: float
) -> list[Fused]:
    """score(d) = sum over sources s of w_s / (k + rank_s(d)), rank 1-based.

    A small k (1) lets a source's first places dominate; with a weak dense retriever
    beside a strong BM25 that is what keeps fusion from dragging BM25's top-1 down.
    Hits a source scores equally share the best of their places ("1, 2, 2, 4"): the
    source cannot tell them apart, so their order (an id tie-break) must not count.
    """
    fused: dict[str, Fused] = {}
    for source, hits in rankings.items():
        w = weights.get(source, 0.0)
        rank, previous = 0, float("nan")  # nan equals nothing: the first hit sets both
        for position, hit in enumerate(hits, start=1):
            if hit.score != previous:
                rank, previous = position, hit.score
            f = fused.get(hit.content_id)
            if f is None:
                f = fused[hit.content_id] = Fused(hit.content_id, 0.0)
            f.score += w / (k + rank)
            f.ranks[source] = rank
    return sorted(fused.values(), key=lambda f: (-f.score, f.content_id))


class _Trust(Protocol):
    fusion: FusionSettings
    policy: TrustPolicy


def trust_weighted(
    fused: list[Fused], served: Mapping[str, Chunk], reranker: _Trust
) -> list[Fused]:
    """Scale each document's fused score by its source's trust: (1 - a) + a * trust, with
    a = settings.fusion.rrf_trust_share; a no-op when trust is switched off."""
    share = reranker.fusion.rrf_trust_share
    if not reranker.fusion.use_trust or share <= 0:
        return fused
    for f in fused:
        chunk = served.get(f.content_id)
        if chunk is not None:
            f.score *= (1 - share) + share * reranker.policy.standing(chunk).trust
    return sorted(fused, key=lambda f: (-f.score, f.content_id))
