"""The gRPC service through its generated client, over a real port: same keys and
principals as HTTP, streamed Ask, document metadata, uploads."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from fastapi.testclient import TestClient

from connectors.config import PACKAGED_SAMPLE
from connectors.sample.database import load_sample
from core.settings import ApiKey, ApiSettings, GatewaySettings, GrpcSettings, Settings
from ragline.api import create_app
from ragline.bench.processes import free_port
from ragline.grpc import ragline_pb2 as pb
from ragline.grpc import ragline_pb2_grpc as pb_grpc
from ragline.grpc.server import serve

FIXTURES = Path(__file__).parent.parent / "fixtures" / "conversation"
READER = [("authorization", "Bearer reader")]
WRITER = [("authorization", "Bearer writer")]
FIN = [("x-api-key", "fin")]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    data_dir = tmp_path_factory.mktemp("grpc")
    load_sample(f"sqlite:///{data_dir / 'sample.db'}")  # the gateway's sample database
    return Settings(
        data_dir=data_dir,
        gateway=GatewaySettings(sources=str(PACKAGED_SAMPLE)),
        api=ApiSettings(
            keys=[
                ApiKey(key="analyst", user="ann", roles=["analyst"]),
                ApiKey(key="reader", user="rita"),
                ApiKey(key="writer", user="wade", can_write=True, tags=["finance"]),
                ApiKey(key="fin", user="fred", tags=["finance"]),
                ApiKey(key="limited", user="lim", rate_per_s=0.01, burst=2),
            ]
        ),
        grpc=GrpcSettings(port=free_port()),
    )


@pytest.fixture(scope="module")
def stub(settings: Settings) -> Iterator[pb_grpc.RaglineStub]:
    port = settings.grpc.port
    loop = asyncio.new_event_loop()
    started = threading.Event()
    task: list[asyncio.Task[None]] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        task.append(loop.create_task(serve(settings, ready=lambda _: started.set())))
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task[0])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(60), "gRPC server did not start"
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield pb_grpc.RaglineStub(channel)
    finally:
        channel.close()
        loop.call_soon_threadsafe(task[0].cancel)
        thread.join(30)


def _upload(stub: pb_grpc.RaglineStub, name: str, tags: list[str] = ()) -> pb.UploadResponse:
    content = (FIXTURES / name).read_bytes()
    return stub.UploadDocument(
        pb.UploadRequest(filename=name, content=content, acl_tags=list(tags)), metadata=WRITER
    )


def _wait_searchable(stub: pb_grpc.RaglineStub, doc_id: str) -> pb.DocumentMeta:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            meta = stub.GetDocumentMeta(pb.DocumentMetaRequest(doc_id=doc_id), metadata=WRITER)
        except grpc.RpcError as exc:  # not registered until the job starts
            assert exc.code() == grpc.StatusCode.NOT_FOUND
        else:
            if meta.current_version:
                return meta
        time.sleep(0.2)
    raise AssertionError(f"{doc_id} never became searchable")


def test_keys_are_required(stub: pb_grpc.RaglineStub) -> None:
    with pytest.raises(grpc.RpcError) as missing:
        stub.Search(pb.SearchRequest(question="E102"))
    assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as wrong:
        stub.Search(pb.SearchRequest(question="E102"), metadata=[("authorization", "Bearer x")])
    assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as readonly:
        stub.UploadDocument(
            pb.UploadRequest(filename="a.md", content=b"# A\n\ntext"), metadata=READER
        )
    assert readonly.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_a_keys_rate_limit_is_one_budget_for_http_and_grpc(
    stub: pb_grpc.RaglineStub, settings: Settings
) -> None:
    """The HTTP API and the gRPC server are separate services; a key's budget is spent on
    either (the buckets are in the data directory's file)."""
    with TestClient(create_app(settings)) as http:
        spent = [
            http.post(
                "/v1/search", headers={"X-API-Key": "limited"}, json={"question": "E102"}
            ).status_code
            for _ in range(2)
        ]
    assert spent == [200, 200]
    with pytest.raises(grpc.RpcError) as over:
        stub.Search(pb.SearchRequest(question="E102"), metadata=[("x-api-key", "limited")])
    assert over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "rate limit" in str(over.value.details())


def test_upload_search_ask_meta(stub: pb_grpc.RaglineStub) -> None:
    runbook = _upload(stub, "payments-runbook.md")
    log = _upload(stub, "incident-log.md", ["finance"])  # only finance keys see it
    assert runbook.state in ("queued", "searchable") and runbook.doc_id
    meta = _wait_searchable(stub, runbook.doc_id)
    assert meta.title == "Payments Runbook" and meta.versions[0].status == "current"
    _wait_searchable(stub, log.doc_id)

    found = stub.Search(pb.SearchRequest(question="What does error E102 mean?"), metadata=READER)
    assert found.covered and found.hits[0].label.startswith("[Doc")
    assert found.hits[0].doc_id == runbook.doc_id
    assert {h.title for h in found.hits} == {"Payments Runbook"}  # the log is tagged

    def follow_up(role: str) -> list[pb.AskEvent]:
        """The follow-up question after a first turn written by `role`."""
        history = [pb.ChatTurn(role=role, content="What does error E102 mean?")]
        request = pb.AskRequest(question="Who fixed it?", history=history)
        return list(stub.Ask(request, metadata=FIN))

    events = follow_up("user")
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "status" and kinds[-1] == "answer" and "delta" in kinds
    answer = events[-1].answer
    assert "Dana Whitfield" in answer.answer and answer.citations
    assert answer.retrieval_query == "Who fixed it? E102"
    assert "".join(e.delta for e in events if e.WhichOneof("event") == "delta") == answer.answer
    assert answer.model.tier == "none"
    # A role written "User" is a user's turn too (it was dropped without a word).
    shouted = follow_up("User")
    assert shouted[-1].answer.retrieval_query == "Who fixed it? E102"

    # A document the caller may not see is reported like a missing one.
    with pytest.raises(grpc.RpcError) as hidden:
        stub.GetDocumentMeta(pb.DocumentMetaRequest(doc_id=log.doc_id), metadata=READER)
    assert hidden.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as empty:
        list(stub.Ask(pb.AskRequest(question="  "), metadata=READER))
    assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # A format no document can have is refused with the known ones, not "not covered".
    for call in (
        lambda: stub.Search(pb.SearchRequest(question="E102", doc_types=["pfd"]), metadata=READER),
        lambda: list(stub.Ask(pb.AskRequest(question="E102", doc_types=["pfd"]), metadata=READER)),
    ):
        with pytest.raises(grpc.RpcError) as unknown:
            call()
        assert unknown.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "'pfd' is not a document format" in (unknown.value.details() or "")


def test_gateway_rows_over_grpc_with_the_gateway_rules(stub: pb_grpc.RaglineStub) -> None:
    """Issue 11: the gateway operations are RPCs too, under the same keys and checks."""
    question = "How many permit checks did Kentucky have?"
    rows = stub.QueryRows(
        pb.GatewayRequest(question=question), metadata=[("authorization", "Bearer analyst")]
    )
    assert rows.status == "ok", rows.message
    assert rows.labels and rows.labels[0].startswith("[DB_")
    blocks = json.loads(rows.blocks_json)
    assert blocks[0]["source_kind"] == "rows"
    assert "264140" in json.dumps(blocks[0]["content"]).replace(",", "")
    # Default deny: a question of a key that may use no template matches none, and a
    # template named outright is refused; nothing shown either way.
    unmatched = stub.QueryRows(
        pb.GatewayRequest(question=question), metadata=[("authorization", "Bearer reader")]
    )
    assert unmatched.status == "no_match" and not unmatched.labels
    assert "checks_for_state" not in unmatched.message
    # A template the key may not use is answered exactly like one that does not exist.
    denied, unknown = (
        stub.QueryRows(
            pb.GatewayRequest(name=name, params={"state": "Kentucky"}),
            metadata=[("authorization", "Bearer reader")],
        )
        for name in ("checks_for_state", "checks_for_states")
    )
    assert (denied.status, denied.message, denied.source_id) == (
        "invalid",
        "no template 'checks_for_state'; known: []",
        "",
    )
    assert (unknown.status, unknown.message, unknown.source_id) == (
        "invalid",
        "no template 'checks_for_states'; known: []",
        "",
    )
    assert not denied.labels and json.loads(denied.blocks_json) == []
    none = stub.LookupStatus(
        pb.GatewayRequest(question="status of ticket #645"),
        metadata=[("authorization", "Bearer reader")],
    )
    assert none.status in ("denied", "no_match", "unavailable") and not none.labels
    # HTTP's limits hold here too: no 100,000-character name echoed into a trace.
    for request in (
        pb.GatewayRequest(name="x" * 100_000),
        pb.GatewayRequest(question="q" * 100_000),
        pb.GatewayRequest(name="checks_for_state", params={"state": "K" * 5000}),
    ):
        with pytest.raises(grpc.RpcError) as err:
            stub.QueryRows(request, metadata=[("authorization", "Bearer analyst")])
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "the limit is" in (err.value.details() or "") or "at most" in (
            err.value.details() or ""
        )


def test_an_answer_from_rows_carries_its_blocks_confidence_reason_and_model(
    stub: pb_grpc.RaglineStub,
) -> None:
    """A gRPC client gets what HTTP's /v1/ask gives: the cited blocks a [DB_...] label
    resolves to, the confidence, why a not-covered answer is not covered, the model."""
    analyst = [("authorization", "Bearer analyst")]

    def ask(question: str) -> pb.Answer:
        events = list(stub.Ask(pb.AskRequest(question=question), metadata=analyst))
        return events[-1].answer

    found = ask("How many permit checks did Kentucky have?")
    assert found.answered_by == "rows" and found.covered and not found.reason
    assert found.confidence == 1.0
    (label,) = found.block_labels
    assert label == "[DB_checks_for_state_1]" and label in found.answer
    (block,) = json.loads(found.blocks_json)
    assert block["label"] == label and block["source_kind"] == "rows"
    assert "264140" in json.dumps(block["content"]).replace(",", "")
    assert (found.model.tier, found.model.model) == ("none", "")
    assert found.model.reason

    missing = ask("How many tickets were opened in May 2019?")
    assert missing.answered_by == "rows" and not missing.covered
    assert missing.reason == "no rows match month=2019-05"
    assert missing.confidence == 1.0 and missing.model.tier == "none"
    assert missing.block_labels == ["[DB_tickets_opened_1]"]

    # A document answer has its model, confidence and cited blocks too.
    docs = ask("What is the capital of Mongolia?")
    assert docs.answered_by == "documents" and not docs.covered
    assert docs.reason and 0 < docs.confidence <= 1 and docs.model.tier == "none"


def test_upload_refusals_keep_their_reason_and_code(
    stub: pb_grpc.RaglineStub, settings: Settings
) -> None:
    """The same refusals as HTTP's 403, 422 and 415, with the same messages, and no
    stored bytes left behind by a refused upload."""
    uploads = settings.data_dir / "uploads"
    before = sorted(p.name for p in uploads.glob("*")) if uploads.is_dir() else []
    cases = [
        # the writer holds "finance" only: it may not restrict a document to "legal"
        (
            pb.UploadRequest(filename="a.md", content=b"# A\n\ntext", acl_tags=["legal"]),
            grpc.StatusCode.PERMISSION_DENIED,
            "only restrict a document to tags you hold",
        ),
        (
            pb.UploadRequest(filename="empty.md", content=b""),
            grpc.StatusCode.INVALID_ARGUMENT,
            "the uploaded file is empty",
        ),
        (
            pb.UploadRequest(filename="blob.bin", content=bytes(range(256)) * 8),
            grpc.StatusCode.INVALID_ARGUMENT,
            "unsupported file type",
        ),
    ]
    for request, code, words in cases:
        with pytest.raises(grpc.RpcError) as refused:
            stub.UploadDocument(request, metadata=WRITER)
        assert refused.value.code() == code, refused.value.details()
        assert words in str(refused.value.details())
    after = sorted(p.name for p in uploads.glob("*")) if uploads.is_dir() else []
    assert after == before


def _wait_done(stub: pb_grpc.RaglineStub, job_id: str, who: list[tuple[str, str]]) -> pb.Job:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        job = stub.GetJob(pb.JobRequest(job_id=job_id), metadata=who)
        if job.done:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} never finished")


