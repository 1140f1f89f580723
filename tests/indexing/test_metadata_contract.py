"""Contract of the metadata store (source of truth). Parametrized over backends: the
PostgreSQL backend joins the list when its server is available (see conftest)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from servers import postgres_url

from core.ids import content_id_for, doc_id_for, version_of
from core.types import Chunk, Document, DocumentVersion
from indexing.migrate import scratch_database
from indexing.protocols import MetadataStore
from indexing.stores.sql_metadata import SqlMetadataStore

STORES = ("dense", "keyword", "graph")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def meta(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetadataStore]:
    if request.param == "sqlite":
        store = SqlMetadataStore(f"sqlite:///{tmp_path / 'meta.db'}")
        yield store
        store.close()
        return
    # A fresh database per test, migrated by the store itself (Alembic), then dropped.
    with scratch_database(postgres_url()) as url:
        store = SqlMetadataStore(url)
        yield store
        store.close()


def _doc(name: str, tags: frozenset[str] = frozenset()) -> Document:
    source = f"file:///docs/{name}"
    return Document(doc_id_for(source), source, name, "markdown", acl_tags=tags)


def _stage(meta: MetadataStore, doc: Document, content: bytes, n: int = 3) -> DocumentVersion:
    version = version_of(content)
    chunks = [
        Chunk(
            content_id_for(doc.doc_id, version, i),
            doc.doc_id,
            version,
            i,
            "text",
            f"{content.decode()} part {i}",
            i + 1,
            i + 1,
            1,
            2,
            doc.source,
            doc.title,
            doc.doc_type,
            ("A", "B"),
            entities=("e1",),
            line_map=((i + 1, 0, 0), (i + 1, 1, 2)) if i == 0 else (),
        )
        for i in range(n)
    ]
    vectors = np.eye(n, 8, dtype=np.float32)
    v = DocumentVersion(doc.doc_id, version, "pending", n, n)
    meta.stage_version(doc, v, chunks, vectors, STORES)
    return v


def _finish(meta: MetadataStore) -> None:
    for store in STORES:
        meta.mark_done([e.id for e in meta.pending(store, 1000)])


def test_staged_version_is_not_served_until_every_store_has_it(meta: MetadataStore) -> None:
    doc = _doc("a.md")
    v = _stage(meta, doc, b"alpha")
    ids = meta.version_content_ids(doc.doc_id, v.version)
    assert len(ids) == 3 and meta.serving(ids) == {}
    assert meta.has_version(doc.doc_id, v.version)
    meta.mark_done([e.id for e in meta.pending("dense")])
    assert meta.promote_ready() == []  # keyword and graph not done yet
    _finish(meta)
    promoted = meta.promote_ready()
    assert [p.version for p in promoted] == [v.version]
    served = meta.serving(ids)
    assert set(served) == set(ids)
    chunk = served[ids[0]]
    assert chunk.section_path == ("A", "B") and chunk.entities == ("e1",)
    # The line map (source lines of each text line) comes back as it went in.
    assert chunk.line_map == ((1, 0, 0), (1, 1, 2))
    assert served[ids[1]].line_map == ()
    assert meta.serving_ids() == set(ids)


def test_new_version_supersedes_and_enqueues_deletes(meta: MetadataStore) -> None:
    doc = _doc("b.md")
    v1 = _stage(meta, doc, b"one")
    _finish(meta)
    meta.promote_ready()
    v2 = _stage(meta, doc, b"two", n=2)
    _finish(meta)
    meta.promote_ready()
    assert meta.current_version(doc.doc_id) == v2.version
    statuses = {v.version: v.status for v in meta.versions(doc.doc_id)}
    assert statuses == {v1.version: "superseded", v2.version: "current"}
    deletes = [e for e in meta.pending("keyword") if e.op == "delete"]
    assert [(e.doc_id, e.version) for e in deletes] == [(doc.doc_id, v1.version)]
    assert meta.serving(meta.version_content_ids(doc.doc_id, v1.version)) == {}
    assert len(meta.serving_ids()) == 2


def test_items_round_trip_vectors(meta: MetadataStore) -> None:
    doc = _doc("c.md", frozenset({"finance"}))
    v = _stage(meta, doc, b"gamma")
    items = meta.version_items(doc.doc_id, v.version)
    assert [i.chunk.ordinal for i in items] == [0, 1, 2]
    assert np.allclose(items[1].vector, np.eye(3, 8, dtype=np.float32)[1])
    assert items[0].chunk.acl_tags == frozenset({"finance"})
    assert {i.chunk.content_id for i in meta.items([items[2].chunk.content_id])} == {
        items[2].chunk.content_id
    }


def test_delete_document_hides_it_and_cancels_pending_upserts(meta: MetadataStore) -> None:
    doc = _doc("d.md")
    v = _stage(meta, doc, b"delta")
    _finish(meta)
    meta.promote_ready()
    v2 = _stage(meta, doc, b"delta2")  # a pending version in flight
    assert meta.delete_document(doc.doc_id, STORES)
    assert not meta.delete_document(doc.doc_id, STORES)
    assert meta.document(doc.doc_id) is None
    assert meta.serving_ids() == set()
    pending = meta.pending("dense", 100)
    assert all(e.op == "delete" for e in pending)
    assert {e.version for e in pending} == {v.version, v2.version}
    assert not meta.has_version(doc.doc_id, v.version)


def test_failures_are_recorded(meta: MetadataStore) -> None:
    doc = _doc("e.md")
    _stage(meta, doc, b"eps")
    entry = meta.pending("graph")[0]
    meta.mark_failed(entry.id, "ServiceUnavailable: neo4j down")
    again = meta.pending("graph")[0]
    assert again.id == entry.id and again.attempts == 1 and "neo4j" in again.last_error


def test_restaging_a_superseded_version_works(meta: MetadataStore) -> None:
    doc = _doc("f.md")
    v1 = _stage(meta, doc, b"first")
    _finish(meta)
    meta.promote_ready()
    _stage(meta, doc, b"second")
    _finish(meta)
    meta.promote_ready()
    _stage(meta, doc, b"first")  # the file was reverted
    _finish(meta)
    meta.promote_ready()
    assert meta.current_version(doc.doc_id) == v1.version
    assert len(meta.serving_ids()) == 3


def test_query_log_reads_back_by_time_and_user(meta: MetadataStore) -> None:
    from datetime import UTC, datetime, timedelta

    before = datetime.now(UTC) - timedelta(seconds=5)
    meta.log_query("t1", "amy", "first?", '{"covered": true, "citations": ["c1"]}')
    meta.log_query("t2", "bob", "second?", '{"covered": false}')
    meta.log_query("t3", "amy", "third?", "not json")
    after = datetime.now(UTC) + timedelta(seconds=5)
    got = meta.query_log(since=before, until=after)
    assert {r.trace_id for r in got} == {"t1", "t2", "t3"}
    assert {r.trace_id for r in meta.query_log(user="amy")} == {"t1", "t3"}
    by_id = {r.trace_id: r for r in got}
    assert by_id["t1"].payload == {"covered": True, "citations": ["c1"]}
    assert by_id["t3"].payload == {}  # a malformed row reads as empty, never fails the read
    assert meta.query_log(since=after) == [] and meta.query_log(until=before) == []
    assert len(meta.query_log(limit=2)) == 2


def test_replace_vectors(meta: MetadataStore) -> None:
    doc = _doc("vec.md")
    v = _stage(meta, doc, b"vectors")
    items = meta.version_items(doc.doc_id, v.version)
    new = np.full(12, 0.5, dtype=np.float32)  # another embedder: another dimension too
    meta.replace_vectors({items[0].chunk.content_id: new})
    again = meta.items([items[0].chunk.content_id, items[1].chunk.content_id])
    by_id = {i.chunk.content_id: i.vector for i in again}
    assert np.allclose(by_id[items[0].chunk.content_id], new)
    assert np.allclose(by_id[items[1].chunk.content_id], items[1].vector)
