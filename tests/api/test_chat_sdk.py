"""The OpenAI-compatible endpoint through the official `openai` SDK: plain and streamed
answers, caller-defined tools, a three-turn conversation, and the /v1/ask SSE variant."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from fastapi.testclient import TestClient

from core.settings import ApiKey, ApiSettings, Settings
from ragline.api import create_app
from ragline.app import Ragline

FIXTURES = Path(__file__).parent.parent / "fixtures" / "conversation"
DOCS = ["payments-runbook.md", "incident-log.md", "release-notes.md"]
KEY = "sdk-key"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("chat-sdk"),
        api=ApiSettings(keys=[ApiKey(key=KEY, user="sam")]),
    )
    rag = Ragline(settings)
    try:
        outcomes, _ = rag.ingest([FIXTURES / d for d in DOCS])
        assert all(o.status == "indexed" for o in outcomes), outcomes
    finally:
        rag.close()
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def sdk(client: TestClient) -> openai.OpenAI:
    # The SDK speaks real HTTP through the app's test transport (TestClient is an httpx.Client).
    return openai.OpenAI(base_url="http://testserver/v1", api_key=KEY, http_client=client)


def _ext(obj: Any) -> dict[str, Any]:
    extra = obj.model_extra or {}
    return dict(extra["ragline"])


def test_sdk_plain_completion_carries_cited_answer(sdk: openai.OpenAI) -> None:
    out = sdk.chat.completions.create(
        model="ragline", messages=[{"role": "user", "content": "What does error E102 mean?"}]
    )
    message = out.choices[0].message
    assert out.choices[0].finish_reason == "stop"
    assert "30 seconds" in (message.content or "")
    ext = _ext(out)
    assert ext["covered"] and ext["citations"]
    assert ext["citations"][0]["label"] in (message.content or "")
    assert ext["model"]["tier"] == "none"  # no LLM configured: extractive, still answered


def test_sdk_stream_yields_chunks_then_references(sdk: openai.OpenAI) -> None:
    stream = sdk.chat.completions.create(
        model="ragline",
        messages=[{"role": "user", "content": "What does error E102 mean?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "30 seconds" in text and "Sources:" in text
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finals) == 1
    ext = _ext(finals[0])
    assert ext["citations"] and all(c["label"] in text for c in ext["citations"])
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 2
    assert chunks[-1].usage is not None and not chunks[-1].choices


def test_raw_stream_is_openai_sse(client: TestClient) -> None:
    r = client.post(
        "/v1/chat/completions",
        headers={"Authorization": f"Bearer {KEY}"},
        json={
            "model": "ragline",
            "stream": True,
            "messages": [{"role": "user", "content": "What does error E205 mean?"}],
        },
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = [e for e in r.text.split("\n\n") if e.strip()]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    last = json.loads(events[-2][len("data: ") :])
    assert last["object"] == "chat.completion.chunk" and "ragline" in last


def test_sdk_tools_request_answered_per_schema(sdk: openai.OpenAI) -> None:
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    out = sdk.chat.completions.create(
        model="ragline",
        messages=[{"role": "user", "content": "What does error E205 mean?"}],
        tools=tools,
        tool_choice="auto",
    )
    message = out.choices[0].message
    assert out.choices[0].finish_reason == "stop" and not message.tool_calls
    assert "declined" in (message.content or "")
    # A conversation that went through the caller's own tool round is read too.
    follow = sdk.chat.completions.create(
        model="ragline",
        messages=[
            {"role": "user", "content": "What does error E205 mean?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
            {"role": "assistant", "content": "E205 is an issuer decline."},
            {"role": "user", "content": "Who fixed it?"},
        ],
        tools=tools,
    )
    assert "Omar Haddad" in (follow.choices[0].message.content or "")
    with pytest.raises(openai.BadRequestError, match="does not call caller-defined tools"):
        sdk.chat.completions.create(
            model="ragline",
            messages=[{"role": "user", "content": "What does error E205 mean?"}],
            tools=tools,
            tool_choice="required",
        )


def test_three_turn_conversation_uses_the_first_turn(
    sdk: openai.OpenAI, client: TestClient
) -> None:
    docs_before = client.get("/v1/documents", headers={"X-API-Key": KEY}).json()
    history: list[Any] = [{"role": "user", "content": "What does error E102 mean?"}]
    first = sdk.chat.completions.create(model="ragline", messages=history)
    assert "30 seconds" in (first.choices[0].message.content or "")
    history += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "When did it last occur?"},
    ]
    second = sdk.chat.completions.create(model="ragline", messages=history)
    ext = _ext(second)
    assert "14 March 2024" in ext["answer"], ext["answer"]
    assert ext["focus"]["carried"] == ["E102"]
    # Retrieval ran on the turn plus its focus, not on the pasted history.
    assert ext["focus"]["query"] == "When did it last occur? E102"
    assert ext["question"] == "When did it last occur?"
    history += [
        {"role": "assistant", "content": second.choices[0].message.content},
        {"role": "user", "content": "Who fixed it?"},
    ]
    third = _ext(sdk.chat.completions.create(model="ragline", messages=history))
    assert "Dana Whitfield" in third["answer"], third["answer"]
    assert "Omar Haddad" not in third["answer"]

    # The same follow-ups after a different first turn follow that turn instead.
    other = [
        {"role": "user", "content": "What does error E205 mean?"},
        {"role": "assistant", "content": "The issuer declined the charge."},
        {"role": "user", "content": "When did it last occur?"},
    ]
    assert (
        "2 February 2024"
        in _ext(sdk.chat.completions.create(model="ragline", messages=other))["answer"]
    )
    # Alone, the follow-up has nothing to carry: it is asked as written.
    alone = _ext(
        sdk.chat.completions.create(
            model="ragline", messages=[{"role": "user", "content": "When did it last occur?"}]
        )
    )
    assert alone["focus"]["carried"] == [] and alone["focus"]["query"] == "When did it last occur?"
    # The conversation is kept apart from the knowledge store.
    assert client.get("/v1/documents", headers={"X-API-Key": KEY}).json() == docs_before


def test_ask_sse_variant(client: TestClient) -> None:
    r = client.post(
        "/v1/ask",
        headers={"Authorization": f"Bearer {KEY}"},
        json={"question": "Who fixed E205?", "stream": True},
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = []
    for block in r.text.strip().split("\n\n"):
        lines = block.split("\n")
        name = lines[0].removeprefix("event: ")
        data = json.loads("\n".join(x.removeprefix("data: ") for x in lines[1:]))
        events.append((name, data))
    names = [n for n, _ in events]
    assert names[0] == "status" and names[-2:] == ["answer", "done"]
    text = "".join(d["text"] for n, d in events if n == "delta")
    answer = dict(events[-2][1])
    assert text == answer["answer"] and "Omar Haddad" in text
    # The Accept header asks for the same stream; bad input is refused before it starts.
    accept = client.post(
        "/v1/ask",
        headers={"Authorization": f"Bearer {KEY}", "Accept": "text/event-stream"},
        json={"question": "Who fixed E205?"},
    )
    assert accept.text.startswith("event: status")
    bad = client.post(
        "/v1/ask",
        headers={"Authorization": f"Bearer {KEY}"},
        json={"question": " ", "stream": True},
    )
    assert bad.status_code == 422


def test_agent_without_llm_answers_extractively(sdk: openai.OpenAI, client: TestClient) -> None:
    r = client.post("/v1/agent", headers={"X-API-Key": KEY}, json={"question": "Who fixed E205?"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["mode"] == "extractive" and "Omar Haddad" in out["answer"]
    assert out["model"]["tier"] == "none" and out["trace"] == []
    assert any("no LLM configured" in w for w in out["warnings"])
    chat = sdk.chat.completions.create(
        model="ragline",
        messages=[{"role": "user", "content": "Who fixed E205?"}],
        extra_body={"ragline": {"mode": "agent"}},
    )
    assert "Omar Haddad" in (chat.choices[0].message.content or "")
    bad = client.post("/v1/agent", headers={"X-API-Key": KEY}, json={})
    assert bad.status_code == 422


def _chat(client: TestClient, messages: list[dict[str, Any]], **extra: Any) -> Any:
    body = {"model": "ragline", "messages": messages, **extra}
    return client.post(
        "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {KEY}"}
    )


def test_a_conversation_without_a_question_now_is_refused_as_every_door_does(
    client: TestClient,
) -> None:
    earlier = {"role": "user", "content": "What does error E102 mean?"}
    for last in (
        {"role": "user", "content": "   "},  # not the earlier question answered again
        {"role": "user", "content": [{"type": "text", "text": None}]},  # not "None" asked
    ):
        r = _chat(client, [earlier, last])
        assert r.status_code == 422 and "question is empty" in r.text, r.text
        agent = client.post(
            "/v1/agent", json={"messages": [earlier, last]}, headers={"X-API-Key": KEY}
        )
        assert agent.status_code == 422 and "question is empty" in agent.text, agent.text


def test_a_streamed_chat_refuses_bad_options_before_it_opens(client: TestClient) -> None:
    question = [{"role": "user", "content": "What does error E102 mean?"}]
    for stream in (False, True):
        r = _chat(client, question, stream=stream, ragline={"top_k": 1000})
        assert r.status_code == 422 and "top_k" in r.text, (stream, r.text)
