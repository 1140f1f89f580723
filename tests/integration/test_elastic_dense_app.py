"""The production profile with vectors in Elasticsearch kNN: the whole app on real
PostgreSQL, Elasticsearch and Neo4j, with no index file on the API host. Two app instances
with separate local directories serve the same answers (stateless replicas); an upload
accepted by one is ingested on another and its original served by a third, with no shared
disk; deletes, check/repair and `repair --rebuild dense` work as with FAISS."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from servers import neo4j_auth, postgres_url, scoped_name, server_url

from core.settings import ApiKey, ApiSettings, BackendSettings, Settings
from core.types import Principal
from indexing.migrate import scratch_database
from ragline.api import create_app
from ragline.app import Ragline
from ragline.events import LocalEventBus
from ragline.rebuild import rebuild
from ragline.worker.tasks import TaskContext, ingest_version
from tests.api.conftest import HeldRunner

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
READER = Principal("reader")

DOCS = {
    "travel.md": "# Travel policy\n\nStaff going abroad book economy flights through the "
    "agency portal, at least fourteen days before departure.\n",
    "kitchen.md": "# Office kitchen\n\nThe coffee machine is descaled every Friday by the "
    "facilities team.\n",
}


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    es_url = server_url("RAGLINE_TEST_ES_URL")
    neo_url = server_url("RAGLINE_TEST_NEO4J_URL")
    user, password = neo4j_auth()
    with scratch_database(postgres_url()) as pg:
        backends = BackendSettings(
            keyword="elasticsearch",
            graph="neo4j",
            dense="elasticsearch",
            es_url=es_url,
            es_index=scoped_name(tmp_path, "ragline-app-kw-"),
            es_dense_index=scoped_name(tmp_path, "ragline-app-vec-"),
            neo4j_url=neo_url,
            neo4j_user=user,
            neo4j_password=password,
            neo4j_namespace=scoped_name(tmp_path, "a"),
        )
        s = Settings(
            profile="production", data_dir=tmp_path / "api-1", metadata_url=pg, backends=backends
        )
        try:
            yield s
        finally:
            rag = Ragline(s)
            for store in (rag.stores.keyword, rag.stores.graph, rag.stores.dense):
                store.drop()  # type: ignore[attr-defined]
            rag.close()


def test_vectors_live_in_elasticsearch_and_replicas_share_them(
    settings: Settings, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    first = Ragline(settings)
    try:
        outcomes, _ = first.ingest([docs])
        assert {o.status for o in outcomes} == {"indexed"}
        question = "How early must employees reserve plane tickets for trips overseas?"
        hits = first.search(question, READER).hits
        assert "fourteen days" in hits[0].chunk.text
        assert "dense" in hits[0].ranks  # found by the kNN index, not only by keywords
        assert all(d.ok for d in first.check())
        assert not (settings.data_dir / "dense").exists()  # nothing on this host's disk
    finally:
        first.close()

    # A second API replica: its own (empty) local directory, the same servers.
    replica = Ragline(settings.model_copy(update={"data_dir": tmp_path / "api-2"}))
    try:
        again = replica.search(question, READER).hits
        assert [h.chunk.content_id for h in again] == [h.chunk.content_id for h in hits]
        travel = next(o.doc_id for o in outcomes if o.path.endswith("travel.md"))
        assert replica.delete(travel)
        replica.sync()
        gone = replica.search(question, READER).hits
        assert all(h.chunk.doc_id != travel for h in gone)
        assert all(d.ok for d in replica.check())
    finally:
        replica.close()


def test_an_upload_to_one_host_is_ingested_on_another_and_served_by_a_third(
    settings: Settings, tmp_path: Path
) -> None:
    key = {"X-API-Key": "writer-key"}
    api = ApiSettings(keys=[ApiKey(key="writer-key", user="wendy", can_write=True)])
    host = {n: settings.model_copy(update={"data_dir": tmp_path / n, "api": api}) for n in "abc"}
    body = DOCS["travel.md"].encode()
    queue = HeldRunner()
    with TestClient(create_app(host["a"], runner=queue)) as first:
        r = first.post("/v1/documents", headers=key, files={"file": ("travel.md", body)})
        assert r.status_code == 202, r.text
        doc_id, job_id = r.json()["doc_id"], r.json()["job_id"]
    [(task, queued_job, kwargs)] = queue.tasks
    assert (task, queued_job) == ("ingest", job_id)
    # The worker host has never seen the file: the job names a path on the API host,
    # which is another machine (here: gone).
    shutil.rmtree(tmp_path / "a" / "uploads")
    worker = Ragline(host["b"])
    try:
        done = ingest_version(TaskContext(rag=worker, events=LocalEventBus()), job_id, **kwargs)
        assert done["state"] == "searchable", done
        hits = worker.search("How early must flights be booked?", READER).hits
        assert hits and hits[0].chunk.doc_id == doc_id
    finally:
        worker.close()
    with TestClient(create_app(host["c"])) as third:
        original = third.get(f"/v1/documents/{doc_id}/file", headers=key)
        assert original.status_code == 200, original.text
        assert original.content == body


def test_rebuild_dense_recreates_the_elasticsearch_index(
    settings: Settings, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kitchen.md").write_text(DOCS["kitchen.md"], encoding="utf-8")
    rag = Ragline(settings)
    try:
        rag.ingest([docs])
    finally:
        rag.close()
    # Damage: the vector index disappears.
    b = settings.backends
    httpx.delete(f"{b.es_url}/{b.es_dense_index}", timeout=30)
    counts = rebuild(settings, ["dense"])
    assert counts["dense"] >= 1
    rag = Ragline(settings)
    try:
        assert all(d.ok for d in rag.check())
        hits = rag.search("When is the coffee machine cleaned?", READER).hits
        assert "descaled" in hits[0].chunk.text and "dense" in hits[0].ranks
    finally:
        rag.close()