def test_a_jobs_progress_and_a_delete_over_grpc(stub: pb_grpc.RaglineStub) -> None:
    """An upload's job is polled to its end; a broken file's job says why it failed; a
    delete unserves the document and its job converges. Jobs follow the HTTP rule: the
    owner, and whoever may read the document, see them; others get NOT_FOUND."""
    notes = _upload(stub, "release-notes.md", ["finance"])
    job = _wait_done(stub, notes.job_id, WRITER)
    assert (job.kind, job.state, job.doc_id) == ("ingest", "searchable", notes.doc_id)
    assert job.created_at and job.updated_at
    assert _wait_done(stub, notes.job_id, FIN).state == "searchable"  # may read the doc
    for who, job_id in ((READER, notes.job_id), (WRITER, "no-such-job")):
        with pytest.raises(grpc.RpcError) as hidden:
            stub.GetJob(pb.JobRequest(job_id=job_id), metadata=who)
        assert hidden.value.code() == grpc.StatusCode.NOT_FOUND

    broken = stub.UploadDocument(
        pb.UploadRequest(filename="broken.pdf", content=b"%PDF-1.7\n not really a pdf"),
        metadata=WRITER,
    )
    failed = _wait_done(stub, broken.job_id, WRITER)
    assert failed.state == "failed" and failed.reason

    with pytest.raises(grpc.RpcError) as readonly:
        stub.DeleteDocument(pb.DeleteRequest(doc_id=notes.doc_id), metadata=READER)
    assert readonly.value.code() == grpc.StatusCode.PERMISSION_DENIED
    deleting = stub.DeleteDocument(pb.DeleteRequest(doc_id=notes.doc_id), metadata=WRITER)
    assert deleting.kind == "delete" and deleting.doc_id == notes.doc_id
    with pytest.raises(grpc.RpcError) as gone:
        stub.GetDocumentMeta(pb.DocumentMetaRequest(doc_id=notes.doc_id), metadata=WRITER)
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND  # unserved at once
    assert _wait_done(stub, deleting.job_id, WRITER).state == "deleted"
    with pytest.raises(grpc.RpcError) as again:
        stub.DeleteDocument(pb.DeleteRequest(doc_id=notes.doc_id), metadata=WRITER)
    assert again.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_reupload_without_tags_keeps_the_documents_tags(stub: pb_grpc.RaglineStub) -> None:
    """As over HTTP, leaving the tags out keeps an existing document's ACL: re-uploading a
    restricted document never opens it up by omission; `public` does that on purpose."""

    def put(content: bytes, **fields: object) -> pb.Job:
        up = stub.UploadDocument(
            pb.UploadRequest(filename="vault-notes.md", content=content, **fields),
            metadata=WRITER,
        )
        return _wait_done(stub, up.job_id, WRITER)

    first = put(b"# Vault notes\n\nThe vault opens at nine.\n", acl_tags=["finance"])
    assert first.state == "searchable"
    second = put(b"# Vault notes\n\nThe vault opens at ten.\n")  # new bytes, no tags
    assert second.state == "searchable" and second.doc_id == first.doc_id
    with pytest.raises(grpc.RpcError) as hidden:
        stub.GetDocumentMeta(pb.DocumentMetaRequest(doc_id=first.doc_id), metadata=READER)
    assert hidden.value.code() == grpc.StatusCode.NOT_FOUND
    assert len(_wait_searchable(stub, first.doc_id).versions) == 2

    with pytest.raises(grpc.RpcError) as both:
        put(b"# Vault notes\n\nThe vault opens at ten.\n", acl_tags=["finance"], public=True)
    assert both.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    opened = put(b"# Vault notes\n\nThe vault opens at ten.\n", public=True)
    assert opened.state == "searchable"
    meta = stub.GetDocumentMeta(pb.DocumentMetaRequest(doc_id=first.doc_id), metadata=READER)
    assert meta.doc_id == first.doc_id


