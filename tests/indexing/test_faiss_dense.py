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


def test_hnsw_recall_against_exact(tmp_path: Path) -> None:
    from bench_faiss_recall import run

    result = run(3000, 32, queries=50)
    assert result["recall@10_all"] >= 0.95 and result["recall@10_half"] >= 0.95


def test_hnsw_follows_removals_and_appends(tmp_path: Path, corpus: Corpus) -> None:
    store = FaissDenseIndex(tmp_path, DIM, MODEL, kind="hnsw")
    store.upsert(corpus.all())
    assert store.search(corpus["zh"].vector, 1, ALL)[0].content_id == corpus.cid("zh")
    store.delete([corpus.cid("zh")])  # positions compact: the graph is rebuilt
    assert corpus.cid("zh") not in {
        h.content_id for h in store.search(corpus["zh"].vector, 10, ALL)
    }
    store.upsert([corpus["zh"]])  # appended: the graph is extended
    assert store.search(corpus["zh"].vector, 1, ALL)[0].content_id == corpus.cid("zh")


def test_auto_switches_to_hnsw_from_a_size(tmp_path: Path, corpus: Corpus) -> None:
    store = FaissDenseIndex(tmp_path, DIM, MODEL, kind="auto", approx_min=5)
    store.upsert(corpus.all()[:3])
    store.search(corpus["zh"].vector, 1, ALL)
    assert store._hnsw is None  # below the threshold: exact
    store.upsert(corpus.all())
    store.search(corpus["zh"].vector, 1, ALL)
    assert store._hnsw is not None


def test_mapped_index_serves_reads_and_copies_itself_on_the_first_write(
    tmp_path: Path, corpus: Corpus
) -> None:
    """A memory-mapped index (what API worker processes open) answers like the in-memory
    one; a write takes a private copy instead of touching the shared read-only mapping
    (FAISS would abort the process), and the file on disk stays what another process wrote."""
    writer = FaissDenseIndex(tmp_path, DIM, MODEL)
    writer.upsert(corpus.all())
    writer.flush()
    mapped = FaissDenseIndex(tmp_path, DIM, MODEL, mmap=True)
    plain = FaissDenseIndex(tmp_path, DIM, MODEL)
    for key in corpus.items:
        query = corpus[key].vector
        assert mapped.search(query, 3, ALL) == plain.search(query, 3, ALL)
    mapped.delete([corpus.cid("zh")])  # first write: copy, then remove
    mapped.upsert([corpus["zh"]])
    mapped.delete([corpus.cid("en")])
    assert corpus.cid("en") not in mapped.content_ids()
    assert mapped.search(corpus["zh"].vector, 1, ALL)[0].content_id == corpus.cid("zh")
    assert corpus.cid("en") in plain.content_ids()  # the other process is untouched
    mapped.flush()
    assert plain.refresh() is True
    assert corpus.cid("en") not in plain.content_ids()
