"""The tool-calling agent loop, end to end against a scripted OpenAI-compatible server:
real HTTP, real stores, the model's tool calls replayed verbatim (malformed ones too)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import ScriptedLLM, calls, scripted_llm, text, tool_labels

from core.settings import AgentSettings, LLMSettings, Settings
from core.types import Principal
from generation.conversation import Turn
from generation.language import DEFAULT_NOT_COVERED
from ragline.agent import AgentReply
from ragline.app import Ragline

FIXTURES = Path(__file__).parent.parent / "fixtures" / "conversation"
DOCS = ["payments-runbook.md", "incident-log.md", "release-notes.md"]
USER = Principal(user="amy")


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm() as server:
        yield server


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM) -> Iterator[Ragline]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("agent"),
        llm=LLMSettings(base_url=llm.url, model="scripted", timeout_s=10),
        agent=AgentSettings(max_steps=3),
    )
    r = Ragline(settings)
    outcomes, _ = r.ingest([FIXTURES / d for d in DOCS])
    assert all(o.status == "indexed" for o in outcomes), outcomes
    yield r
    r.close()


@pytest.fixture(autouse=True)
def fresh(llm: ScriptedLLM) -> None:
    llm.requests.clear()
    llm.script.clear()


def ask(rag: Ragline, question: str, *earlier: Turn) -> AgentReply:
    return asyncio.run(rag.aagent([*earlier, Turn("user", question)], USER))


def cite_first(extra: str = "") -> Any:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        labels = tool_labels(body)
        return text(f"E102 means the gateway did not answer in time. {labels[0]}{extra}")

    return reply


def assert_paired(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool_calls message is followed by one tool message per call id."""
    for i, m in enumerate(messages):
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            following = messages[i + 1 : i + 1 + len(ids)]
            assert [f["role"] for f in following] == ["tool"] * len(ids), messages
            assert [f["tool_call_id"] for f in following] == ids
        if m["role"] == "tool":
            assert messages[i - 1]["role"] in ("assistant", "tool")


def test_search_then_cited_answer_with_invented_label_removed(
    rag: Ragline, llm: ScriptedLLM
) -> None:
    llm.queue(calls(("search_documents", {"query": "error E102"})), cite_first(" [Docffffff_p9]"))
    reply = ask(rag, "What does error E102 mean?")
    a = reply.answer
    assert a.covered and a.mode == "agent" and a.citations
    assert "[Docffffff_p9]" not in a.text and a.removed_labels == ("[Docffffff_p9]",)
    assert a.model is not None and a.model.model == "scripted"
    [step] = reply.trace
    assert step["tool"] == "search_documents" and step["parse_mode"] == "strict"
    assert step["arguments"] == {"query": "error E102"} and step["result_items"] >= 1
    assert step["result_chars"] > 0 and step["ms"] >= 0
    # The tool result the model read: formatted JSON with name, snippet, score, label.
    tool_msg = next(m for m in llm.requests[1]["messages"] if m["role"] == "tool")
    result = json.loads(tool_msg["content"])
    first = result["results"][0]
    assert set(first) >= {"document", "label", "snippet", "score"} and result["covered"]
    best = first["score"]
    assert all(r["score"] >= best - 0.15 for r in result["results"])
    # The system prompt goes out every round; calls and results stay paired.
    for body in llm.requests:
        assert body["messages"][0]["role"] == "system"
        assert "search_documents" in body["messages"][0]["content"]
        assert_paired(body["messages"])
    assert "tools" in llm.requests[0] and llm.requests[0]["tools"][0]["type"] == "function"


def test_malformed_arguments_never_crash_the_loop(rag: Ragline, llm: ScriptedLLM) -> None:
    llm.queue(
        calls(
            ("search_documents", "{'query': 'E102 gateway', top_k: 9,}"),  # python-ish JSON
            ("search_documents", '{"query": "who fixed E102", "top_k": 2'),  # truncated
            ("search_documents", "query: E205 issuer, top_k=2"),  # key/value prose
            ("search_documents", "Who fixed E102"),  # just the query
            ("web_search", '{"q": "E102"}'),  # a tool that does not exist
            ("get_document_meta", ""),  # required argument missing
        ),
        cite_first(),
    )
    reply = ask(rag, "What does error E102 mean and who fixed it?")
    modes = [t["parse_mode"] for t in reply.trace]
    assert modes == ["repaired", "repaired", "key_value", "raw", "empty", "empty"]
    assert reply.trace[0]["arguments"] == {"query": "E102 gateway", "top_k": 5}
    assert any("adjusted" in n for n in reply.trace[0]["notes"])
    assert reply.trace[2]["arguments"] == {"query": "E205 issuer", "top_k": 2}
    assert reply.trace[3]["arguments"] == {"query": "Who fixed E102"}
    assert "unknown tool" in reply.trace[4]["error"]
    assert "missing required" in reply.trace[5]["error"]
    assert reply.answer.covered and reply.answer.citations
    assert_paired(llm.requests[1]["messages"])


