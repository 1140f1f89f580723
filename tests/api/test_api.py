"""The HTTP API end to end on the embedded default (in-process task runner, no Redis)."""

from __future__ import annotations

import logging
import uuid

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import ALICE, FIN, READER, upload, wait_job

pytestmark = pytest.mark.timeout(180)


def _doc(fact: str) -> bytes:
    return f"# Notes\n\n{fact}\n\nThis paragraph is padding about nothing in particular.\n".encode()


def test_openapi_lists_every_route(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path, method in [
        ("/v1/search", "post"),
        ("/v1/ask", "post"),
        ("/v1/documents", "post"),
        ("/v1/documents/{doc_id}", "get"),
        ("/v1/documents/{doc_id}", "delete"),
        ("/v1/documents/{doc_id}/meta", "get"),
        ("/v1/jobs/{job_id}", "get"),
        ("/v1/chat/completions", "post"),
        ("/healthz", "get"),
        ("/readyz", "get"),
    ]:
        assert method in paths.get(path, {}), f"{method.upper()} {path} missing from OpenAPI"


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    r = client.get("/readyz")
    assert r.status_code == 200, r.text
    checks = r.json()["checks"]
    assert set(checks) == {"metadata", "keyword", "dense", "graph"}  # no broker configured
    assert all(c["ok"] for c in checks.values())


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"X-API-Key": "nope"}, {"Authorization": "Basic x"}],
)
def test_unauthenticated_requests_get_401(client: TestClient, headers: dict[str, str]) -> None:
    for method, path, kw in [
        ("post", "/v1/search", {"json": {"question": "anything"}}),
        ("post", "/v1/ask", {"json": {"question": "anything"}}),
        ("get", "/v1/documents/abc", {}),
        ("get", "/v1/jobs/abc", {}),
        ("post", "/v1/chat/completions", {"json": {"model": "ragline", "messages": []}}),
        ("post", "/v1/documents", {"files": {"file": ("a.md", b"# a")}}),
    ]:
        r = getattr(client, method)(path, headers=headers, **kw)
        assert r.status_code == 401, (path, r.text)
        assert r.json()["error"]["type"] == "unauthorized"
        assert r.headers.get("www-authenticate") == "Bearer"


def test_upload_becomes_searchable_with_meta_and_job(client: TestClient) -> None:
    name = f"zorblat-{uuid.uuid4().hex[:6]}.md"
    body = _doc("The zorblat reactor output is 917 megawatts according to the audit.")
    up = upload(client, name, body, ALICE, title="Zorblat audit", department="energy")
    assert up["state"] == "queued" and up["source"] == f"upload:{name}"
    job = wait_job(client, up["job_id"], ALICE)
    assert job["state"] == "searchable", job
    assert job["doc_id"] == up["doc_id"] and job["version"] == up["version"]

    answer = client.post(
        "/v1/ask", headers=ALICE, json={"question": "What is the zorblat reactor output?"}
    ).json()
    assert "917 megawatts" in answer["answer"]
    assert answer["citations"] and answer["citations"][0]["source"] == f"upload:{name}"
    assert answer["route"]["rule"] and answer["timings_ms"] and answer["trace_id"]

    doc = client.get(f"/v1/documents/{up['doc_id']}", headers=ALICE).json()
    assert doc["title"] == "Zorblat audit" and doc["current_version"] == up["version"]
    meta = client.get(f"/v1/documents/{up['doc_id']}/meta", headers=ALICE).json()
    assert meta["title"] == "Zorblat audit" and meta["pages"] >= 1
    assert [v["status"] for v in meta["versions"]] == ["current"]
    assert meta["versions"][0]["searchable_at"]


