"""FAISS-specific behaviour beyond the DenseIndex contract."""

from __future__ import annotations

from pathlib import Path

from store_cases import DIM, MODEL, Corpus

from core.types import QueryFilter
from indexing.stores.faiss_dense import FaissDenseIndex

ALL = QueryFilter(access_tokens=None)


def test_refresh_picks_up_another_process_flush(tmp_path: Path, corpus: Corpus) -> None:
    writer = FaissDenseIndex(tmp_path, DIM, MODEL)  # the ingestion worker
    reader = FaissDenseIndex(tmp_path, DIM, MODEL)  # the API process
    assert reader.refresh() is False
    writer.upsert(corpus.all())
    writer.flush()
    assert reader.search(corpus["zh"].vector, 1, ALL) == []
    assert reader.refresh() is True
    assert reader.search(corpus["zh"].vector, 1, ALL)[0].content_id == corpus.cid("zh")
    assert reader.refresh() is False  # unchanged: one stat()
    writer.delete([corpus.cid("zh")])
    writer.flush()
    assert reader.refresh() is True
    assert corpus.cid("zh") not in reader.content_ids()
    assert len(list(tmp_path.glob("dense-*.faiss"))) == 1  # old generations are removed


def test_refresh_keeps_unflushed_writes(tmp_path: Path, corpus: Corpus) -> None:
    first = FaissDenseIndex(tmp_path, DIM, MODEL)
    other = FaissDenseIndex(tmp_path, DIM, MODEL)
    first.upsert([corpus["en"]])
    first.flush()
    other.upsert([corpus["zh"]])
    assert other.refresh() is False
    assert other.content_ids() == {corpus.cid("zh")}