def test_max_steps_then_forced_answer_and_compression(rag: Ragline, llm: ScriptedLLM) -> None:
    for q in ("E102", "E205", "certificate rotation", "issuer allow-list"):
        llm.queue(calls(("search_documents", {"query": q})))
    reply = ask(rag, "Tell me everything about error E102")
    assert reply.rounds == 3 and len(llm.requests) == 4
    assert all("tools" in body for body in llm.requests[:3])
    assert "tools" not in llm.requests[3]  # the last round must answer
    last = llm.requests[3]["messages"]
    assert_paired(last)
    summaries = [m for m in last if m["role"] == "assistant" and not m.get("tool_calls")]
    assert (
        len(summaries) == 1
        and "Round 1: search_documents(query='E102')" in (summaries[0]["content"])
    )
    assert sum(1 for m in last if m.get("tool_calls")) == 2  # the last two rounds whole
    # It asked for a 4th round anyway: ignored, and the extractive answer stands in.
    assert reply.answer.mode == "extractive" and reply.answer.covered
    assert any("after its 3 rounds" in w for w in reply.answer.warnings)


def test_chit_chat_needs_no_tools(rag: Ragline, llm: ScriptedLLM) -> None:
    llm.queue(text("Hello! I am Ragline, I answer from your documents. [Doc123456_p1]"))
    reply = ask(rag, "hello, who are you")
    assert "tools" not in llm.requests[0] and reply.trace == []
    assert reply.answer.mode == "chat" and "I am Ragline" in reply.answer.text
    assert "[Doc123456_p1]" not in reply.answer.text  # nothing to cite: labels removed


