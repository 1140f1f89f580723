"""The answer step's meaning signal remembers sentence vectors: same scores as embedding
every time, only unseen texts are embedded, and the memory stays bounded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from indexing.embedders import MemoisedSimilarity, similarity


class CountingEmbedder:
    model = "counting"
    dim = 4

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def load(self) -> None:
        pass

    def _vector(self, text: str) -> np.ndarray:
        rng = np.random.default_rng(sum(map(ord, text)))
        v = rng.standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded.extend(texts)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector("q:" + text)


def test_scores_equal_embedding_every_time_and_only_new_texts_are_embedded() -> None:
    embedder = CountingEmbedder()
    memo = MemoisedSimilarity(embedder, size=10)
    texts = ["alpha", "beta", "gamma"]
    first = memo("which one?", texts)
    assert np.allclose(first, similarity(CountingEmbedder(), "which one?", texts))
    assert embedder.embedded == texts
    again = memo("another question?", ["beta", "delta", "beta"])
    assert embedder.embedded == [*texts, "delta"]  # beta came from memory, once
    assert again[0] == again[2]
    assert np.allclose(
        again, similarity(CountingEmbedder(), "another question?", ["beta", "delta", "beta"])
    )
    assert memo("q", []) == []


def test_memory_is_bounded_least_recently_used_first_out() -> None:
    embedder = CountingEmbedder()
    memo = MemoisedSimilarity(embedder, size=2)
    memo("q", ["a", "b"])
    memo("q", ["a"])  # a is now the most recent
    memo("q", ["c"])  # b goes
    embedder.embedded.clear()
    memo("q", ["a", "b", "c"])
    assert embedder.embedded == ["b"]
