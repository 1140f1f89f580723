"""The write side (issue 14, items 1-4): replacing, re-tagging and deleting need the right
to see and write the document; uploads are no content oracle; a change of ACL or title
with the same bytes is a metadata update that reaches every store and the cache; uploads
are titled by their file name; refused uploads leave no file behind."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi.testclient import TestClient

from core.types import QueryFilter
from ragline.api.context import ApiContext

from .conftest import ALICE, FIN, upload, wait_job

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
    folder = _ctx(client).upload_dir
    return {p.name for p in folder.iterdir()} if folder.exists() else set()


def test_a_writer_cannot_take_over_another_groups_document(client: TestClient) -> None:
    key = f"alpha-secret-plan-{uuid.uuid4().hex[:6]}.md"
    secret = _doc("The quorvane launch date is 3 March, known to finance only.")
    up = upload(client, key, secret, FIN, acl_tags="finance")
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
    meta = _ctx(client).rag.stores.metadata
    files_before = _uploads(client)

    # Replace (other bytes), re-tag (same bytes, no tags), delete: all refused.
    for body, form in ((_doc("Attacker text."), {}), (secret, {"acl_tags": ""}), (secret, {})):
        r = _post(client, key, body, ALICE, **form)
        assert r.status_code == 403, r.text
        assert r.json()["error"]["type"] == "forbidden"
    assert client.delete(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 404

    doc = meta.document(up["doc_id"])
    assert doc is not None and doc.acl_tags == frozenset({"finance"})
    assert meta.current_version(up["doc_id"]) == up["version"]
    assert [v.status for v in meta.versions(up["doc_id"])] == ["current"]
    assert _uploads(client) == files_before  # nothing stored for the refused writes
    assert not [j for j in meta.jobs(doc_id=up["doc_id"]) if j.owner == "alice"]


def test_upload_is_no_existence_or_content_oracle(client: TestClient) -> None:
    key = f"hidden-{uuid.uuid4().hex[:6]}.md"
    secret = _doc("The vellumorph reserve holds 812 ounces.")
    up = upload(client, key, secret, FIN, acl_tags="finance")
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"

    same = _post(client, key, secret, ALICE)
    other = _post(client, key, _doc("A guess at the content."), ALICE)
    tagged = _post(client, key, secret, ALICE, acl_tags="finance")
    # The exact bytes, other bytes: one answer, which names neither version nor state.
    assert same.status_code == other.status_code == 403
    assert same.json() == other.json()
    text = same.text
    assert up["version"] not in text and "unchanged" not in text and "searchable" not in text
    # Asking for a tag one does not hold is refused with the same words whether or not
    # a hidden document holds the key.
    fresh = _post(client, f"never-{uuid.uuid4().hex[:6]}.md", secret, ALICE, acl_tags="finance")
    assert tagged.status_code == fresh.status_code == 403
    assert tagged.json() == fresh.json()


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