def test_comparison_searches_each_side(rag: Ragline, llm: ScriptedLLM) -> None:
    def compare(body: dict[str, Any]) -> dict[str, Any]:
        a, b = tool_labels(body)[:2]
        return text(f"The runbook says 30 seconds {a}. The incident log says 20 seconds {b}.")

    # The model only searches one side; the loop searches the other itself.
    llm.queue(
        calls(("search_documents", {"query": "E102 definition", "document": "Payments Runbook"})),
        compare,
    )
    reply = ask(
        rag, "Do documents Payments Runbook and Incident Log define error code E102 the same way?"
    )
    searches = [t for t in reply.trace if t["tool"] == "search_documents"]
    assert [t["by"] for t in searches] == ["model", "ragline"]
    assert searches[1]["arguments"]["document"] == "Incident Log"
    titles = {c.title for c in reply.answer.citations}
    assert titles == {"Payments Runbook", "Incident Log 2024"}, reply.answer
    results = [json.loads(m["content"]) for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert {r["document"] for r in results[0]["results"]} == {"Payments Runbook"}
    assert {r["document"] for r in results[1]["results"]} == {"Incident Log 2024"}


def test_not_in_material_under_threshold(rag: Ragline, llm: ScriptedLLM) -> None:
    llm.queue(
        calls(("search_documents", {"query": "capital of Mongolia"})),
        text(DEFAULT_NOT_COVERED["en"]),
    )
    reply = ask(rag, "What is the capital of Mongolia?")
    result = json.loads(
        next(m for m in llm.requests[1]["messages"] if m["role"] == "tool")["content"]
    )
    assert result["covered"] is False and result["results"] == []
    assert "not in the material" in result["note"]
    assert not reply.answer.covered and reply.answer.text == DEFAULT_NOT_COVERED["en"]


def test_answer_without_search_is_not_trusted(rag: Ragline, llm: ScriptedLLM) -> None:
    llm.queue(text("E205 means the moon is full."), text("Still no labels here."))
    reply = ask(rag, "What does error E205 mean?")
    assert reply.trace[0]["by"] == "ragline"  # the loop searched when the model would not
    assert reply.answer.mode == "extractive" and "declined" in reply.answer.text
    assert "moon" not in reply.answer.text
    assert any("without searching" in w for w in reply.answer.warnings)
    assert any("cited no passage" in w for w in reply.answer.warnings)


def test_follow_up_turn_searches_with_the_first_turns_focus(rag: Ragline, llm: ScriptedLLM) -> None:
    llm.queue(text("It happened recently."), text("No idea."))
    reply = ask(
        rag,
        "Who fixed it?",
        Turn("user", "What does error E102 mean?"),
        Turn("assistant", "The gateway did not answer within 30 seconds."),
    )
    assert reply.focus.carried == ("E102",)
    assert reply.trace[0]["arguments"]["query"] == "Who fixed it? E102"
    assert "Dana Whitfield" in reply.answer.text
    # The earlier turns went to the model as plain messages, the question last.
    msgs = llm.requests[0]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[-1]["content"] == "Who fixed it?"


def test_llm_down_falls_back_to_extractive(rag: Ragline, llm: ScriptedLLM) -> None:
    reply = ask(rag, "What does error E205 mean?")  # nothing queued: HTTP 500
    assert reply.answer.mode == "extractive" and "declined" in reply.answer.text
    assert any("LLM call failed" in w for w in reply.answer.warnings)


def test_http_agent_and_chat_agent_mode_carry_the_trace(tmp_path: Path, llm: ScriptedLLM) -> None:
    import openai
    from fastapi.testclient import TestClient

    from core.settings import ApiKey, ApiSettings
    from ragline.api import create_app

    settings = Settings(
        data_dir=tmp_path,
        llm=LLMSettings(base_url=llm.url, model="scripted", timeout_s=10),
        api=ApiSettings(keys=[ApiKey(key="k", user="amy")]),
    )
    r = Ragline(settings)
    r.ingest([FIXTURES / d for d in DOCS])
    r.close()
    llm.queue(calls(("search_documents", '{"query": "E205"}')), cite_first())
    llm.queue(calls(("search_documents", "E205 issuer")), cite_first())
    with TestClient(create_app(settings)) as client:
        out = client.post(
            "/v1/agent", headers={"X-API-Key": "k"}, json={"question": "What is E205?"}
        ).json()
        assert out["mode"] == "agent" and out["citations"] and out["rounds"] == 1
        assert out["trace"][0]["tool"] == "search_documents"
        assert out["model"] == {
            "tier": "default",
            "model": "scripted",
            "reason": "task 'agent' is complex analysis; no large endpoint configured, "
            "using default",
        }
        sdk = openai.OpenAI(base_url="http://testserver/v1", api_key="k", http_client=client)
        chat = sdk.chat.completions.create(
            model="ragline",
            messages=[{"role": "user", "content": "What is E205?"}],
            extra_body={"ragline": {"mode": "agent"}},
        )
        ext = (chat.model_extra or {})["ragline"]
        assert ext["trace"][0]["parse_mode"] == "raw" and ext["citations"]
        metrics = client.get("/metrics").text
        assert 'ragline_llm_model_choices_total{model="scripted",tier="default"}' in metrics


def test_document_meta_tool_takes_a_label_or_a_name(rag: Ragline, llm: ScriptedLLM) -> None:
    def meta_of_first(body: dict[str, Any]) -> dict[str, Any]:
        return calls(
            ("get_document_meta", {"doc_id": tool_labels(body)[0]}),
            ("get_document_meta", "Incident Log 2024"),
            ("get_document_meta", {"doc_id": "no such document"}),
        )

    llm.queue(calls(("search_documents", {"query": "E205"})), meta_of_first, cite_first())
    reply = ask(rag, "Which document defines E205, and when was it last changed?")
    metas = [t for t in reply.trace if t["tool"] == "get_document_meta"]
    assert [m["result_items"] for m in metas] == [1, 1, 0]
    assert "no document" in metas[2]["error"]
    results = [json.loads(m["content"]) for m in llm.requests[2]["messages"] if m["role"] == "tool"]
    assert results[2]["documents"][0]["title"] == "Incident Log 2024"
    assert results[2]["documents"][0]["current_version"]
