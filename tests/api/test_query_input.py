"""Odd but well-formed query input: text JSON can carry and no text holds, entities that
would make the query longer than the limit, numbers sent as strings or booleans."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from ragline.limits import without_surrogates
from tests.api.conftest import ALICE

LONE = json.loads('"caf\\ud800e"')  # a lone UTF-16 surrogate, as JSON may escape one


def test_lone_surrogates_are_removed_not_a_server_error(client: TestClient) -> None:
    body = json.dumps({"question": LONE, "context": {"entities": [LONE]}}).encode()
    for path in ("/v1/search", "/v1/ask"):
        r = client.post(path, headers={**ALICE, "Content-Type": "application/json"}, content=body)
        assert r.status_code == 200, (path, r.text)
        assert r.json()["question"] == "cafe"
    r = client.post(
        "/v1/agent",
        headers={**ALICE, "Content-Type": "application/json"},
        content=json.dumps({"question": LONE}).encode(),
    )
    assert r.status_code == 200, r.text
    chat = json.dumps({"messages": [{"role": "user", "content": LONE}]}).encode()
    r = client.post(
        "/v1/chat/completions", headers={**ALICE, "Content-Type": "application/json"}, content=chat
    )
    assert r.status_code == 200, r.text
    streamed = client.post(
        "/v1/ask",
        headers={**ALICE, "Content-Type": "application/json"},
        content=json.dumps({"question": LONE, "stream": True}).encode(),
    )
    assert streamed.status_code == 200 and "event: answer" in streamed.text
    assert without_surrogates({"a": [LONE, 1]}) == {"a": ["cafe", 1]}


def test_entities_count_toward_the_query_limit(client: TestClient) -> None:
    # The test server's limit is 200 characters (tests/api/conftest.py).
    many = {"question": "", "context": {"entities": [f"w{i}" for i in range(100)]}}
    for path in ("/v1/search", "/v1/ask"):
        r = client.post(path, headers=ALICE, json=many)
        assert r.status_code == 422 and "MAX_QUERY_CHARS" in r.json()["error"]["message"]
    beside = {"question": "q" * 150, "context": {"entities": ["e" * 60]}}
    assert client.post("/v1/search", headers=ALICE, json=beside).status_code == 422
    few = {"question": "", "context": {"entities": ["w1", "w2"]}}
    assert client.post("/v1/search", headers=ALICE, json=few).status_code == 200


def test_top_k_must_be_a_number(client: TestClient) -> None:
    for top_k in ("3", True):
        r = client.post("/v1/search", headers=ALICE, json={"question": "x", "top_k": top_k})
        assert r.status_code == 422, (top_k, r.text)
    r = client.post("/v1/search", headers=ALICE, json={"question": "x", "top_k": 3})
    assert r.is_success and r.json()["route"]["top_k"] == 3  # the request's, not the rule's
