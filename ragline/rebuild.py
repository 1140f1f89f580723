"""`ragline repair --rebuild STORE`: rebuild a derived store from the metadata store.

The dense index is rebuilt with the *configured* embedder: every served or staged chunk is
embedded again and the new vectors are written back to the metadata store, so changing the
embedder (which the dense index refuses to mix) is one command. Keyword and graph stores are
emptied and reloaded from the truth, no model needed.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from core.settings import Settings
from indexing.factory import drop_elastic_dense
from indexing.protocols import IndexedChunk, MetadataStore
from ragline.app import Ragline

REBUILDABLE = ("dense", "keyword", "graph")
_BATCH = 512  # chunks per embedding/upsert round: bounded memory at any corpus size


def dense_dir(settings: Settings) -> Path:
    configured = settings.backends.dense_dir
    return Path(configured) if configured else settings.data_dir / "dense"


# (store, chunks written so far, chunks to write), after each round
Progress = Callable[[str, int, int], None]


def _batches(ids: Sequence[str], meta: MetadataStore) -> Iterator[list[IndexedChunk]]:
    for i in range(0, len(ids), _BATCH):
        yield meta.items(list(ids[i : i + _BATCH]))


def rebuild(
    settings: Settings, targets: Sequence[str], progress: Progress | None = None
) -> dict[str, int]:
    """Rebuild each target store; returns how many chunks each now holds. `progress` is
    told after each round of chunks."""
    unknown = set(targets) - set(REBUILDABLE)
    if unknown:
        raise ValueError(f"cannot rebuild {sorted(unknown)}; choose from {REBUILDABLE}")
    old = None
    if "dense" in targets and settings.backends.dense == "elasticsearch":
        drop_elastic_dense(settings)  # re-embedded from the metadata store below
    elif "dense" in targets and dense_dir(settings).exists():
        # Set the old index aside (it may belong to another embedder and refuse to open);
        # it is restored if the rebuild fails, removed once the new one is flushed.
        old = dense_dir(settings).with_name(dense_dir(settings).name + ".previous")
        shutil.rmtree(old, ignore_errors=True)
        dense_dir(settings).rename(old)
    try:
        counts = _rebuild_open(settings, targets, progress)
    except BaseException:
        if old is not None:
            shutil.rmtree(dense_dir(settings), ignore_errors=True)
            old.rename(dense_dir(settings))
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return counts


def _rebuild_open(
    settings: Settings, targets: Sequence[str], progress: Progress | None
) -> dict[str, int]:
    rag = Ragline(settings)
    try:
        meta = rag.stores.metadata
        counts: dict[str, int] = {}
        for name in targets:
            store = rag.stores.derived[name]
            if name != "dense":  # the dense directory was set aside: it starts empty
                store.delete(sorted(store.content_ids()))
            n = 0
            ids = sorted(meta.serving_ids() | meta.pending_ids())
            for items in _batches(ids, meta):
                if name == "dense":
                    vectors = rag.embedder.embed_passages([i.chunk.text for i in items])
                    meta.replace_vectors(
                        {i.chunk.content_id: v for i, v in zip(items, vectors, strict=True)}
                    )
                    items = [IndexedChunk(i.chunk, v) for i, v in zip(items, vectors, strict=True)]
                store.upsert(items)
                n += len(items)
                if progress is not None:
                    progress(name, n, len(ids))
            store.flush()
            counts[name] = n
        return counts
    finally:
        rag.close()
