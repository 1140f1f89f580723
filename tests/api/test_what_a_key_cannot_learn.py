"""What a key may not see it cannot learn from the side: not from the knowledge gaps'
near misses, not from how a job listing is cut; and a caller without a valid key, or
without write rights for an upload, is refused before its body is read."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from fastapi.testclient import TestClient
from starlette.types import Message, Receive, Scope, Send

from ragline.api.middleware import KeyGate
from tests.api.conftest import ALICE, FIN, READER, upload, wait_job


def test_gap_near_misses_show_only_documents_the_reader_may_see(client: TestClient) -> None:
    word = f"Zephyrquartz{uuid.uuid4().hex[:6]}"
    office = f"Marsbase{uuid.uuid4().hex[:6]}"
    up = upload(
        client,
        f"{word}.md",
        f"# Budget\n\nThe project {word} headcount budget is 4,200,000 USD.\n".encode(),
        FIN,
        acl_tags="finance",
    )
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
    opened = f"# Offices\n\nThe {office} office opened in 2019.\n"
    public = upload(client, f"{office}.md", opened.encode(), ALICE)
    assert wait_job(client, public["job_id"], ALICE)["state"] == "searchable"
    question = f"What is the {word} headcount plan for the {office} office?"
    answer = client.post("/v1/ask", headers=FIN, json={"question": question}).json()
    assert answer["covered"] is False, answer["answer"]

    def gap(headers: dict[str, str]) -> dict[str, Any]:
        r = client.get("/v1/gaps", headers=headers)
        assert r.status_code == 200, r.text
        return next(g for g in r.json()["gaps"] if g["question"] == question)

    seen = gap(FIN)
    assert up["doc_id"] in {m["doc_id"] for m in seen["near_misses"]}
    # alice may write, but not read finance: other, public near misses may stay, and the
    # best coverage is theirs, not the hidden document's
    shown = gap(ALICE)
    ids = {m["doc_id"] for m in shown["near_misses"]}
    assert public["doc_id"] in ids and up["doc_id"] not in ids, shown
    assert shown["best_coverage"] == max(m["coverage"] for m in shown["near_misses"])
    assert shown["best_coverage"] < seen["best_coverage"], (shown, seen)
    csv = client.get("/v1/gaps?format=csv", headers=ALICE).text
    assert question in csv and word not in csv.replace(question, "")


def test_a_gap_only_about_hidden_documents_is_not_shown(client: TestClient) -> None:
    """A question whose near misses are all documents the reader may not see is about
    their material: its words ("Quillfeather" payroll) are not shown to other writers."""
    word = f"Quillfeather{uuid.uuid4().hex[:6]}"
    text = f"# {word} payroll\n\n{word} payroll runs monthly.\n"
    up = upload(client, f"{word}.md", text.encode(), FIN, acl_tags="finance")
    assert wait_job(client, up["job_id"], FIN)["state"] == "searchable"
    question = f"What is the {word} payroll bonus for Neptune?"
    miss = {"doc_id": up["doc_id"], "title": word, "source": "", "label": "", "coverage": 0.6}
    meta = client.app.state.ctx.rag.stores.metadata  # type: ignore[attr-defined]
    meta.record_gap(f"k{word}", question.lower(), question, ["finance"], [miss], "x", 0.6)

    def questions(headers: dict[str, str]) -> set[str]:
        r = client.get("/v1/gaps", headers=headers)
        assert r.status_code == 200, r.text
        return {g["question"] for g in r.json()["gaps"]}

    assert question in questions(FIN)
    assert question not in questions(ALICE)
    assert question not in client.get("/v1/gaps?format=csv", headers=ALICE).text


def test_a_job_listing_counts_only_jobs_the_caller_may_see(client: TestClient) -> None:
    tag = uuid.uuid4().hex[:6]
    public = upload(client, f"pub-{tag}.md", f"# Pub\n\nPublic {tag} text.\n".encode(), ALICE)
    wait_job(client, public["job_id"], ALICE)
    hidden = upload(
        client, f"fin-{tag}.md", f"# Fin\n\nHidden {tag}.\n".encode(), FIN, acl_tags="finance"
    )
    wait_job(client, hidden["job_id"], FIN)
    # The newest job is hidden from the reader: it must not take the one place asked for.
    listed = client.get("/v1/jobs?limit=1", headers=READER).json()
    assert [j["job_id"] for j in listed["jobs"]] == [public["job_id"]]


def test_no_key_or_a_bad_body_is_refused_for_the_key_first(client: TestClient) -> None:
    r = client.post("/v1/search", content=b"not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 401 and r.json()["error"]["type"] == "unauthorized"
    r = client.post("/v1/search", content=b"not json", headers={**READER, "Content-Type": "x"})
    assert r.status_code == 422  # a valid key: now the body is read and found wrong


def _call(gate: KeyGate, headers: list[tuple[bytes, bytes]], path: str) -> tuple[int, bool]:
    """The status the gate answers with, and whether anything read the request body."""
    read = False
    status = 0

    async def receive() -> Message:
        nonlocal read
        read = True
        return {"type": "http.request", "body": b"x" * 1024, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
    asyncio.run(KeyGate(app, gate._context, gate._writes)(scope, receive, send))
    return status, read


def test_an_upload_is_refused_from_its_headers_before_its_body_is_read(
    client: TestClient,
) -> None:
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    gate = KeyGate(lambda *_: None, lambda: ctx, writes=("/v1/documents",))  # type: ignore[arg-type]
    assert _call(gate, [], "/v1/documents") == (401, False)
    assert _call(gate, [(b"x-api-key", b"wrong")], "/v1/documents") == (401, False)
    assert _call(gate, [(b"x-api-key", b"reader-key")], "/v1/documents") == (403, False)
    assert _call(gate, [(b"x-api-key", b"reader-key")], "/v1/search") == (202, True)
    assert _call(gate, [(b"authorization", b"Bearer alice-key")], "/v1/documents") == (202, True)
