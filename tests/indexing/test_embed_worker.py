"""Ingest's embed worker: a child process that gives the in-process vectors; when the
child fails or cannot load its model, calls are answered in-process; an error of the
embedder itself reaches the caller."""

from collections.abc import Sequence

import numpy as np
import pytest

from core.settings import EmbedderSettings
from indexing.embed_worker import EmbedWorker
from indexing.embedders import make_embedder

TEXTS = ["罗保铭，天津人。", "Form F-3 is filed with registry office 3.", "x"]


class Zeros:
    model = "zeros"
    dim = 512

    def __init__(self) -> None:
        self.calls = 0

    def load(self) -> None:
        pass

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return np.zeros((len(texts), self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.zeros(self.dim, dtype=np.float32)


def test_child_vectors_match_in_process_and_a_dead_child_falls_back() -> None:
    settings = EmbedderSettings()
    local = make_embedder(settings)
    worker = EmbedWorker(settings, local)
    try:
        got = worker.embed_passages(TEXTS)
        assert not worker.in_process
        assert float(np.abs(got - local.embed_passages(TEXTS)).max()) < 1e-5
        # An error of the embedder itself (not a text) is the caller's; the child lives on.
        with pytest.raises(RuntimeError, match="Error"):
            worker.embed_passages([None])  # type: ignore[list-item]
        assert not worker.in_process
        assert worker._proc is not None
        worker._proc.kill()  # the child dies: answered here, from now on
        worker._proc.wait(10)
        again = worker.embed_passages(TEXTS)
        assert worker.in_process
        assert float(np.abs(again - got).max()) < 1e-5
    finally:
        worker.close()


def test_a_child_that_cannot_load_its_model_leaves_the_calls_in_process() -> None:
    local = Zeros()
    worker = EmbedWorker(EmbedderSettings(kind="bge", bge_model_path=""), local)
    try:
        out = worker.embed_passages(TEXTS)
        assert out.shape == (3, 512) and local.calls == 1
        assert worker.in_process
        assert "RAGLINE_EMBEDDER__BGE_MODEL_PATH" in worker._broken
    finally:
        worker.close()
