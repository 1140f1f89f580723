"""`ragline ask` and `search` load the embedder's model on a thread while the query path
imports: the query uses that embedder, and a model that cannot load is reported as the
command's error, naming the setting."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from typer.testing import CliRunner

import indexing.embedders
from indexing.stores.sql_metadata import SqlMetadataStore
from ragline.cli import commands as cli
from ragline.cli.common import open_app, settings_for


class RecordingEmbedder:
    model = "recording"
    dim = 8
    made: ClassVar[list[RecordingEmbedder]] = []

    def __init__(self) -> None:
        self.loaded_on: list[str] = []
        RecordingEmbedder.made.append(self)

    def load(self) -> None:
        self.loaded_on.append(threading.current_thread().name)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), self.dim), dtype=np.float32) / np.sqrt(self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        return np.ones(self.dim, dtype=np.float32) / np.sqrt(self.dim)


def test_the_model_loads_on_its_own_thread_and_the_query_uses_that_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    RecordingEmbedder.made.clear()
    monkeypatch.setattr(indexing.embedders, "make_embedder", lambda s: RecordingEmbedder())
    settings = settings_for(tmp_path)
    made = cli._embedder_loading(settings)
    embedder = made.result(timeout=10)
    rag = open_app(tmp_path, made, settings)
    try:
        assert rag.embedder is embedder
        assert RecordingEmbedder.made == [embedder]  # made once, not again by Ragline
        for _ in range(200):  # the thread calls load() right after making the embedder
            if embedder.loaded_on:
                break
            time.sleep(0.01)
        assert embedder.loaded_on[0] == "model-load"
    finally:
        rag.close()


def test_a_model_that_cannot_load_is_the_commands_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGLINE_EMBEDDER__KIND", "bge")
    monkeypatch.delenv("RAGLINE_EMBEDDER__BGE_MODEL_PATH", raising=False)
    SqlMetadataStore(f"sqlite:///{tmp_path / 'ragline.db'}").close()  # a data dir with data
    result = CliRunner().invoke(cli.app, ["search", "which port?", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "RAGLINE_EMBEDDER__BGE_MODEL_PATH" in result.output
