"""Outbox appliers, promotion, check and repair, with the real embedded stores and a store
that can be switched off (fault injection: the store is 'down')."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.ids import content_id_for, doc_id_for, version_of
from core.types import Chunk, Document, DocumentVersion, QueryFilter
from indexing.protocols import DerivedStore, IndexedChunk
from indexing.stores.faiss_dense import FaissDenseIndex
from indexing.stores.sql_metadata import SqlMetadataStore
from indexing.stores.sqlite_graph import SqliteGraphStore, chunk_entities
from indexing.stores.sqlite_keyword import SqliteKeywordIndex
from indexing.sync import OutboxApplier, check, repair

DIM = 16


class Switchable:
    """Wraps a real store; while `down`, every write raises like an unreachable server."""

    def __init__(self, inner: DerivedStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.down = False

    def _guard(self) -> None:
        if self.down:
            raise ConnectionError(f"{self.name} is down")

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        self._guard()
        self.inner.upsert(items)

    def delete(self, content_ids: Sequence[str]) -> None:
        self._guard()
        self.inner.delete(content_ids)

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        self._guard()
        self.inner.update_metadata(chunks)

    def content_ids(self) -> set[str]:
        return self.inner.content_ids()

    def metadata_signature(self, chunk: Chunk) -> str:
        return self.inner.metadata_signature(chunk)

    def held_metadata(self) -> dict[str, str]:
        return self.inner.held_metadata()

    def flush(self) -> None:
        self._guard()
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[SqlMetadataStore, dict[str, Switchable]]]:
    db = tmp_path / "r.db"
    meta = SqlMetadataStore(f"sqlite:///{db}")
    stores = {
        "dense": Switchable(FaissDenseIndex(tmp_path / "dense", DIM, "test-model")),
        "keyword": Switchable(SqliteKeywordIndex(db)),
        "graph": Switchable(SqliteGraphStore(db)),
    }
    yield meta, stores
    for s in stores.values():
        s.close()
    meta.close()


def stage(meta: SqlMetadataStore, name: str, text: str, n: int = 2) -> tuple[str, str]:
    source = f"file:///docs/{name}"
    doc = Document(doc_id_for(source), source, name, "text")
    version = version_of(text.encode())
    chunks = [
        Chunk(
            content_id_for(doc.doc_id, version, i),
            doc.doc_id,
            version,
            i,
            "text",
            f"{text} 第{i}段",
            1,
            1,
            1,
            1,
            source,
            name,
            "text",
        )
        for i in range(n)
    ]
    rng = np.random.default_rng(len(text))
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    meta.stage_version(
        doc,
        DocumentVersion(doc.doc_id, version, "pending", n, 1),
        chunks,
        vecs,
        ["dense", "keyword", "graph"],
    )
    return doc.doc_id, version


def test_store_down_keeps_version_invisible_then_converges(env) -> None:  # type: ignore[no-untyped-def]
    meta, stores = env
    applier = OutboxApplier(meta, stores)
    doc_id, v = stage(meta, "a.txt", "零信任架构 zero trust")
    stores["keyword"].down = True
    report = applier.run()
    assert "keyword" in report.errors and not report.promoted
    assert meta.serving_ids() == set()  # half-applied: nothing served
    entry = meta.pending("keyword")[0]
    assert entry.attempts == 1 and "down" in entry.last_error
    stores["keyword"].down = False
    report = applier.run()
    assert not report.errors and len(report.promoted) == 1
    ids = set(meta.version_content_ids(doc_id, v))
    assert meta.serving_ids() == ids
    assert all(d.ok for d in check(meta, stores))
    hits = stores["keyword"].inner.search("零信任", 5, QueryFilter(access_tokens=None))  # type: ignore[attr-defined]
    assert {h.content_id for h in hits} <= ids and hits


def test_update_removes_old_chunks_everywhere(env) -> None:  # type: ignore[no-untyped-def]
    meta, stores = env
    applier = OutboxApplier(meta, stores)
    doc_id, v1 = stage(meta, "b.txt", "旧版本内容 old words")
    applier.run()
    _, v2 = stage(meta, "b.txt", "新版本内容 new words")
    applier.run()
    old = set(meta.version_content_ids(doc_id, v1))
    new = set(meta.version_content_ids(doc_id, v2))
    for s in stores.values():
        assert s.content_ids() == new and not (s.content_ids() & old)


def test_applying_twice_is_idempotent(env) -> None:  # type: ignore[no-untyped-def]
    meta, stores = env
    doc_id, v = stage(meta, "c.txt", "重复 apply twice")
    items = meta.version_items(doc_id, v)
    for s in stores.values():
        s.upsert(items)  # as if a crashed applier had applied it before marking done
    OutboxApplier(meta, stores).run()
    for s in stores.values():
        assert len(s.content_ids()) == 2


def test_check_and_repair_fix_divergence(env) -> None:  # type: ignore[no-untyped-def]
    meta, stores = env
    applier = OutboxApplier(meta, stores)
    stage(meta, "d.txt", "一致性 check repair")
    applier.run()
    victim = sorted(meta.serving_ids())[0]
    stores["dense"].inner.delete([victim])  # lost write
    ghost = meta.items([victim])[0]
    ghost_chunk = Chunk(
        **{
            **{f: getattr(ghost.chunk, f) for f in ghost.chunk.__slots__},  # type: ignore[attr-defined]
            "content_id": "f" * 32,
        }
    )
    stores["graph"].inner.upsert([IndexedChunk(ghost_chunk, ghost.vector)])  # stale leftover
    found = {d.store: d for d in check(meta, stores)}
    assert found["dense"].missing == {victim} and found["graph"].extra == {"f" * 32}
    assert found["keyword"].ok
    repair(meta, stores)
    assert all(d.ok for d in check(meta, stores))


def test_metadata_update_reaches_every_store_in_order(env) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    meta, stores = env
    applier = OutboxApplier(meta, stores)
    doc_id, v = stage(meta, "acl.txt", "salary bands 薪资")
    applier.run()
    nobody = QueryFilter(access_tokens=frozenset({"user:bob"}))
    doc = meta.document(doc_id)
    assert doc is not None
    stores["graph"].down = True  # one store lags: it catches up on the next run
    assert meta.update_document(replace(doc, acl_tags=frozenset({"hr"})), stores)
    report = applier.run()
    assert "graph" in report.errors
    stores["graph"].down = False
    assert not applier.run().errors
    assert all(not meta.pending(name) for name in stores)
    assert stores["keyword"].inner.search("salary", 5, nobody) == []  # type: ignore[attr-defined]
    vec = meta.version_items(doc_id, v)[0].vector
    assert stores["dense"].inner.search(vec, 5, nobody) == []  # type: ignore[attr-defined]
    hr = QueryFilter(access_tokens=frozenset({"hr"}))
    assert stores["keyword"].inner.search("salary", 5, hr)  # type: ignore[attr-defined]
    assert all(d.ok for d in check(meta, stores))


@pytest.fixture(params=["embedded", pytest.param("production", marks=pytest.mark.integration)])
def any_env(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[SqlMetadataStore, dict[str, DerivedStore]]]:
    """The three derived stores and the truth, embedded or on the production servers."""
    if request.param == "embedded":
        db = tmp_path / "r.db"
        meta = SqlMetadataStore(f"sqlite:///{db}")
        stores: dict[str, DerivedStore] = {
            "dense": FaissDenseIndex(tmp_path / "dense", DIM, "test-model"),
            "keyword": SqliteKeywordIndex(db),
            "graph": SqliteGraphStore(db),
        }
        yield meta, stores
        for s in stores.values():
            s.close()
        meta.close()
        return
    from servers import elastic_dense, elastic_keyword, neo4j_graph, postgres_url

    from indexing.migrate import scratch_database

    with scratch_database(postgres_url()) as url:
        meta = SqlMetadataStore(url)
        servers = {
            "dense": elastic_dense(tmp_path, DIM, "test-model"),
            "keyword": elastic_keyword(tmp_path),
            "graph": neo4j_graph(tmp_path),
        }
        try:
            yield meta, dict(servers)
        finally:
            for s in servers.values():
                s.drop()
                s.close()
            meta.close()


def test_check_finds_stale_metadata_and_repair_fixes_it(any_env) -> None:  # type: ignore[no-untyped-def]
    """A metadata update that reached the truth and one store but was lost on the others
    (acknowledged, then gone: a crash, a restored snapshot): `check` names the chunks
    whose ACL/title/... differ from the truth, `repair` rewrites them from the truth."""
    meta, stores = any_env
    applier = OutboxApplier(meta, stores)
    doc_id, v = stage(meta, "pay.txt", "salary band quorvane 93000")
    applier.run()
    assert all(d.ok for d in check(meta, stores))
    ids = frozenset(meta.version_content_ids(doc_id, v))
    doc = meta.document(doc_id)
    assert doc is not None
    tightened = replace(doc, acl_tags=frozenset({"hr"}), title="Pay bands")
    assert meta.update_document(tightened, list(stores))
    # While the entries wait in the outbox the stores are behind, not stale.
    assert all(d.ok for d in check(meta, stores))
    applier.apply_store("keyword")
    for name in ("dense", "graph"):  # acknowledged, never applied
        meta.mark_done([e.id for e in meta.pending(name)])
    found = {d.store: d for d in check(meta, stores)}
    assert found["keyword"].ok
    assert found["dense"].stale == ids and found["graph"].stale == ids
    assert not found["dense"].missing and not found["dense"].extra
    # What that means: the dense store still serves the chunks to someone without "hr"
    # (the truth's serve-time check hides them, but the store's filter fails open).
    nobody = QueryFilter(access_tokens=frozenset({"user:bob"}))
    vec = meta.items(sorted(ids))[0].vector
    stores["dense"].flush()
    assert ids & {h.content_id for h in stores["dense"].search(vec, 10, nobody)}  # type: ignore[attr-defined]

    repaired = {d.store: d for d in repair(meta, stores)}
    assert repaired["dense"].stale == ids
    assert all(d.ok for d in check(meta, stores))
    assert not ids & {h.content_id for h in stores["dense"].search(vec, 10, nobody)}  # type: ignore[attr-defined]
    hr = QueryFilter(access_tokens=frozenset({"hr"}))
    assert ids & {h.content_id for h in stores["dense"].search(vec, 10, hr)}  # type: ignore[attr-defined]


class Counting(Switchable):
    """Counts the writes a store receives; fails the upsert that holds `fail_on`."""

    def __init__(self, inner: DerivedStore) -> None:
        super().__init__(inner)
        self.upserts: list[int] = []
        self.fail_on = ""

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        if self.fail_on and any(i.chunk.doc_id == self.fail_on for i in items):
            raise ConnectionError("bulk rejected")
        self.upserts.append(len(items))
        super().upsert(items)


def test_consecutive_upserts_reach_a_store_as_one_write(env) -> None:  # type: ignore[no-untyped-def]
    """Small documents are applied as one write per run of upserts (bounded by
    group_chunks), deletes keep their place in the order, and a failed run leaves its
    first entry failed and nothing of it marked done."""
    meta, stores = env
    counting = Counting(stores["keyword"].inner)
    stores["keyword"] = counting
    applier = OutboxApplier(meta, stores, group_chunks=5)
    docs = [stage(meta, f"g{i}.txt", f"第{i}号文档 document {i}") for i in range(7)]
    report = applier.run()
    assert not report.errors and len(report.promoted) == 7
    assert sum(counting.upserts) == 7 * 2  # every chunk once
    assert len(counting.upserts) == 3  # 3 + 3 + 1 documents of 2 chunks
    assert max(counting.upserts) <= 6
    stage(meta, "g1.txt", "第1号文档的新版本 new version")  # an upsert then a delete of v1
    stage(meta, "g8.txt", "第8号文档 document 8")
    report = applier.run()
    assert not report.errors
    assert all(d.ok for d in check(meta, stores))
    old = set(meta.version_content_ids(*docs[1]))
    assert not old & counting.content_ids()  # the superseded version's delete applied
    bad = stage(meta, "g9.txt", "第9号文档 document 9")
    stage(meta, "g10.txt", "第10号文档 document 10")
    counting.fail_on = bad[0]
    report = applier.run()
    assert "keyword" in report.errors
    pending = meta.pending("keyword")
    assert pending[0].doc_id == bad[0] and pending[0].attempts == 1
    counting.fail_on = ""
    assert not applier.run().errors
    assert all(d.ok for d in check(meta, stores))


class CountingReads:
    """The metadata store, counting how often each version's items are read."""

    def __init__(self, inner: SqlMetadataStore) -> None:
        self.inner = inner
        self.reads: dict[tuple[str, str], int] = {}

    def version_items(self, doc_id: str, version: str) -> list[IndexedChunk]:
        key = (doc_id, version)
        self.reads[key] = self.reads.get(key, 0) + 1
        return list(self.inner.version_items(doc_id, version))

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def test_a_sync_reads_each_version_once_for_all_stores(env) -> None:  # type: ignore[no-untyped-def]
    """The stores take their pending entries batch by batch in turn, so a version's
    items are read once between them (not once per store); a store that fails leaves
    its entries for the next run while the others go on."""
    meta, stores = env
    counting = CountingReads(meta)
    applier = OutboxApplier(counting, stores, batch=2)  # type: ignore[arg-type]
    docs = [stage(meta, f"r{i}.txt", f"第{i}号文档 document {i}") for i in range(5)]
    report = applier.run()
    assert not report.errors and len(report.promoted) == 5
    assert report.applied == {"dense": 5, "keyword": 5, "graph": 5}
    assert all(counting.reads[d] == 1 for d in docs)
    assert all(d.ok for d in check(meta, stores))
    # One store down: the others apply; it catches up on the next run.
    more = [stage(meta, f"s{i}.txt", f"第{i}号新文档 new {i}") for i in range(3)]
    stores["graph"].down = True
    report = applier.run()
    assert "graph" in report.errors and report.applied["keyword"] == 3
    stores["graph"].down = False
    assert not applier.run().errors
    assert all(d.ok for d in check(meta, stores))
    assert meta.serving_ids() >= set(meta.version_content_ids(*more[0]))


