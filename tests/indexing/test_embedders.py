from pathlib import Path

import numpy as np
import pytest

from core.errors import ModelMissing
from indexing.embedders import BgeM3Embedder, UseEmbedder


def test_use_batches_keep_input_order_and_unit_norm() -> None:
    emb = UseEmbedder(batch_size=2)
    texts = [
        "短",
        "a much longer english sentence about ducks and drakes",
        "中等长度的中文句子",
        "x",
    ]
    together = emb.embed_passages(texts)
    alone = np.vstack([emb.embed_passages([t]) for t in texts])
    assert together.shape == (4, emb.dim)
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    q = emb.embed_query("鸭子")
    assert q.shape == (emb.dim,)


def test_missing_bge_model_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ModelMissing, match="RAGLINE_EMBEDDER__BGE_MODEL_PATH"):
        BgeM3Embedder("")
    with pytest.raises(ModelMissing, match="is not a directory"):
        BgeM3Embedder(str(tmp_path / "nope"))
