"""The four-store write with real servers: PostgreSQL is the truth, FAISS, Elasticsearch
and Neo4j converge on it through the outbox, whatever fails in between.

- a server goes away in the middle of a batch (its TCP proxy is switched off), comes back,
  the appliers run again: zero divergence and every document searchable in every store;
- a `ragline sync` process is SIGKILLed in the middle of a batch: rerun, no duplicates in
  any store, nothing lost;
- updates and deletes: no stale hit in any store.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DIM, Production
from sqlalchemy import func, select

from core.ids import content_id_for, doc_id_for, version_of
from core.types import Chunk, Document, DocumentVersion, QueryFilter
from indexing.models import OutboxRow
from indexing.protocols import IndexedChunk
from indexing.stores.sql_metadata import SqlMetadataStore
from indexing.sync import OutboxApplier, check, repair

pytestmark = pytest.mark.integration
ALL = QueryFilter(access_tokens=None)
STORES = ("dense", "keyword", "graph")


def stage(meta: SqlMetadataStore, i: int, revision: str = "a", n: int = 3) -> tuple[str, str]:
    """Document i, with a marker word and an error code of its own in every chunk."""
    source = f"file:///fault/doc{i}.txt"
    doc = Document(doc_id_for(source), source, f"doc {i}", "text")
    body = f"marker{i}{revision} 第{i}号文档 ERR-{i:04d}{revision.upper()}"
    version = version_of(body.encode())
    chunks = [
        Chunk(
            content_id_for(doc.doc_id, version, j),
            doc.doc_id,
            version,
            j,
            "text",
            f"{body} part{j}",
            1,
            1,
            1,
            1,
            source,
            doc.title,
            "text",
            section_path=(f"第{j + 1}条",),
        )
        for j in range(n)
    ]
    rng = np.random.default_rng(i * 31 + len(revision))
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    meta.stage_version(
        doc, DocumentVersion(doc.doc_id, version, "pending", n, 1), chunks, vectors, STORES
    )
    return doc.doc_id, version


def assert_converged(prod: Production) -> None:
    found = check(prod.meta, prod.stores)
    assert all(d.ok for d in found), [(d.store, len(d.missing), len(d.extra)) for d in found]
    assert not prod.meta.pending_ids()


def assert_searchable(prod: Production, docs: list[int], revision: str = "a") -> None:
    serving = prod.meta.serving_ids()
    for i in docs:
        kw = {h.content_id for h in prod.es.search(f"marker{i}{revision}", 10, ALL)}
        assert len(kw) == 3 and kw <= serving, i
        graph = {h.content_id for h in prod.neo.search([f"ERR-{i:04d}{revision}"], 10, ALL)}
        assert kw <= graph <= serving, i
        item = prod.meta.items(sorted(kw))[0]
        dense = prod.dense.search(item.vector, 1, ALL)
        assert dense[0].content_id == item.chunk.content_id


def no_duplicates(prod: Production) -> None:
    es_count = prod.es._es.call("POST", f"/{prod.es.alias}/_count")["count"]
    assert es_count == len(prod.es.content_ids())
    rows = prod.neo._read(
        "MATCH (c:Chunk {ns: $ns}) RETURN count(c) AS n, count(DISTINCT c.content_id) AS d"
    )
    assert rows[0]["n"] == rows[0]["d"]
    assert int(prod.dense._index.ntotal) == len(prod.dense.content_ids())


@pytest.mark.parametrize("victim", ["keyword", "graph"])
def test_server_down_mid_batch_then_back_converges(production: Production, victim: str) -> None:
    prod = production
    applier = OutboxApplier(prod.meta, prod.stores, batch=5)
    first = list(range(10))
    for i in first:
        stage(prod.meta, i)
    applier.run()
    second = list(range(10, 25))
    for i in second[:5]:
        stage(prod.meta, i)
    prod.proxies[victim].down()  # the server vanishes in the middle of the batch
    for i in second[5:]:
        stage(prod.meta, i)
    report = applier.run()
    assert victim in report.errors and "unavailable" in report.errors[victim]
    # Nothing of the second batch is served while one store lacks it.
    for i in second:
        assert prod.meta.current_version(doc_id_for(f"file:///fault/doc{i}.txt")) is None
    failed = prod.meta.pending(victim, 1)[0]
    assert failed.attempts >= 1 and failed.last_error
    prod.proxies[victim].up()
    report = applier.run()
    assert not report.errors and len(report.promoted) == len(second)
    assert_converged(prod)
    assert_searchable(prod, first + second)
    no_duplicates(prod)


def _outbox_done(meta: SqlMetadataStore, store: str) -> tuple[int, int]:
    with meta.engine.connect() as conn:
        total = conn.scalar(select(func.count()).where(OutboxRow.store == store))
        done = conn.scalar(
            select(func.count()).where(OutboxRow.store == store, OutboxRow.done.is_(True))
        )
    return int(done or 0), int(total or 0)


def _ragline(
    prod: Production, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    env = {**os.environ, **prod.env, **(env or {})}
    cmd = [str(Path(sys.executable).with_name("ragline")), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.slow
def test_applier_killed_mid_batch_loses_and_duplicates_nothing(
    production: Production,
) -> None:
    prod = production
    docs = list(range(120))
    for i in docs:
        stage(prod.meta, i)
    # Runs of 30 chunks: the graph gets a batch in 12 writes, so there is a moment when
    # it holds part of it (one write of all 360 chunks would leave no such window).
    proc = _ragline(prod, "sync", env={"RAGLINE_BACKENDS__SYNC_GROUP_CHUNKS": "30"})
    deadline = time.monotonic() + 120
    killed_at: dict[str, tuple[int, int]] = {}
    count = "MATCH (c:Chunk {ns: $ns}) RETURN count(c) AS n"
    while time.monotonic() < deadline and proc.poll() is None:
        # Kill while the graph (applied last) holds part of the batch: entries applied to
        # a store but not yet marked done, the window a crash makes appliers redo.
        if 0 < prod.neo._read(count)[0]["n"] < 3 * len(docs):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed_at = {s: _outbox_done(prod.meta, s) for s in STORES}
            break
        time.sleep(0.02)
    assert killed_at, f"sync finished before it could be killed: {proc.communicate()[0]!r}"
    done, total = killed_at["graph"]
    assert done < total
    assert proc.returncode == -signal.SIGKILL
    assert not prod.meta.serving_ids() or len(prod.meta.serving_ids()) < 3 * len(docs)
    rerun = _ragline(prod, "sync")
    out = rerun.communicate(timeout=300)[0].decode()
    assert rerun.returncode == 0, out
    prod.reopen_dense()
    assert len(prod.meta.serving_ids()) == 3 * len(docs)
    assert_converged(prod)
    no_duplicates(prod)
    assert_searchable(prod, docs[::17])
    check_cmd = _ragline(prod, "check")
    out = check_cmd.communicate(timeout=120)[0].decode()
    assert check_cmd.returncode == 0 and out.count(" ok") == 3, out


def test_updates_and_deletes_leave_no_stale_hit(production: Production) -> None:
    prod = production
    applier = OutboxApplier(prod.meta, prod.stores)
    docs = list(range(8))
    for i in docs:
        stage(prod.meta, i, "a")
    applier.run()
    for i in docs[:4]:
        stage(prod.meta, i, "b")  # a new version of the first half
    for i in docs[4:6]:
        assert prod.meta.delete_document(doc_id_for(f"file:///fault/doc{i}.txt"), STORES)
    report = applier.run()
    assert not report.errors
    assert_converged(prod)
    for i in docs[:6]:  # updated or deleted: the old text is nowhere
        assert prod.es.search(f"marker{i}a", 10, ALL) == []
        assert prod.neo.search([f"ERR-{i:04d}a"], 10, ALL) == []
    assert_searchable(prod, docs[:4], "b")
    assert_searchable(prod, docs[6:], "a")
    for i in docs[4:6]:
        assert prod.es.search(f"marker{i}b", 10, ALL) == []
    # The graph keeps the superseded text as history of the clause, outside search.
    doc0 = doc_id_for("file:///fault/doc0.txt")
    history = prod.neo.clause_history(doc0, "第1条")
    assert [len(texts) for _v, texts in history] == [1, 1]
    assert "marker0a" in history[0][1][0] and "marker0b" in history[1][1][0]
    deleted = doc_id_for("file:///fault/doc4.txt")
    assert prod.neo.clause_history(deleted, "第1条") == []
    no_duplicates(prod)


def test_repair_fixes_lost_writes_and_leftovers_on_the_servers(production: Production) -> None:
    prod = production
    applier = OutboxApplier(prod.meta, prod.stores)
    for i in range(4):
        stage(prod.meta, i)
    applier.run()
    serving = sorted(prod.meta.serving_ids())
    prod.es.delete(serving[:2])  # lost writes
    ghost = prod.meta.items([serving[0]])[0]
    stale = Chunk(
        **{**{f: getattr(ghost.chunk, f) for f in Chunk.__slots__}, "content_id": "f" * 32}
    )  # type: ignore[attr-defined]
    prod.neo.upsert([IndexedChunk(stale, ghost.vector)])  # a leftover
    found = {d.store: d for d in check(prod.meta, prod.stores)}
    assert found["keyword"].missing == set(serving[:2]) and found["graph"].extra == {"f" * 32}
    repair(prod.meta, prod.stores)
    assert_converged(prod)
    assert_searchable(prod, list(range(4)))
