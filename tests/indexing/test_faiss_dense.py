"""FAISS-specific behaviour beyond the DenseIndex contract."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_cases import DIM, MODEL, Corpus, make_chunk

from core.errors import RaglineError, StoreError
from core.types import QueryFilter
from indexing.protocols import IndexedChunk
from indexing.stores.faiss_dense import FaissDenseIndex

ALL = QueryFilter(access_tokens=None)


def test_refresh_picks_up_another_process_flush(tmp_path: Path, corpus: Corpus) -> None:
    writer = FaissDenseIndex(tmp_path, DIM, MODEL)  # the ingestion worker
    reader = FaissDenseIndex(tmp_path, DIM, MODEL)  # the API process
    # The API asks `changed_on_disk` on every query (no lock, no thread) and reloads
    # through `refresh` only when it says so.
    assert reader.changed_on_disk() is False and reader.refresh() is False
    writer.upsert(corpus.all())
    writer.flush()
    assert reader.search(corpus["zh"].vector, 1, ALL) == []
    assert reader.changed_on_disk() is True
    assert reader.refresh() is True
    assert reader.changed_on_disk() is False
    assert reader.search(corpus["zh"].vector, 1, ALL)[0].content_id == corpus.cid("zh")
    assert reader.refresh() is False  # unchanged: one stat()
    writer.delete([corpus.cid("zh")])
    writer.flush()
    assert reader.changed_on_disk() is True
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


def test_auto_switches_to_ivf_from_a_size(tmp_path: Path, corpus: Corpus) -> None:
    store = FaissDenseIndex(tmp_path, DIM, MODEL, kind="auto", approx_min=5)
    store.upsert(corpus.all()[:3])
    store.search(corpus["zh"].vector, 1, ALL)
    assert store._ivf is None  # below the threshold: exact
    store.upsert(corpus.all())
    store.search(corpus["zh"].vector, 1, ALL)
    assert store._ivf is not None


def _clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.normal(size=(40, DIM))
    vecs = centres[rng.integers(0, 40, n)] + 0.5 * rng.normal(size=(n, DIM))
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def _indexed(vecs: np.ndarray, start: int = 0) -> list[IndexedChunk]:
    return [
        IndexedChunk(
            make_chunk(
                f"k{start + i}",
                "",
                department="even" if (start + i) % 2 == 0 else "odd",
                tags=frozenset({"hr"}) if (start + i) % 10 == 0 else frozenset(),
            ),
            v,
        )
        for i, v in enumerate(vecs)
    ]


def _recall(
    store: FaissDenseIndex, exact: FaissDenseIndex, queries: np.ndarray, where: QueryFilter
) -> float:
    found = 0
    for q in queries:
        truth = {h.content_id for h in exact.search(q, 10, where)}
        got = store.search(q, 10, where)
        assert len(got) == len(truth)
        assert all(a.score >= b.score for a, b in itertools.pairwise(got))
        found += len(truth & {h.content_id for h in got})
    return found / (10 * len(queries))


def test_ivf_stays_close_to_exact_through_removals_appends_and_filters(tmp_path: Path) -> None:
    """Removals renumber the IVF's stored positions in place and appends extend it: after
    both, IVF results (filtered too) still match exact search and never include a
    removed or a filtered-out vector."""
    rng = np.random.default_rng(3)
    vecs = _clustered(6000, rng)
    ivf = FaissDenseIndex(tmp_path / "ivf", DIM, MODEL, kind="ivf", nprobe=24)
    exact = FaissDenseIndex(tmp_path / "flat", DIM, MODEL)
    for store in (ivf, exact):
        store.upsert(_indexed(vecs[:5000]))
    queries = vecs[rng.choice(5000, 40, replace=False)] + 0.05 * rng.normal(size=(40, DIM))
    assert _recall(ivf, exact, queries, ALL) >= 0.9
    assert ivf._ivf is not None and ivf._ivf.nlist > 50
    trained = ivf._ivf
    gone = [i.chunk.content_id for i in _indexed(vecs[:5000])[::7]]
    for store in (ivf, exact):
        store.delete(gone)
        store.upsert(_indexed(vecs[5000:], 5000))
    assert ivf._ivf is trained  # no rebuild for either
    assert _recall(ivf, exact, queries, ALL) >= 0.9
    hits = {h.content_id for q in queries for h in ivf.search(q, 10, ALL)}
    assert not hits & set(gone)
    odd = QueryFilter(access_tokens=frozenset(), departments=frozenset({"odd"}))
    assert _recall(ivf, exact, queries, odd) >= 0.9
    allowed = {i.chunk.content_id for i in _indexed(vecs) if i.chunk.department == "odd"}
    allowed -= {i.chunk.content_id for i in _indexed(vecs) if i.chunk.acl_tags}
    assert {h.content_id for q in queries for h in ivf.search(q, 10, odd)} <= allowed


def test_auto_answers_a_selective_filter_exactly(tmp_path: Path) -> None:
    """Where the IVF declines (a filter admitting 25% would need most lists probed), the
    exact kernel answers: the right hits, and no HNSW graph is built on the way."""
    vecs = _clustered(4000, np.random.default_rng(11))
    auto = FaissDenseIndex(tmp_path / "a", DIM, MODEL, kind="auto", approx_min=1000)
    exact = FaissDenseIndex(tmp_path / "e", DIM, MODEL)
    for store in (auto, exact):
        store.upsert(_indexed(vecs))
    few = frozenset(i.chunk.doc_id for i in _indexed(vecs)[::4])  # 25% admitted
    where = QueryFilter(access_tokens=None, doc_ids=few)
    for q in vecs[:20]:
        assert auto.search(q, 10, where) == exact.search(q, 10, where)
    assert auto._ivf is not None and auto._hnsw is None


def test_ivf_is_saved_by_the_writer_and_loaded_by_readers(tmp_path: Path) -> None:
    vecs = _clustered(3000, np.random.default_rng(5))
    writer = FaissDenseIndex(tmp_path, DIM, MODEL, kind="auto", approx_min=1000)
    writer.upsert(_indexed(vecs))
    writer.flush()
    assert len(list(tmp_path.glob("dense-*.ivf"))) == 1
    reader = FaissDenseIndex(tmp_path, DIM, MODEL, kind="auto", approx_min=1000, mmap=True)
    assert reader._ivf is not None and reader._ivf.size == 3000
    assert reader.search(vecs[7], 1, ALL)[0].content_id == _indexed(vecs)[7].chunk.content_id
    writer.delete([_indexed(vecs)[0].chunk.content_id])
    writer.flush()
    assert len(list(tmp_path.glob("dense-*.ivf"))) == 1  # the old generation's is removed


def test_ivf_is_retrained_when_the_index_grows_past_its_lists(tmp_path: Path) -> None:
    vecs = _clustered(8000, np.random.default_rng(9))
    store = FaissDenseIndex(tmp_path, DIM, MODEL, kind="ivf")
    store.upsert(_indexed(vecs[:1000]))
    store.search(vecs[0], 10, ALL)
    small = store._ivf
    assert small is not None
    store.upsert(_indexed(vecs[1000:], 1000))
    store.search(vecs[0], 10, ALL)
    assert store._ivf is not small and store._ivf.nlist >= 2 * small.nlist


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


def test_automatic_probe_count_covers_a_fifth_of_large_indexes() -> None:
    from types import SimpleNamespace

    from indexing.stores.faiss_dense import _Ivf

    def probes(nlist: int, allowed_share: float = 1.0, nprobe: int = 0) -> int:
        n = 1_000_000
        return _Ivf.probes(SimpleNamespace(nlist=nlist), nprobe, n, int(n * allowed_share))  # type: ignore[arg-type]

    assert probes(358) == 76  # small: 4 * sqrt(lists), as measured at 14k
    assert probes(4000) == 800  # 1M: 253 probes gave recall@10 0.88
    assert probes(4000, allowed_share=0.5) == 1600  # a filter probes more
    assert probes(4000, nprobe=50) == 50  # a configured count wins
    assert probes(4000, allowed_share=0.01) == 4000


def test_each_flush_writes_every_rows_current_fields(tmp_path: Path, corpus: Corpus) -> None:
    """A flush reuses the JSON of rows unchanged since the last one; a row whose fields
    changed, a removed row and an appended row are written as they are now (a reader
    opening the files sees exactly what the writer holds)."""
    from dataclasses import replace

    writer = FaissDenseIndex(tmp_path, DIM, MODEL)
    writer.upsert(corpus.all())
    writer.flush()
    first = {item.chunk.content_id for item in corpus.all()}
    zh = corpus["zh"].chunk
    writer.update_metadata([replace(zh, acl_tags=frozenset({"finance"}))])
    writer.delete([corpus.cid("en")])
    writer.flush()
    reader = FaissDenseIndex(tmp_path, DIM, MODEL)
    assert reader.held_metadata() == writer.held_metadata()
    assert reader.content_ids() == first - {corpus.cid("en")}
    assert "finance" in reader.held_metadata()[zh.content_id]
    writer.upsert([corpus["en"]])  # appended again
    writer.flush()
    assert reader.refresh() and reader.held_metadata() == writer.held_metadata()
    assert "finance" not in reader.held_metadata()[corpus.cid("en")]


def _in_a_fresh_thread(work: Callable[[], object]) -> int:
    """Run `work` in a new thread whose OpenMP count is 3 (what a thread that never set
    it gets on a 3-core host); the count that thread is left with."""
    import faiss

    left: list[int] = []

    def run() -> None:
        faiss.omp_set_num_threads(3)
        work()
        left.append(faiss.omp_get_max_threads())

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return left[0]


def test_every_thread_that_searches_or_writes_runs_faiss_on_the_set_threads(
    tmp_path: Path, corpus: Corpus
) -> None:
    # OpenMP's thread count belongs to each thread: a pool thread that never set it used
    # every core, and each search left an OpenMP team spinning beside the Python work.
    store = FaissDenseIndex(tmp_path, DIM, MODEL, threads=1)
    assert _in_a_fresh_thread(lambda: store.upsert(corpus.all())) == 1
    assert _in_a_fresh_thread(lambda: store.search(corpus["zh"].vector, 1, ALL)) == 1


def test_the_approximate_index_trains_on_every_core_then_searches_on_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import faiss

    import indexing.stores.faiss_dense as module

    during: list[int] = []

    class Watched(module._Ivf):
        def __init__(self, vectors: np.ndarray, dim: int) -> None:
            during.append(faiss.omp_get_max_threads())
            super().__init__(vectors, dim)

    monkeypatch.setattr(module, "_Ivf", Watched)
    monkeypatch.setattr(module, "cores", lambda: 2)
    vecs = _clustered(3000, np.random.default_rng(5))
    store = FaissDenseIndex(tmp_path, DIM, MODEL, threads=1, kind="auto", approx_min=1000)
    store.upsert(_indexed(vecs))
    assert _in_a_fresh_thread(store.flush) == 1  # the writer trains at its flush
    assert during == [2]


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def _index_files(change: Callable[[Path], object]) -> Callable[[Path], None]:
    def damage(directory: Path) -> None:
        for path in directory.glob("dense-*.faiss"):
            change(path)

    return damage


def _sidecar_bytes(data: bytes) -> Callable[[Path], None]:
    def damage(directory: Path) -> None:
        (directory / "dense.json").write_bytes(data)

    return damage


def _sidecar_json(change: Callable[[dict[str, Any]], object]) -> Callable[[Path], None]:
    def damage(directory: Path) -> None:
        sidecar = directory / "dense.json"
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
        change(meta)
        sidecar.write_text(json.dumps(meta), encoding="utf-8")

    return damage


# What a disk, a copy or an operator can leave of a flushed index.
DAMAGE: dict[str, Callable[[Path], None]] = {
    "index file missing": _index_files(Path.unlink),
    "index file truncated": _index_files(_truncate),
    "sidecar not JSON": _sidecar_bytes(b"{not json"),
    "sidecar not UTF-8": _sidecar_bytes(b"\xff\xfe\x00"),
    "sidecar not an object": _sidecar_bytes(b"[]"),
    "sidecar without a generation": _sidecar_json(lambda m: m.pop("generation")),
    "sidecar payload garbled": _sidecar_json(lambda m: m.update(payload=[["x"], 3])),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_index_is_refused_with_the_command_that_rebuilds_it(
    tmp_path: Path, corpus: Corpus, damage: str
) -> None:
    """`check`, `repair`, search and ask open the index first: a damaged one ended each of
    them with a FAISS or JSON traceback that named no way out. It is a StoreError (a
    RaglineError: the CLI prints it as one line) naming `ragline repair --rebuild dense`,
    which sets the directory aside and builds a new one."""
    writer = FaissDenseIndex(tmp_path, DIM, MODEL)
    writer.upsert(corpus.all())
    writer.flush()
    DAMAGE[damage](tmp_path)
    with pytest.raises(StoreError, match=r"ragline repair --rebuild dense") as refused:
        FaissDenseIndex(tmp_path, DIM, MODEL)
    assert isinstance(refused.value, RaglineError)
    assert str(tmp_path) in str(refused.value)


@pytest.mark.parametrize("damage", ["index file truncated", "sidecar not JSON"])
def test_a_serving_process_opens_a_damaged_index_without_it(
    tmp_path: Path, corpus: Corpus, damage: str
) -> None:
    """A `ragline serve` worker started in place of one that died (`dense_damaged =
    "serve"`, which the command sets for its workers once it has checked the stores
    itself) opened the stores strictly: a FAISS file damaged since failed its start-up,
    and uvicorn then stopped the whole server. It opens without the vectors, refuses
    dense search with the repair command, does not reread the damaged version, and picks
    up a rebuilt index. Every other process still refuses to open it."""
    writer = FaissDenseIndex(tmp_path, DIM, MODEL)
    writer.upsert(corpus.all())
    writer.flush()
    DAMAGE[damage](tmp_path)
    with pytest.raises(StoreError):
        FaissDenseIndex(tmp_path, DIM, MODEL)
    served = FaissDenseIndex(tmp_path, DIM, MODEL, serve_damaged=True)
    assert served.lost and "ragline repair --rebuild dense" in served.damage
    with pytest.raises(StoreError, match=r"ragline repair --rebuild dense"):
        served.search(corpus["zh"].vector, 1, ALL)
    assert not served.changed_on_disk()  # (the damaged version is not read again)
    # `ragline repair --rebuild dense`: the directory set aside, a new index flushed.
    tmp_path.rename(tmp_path.with_name(tmp_path.name + "-aside"))
    rebuilt = FaissDenseIndex(tmp_path, DIM, MODEL)
    rebuilt.upsert(corpus.all())
    rebuilt.flush()
    assert served.changed_on_disk() and served.refresh()
    assert not served.lost and served.damage == ""
    assert served.search(corpus["zh"].vector, 1, ALL)[0].content_id == corpus.cid("zh")


def test_a_reader_refused_a_damaged_flush_keeps_serving_what_it_holds(
    tmp_path: Path, corpus: Corpus
) -> None:
    """The API process reloads on another process's flush: a damaged one is a StoreError
    (the dense leg unavailable for that query), not a crash, and what was loaded stays."""
    writer = FaissDenseIndex(tmp_path, DIM, MODEL)
    writer.upsert(corpus.all())
    writer.flush()
    reader = FaissDenseIndex(tmp_path, DIM, MODEL)
    writer.delete([corpus.cid("zh")])
    writer.flush()
    DAMAGE["index file truncated"](tmp_path)
    with pytest.raises(StoreError, match=r"ragline repair --rebuild dense"):
        reader.refresh()
    assert reader.search(corpus["zh"].vector, 1, ALL)[0].content_id == corpus.cid("zh")


def test_a_damaged_approximate_index_is_trained_again(tmp_path: Path) -> None:
    """The IVF file only speeds up search and is derived from the vectors beside it: when
    it cannot be read the index opens without it and trains a new one when needed."""
    vecs = _clustered(3000, np.random.default_rng(5))
    writer = FaissDenseIndex(tmp_path, DIM, MODEL, kind="ivf")
    writer.upsert(_indexed(vecs))
    writer.flush()
    for path in tmp_path.glob("dense-*.ivf"):
        _truncate(path)
    reader = FaissDenseIndex(tmp_path, DIM, MODEL, kind="ivf")
    assert reader._ivf is None
    assert reader.search(vecs[7], 1, ALL)[0].content_id == _indexed(vecs)[7].chunk.content_id
    assert reader._ivf is not None


# A reader process (what `ragline serve` workers are) that maps the flushed file, sees it
# damaged in place under its mapping, keeps answering and picks up a rebuilt index.
_MAPPED_READER = """
import json, sys
from pathlib import Path