# Damage done to the embedded SQLite stores from outside (a lost write, a crash between two
# tables, an operator's sqlite3), each losing one chunk of the newest document: the rows
# holding the highest ids are the ones SQLite hands out again on the next insert.
_NEWEST_KW = "(SELECT max(id) FROM kw_chunks)"
_NEWEST_G = "(SELECT max(id) FROM g_chunk)"
DAMAGE = {
    "kw_chunks row": ("keyword", f"DELETE FROM kw_chunks WHERE id = {_NEWEST_KW}"),
    "kw_fts row": ("keyword", f"DELETE FROM kw_fts WHERE rowid = {_NEWEST_KW}"),
    "g_chunk row": ("graph", f"DELETE FROM g_chunk WHERE id = {_NEWEST_G}"),
    "g_mentions rows": ("graph", f"DELETE FROM g_mentions WHERE chunk_id = {_NEWEST_G}"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_check_finds_a_lost_row_and_repair_converges(env, tmp_path: Path, damage: str) -> None:  # type: ignore[no-untyped-def]
    """`check` names the chunk whose row is gone (in either table: a chunk without its
    text or its mentions is not found by search), `repair` writes it again over whatever
    the other table still holds for it, and later documents are still applied."""
    meta, stores = env
    applier = OutboxApplier(meta, stores)
    stage(meta, "old.txt", "Kafka brokers 旧文档")
    stage(meta, "new.txt", "Payment Gateway quorvane 新文档")
    applier.run()
    name, sql = DAMAGE[damage]
    table = "kw_chunks" if name == "keyword" else "g_chunk"
    with sqlite3.connect(tmp_path / "r.db") as db:
        victim = db.execute(f"SELECT content_id FROM {table} ORDER BY id DESC").fetchone()[0]
        db.execute(sql)
    found = {d.store: d for d in check(meta, stores)}
    assert found[name].missing == {victim}
    assert all(d.ok for d in found.values() if d.store != name)
    repair(meta, stores)
    repair(meta, stores)  # again: nothing left to do, and no error
    assert all(d.ok for d in check(meta, stores))
    stage(meta, "later.txt", "Kafka quorvane 后来的文档")
    assert not applier.run().errors
    assert all(d.ok for d in check(meta, stores))
    everyone = QueryFilter(access_tokens=None)
    kw = stores["keyword"].inner.search("quorvane", 10, everyone)  # type: ignore[attr-defined]
    assert victim in {h.content_id for h in kw}
    chunk = meta.items([victim])[0].chunk
    assert stores["graph"].inner.entities_of(victim) == chunk_entities(chunk)  # type: ignore[attr-defined]
    with sqlite3.connect(tmp_path / "r.db") as db:
        fts = db.execute("SELECT count(*) FROM kw_fts").fetchone()[0]
        chunks = db.execute("SELECT count(*) FROM kw_chunks").fetchone()[0]
        orphans = db.execute(
            "SELECT count(*) FROM g_mentions WHERE chunk_id NOT IN (SELECT id FROM g_chunk)"
        ).fetchone()[0]
    assert fts == chunks == 6 and orphans == 0


def test_a_delete_not_yet_applied_is_no_divergence(env) -> None:  # type: ignore[no-untyped-def]
    """A delete queued but not applied (a worker stopped) leaves the passages in the
    stores for now: late, not extra; a leftover of no queued delete still is."""
    meta, stores = env
    applier = OutboxApplier(meta, stores)
    doc_id, _ = stage(meta, "gone.txt", "待删除 delete pending")
    applier.run()
    assert meta.delete_document(doc_id, list(stores))
    assert all(d.ok for d in check(meta, stores)), check(meta, stores)
    applier.run()
    assert all(d.ok for d in check(meta, stores))
    assert not any(stores[name].inner.content_ids() for name in stores)
