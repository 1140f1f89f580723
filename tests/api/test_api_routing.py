"""Task contexts, filters and the route object over HTTP."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from tests.api.conftest import ALICE, upload, wait_job
from tests.api.test_api import _doc


def test_task_context_filters_and_route_object(client: TestClient) -> None:
    tag = uuid.uuid4().hex[:6]
    ops = upload(
        client,
        f"quorvex-ops-{tag}.md",
        _doc(f"Quorvex{tag} pumps run at 42 bar during normal operation."),
        ALICE,
        department="ops",
    )
    sales = upload(
        client,
        f"quorvex-sales-{tag}.md",
        _doc(f"Quorvex{tag} pumps are sold at 42 euros per unit."),
        ALICE,
        department="sales",
    )
    for up in (ops, sales):
        assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"

    body = {
        "question": f"Quorvex{tag} pumps",
        "task": "troubleshooting",
        "context": {"departments": ["ops"], "entities": ["bar"]},
    }
    for path in ("/v1/search", "/v1/ask"):
        r = client.post(path, headers=ALICE, json=body)
        assert r.status_code == 200, r.text
        view = r.json()
        route = view["route"]
        assert route["rule"] == "troubleshooting" and route["strategy"] == "hybrid"
        assert route["filters"] == {"department": ["ops"]}
        assert {s["name"] for s in route["sources"]} == {"keyword", "dense"}
        assert all(s["timeout_ms"] <= 800 and s["weight"] > 0 for s in route["sources"])
        assert "synonyms_applied" in route and "fallback" in route  # a loaded box may time out
        assert {h["source"] for h in view["hits"]} == {ops["source"]}
        assert view["hits"][0]["source_class"] == "default" and view["hits"][0]["trust"] == 1.0

    # Filters alone, with an entity and no question.
    r = client.post(
        "/v1/search",
        headers=ALICE,
        json={"filters": {"department": "sales", "entities": [f"Quorvex{tag}"]}, "task": "lookup"},
    )
    assert r.status_code == 200, r.text
    assert {h["source"] for h in r.json()["hits"]} == {sales["source"]}
    assert r.json()["route"]["rule"] == "exact-lookup"


def test_doc_types_by_extension_and_unknown_ones_refused(client: TestClient) -> None:
    """A doc_type filter names a format ("markdown") or an extension of it ("md"); one no
    document can have ("pfd") is a 422 naming the known formats on every query door
    (streamed too, before the stream opens), never a silent "not covered". A task no
    routing rule names is served, with a warning."""
    tag = uuid.uuid4().hex[:6]
    up = upload(client, f"brovant-{tag}.md", _doc(f"Brovant{tag} valves close at 9 bar."), ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    question = f"At what pressure do Brovant{tag} valves close?"
    for doc_types in (["md"], [".MD"], ["markdown"]):
        r = client.post(
            "/v1/search", headers=ALICE, json={"question": question, "doc_types": doc_types}
        )
        assert r.status_code == 200, r.text
        hits = r.json()["hits"]
        assert hits[0]["source"] == up["source"], hits
        assert all(h["source"].endswith(".md") for h in hits), hits
    r = client.post(
        "/v1/ask", headers=ALICE, json={"question": question, "filters": {"doc_type": "md"}}
    )
    assert r.status_code == 200 and r.json()["covered"], r.text
    assert r.json()["route"]["filters"] == {"doc_type": ["markdown"]}

    chat = {"messages": [{"role": "user", "content": question}]}
    refused = [
        ("/v1/search", {"question": question, "doc_types": ["pfd"]}),
        ("/v1/ask", {"question": question, "doc_types": ["pfd"]}),
        ("/v1/ask", {"question": question, "doc_types": ["pfd"], "stream": True}),
        ("/v1/ask", {"question": question, "filters": {"doc_type": "pfd"}, "stream": True}),
        ("/v1/chat/completions", {**chat, "ragline": {"doc_types": ["pfd"]}}),
        ("/v1/chat/completions", {**chat, "stream": True, "ragline": {"doc_types": ["pfd"]}}),
        ("/v1/agent", {"question": question, "doc_types": ["pfd"]}),
    ]
    for path, body in refused:
        r = client.post(path, headers=ALICE, json=body)
        assert r.status_code == 422, (path, body, r.text)
        message = r.json()["error"]["message"]
        assert "'pfd' is not a document format" in message and "markdown" in message, message

    r = client.post(
        "/v1/search", headers=ALICE, json={"question": question, "task": "complaince_review"}
    )
    assert r.status_code == 200, r.text
    warned = [w for w in r.json()["warnings"] if "complaince_review" in w]
    assert warned and "compliance_review" in warned[0], r.json()["warnings"]
    r = client.post("/v1/search", headers=ALICE, json={"question": question, "task": "lookup"})
    assert not any("routing rule" in w for w in r.json()["warnings"]), r.json()["warnings"]


def test_bad_context_is_a_clear_422(client: TestClient) -> None:
    r = client.post(
        "/v1/search", headers=ALICE, json={"question": "x", "context": {"date_range": "soon"}}
    )
    assert r.status_code == 422 and "date_range" in r.json()["error"]["message"]
    r = client.post("/v1/ask", headers=ALICE, json={"question": "", "context": {"region": "eu"}})
    assert r.status_code == 422 and "question is empty" in r.json()["error"]["message"]


def test_gaps_endpoint_for_writers_only(client: TestClient) -> None:
    from tests.api.conftest import READER

    q = f"What is the flumox-{uuid.uuid4().hex[:6]} calibration interval?"
    for _ in range(2):
        assert (
            client.post("/v1/ask", headers=ALICE, json={"question": q}).json()["covered"] is False
        )
    r = client.get("/v1/gaps", headers=ALICE)
    assert r.status_code == 200, r.text
    gap = next(g for g in r.json()["gaps"] if g["question"] == q)
    assert gap["count"] >= 1 and gap["status"] == "open" and gap["reason"] == "not covered"
    csv = client.get("/v1/gaps?format=csv", headers=ALICE)
    assert csv.status_code == 200 and q in csv.text and csv.text.startswith("question,count")
    assert client.get("/v1/gaps", headers=READER).status_code == 403
    metrics = client.get("/metrics").text
    assert 'ragline_knowledge_gaps_total{reason="not_covered"}' in metrics
