"""The OpenAI-compatible client, over real HTTP against the in-test server."""

from __future__ import annotations

import asyncio
import time

import pytest
from fake_llm_server import FakeLLMServer, Reply

from core.errors import ConfigError
from core.settings import LLMSettings
from generation.agent.chat import ToolChatClient
from generation.http_clients import LoopClients, tls_context
from generation.llm import LLMError, LLMTimeout, OpenAICompatibleClient


def client_for(server: FakeLLMServer, **overrides: object) -> OpenAICompatibleClient:
    settings = LLMSettings(
        base_url=server.url + "/",
        model="tiny-chat",
        api_key="sekrit",
        timeout_s=5.0,
        max_tokens=77,
        temperature=0.1,
    )
    return OpenAICompatibleClient(settings.model_copy(update=overrides))


def test_chat_posts_an_openai_request(llm_server: FakeLLMServer) -> None:
    llm_server.queue(Reply("<think>hmm</think> Forty-two."))
    with client_for(llm_server) as client:
        reply = client.chat([{"role": "user", "content": "hi"}])
    assert reply == "Forty-two."
    (req,) = llm_server.received
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == "Bearer sekrit"
    assert req.body == {
        "model": "tiny-chat",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.1,
        "max_tokens": 77,
    }


def test_http_error_names_url_and_status(llm_server: FakeLLMServer) -> None:
    llm_server.queue(Reply(status=500, raw_body='{"error": "boom"}'))
    with client_for(llm_server) as client, pytest.raises(LLMError) as info:
        client.chat([{"role": "user", "content": "hi"}])
    assert info.value.status == 500
    assert info.value.url == llm_server.url + "/chat/completions"
    assert "HTTP 500" in str(info.value) and llm_server.url in str(info.value)


def test_malformed_response_is_an_llm_error(llm_server: FakeLLMServer) -> None:
    llm_server.queue(Reply(raw_body='{"choices": []}'))
    with client_for(llm_server) as client, pytest.raises(LLMError, match="unexpected"):
        client.chat([{"role": "user", "content": "hi"}])


def test_timeout_is_reported_as_such(llm_server: FakeLLMServer) -> None:
    llm_server.queue(Reply("late", delay_s=2.0))
    started = time.perf_counter()
    with client_for(llm_server, timeout_s=0.3) as client, pytest.raises(LLMTimeout) as info:
        client.chat([{"role": "user", "content": "hi"}])
    assert time.perf_counter() - started < 1.5
    assert "0.3s" in str(info.value) and info.value.status is None


def test_unreachable_server() -> None:
    client = OpenAICompatibleClient(LLMSettings(base_url="http://127.0.0.1:9/v1", timeout_s=1))
    with pytest.raises(LLMError, match="unreachable"):
        client.chat([{"role": "user", "content": "hi"}])


def test_achat(llm_server: FakeLLMServer) -> None:
    llm_server.queue(Reply("async ok"), Reply(status=503, raw_body="down"))
    client = client_for(llm_server)
    assert asyncio.run(client.achat([{"role": "user", "content": "a"}])) == "async ok"
    with pytest.raises(LLMError, match="HTTP 503"):
        asyncio.run(client.achat([{"role": "user", "content": "b"}]))
    assert llm_server.received[0].body["messages"] == [{"role": "user", "content": "a"}]
    assert llm_server.received[0].headers["Authorization"] == "Bearer sekrit"


def test_achat_reuses_a_connection_on_one_loop(llm_server: FakeLLMServer) -> None:
    """Calls on one event loop share a pooled client (one connection, kept alive); a new
    loop gets its own client, and a closed loop's client is not used again."""
    llm_server.queue(Reply("one"), Reply("two"), Reply("three"))
    client = client_for(llm_server)

    async def two_calls() -> list[str]:
        return [
            await client.achat([{"role": "user", "content": "a"}]),
            await client.achat([{"role": "user", "content": "b"}]),
        ]

    assert asyncio.run(two_calls()) == ["one", "two"]
    assert asyncio.run(client.achat([{"role": "user", "content": "c"}])) == "three"
    peers = [r.peer for r in llm_server.received]
    assert peers[0] == peers[1] != peers[2]
    client.close()


def test_tool_chat_reuses_a_connection_on_one_loop(llm_server: FakeLLMServer) -> None:
    llm_server.queue(Reply("first"), Reply("second"))
    chat = ToolChatClient(LLMSettings(base_url=llm_server.url, model="tiny-chat", timeout_s=5.0))

    async def rounds() -> list[str]:
        texts = []
        for content in ("a", "b"):
            turn = await chat.complete([{"role": "user", "content": content}])
            texts.append(turn.content)
        await chat.aclose()
        return texts

    assert asyncio.run(rounds()) == ["first", "second"]
    assert llm_server.received[0].peer == llm_server.received[1].peer


def test_loop_clients_one_per_loop_and_one_tls_context() -> None:
    clients = LoopClients(timeout=1.0)

    async def take() -> tuple[object, object]:
        return clients.client(), clients.client()

    first, again = asyncio.run(take())
    assert first is again
    second, _ = asyncio.run(take())
    assert second is not first
    assert len(clients._clients) == 1  # the closed loop's client was dropped
    assert tls_context() is tls_context()


def test_summarize_returns_one_sentence(llm_server: FakeLLMServer) -> None:
    llm_server.queue(Reply('"The policy sets log retention to 90 days. It also covers backups."'))
    with client_for(llm_server) as client:
        summary = client.summarize("Long passage about logs. " * 400)
    assert summary == "The policy sets log retention to 90 days."
    (req,) = llm_server.received
    assert len(req.body["messages"][1]["content"]) == 4000  # input cut to a budget
    assert "one sentence" in req.body["messages"][0]["content"]


def test_missing_base_url_names_the_setting() -> None:
    with pytest.raises(ConfigError, match="RAGLINE_LLM__BASE_URL"):
        OpenAICompatibleClient(LLMSettings(base_url=""))