import numpy as np

sys.path.insert(0, sys.argv[4])
from store_cases import DIM, MODEL, make_chunk

from core.errors import StoreError
from core.types import QueryFilter
from indexing.protocols import IndexedChunk
from indexing.stores.faiss_dense import FaissDenseIndex

directory, how, vecs = Path(sys.argv[1]), sys.argv[2], np.load(sys.argv[3])
ALL = QueryFilter(access_tokens=None)
out = {}
reader = FaissDenseIndex(directory, DIM, MODEL, mmap=True)
out["before"] = reader.search(vecs[7], 1, ALL)[0].content_id
path = next(directory.glob("dense-*.faiss"))
size = path.stat().st_size
with path.open("r+b") as fh:
    if how == "empty":
        fh.truncate(0)
    elif how == "half":
        fh.truncate(size // 2)
    else:  # zeros over the middle, the size unchanged
        fh.seek(size // 4)
        fh.write(bytes(size // 2))
out["noticed"] = reader.changed_on_disk()
for attempt in ("search", "again"):
    try:
        out[attempt] = len(reader.search(vecs[7], 5, ALL))
    except StoreError as exc:
        out[attempt] = str(exc)
out["damage"], out["lost"] = reader.damage, reader.lost
# `ragline repair --rebuild dense`: the directory set aside, a new index flushed.
directory.rename(directory.with_name("aside"))
fresh = FaissDenseIndex(directory, DIM, MODEL)
fresh.upsert([IndexedChunk(make_chunk(f"k{i}", ""), v) for i, v in enumerate(vecs)])
fresh.flush()
out["changed"] = reader.changed_on_disk()
out["reloaded"] = reader.refresh()
out["after"] = reader.search(vecs[7], 1, ALL)[0].content_id
out["damage_after"], out["lost_after"] = reader.damage, reader.lost
print(json.dumps(out))
"""


@pytest.mark.parametrize("how", ["empty", "half", "zeroed"])
def test_a_mapped_file_damaged_in_place_never_ends_the_reader(tmp_path: Path, how: str) -> None:
    """Truncating the FAISS file under a running `ragline serve` ended its workers: FAISS
    read the mapped pages past the new end (SIGBUS), and the worker started in its place
    refused the damaged file, which stopped the server. The reader notices the change
    (one stat), drops the mapping before FAISS reads it, and answers: a search refused
    with the command that rebuilds the index (or, where the file still loads, from what
    it holds now), until the rebuilt index loads."""
    import subprocess
    import sys

    vecs = _clustered(3000, np.random.default_rng(5))  # ~400 KB: many pages to lose
    directory = tmp_path / "dense"
    writer = FaissDenseIndex(directory, DIM, MODEL)
    writer.upsert(_indexed(vecs))
    writer.flush()
    np.save(tmp_path / "vecs.npy", vecs)
    here = Path(__file__).parent
    args = [str(directory), how, str(tmp_path / "vecs.npy"), str(here)]
    done = subprocess.run(
        [sys.executable, "-c", _MAPPED_READER, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=here.parent.parent,
    )
    assert done.returncode == 0, f"reader ended with {done.returncode}: {done.stderr[-2000:]}"
    out = json.loads(done.stdout.strip().splitlines()[-1])
    cid = _indexed(vecs)[7].chunk.content_id
    assert out["before"] == cid and out["noticed"] is True
    if how == "zeroed":  # still a readable file: loaded again, whatever it holds now
        assert out["search"] == out["again"] == 5 and out["lost"] is False
    else:
        for attempt in ("search", "again"):
            assert "ragline repair --rebuild dense" in out[attempt], out
        assert out["lost"] is True and out["damage"] == out["search"]
    assert out["changed"] is True and out["reloaded"] is True
    assert out["after"] == cid and out["damage_after"] == "" and out["lost_after"] is False
