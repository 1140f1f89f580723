"""The write side (issue 14, items 1-4): replacing, re-tagging and deleting need the right
to see and write the document; uploads are no content oracle; a change of ACL or title
with the same bytes is a metadata update that reaches every store and the cache; uploads
are titled by their file name; refused uploads leave no file behind."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import insert

from core.ids import doc_id_for
from core.types import QueryFilter
from indexing.models import DeploymentSecretRow
from ragline.api import create_app
from ragline.api.context import ApiContext
from ragline.app import UPLOAD_ID_SECRET

from .conftest import ALICE, FIN, READER, api_settings, upload, wait_job

NOBODY = QueryFilter(access_tokens=frozenset({"user:alice"}))


def _doc(text: str) -> bytes:
    return f"# Note\n\n{text}\n".encode()


def _ctx(client: TestClient) -> ApiContext:
    ctx: ApiContext = client.app.state.ctx  # type: ignore[attr-defined]
    return ctx


def _post(client: TestClient, name: str, body: bytes, headers: dict[str, str], **form: Any):
    return client.post("/v1/documents", headers=headers, files={"file": (name, body)}, data=form)


def _hits(client: TestClient, headers: dict[str, str], question: str) -> list[dict[str, Any]]:
    r = client.post("/v1/search", headers=headers, json={"question": question})
    assert r.status_code == 200, r.text
    return list(r.json()["hits"])


def _uploads(client: TestClient) -> set[str]:
    folder = _ctx(client).rag.uploads.dir
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def test_a_writer_cannot_take_over_another_groups_document(client: TestClient) -> None:
    key = f"alpha-secret-plan-{uuid.uuid4().hex[:6]}.md"
    secret = _doc("The quorvane launch date is 3 March, known to finance only.")
    up = upload(client, key, secret, FIN, acl_tags="finance")
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
    meta = _ctx(client).rag.stores.metadata

    # Replace (other bytes), re-tag (same bytes, no tags), same bytes: each lands in
    # alice's own document at that key, never in finance's.
    theirs = set()
    for body, form in ((_doc("Attacker text."), {}), (secret, {"acl_tags": ""}), (secret, {})):
        r = _post(client, key, body, ALICE, **form)
        assert r.status_code == 202, r.text
        assert r.json()["doc_id"] != up["doc_id"]
        theirs.add(r.json()["doc_id"])
        assert wait_job(client, r.json()["job_id"], ALICE)["state"] == "searchable"
    assert len(theirs) == 1  # one document of alice's at the key, replaced each time
    assert client.delete(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 404

    doc = meta.document(up["doc_id"])
    assert doc is not None and doc.acl_tags == frozenset({"finance"})
    assert meta.current_version(up["doc_id"]) == up["version"]
    assert [v.status for v in meta.versions(up["doc_id"])] == ["current"]
    assert not [j for j in meta.jobs(doc_id=up["doc_id"]) if j.owner == "alice"]
    # Finance sees both documents at the key and replaces its own, not alice's.
    mine = upload(client, key, _doc("The quorvane launch moved to 9 March."), FIN)
    assert mine["doc_id"] == up["doc_id"]
    assert wait_job(client, mine["job_id"], FIN)["state"] == "searchable"
    alices = client.get(f"/v1/documents/{theirs.pop()}", headers=ALICE).json()
    assert alices["acl_tags"] == [] and alices["source"] == f"upload:{key}"


def _deployment(root: Path, secret: str) -> Iterator[TestClient]:
    """A fresh API whose upload-id secret is `secret` (two deployments that differ only
    in what hidden documents they hold can then be compared byte for byte)."""
    app = create_app(api_settings(root), cache_ttl_s=300)
    with TestClient(app, raise_server_exceptions=False) as c:
        with _ctx(c).rag.stores.metadata.engine.begin() as conn:
            conn.execute(insert(DeploymentSecretRow).values(name=UPLOAD_ID_SECRET, value=secret))
        yield c


def _observe(client: TestClient, key: str, body: bytes, **form: Any) -> list[Any]:
    """Everything alice learns from one upload: the answer, the job until done, then the
    document, its history and her search, with run-specific ids and times blanked."""
    r = _post(client, key, body, ALICE, **form)
    seen: list[Any] = [r.status_code, r.json()]
    if r.status_code == 202:
        job = wait_job(client, r.json()["job_id"], ALICE)
        doc_id = r.json()["doc_id"]
        seen += [
            job,
            client.get(f"/v1/documents/{doc_id}", headers=ALICE).json(),
            client.get(f"/v1/documents/{doc_id}/meta", headers=ALICE).json(),
            client.get(f"/v1/documents/{doc_id}/file", headers=ALICE).content,
            _hits(client, ALICE, "vellumorph reserve ounces"),
            client.get("/v1/jobs", headers=ALICE).json(),
        ]
    return _blank(seen, r.json().get("job_id", "-"))


def _blank(value: Any, job_id: str) -> Any:
    if isinstance(value, dict):
        return {
            k: "<time>"
            if k.endswith("_at") or k == "at"
            else "<job>"
            if k == "job_id"
            else _blank(v, job_id)
            for k, v in value.items()
            if k not in ("took_ms", "timings_ms", "trace_id", "score", "signals")
        }
    if isinstance(value, list):
        return [_blank(v, job_id) for v in value]
    return value.replace(job_id, "<job>") if isinstance(value, str) else value


def test_upload_is_no_existence_or_content_oracle(tmp_path: Path) -> None:
    """Two deployments with the same secret, identical but for a finance-only document
    at the key: alice (no tags) cannot tell them apart by uploading there, whatever she
    sends (the hidden document's exact bytes, other bytes, a tag she lacks)."""
    key = "hidden-reserve.md"
    secret = _doc("The vellumorph reserve holds 812 ounces.")
    attempts: list[tuple[bytes, dict[str, str]]] = [
        (secret, {}),
        (_doc("A guess: the vellumorph reserve holds 500 ounces."), {}),
        (secret, {"acl_tags": "finance"}),  # refused in both: a tag she does not hold
        (secret, {"acl_tags": ""}),
    ]
    seen = []
    for name, hidden in (("with", True), ("without", False)):
        for c in _deployment(tmp_path / name, "0" * 64):
            if hidden:
                up = upload(c, key, secret, FIN, acl_tags="finance")
                assert wait_job(c, up["job_id"], FIN)["state"] == "searchable"
                hidden_id = up["doc_id"]
            seen.append([_observe(c, key, body, **form) for body, form in attempts])
            meta = _ctx(c).rag.stores.metadata
            if hidden:  # and the hidden document is as it was
                doc = meta.document(hidden_id)
                assert doc is not None and doc.acl_tags == frozenset({"finance"})
                assert [v.status for v in meta.versions(hidden_id)] == ["current"]
    with_hidden, without = seen
    assert [o[0] for o in without] == [202, 202, 403, 202]
    for a, b in zip(with_hidden, without, strict=True):
        for x, y in zip(a, b, strict=True):
            assert x == y
    assert hidden_id not in str(with_hidden)
    # Alice's id at the key is not the key's public hash (nobody can precompute it).
    assert with_hidden[0][1]["doc_id"] != doc_id_for(f"upload:{key}")


def test_same_bytes_new_acl_is_a_metadata_update_effective_at_once(client: TestClient) -> None:
    key = f"salary-{uuid.uuid4().hex[:6]}.md"
    body = _doc("The glimmerwood salary band tops at 93000 euros.")
    question = "What is the glimmerwood salary band?"
    up = upload(client, key, body, FIN)  # public at first
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
    assert any("glimmerwood" in h["text"] for h in _hits(client, ALICE, question))  # cached now

    tightened = upload(client, key, body, FIN, acl_tags="finance")
    assert tightened["version"] == up["version"]
    assert tightened["state"] == "indexing" and "acl_tags" in tightened["reason"]
    # Before the job finishes: the truth already serves the new ACL, the cache is gone.
    assert not any("glimmerwood" in h["text"] for h in _hits(client, ALICE, question))
    job = wait_job(client, tightened["job_id"], FIN)
    assert job["state"] == "searchable" and "metadata updated" in job["reason"]

    # Every derived store holds the new ACL (not only the truth's serve-time check).
    stores = _ctx(client).rag.stores
    items = stores.metadata.version_items(up["doc_id"], up["version"])
    cids = {i.chunk.content_id for i in items}
    assert items and all(i.chunk.acl_tags == frozenset({"finance"}) for i in items)
    fin = QueryFilter(access_tokens=frozenset({"finance"}))
    assert not cids & {h.content_id for h in stores.keyword.search("glimmerwood", 50, NOBODY)}
    assert cids & {h.content_id for h in stores.keyword.search("glimmerwood", 50, fin)}
    vec = items[0].vector
    assert not cids & {h.content_id for h in stores.dense.search(vec, 50, NOBODY)}
    assert cids & {h.content_id for h in stores.dense.search(vec, 50, fin)}
    assert client.get(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 404
    assert any("glimmerwood" in h["text"] for h in _hits(client, FIN, question))

    # New bytes without acl_tags keep the tags: a careless re-upload does not open it up.
    v2 = upload(client, key, _doc("The glimmerwood salary band tops at 95000 euros."), FIN)
    assert wait_job(client, v2["job_id"], FIN)["state"] == "searchable"
    assert client.get(f"/v1/documents/{up['doc_id']}", headers=FIN).json()["acl_tags"] == [
        "finance"
    ]
    assert not any("glimmerwood" in h["text"] for h in _hits(client, ALICE, question))

    # An explicitly empty acl_tags opens it again, title and trust change alike.
    opened = upload(
        client,
        key,
        _doc("The glimmerwood salary band tops at 95000 euros."),
        FIN,
        acl_tags="",
        title="Salary bands",
        source_trust="0.4",
    )
    assert opened["state"] == "indexing", opened
    assert set(opened["reason"].removeprefix("metadata updated: ").split(", ")) == {
        "acl_tags",
        "title",
        "source_trust",
    }
    assert wait_job(client, opened["job_id"], FIN)["state"] == "searchable"
    doc = client.get(f"/v1/documents/{up['doc_id']}", headers=ALICE).json()
    assert doc["acl_tags"] == [] and doc["title"] == "Salary bands"
    assert doc["source_trust"] == 0.4
    hits = _hits(client, ALICE, question)
    assert any("glimmerwood" in h["text"] and h["title"] == "Salary bands" for h in hits)
    again = upload(
        client,
        key,
        _doc("The glimmerwood salary band tops at 95000 euros."),
        FIN,
        title="Salary bands",
    )
    assert again["state"] == "searchable" and again["reason"] == "unchanged"


def test_untitled_upload_is_titled_by_its_file_name(client: TestClient) -> None:
    name = f"brindle-report-{uuid.uuid4().hex[:6]}.txt"
    up = upload(client, name, b"The brindle turbine spins at 1450 rpm.\n", ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    doc = client.get(f"/v1/documents/{up['doc_id']}", headers=ALICE).json()
    assert doc["title"] == name.removesuffix(".txt")
    r = client.post(
        "/v1/chat/completions",
        headers=ALICE,
        json={"messages": [{"role": "user", "content": "How fast does the brindle turbine spin?"}]},
    )
    content = r.json()["choices"][0]["message"]["content"]
    assert name.removesuffix(".txt") in content.split("Sources:")[1]
    assert up["version"] not in content


def test_rejected_uploads_leave_no_file(client: TestClient) -> None:
    before = _uploads(client)
    empty = _post(client, "empty.md", b"", ALICE)
    assert empty.status_code == 422 and empty.json()["error"]["type"] == "invalid_request"
    binary = _post(client, "blob.bin", bytes(range(256)) * 8, ALICE)
    assert binary.status_code == 415, binary.text
    assert binary.json()["error"]["type"] == "unsupported_media_type"
    assert "unsupported file type" in binary.json()["error"]["message"]
    assert _uploads(client) == before


def test_original_bytes_are_for_writers_and_admins_readers_get_the_masked_text(
    client: TestClient,
) -> None:
    """The original file is not PII-masked: a reader who may see the document gets 403
    (JSON, pointing at /view) and reads the masked passages; its writers get the bytes."""
    email = "quill.harrow@example.com"
    body = _doc(f"Contact the thornfield archive desk at {email} for access.")
    up = upload(client, f"archive-{uuid.uuid4().hex[:6]}.md", body, FIN)  # public
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
    doc_id = up["doc_id"]

    denied = client.get(f"/v1/documents/{doc_id}/file", headers=READER)
    assert denied.status_code == 403
    err = denied.json()["error"]
    assert err["type"] == "forbidden" and f"/v1/documents/{doc_id}/view" in err["message"]
    assert email not in denied.text
    view = client.get(f"/v1/documents/{doc_id}/view", headers=READER).json()
    assert view["has_file"] is False
    text = " ".join(p["text"] for page in view["pages"] for p in page["passages"])
    assert "thornfield" in text and email not in text  # masked

    for writer in (FIN, ALICE):  # the uploader, and a writer who may replace it (public)
        got = client.get(f"/v1/documents/{doc_id}/file", headers=writer)
        assert got.status_code == 200 and got.content == body
        # A Markdown original is plain text to the browser, never a page of ours.
        assert got.headers["content-type"] == "text/plain; charset=utf-8"
        assert client.get(f"/v1/documents/{doc_id}/view", headers=writer).json()["has_file"]
    # A hidden document stays a 404, for readers and writers alike.
    secret = upload(client, f"vault-{uuid.uuid4().hex[:6]}.md", body, FIN, acl_tags="finance")
    assert wait_job(client, secret["job_id"], FIN)["state"] == "searchable"
    for who in (READER, ALICE):
        r = client.get(f"/v1/documents/{secret['doc_id']}/file", headers=who)
        assert r.status_code == 404
