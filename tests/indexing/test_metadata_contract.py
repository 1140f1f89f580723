"""Contract of the metadata store (source of truth). Parametrized over backends: the
PostgreSQL backend joins the list when its server is available (see conftest)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from servers import postgres_url
from sqlalchemy import text as sql_text

from core.ids import content_id_for, doc_id_for, version_of
from core.types import Chunk, Document, DocumentVersion
from indexing.migrate import scratch_database
from indexing.protocols import JobRecord, MetadataStore
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


def _stage(
    meta: MetadataStore, doc: Document, content: bytes, n: int = 3, chunked_as: str = "part"
) -> DocumentVersion:
    version = version_of(content)
    chunks = [
        Chunk(
            content_id_for(doc.doc_id, version, i),
            doc.doc_id,
            version,
            i,
            "text",
            f"{content.decode()} {chunked_as} {i}",
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


def test_serve_check_returns_every_field_as_staged(meta: MetadataStore) -> None:
    # SQLite hands the serve-check's rows back as one JSON value: text that JSON escapes,
    # a date, a float, a table and an empty field must come back exactly as they went in.
    doc = replace(
        _doc("every-field.md", frozenset({"hr", "finance"})),
        department="hr",
        source_trust=0.37,
        modified=date(2024, 2, 29),
    )
    version = version_of(b"every field")
    texts = ['He said "no" \\ 不可以.\nLine two\ttab \u2028 end', ""]
    chunks = [
        replace(
            Chunk(
                content_id_for(doc.doc_id, version, i),
                doc.doc_id,
                version,
                i,
                "table" if i == 0 else "text",
                text,
                3,
                4,
                10,
                12,
                doc.source,
                doc.title,
                doc.doc_type,
                ("Chapter 1", 'Pay "bands"'),
                acl_tags=doc.acl_tags,
                department=doc.department,
                source_trust=doc.source_trust,
                modified=doc.modified,
                table_id="t1" if i == 0 else "",
                summary="résumé" if i == 0 else "",
                entities=("Alice", "北京") if i == 0 else (),
                line_map=((3, 10, 10), (4, 0, 0)) if i == 0 else (),
            ),
            table_header=("Grade", "Pay / Year") if i == 0 else (),
            table_rows=(("A", "1,000"), ("B", "")) if i == 0 else (),
        )
        for i, text in enumerate(texts)
    ]
    meta.stage_version(
        doc,
        DocumentVersion(doc.doc_id, version, "pending", 2, 2),
        chunks,
        np.eye(2, 8, dtype=np.float32),
        STORES,
    )
    _finish(meta)
    meta.promote_ready()
    served = meta.serving([c.content_id for c in chunks] + ["unknown-id"])
    assert served == {c.content_id: c for c in chunks}


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


def test_versions_needed_are_those_of_live_documents_and_jobs_on_their_way(
    meta: MetadataStore,
) -> None:
    """Uploads' bytes are content-addressed: what decides whether a version's bytes may
    go. Superseded versions are needed (old answers cite them); a deleted document's are
    not, unless another live document or a job on its way has the same bytes."""
    on_the_way = ("queued", "parsing", "indexing")
    doc, other = _doc("g.md"), _doc("h.md")
    v1 = _stage(meta, doc, b"first")
    _finish(meta)
    meta.promote_ready()
    v2 = _stage(meta, doc, b"second")  # pending
    shared = _stage(meta, other, b"first")  # the same bytes as v1, in another document
    every = {v1.version, v2.version, "f" * 32}
    assert meta.versions_needed(every, on_the_way) == {v1.version, v2.version}
    _finish(meta)
    meta.promote_ready()
    assert meta.versions_needed(every, on_the_way) == {v1.version, v2.version}  # superseded
    assert meta.delete_document(doc.doc_id, STORES)
    assert meta.versions_needed(every, on_the_way) == {shared.version}  # == v1's bytes
    assert meta.delete_document(other.doc_id, STORES)
    assert meta.versions_needed(every, on_the_way) == set()
    meta.create_job(JobRecord(job_id="up", kind="ingest", state="parsing", version=v2.version))
    meta.create_job(JobRecord(job_id="old", kind="ingest", state="failed", version=v1.version))
    assert meta.versions_needed(every, on_the_way) == {v2.version}
    assert meta.versions_needed(every, on_the_way, except_job="up") == set()
    assert meta.versions_needed(set(), on_the_way) == set()
    many = {f"{i:032x}" for i in range(5000)} | {v2.version}  # in batches (parameter limits)
    assert meta.versions_needed(many, on_the_way) == {v2.version}


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


def test_a_version_chunked_anew_is_served_with_its_new_rows(meta: MetadataStore) -> None:
    # The same file chunked again (new chunking settings): the same content_ids, new rows.
    # The serve-check must not serve what it read of the old rows.
    doc = _doc("g.md")
    v = _stage(meta, doc, b"body")
    _finish(meta)
    meta.promote_ready()
    ids = meta.version_content_ids(doc.doc_id, v.version)
    assert meta.serving(ids)[ids[0]].text == "body part 0"
    assert meta.serving(ids)[ids[0]].text == "body part 0"  # read again, now remembered
    _stage(meta, doc, b"body", chunked_as="piece")
    assert meta.serving(ids) == {}  # staged again: not served until every store has it
    _finish(meta)
    meta.promote_ready()
    assert meta.version_content_ids(doc.doc_id, v.version) == ids
    served = meta.serving(ids)
    assert [served[i].text for i in ids] == [f"body piece {i}" for i in range(3)]


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
    # One trace, or the answers whose payload holds a text (a document id), before the limit.
    assert [r.trace_id for r in meta.query_log(trace_id="t2", limit=1)] == ["t2"]
    assert [r.trace_id for r in meta.query_log(mentions='"c1"', limit=1)] == ["t1"]
    assert meta.query_log(mentions="%") == []  # a pattern character is only itself


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


def test_update_document_changes_served_metadata_and_enqueues_meta_entries(
    meta: MetadataStore,
) -> None:
    doc = _doc("m.md")
    v1 = _stage(meta, doc, b"meta one")
    _finish(meta)
    meta.promote_ready()
    v2 = _stage(meta, doc, b"meta two")  # pending: gets its own entry
    ids = meta.version_content_ids(doc.doc_id, v1.version)
    # Served once before the change: what the serve-check remembers of a row must not
    # outlive the row.
    assert meta.serving(ids)[ids[0]].acl_tags == frozenset()
    tightened = replace(
        doc,
        title="Salaries",
        acl_tags=frozenset({"hr"}),
        department="hr",
        source_trust=0.5,
        modified=date(2025, 1, 2),
        source="file:///elsewhere",  # the source is the identity: never changed here
    )
    assert meta.update_document(tightened, STORES)
    got = meta.document(doc.doc_id)
    assert got == replace(tightened, source=doc.source)
    served = meta.serving(ids)[ids[0]]  # the truth serves the new ACL at once
    assert served.acl_tags == frozenset({"hr"}) and served.title == "Salaries"
    assert served.department == "hr" and served.modified == date(2025, 1, 2)
    for store in STORES:
        entries = [(e.op, e.version) for e in meta.pending(store, 100) if e.op == "meta"]
        assert sorted(entries) == sorted([("meta", v1.version), ("meta", v2.version)])
    assert meta.delete_document(doc.doc_id, STORES)
    assert meta.serving(ids) == {}
    assert not meta.update_document(tightened, STORES)
    assert not meta.update_document(_doc("never-staged.md"), STORES)


def test_freshness_lineage_job_counts_and_alert_events(meta: MetadataStore) -> None:
    from datetime import UTC, datetime, timedelta

    from indexing.protocols import AlertEventRecord, JobRecord

    assert meta.oldest_unsearchable() is None
    doc = _doc("f.md")
    v = _stage(meta, doc, b"fresh")
    staged = meta.oldest_unsearchable()
    assert staged is not None and staged == meta.version_times(doc.doc_id)[v.version][0]
    _finish(meta)
    meta.promote_ready()
    assert meta.oldest_unsearchable() is None
    assert meta.version_lineage(doc.doc_id, v.version) == {}  # staged without lineage
    assert meta.version_lineage(doc.doc_id, "nope") == {}

    for i, state in enumerate(("queued", "queued", "failed")):
        meta.create_job(JobRecord(job_id=f"j{i}", kind="ingest", state=state))
    assert meta.job_counts() == {"queued": 2, "failed": 1}

    t0 = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    meta.record_alert_event(
        AlertEventRecord(
            "hit_rate",
            "firing",
            t0,
            severity="warning",
            value=0.5,
            threshold=0.75,
            message="low",
            detail={"content_ids": ["c1"]},
        )
    )
    meta.record_alert_event(AlertEventRecord("hit_rate", "recovered", t0 + timedelta(seconds=5)))
    events = meta.alert_events()
    assert [e.event for e in events] == ["recovered", "firing"]  # newest first
    assert events[1].detail == {"content_ids": ["c1"]} and events[1].value == 0.5
    assert [e.event for e in meta.alert_events(since=t0 + timedelta(seconds=1))] == ["recovered"]
    assert [e.event for e in meta.alert_events(until=t0 + timedelta(seconds=1))] == ["firing"]


def test_an_upload_key_can_hold_several_documents(meta: MetadataStore) -> None:
    """One upload key, one document per writer who could not see the others there."""
    source = "upload:plan.md"
    first = Document(doc_id_for(source), source, "Plan", "markdown", frozenset({"alpha"}))
    second = Document("0123456789abcdef", source, "Plan", "markdown")
    _stage(meta, first, b"alpha's plan")
    _stage(meta, second, b"someone else's plan")
    _finish(meta)
    assert [d.doc_id for d in meta.documents_at(source)] == sorted(
        [first.doc_id, "0123456789abcdef"]
    )
    assert meta.delete_document(second.doc_id, STORES)
    assert [d.doc_id for d in meta.documents_at(source)] == [first.doc_id]
    assert meta.documents_at("upload:other.md") == []


def test_deployment_secret_is_made_once_and_kept(meta: MetadataStore) -> None:
    a = meta.deployment_secret("upload-doc-ids")
    assert len(a) == 64 and meta.deployment_secret("upload-doc-ids") == a
    assert meta.deployment_secret("other") != a


def _old_file(tmp_path: Path, *statements: str) -> str:
    """An embedded file as an earlier version made it: these statements, nothing else."""
    from sqlalchemy import create_engine

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        for statement in statements:
            conn.exec_driver_sql(statement)
    engine.dispose()
    return url


def test_an_embedded_file_from_before_keeps_its_rows_and_loses_the_unique_key(
    tmp_path: Path,
) -> None:
    """Embedded files are not migrated by Alembic: the store drops the old UNIQUE on
    documents.source itself, once, keeping every row."""
    from sqlalchemy import inspect

    url = _old_file(
        tmp_path,
        "CREATE TABLE documents (doc_id VARCHAR(32) PRIMARY KEY, source TEXT NOT NULL "
        "UNIQUE, title TEXT NOT NULL, doc_type VARCHAR(32) NOT NULL, acl_tags TEXT NOT "
        "NULL, department VARCHAR(128) NOT NULL, source_trust FLOAT NOT NULL, modified "
        "DATE, deleted BOOLEAN NOT NULL, updated_at DATETIME NOT NULL)",
        "INSERT INTO documents VALUES ('abc', 'upload:x.md', 'X', 'markdown', "
        "'[\"alpha\"]', '', 1.0, NULL, 0, '2026-01-01 00:00:00')",
    )
    store = SqlMetadataStore(url)
    try:
        assert inspect(store.engine).get_unique_constraints("documents") == []
        (old,) = store.documents_at("upload:x.md")
        assert old.doc_id == "abc" and old.acl_tags == frozenset({"alpha"})
        assert not old.title_stated  # a column added since: the title counts as parsed
        _stage(store, Document("def", "upload:x.md", "X", "markdown"), b"another")
        assert len(store.documents_at("upload:x.md")) == 2
    finally:
        store.close()
    SqlMetadataStore(url).close()  # a second open finds nothing to do


def test_an_embedded_file_from_before_gains_the_columns_added_since(tmp_path: Path) -> None:
    """Uploads' bytes kept before their accepted time was recorded: the column is added
    (empty), the rows stay, and they count as accepted long ago."""
    from datetime import UTC, datetime

    from sqlalchemy import inspect

    from indexing.stores.sql_originals import SqlOriginals

    url = _old_file(
        tmp_path,
        "CREATE TABLE original_parts (name VARCHAR(80) NOT NULL, part INTEGER NOT NULL, "
        "data BLOB NOT NULL, PRIMARY KEY (name, part))",
        "INSERT INTO original_parts VALUES ('ab12.md', 0, x'6869')",
    )
    store = SqlMetadataStore(url)
    try:
        columns = {c["name"] for c in inspect(store.engine).get_columns("original_parts")}
        assert columns == {"name", "part", "data", "accepted_at"}
        originals = SqlOriginals(store.engine)
        assert originals.names(datetime(2000, 1, 1, tzinfo=UTC)) == ["ab12.md"]
        assert originals.fetch("ab12.md", tmp_path / "got")
        assert (tmp_path / "got").read_bytes() == b"hi"
    finally:
        store.close()
    SqlMetadataStore(url).close()  # a second open finds nothing to do


def test_guarded_writes_refuse_a_document_that_changed(meta: MetadataStore) -> None:
    """`expect`: staging and metadata updates decided on a document that is no longer
    the live one raise DocumentChanged and write nothing (the ingest then decides again)."""
    from dataclasses import replace

    from core.errors import DocumentChanged
    from indexing.protocols import Expect

    doc = _doc("guarded.md", frozenset({"alpha"}))
    with pytest.raises(DocumentChanged):  # expected to exist: it does not
        meta.stage_version(
            doc,
            DocumentVersion(doc.doc_id, "v0", "pending", 0, 0),
            [],
            np.zeros((0, 8)),
            STORES,
            None,
            Expect(doc),
        )
    assert meta.document(doc.doc_id) is None and meta.versions(doc.doc_id) == []
    _stage(meta, doc, b"first")
    live = meta.document(doc.doc_id)
    assert live == doc
    tightened = replace(doc, acl_tags=frozenset({"hr"}))
    assert meta.update_document(tightened, STORES, Expect(live))
    with pytest.raises(DocumentChanged):  # decided on the alpha-tagged one
        meta.update_document(replace(doc, title="Reverted"), STORES, Expect(live))
    with pytest.raises(DocumentChanged):
        meta.stage_version(
            doc,
            DocumentVersion(doc.doc_id, "v2", "pending", 0, 0),
            [],
            np.zeros((0, 8)),
            STORES,
            None,
            Expect(live),
        )
    assert meta.document(doc.doc_id) == tightened
    assert [v.version for v in meta.versions(doc.doc_id)] == [version_of(b"first")]


def test_the_writer_lock_excludes_a_second_store_on_the_same_database(
    meta: MetadataStore,
) -> None:
    """Two processes (here: two store instances with their own connections) never apply
    the outbox at once: the second writer waits until the first lets go."""
    other = SqlMetadataStore(meta.url)  # type: ignore[attr-defined]
    trying, acquired = threading.Event(), threading.Event()

    def second_writer() -> None:
        trying.set()
        with other.writer_lock():
            acquired.set()

    try:
        with meta.writer_lock():
            thread = threading.Thread(target=second_writer, daemon=True)
            thread.start()
            assert trying.wait(5)
            assert not acquired.wait(0.5), "the second writer got in while the first held it"
        assert acquired.wait(10), "the second writer never got the lock after it was freed"
        thread.join(5)
        with meta.writer_lock():  # and it was released again
            pass
    finally:
        other.close()


def test_a_role_has_one_holder_until_it_closes(meta: MetadataStore) -> None:
    """`serve --workers N`: one process sends the alerts. The first store to claim a role
    holds it (and keeps holding it); another on the same database does not get it until
    the holder closes; other roles are independent."""
    other = SqlMetadataStore(meta.url)  # type: ignore[attr-defined]
    try:
        assert meta.claim("alerts")
        assert meta.claim("alerts")  # still held
        assert not other.claim("alerts")
        assert other.claim("something-else")
        meta.close()  # the holder's process ends
        assert other.claim("alerts")
    finally:
        other.close()


def test_a_gap_asked_again_is_counted_with_both_roles(meta: MetadataStore) -> None:
    misses = [{"doc_id": "d1", "title": "Handbook", "coverage": 0.2}]
    first = meta.record_gap("k1", "vpn setup", "VPN setup?", ["ops"], misses, "not covered", 0.2)
    again = meta.record_gap("k1", "vpn setup", "How is VPN set up?", ["hr"], [], "not covered", 0.1)
    assert (first.count, first.roles, first.near_misses) == (1, ("ops",), tuple(misses))
    assert (again.count, again.roles, again.question) == (2, ("hr", "ops"), "How is VPN set up?")
    assert again.first_at == first.first_at and again.normalised == "vpn setup"
    (stored,) = meta.gaps()
    assert stored == again
    meta.close_gap("k1", "d2")
    reopened = meta.record_gap("k1", "vpn setup", "VPN?", ["ops"], [], "not covered", 0.0)
    assert (reopened.status, reopened.closed_by, reopened.count) == ("open", "", 3)


def test_a_role_held_on_a_dropped_connection_passes_on(meta: MetadataStore) -> None:
    """PostgreSQL: the role lives with its holder's connection. When the server drops it
    (a restart, a killed backend), another store takes the role, and the first learns it
    no longer holds it instead of believing it still does."""
    if not meta.url.startswith("postgresql"):  # type: ignore[attr-defined]
        pytest.skip("a SQLite role is a flock held by the process itself")
    other = SqlMetadataStore(meta.url)  # type: ignore[attr-defined]
    try:
        assert meta.claim("alerts")
        held = meta._roles["alerts"].conn  # type: ignore[attr-defined]
        pid = held.connection.dbapi_connection.info.backend_pid
        with other.engine.connect() as conn:
            conn.execute(sql_text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        assert other.claim("alerts")
        assert not meta.claim("alerts")
    finally:
        other.close()
