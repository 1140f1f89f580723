"""The one thing the answer step asks of an embedder: how close in meaning texts are."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol


class Similarity(Protocol):
    """Similarity of meaning between a question and each text (cosine of embeddings)."""

    def __call__(self, question: str, texts: Sequence[str]) -> Sequence[float]: ...


class TimedSimilarity:
    """A similarity function that adds up the wall time spent in it: the answer step
    reports model inference (`embed_sentences`) apart from its own work. One per answer."""

    def __init__(self, inner: Similarity) -> None:
        self._inner = inner
        self.seconds = 0.0

    def __call__(self, question: str, texts: Sequence[str]) -> Sequence[float]:
        started = time.perf_counter()
        try:
            return self._inner(question, texts)
        finally:
            self.seconds += time.perf_counter() - started
