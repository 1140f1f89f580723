"""The one thing the answer step asks of an embedder: how close in meaning texts are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Similarity(Protocol):
    """Similarity of meaning between a question and each text (cosine of embeddings)."""

    def __call__(self, question: str, texts: Sequence[str]) -> Sequence[float]: ...
