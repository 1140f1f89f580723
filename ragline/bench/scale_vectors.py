"""Embeddings of the scale corpus, cached on disk in blocks of BLOCK chunks.

Embedding is by far the slowest step of a scale run on a small machine (the shipped
model does tens of chunks per second per core), so the vectors of chunk i are kept under
`<folder>/<model>/<corpus fingerprint>/block-<k>.npy` and reused by every later run and
size. Several processes can fill one cache together (`--embed-workers`): each takes the
blocks k with k % workers == its number, and a block file appears atomically, complete.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from indexing.embedders import Embedder
from ragline.bench.scale_corpus import ScaleCorpus

BLOCK = 1000


class VectorCache:
    def __init__(
        self, folder: Path, corpus: ScaleCorpus, model: str, dim: int, block: int = BLOCK
    ) -> None:
        self.block = block
        self.dir = folder / model / corpus.fingerprint
        if block != BLOCK:
            self.dir = self.dir / f"block{block}"
        self.dim = dim
        self.corpus = corpus

    def _path(self, block: int) -> Path:
        return self.dir / f"block-{block:05d}.npy"

    def has(self, block: int) -> bool:
        return self._path(block).exists()

    def blocks_for(self, n: int) -> range:
        return range((n + self.block - 1) // self.block)

    def cached(self, n: int) -> int:
        """How many of the first n chunks have vectors (a prefix)."""
        done = 0
        for k in self.blocks_for(n):
            if not self.has(k):
                break
            done = min(n, (k + 1) * self.block)
        return done

    def fill(
        self,
        embedder: Embedder,
        n: int,
        *,
        worker: int = 0,
        workers: int = 1,
        progress: Callable[[str], None] | None = None,
    ) -> tuple[int, float]:
        """Embed the missing blocks of the first n chunks that belong to `worker`;
        returns (chunks embedded, seconds spent embedding)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        embedded, spent = 0, 0.0
        for k in self.blocks_for(n):
            if k % workers != worker or self.has(k):
                continue
            start, stop = k * self.block, (k + 1) * self.block  # whole blocks, whatever n is
            texts = [c.text for c in self.corpus.chunks(stop, start)]
            t0 = time.perf_counter()
            vectors = embedder.embed_passages(texts).astype(np.float32)
            spent += time.perf_counter() - t0
            embedded += len(texts)
            tmp = self.dir / f".block-{k:05d}.{os.getpid()}.npy"
            np.save(tmp, vectors)
            os.replace(tmp, self._path(k))
            if progress is not None:
                progress(f"embedded block {k} ({stop:,} chunks), {embedded / spent:.1f} chunks/s")
        return embedded, spent

    def load(self, start: int, stop: int) -> np.ndarray:
        """Vectors of chunks [start, stop); every block must be cached."""
        parts = []
        size = self.block
        for k in range(start // size, (stop + size - 1) // size):
            block = np.load(self._path(k), mmap_mode="r")
            lo, hi = max(start, k * size) - k * size, min(stop, (k + 1) * size) - k * size
            parts.append(np.asarray(block[lo:hi]))
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(parts)