def test_same_bytes_same_name_is_a_noop_and_changed_bytes_a_new_version(
    client: TestClient,
) -> None:
    name = f"quux-{uuid.uuid4().hex[:6]}.md"
    first = upload(client, name, _doc("The quux budget is 11 dollars."), ALICE)
    assert wait_job(client, first["job_id"], ALICE)["state"] == "searchable"

    again = upload(client, name, _doc("The quux budget is 11 dollars."), ALICE)
    assert again["state"] == "searchable" and again["reason"] == "unchanged"
    assert again["doc_id"] == first["doc_id"] and again["version"] == first["version"]

    changed = upload(client, name, _doc("The quux budget is 12 dollars."), ALICE)
    assert changed["doc_id"] == first["doc_id"] and changed["version"] != first["version"]
    assert wait_job(client, changed["job_id"], ALICE)["state"] == "searchable"
    meta = client.get(f"/v1/documents/{first['doc_id']}/meta", headers=ALICE).json()
    statuses = {v["version"]: v["status"] for v in meta["versions"]}
    assert statuses == {first["version"]: "superseded", changed["version"]: "current"}


def test_acl_tagged_upload_is_invisible_without_the_tag(client: TestClient) -> None:
    secret = f"merger-{uuid.uuid4().hex[:6]}.md"
    up = upload(
        client,
        secret,
        _doc("The plovdane merger budget is 42 million yuan."),
        FIN,
        acl_tags="finance",
    )
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
    q = {"question": "What is the plovdane merger budget?"}

    hits = client.post("/v1/search", headers=ALICE, json=q).json()["hits"]
    assert all("plovdane" not in h["text"] for h in hits)
    assert "42 million" not in client.post("/v1/ask", headers=ALICE, json=q).json()["answer"]
    # Neither the document nor its job exist for a caller without the tag.
    assert client.get(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 404
    assert client.get(f"/v1/documents/{up['doc_id']}/meta", headers=ALICE).status_code == 404
    assert client.get(f"/v1/jobs/{up['job_id']}", headers=ALICE).status_code == 404
    assert client.delete(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 404
    # A request field cannot widen what the key grants.
    r = client.post("/v1/search", headers=ALICE, json={**q, "tags": ["finance"]})
    assert r.status_code == 422

    fin_hits = client.post("/v1/search", headers=FIN, json=q).json()["hits"]
    assert fin_hits and "plovdane" in fin_hits[0]["text"]
    assert "42 million" in client.post("/v1/ask", headers=FIN, json=q).json()["answer"]
    assert client.get(f"/v1/documents/{up['doc_id']}", headers=FIN).json()["acl_tags"] == [
        "finance"
    ]


def test_limits_give_clear_4xx(client: TestClient) -> None:
    r = client.post("/v1/search", headers=ALICE, json={"question": "x" * 201})
    assert r.status_code == 422 and "MAX_QUERY_CHARS" in r.json()["error"]["message"]
    r = client.post("/v1/ask", headers=ALICE, json={"question": "x", "top_k": 6})
    assert r.status_code == 422 and "between 1 and 5" in r.json()["error"]["message"]
    r = client.post("/v1/search", headers=ALICE, json={"question": "x", "top_k": 0})
    assert r.status_code == 422 and "top_k" in r.json()["error"]["message"]
    r = client.post("/v1/search", headers=ALICE, json={})
    assert r.status_code == 422 and "question" in r.json()["error"]["message"]
    big = b"a" * (60 * 1024)  # the limit is 0.05 MB
    r = client.post("/v1/documents", headers=ALICE, files={"file": ("big.txt", big)})
    assert r.status_code == 413 and "MAX_UPLOAD_MB" in r.json()["error"]["message"]
    r = client.post("/v1/documents", headers=ALICE, files={"file": ("empty.txt", b"")})
    assert r.status_code == 422 and "empty" in r.json()["error"]["message"]
    r = client.post("/v1/documents", headers=ALICE, data={"title": "no file"})
    assert r.status_code == 422 and "file" in r.json()["error"]["message"]


def test_poison_upload_fails_with_its_reason(client: TestClient) -> None:
    up = upload(client, "broken.pdf", b"%PDF-1.7\n1 0 obj garbage", ALICE)
    job = wait_job(client, up["job_id"], ALICE)
    assert job["state"] == "failed" and job["reason"]
    assert client.get(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 404


def test_delete_removes_the_document_from_answers(client: TestClient) -> None:
    up = upload(client, "gone.md", _doc("The vexilloid ledger closes on 3 March."), ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    q = {"question": "When does the vexilloid ledger close?"}
    assert "3 March" in client.post("/v1/ask", headers=ALICE, json=q).json()["answer"]

    r = client.delete(f"/v1/documents/{up['doc_id']}", headers=ALICE)
    assert r.status_code == 202
    # Unserved at once, before the task even ran (and not from the query cache).
    assert "3 March" not in client.post("/v1/ask", headers=ALICE, json=q).json()["answer"]
    assert wait_job(client, r.json()["job_id"], ALICE)["state"] == "deleted"
    assert client.get(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 404
    assert client.get("/v1/documents/does-not-exist", headers=ALICE).status_code == 404


def test_cached_answer_is_dropped_when_a_new_version_is_searchable(client: TestClient) -> None:
    name = f"tariff-{uuid.uuid4().hex[:6]}.md"
    up = upload(client, name, _doc("The brindlecorn tariff is 5 percent."), ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    q = {"question": "What is the brindlecorn tariff?"}
    first = client.post("/v1/ask", headers=ALICE, json=q).json()
    assert "5 percent" in first["answer"] and first["cached"] is False
    assert client.post("/v1/ask", headers=ALICE, json=q).json()["cached"] is True

    up2 = upload(client, name, _doc("The brindlecorn tariff is 9 percent."), ALICE)
    assert wait_job(client, up2["job_id"], ALICE)["state"] == "searchable"
    after = client.post("/v1/ask", headers=ALICE, json=q).json()
    assert after["cached"] is False
    assert "9 percent" in after["answer"] and "5 percent" not in after["answer"]


def test_openai_compatible_chat_completion(client: TestClient) -> None:
    up = upload(client, "moon.md", _doc("The glimmerfen moon base has 14 airlocks."), ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    body = {
        "model": "ragline",
        "messages": [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "What is on Mars?"},
            {"role": "assistant", "content": "Nothing I know of."},
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "How many airlocks does the glimmerfen moon base have?",
                    }
                ],
            },
        ],
    }
    r = client.post("/v1/chat/completions", headers=ALICE, json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["object"] == "chat.completion" and out["model"] == "ragline"
    message = out["choices"][0]["message"]
    assert message["role"] == "assistant" and "14 airlocks" in message["content"]
    label = out["ragline"]["citations"][0]["label"]
    assert label in message["content"] and "Sources:" in message["content"]
    assert out["ragline"]["question"].startswith("How many airlocks")

    assert (
        client.post(
            "/v1/chat/completions", headers=ALICE, json={**body, "model": "gpt-4"}
        ).status_code
        == 404
    )
    streamed = client.post("/v1/chat/completions", headers=ALICE, json={**body, "stream": True})
    assert streamed.status_code == 200
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert streamed.text.rstrip().endswith("data: [DONE]")
    # More than one choice is refused, not silently answered with one.
    r = client.post("/v1/chat/completions", headers=ALICE, json={**body, "n": 2})
    assert r.status_code == 422 and "n" in r.json()["error"]["message"], r.text
    assert client.post("/v1/chat/completions", headers=ALICE, json={**body, "n": 1}).is_success
    no_user = {"model": "ragline", "messages": [{"role": "system", "content": "hi"}]}
    r = client.post("/v1/chat/completions", headers=ALICE, json=no_user)
    assert r.status_code == 422 and "user message" in r.json()["error"]["message"]
    # A blank question reads as on every other door.
    blank = {"model": "ragline", "messages": [{"role": "user", "content": "   "}]}
    r = client.post("/v1/chat/completions", headers=ALICE, json=blank)
    assert r.status_code == 422 and "question is empty" in r.json()["error"]["message"]


def test_batch_progress(client: TestClient) -> None:
    batch = uuid.uuid4().hex[:12]
    ids = [
        upload(
            client,
            f"b{i}-{batch}.md",
            _doc(f"Batch fact number {i} is here."),
            ALICE,
            batch_id=batch,
        )["job_id"]
        for i in range(3)
    ]
    for job_id in ids:
        wait_job(client, job_id, ALICE)
    view = client.get("/v1/jobs", headers=ALICE, params={"batch_id": batch}).json()
    assert view["total"] == 3 and view["done"] and view["states"] == {"searchable": 3}


def test_internal_errors_hide_the_trace(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    original = ctx.rag.asearch

    async def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals /etc/passwd")

    ctx.rag.asearch = boom
    try:
        with caplog.at_level(logging.ERROR, logger="ragline.api"):
            r = client.post("/v1/search", headers=ALICE, json={"question": "internal error probe"})
    finally:
        ctx.rag.asearch = original
    assert r.status_code == 500
    err = r.json()["error"]
    assert err["message"] == "internal error" and err["trace_id"]
    assert "secret" not in r.text and "Traceback" not in r.text
    assert err["trace_id"] in caplog.text and "secret internals" in caplog.text


def test_metrics_endpoint_counts_asks(client: TestClient) -> None:
    def asked() -> float:
        text = client.get("/metrics").text
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("ragline_queries_total{")
        )

    before = asked()
    client.post("/v1/ask", headers=ALICE, json={"question": "What is the zorblat reactor output?"})
    assert asked() == before + 1
    assert "ragline_query_seconds_bucket" in client.get("/metrics").text


def test_writes_need_a_writer_key_and_own_tags(client: TestClient) -> None:
    files = {"file": ("w.md", _doc("The sprocketfen quota is 7 crates."))}
    r = client.post("/v1/documents", headers=READER, files=files)
    assert r.status_code == 403 and "can_write" in r.json()["error"]["message"], r.text
    r = client.post("/v1/documents", headers=ALICE, files=files, data={"acl_tags": "finance"})
    assert r.status_code == 403 and "finance" in r.json()["error"]["message"], r.text
    up = upload(client, "w.md", _doc("The sprocketfen quota is 7 crates."), ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    assert client.delete(f"/v1/documents/{up['doc_id']}", headers=READER).status_code == 403
    assert client.delete(f"/v1/documents/{up['doc_id']}", headers=ALICE).status_code == 202


def test_a_streamed_ask_refuses_bad_input_as_the_plain_one_does(client: TestClient) -> None:
    """Every check of the plain ask runs before the stream opens: the same status and
    reason, not a 200 stream carrying an error event (a blank question beside entities is
    no bad input, streamed or not)."""
    for bad, reason in (
        ({"context": {"date_from": "2024-13-40"}}, "date_from"),
        ({"top_k": 500}, "top_k"),
        ({"filters": {"colour": "red"}}, "colour"),
    ):
        body = {"question": "What is the zorblat output?", **bad}
        plain = client.post("/v1/ask", headers=ALICE, json=body)
        streamed = client.post("/v1/ask", headers=ALICE, json={**body, "stream": True})
        for r in (plain, streamed):
            assert r.status_code == 422 and reason in r.json()["error"]["message"], r.text
    entities = {"question": "", "context": {"entities": ["zorblat"]}}
    assert client.post("/v1/ask", headers=ALICE, json=entities).status_code == 200
    streamed = client.post("/v1/ask", headers=ALICE, json={**entities, "stream": True})
    assert streamed.status_code == 200 and "event: answer" in streamed.text


def test_a_refusal_inside_a_stream_names_its_own_type() -> None:
    from core.errors import Forbidden, NotFound
    from ragline.api.sse import error_payload

    assert error_payload(NotFound("no document d"))["error"] == {
        "type": "not_found",
        "message": "no document d",
        "status": 404,
    }
    assert error_payload(Forbidden("no"))["error"]["type"] == "forbidden"
    assert error_payload(RuntimeError("boom"))["error"]["type"] == "server_error"


def test_a_read_only_key_is_told_it_may_not_change_documents_on_ops_too(
    client: TestClient,
) -> None:
    """The ops endpoints (sync, reindex) refuse a read-only key with a reason that fits
    them, not "may not upload or delete documents"."""
    for path, body in (("/v1/ops/sync", {}), ("/v1/ops/reindex", {"source": "x"})):
        r = client.post(path, headers=READER, json=body)
        assert r.status_code == 403, r.text
        message = r.json()["error"]["message"]
        assert "reindex or sync" in message and "can_write" in message, message
