"""The rarest of a query's terms (or entities) within a budget of postings: what the SQLite
stores search on a large index, so one query's work is bounded (bench/RESULTS.md)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def rarest_within(held: Mapping[K, int], budget: int) -> set[K]:
    """The keys of `held` (key -> chunks holding it), rarest first, while their counts sum
    to at most `budget`; the rarest one always (ties by key, so the choice is stable)."""
    kept: set[K] = set()
    spent = 0
    for key in sorted(held, key=lambda k: (held[k], str(k))):
        if kept and spent + held[key] > budget:
            break
        kept.add(key)
        spent += held[key]
    return kept