def test_calls_over_the_in_flight_bound_are_refused_at_once() -> None:
    """With `max_in_flight` calls being served, the next gets RESOURCE_EXHAUSTED at once
    instead of waiting behind them; once they end, calls are served again."""
    from types import SimpleNamespace

    from core.types import Principal
    from ragline.grpc.server import create_server

    release = threading.Event()
    entered = threading.Event()

    async def run(_principal: Principal, question: str, **_kw: object) -> dict[str, object]:
        if question == "hold":
            entered.set()
            while not release.is_set():
                await asyncio.sleep(0.01)
        return {
            "question": question,
            "covered": False,
            "hits": [],
            "warnings": [],
            "route": {"rule": "test"},
        }

    ctx = SimpleNamespace(
        keys=SimpleNamespace(admit=lambda key: Principal("u") if key == "k" else None),
        queries=SimpleNamespace(run=run),
    )
    port = free_port()
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stop = threading.Event()

    async def serving() -> None:
        server = create_server(ctx, f"127.0.0.1:{port}", 4, max_in_flight=1)  # type: ignore[arg-type]
        await server.start()
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.02)
        await server.stop(grace=1)

    thread = threading.Thread(target=lambda: loop.run_until_complete(serving()), daemon=True)
    thread.start()
    assert started.wait(30)
    key = [("authorization", "Bearer k")]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.RaglineStub(channel)
        held = stub.Search.future(pb.SearchRequest(question="hold"), metadata=key)
        assert entered.wait(10)
        began = time.monotonic()
        with pytest.raises(grpc.RpcError) as over:
            stub.Search(pb.SearchRequest(question="next"), metadata=key, timeout=10)
        took = time.monotonic() - began
        release.set()
        assert held.result(timeout=10).question == "hold"
        after = stub.Search(pb.SearchRequest(question="after"), metadata=key, timeout=10)
    stop.set()
    thread.join(10)
    assert over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert took < 2  # refused, not queued behind the held call
    assert after.question == "after"
