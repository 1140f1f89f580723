"""The agent loop's pure parts: tolerant argument parsing, compression, question shapes,
conversation focus and the model routing rule."""

from __future__ import annotations

import asyncio
import json

import pytest

from core.settings import LLMSettings, ModelRoutingSettings
from generation.agent.args import parse_arguments
from generation.agent.loop import Round, compress
from generation.agent.shapes import comparison_of, is_chit_chat
from generation.agent.tools import Tool, ToolOutput, ToolRegistry, ToolRun
from generation.conversation import Turn, extract_focus, focus_terms, leans_on_history
from generation.model_router import ModelRouter

KNOWN = frozenset({"query", "top_k"})


@pytest.mark.parametrize(
    ("raw", "mode", "values"),
    [
        ('{"query": "E102", "top_k": 2}', "strict", {"query": "E102", "top_k": 2}),
        ("{'query': 'E102'}", "repaired", {"query": "E102"}),
        ('{query: "E102", top_k: 2,}', "repaired", {"query": "E102", "top_k": 2}),
        ('```json\n{"query": "E102"}\n```', "repaired", {"query": "E102"}),
        ('{"query": "E102", "top_k": 2', "repaired", {"query": "E102", "top_k": 2}),
        ('{"query": "who fixed E1', "repaired", {"query": "who fixed E1"}),
        ("query=E102 timeout; top_k=4", "key_value", {"query": "E102 timeout", "top_k": 4}),
        ('query: "E102, gateway"', "key_value", {"query": "E102, gateway"}),
        ("What does E102 mean", "raw", {"query": "What does E102 mean"}),
        ("", "empty", {}),
        ("{}", "empty", {}),
        (None, "empty", {}),
    ],
)
def test_tolerant_argument_parsing(raw: str | None, mode: str, values: dict) -> None:
    parsed = parse_arguments(raw, "query", KNOWN)
    assert (parsed.mode, parsed.values) == (mode, values)


def test_object_arguments_and_prose_are_not_mistaken_for_keys() -> None:
    assert parse_arguments({"query": "x"}, "query").mode == "strict"
    # "Note: ..." is prose, not a parameter: the whole text becomes the query.
    parsed = parse_arguments("Note: look up E102", "query", KNOWN)
    assert parsed.mode == "raw" and parsed.values == {"query": "Note: look up E102"}


def _registry() -> ToolRegistry:
    async def echo(args: dict) -> ToolOutput:
        return ToolOutput({"args": args}, (), 1)

    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "required": ["query"],
    }
    return ToolRegistry([Tool("search_documents", "search", schema, echo)])


def test_registry_coerces_clamps_and_reports() -> None:
    reg = _registry()
    run = asyncio.run(reg.call("c1", "functions.search_documents", '{"query": 7, "top_k": "9"}'))
    assert run.name == "search_documents" and run.arguments == {"query": "7", "top_k": 5}
    assert run.notes and "adjusted" in run.notes[0]
    missing = asyncio.run(reg.call("c2", "search_documents", '{"top_k": 2}'))
    assert "missing required" in missing.error and missing.output.content["error"]
    unknown = asyncio.run(reg.call("c3", "browse", "{}"))
    assert "unknown tool" in unknown.error
    with pytest.raises(ValueError, match="already registered"):
        reg.register(Tool("search_documents", "again", {}, None))  # type: ignore[arg-type]


def _round(i: int) -> Round:
    run = ToolRun(
        f"call_{i}",
        "search_documents",
        json.dumps({"query": f"q{i}"}),
        {"query": f"q{i}"},
        "strict",
        ToolOutput({"results": [{"label": f"[Doc00000{i}_p1]"}]}, (), 1),
        1.0,
    )
    return Round(i, "", [run], 1.0)


def test_compression_keeps_the_last_two_rounds_whole() -> None:
    messages = compress([_round(1), _round(2), _round(3), _round(4)], keep=2)
    summary = messages[0]
    assert summary["role"] == "assistant" and "tool_calls" not in summary
    assert (
        "Round 1: search_documents(query='q1') -> 1 passages [Doc000001_p1]" in (summary["content"])
    )
    assert "Round 2" in summary["content"] and "Round 3" not in summary["content"]
    assert [m["role"] for m in messages[1:]] == ["assistant", "tool", "assistant", "tool"]
    assert messages[2]["tool_call_id"] == messages[1]["tool_calls"][0]["id"] == "call_3"


def test_question_shapes() -> None:
    assert is_chit_chat("hello, who are you") and is_chit_chat("Thanks!") and is_chit_chat("你好")
    assert not is_chit_chat("hello, what does E102 mean?")
    c = comparison_of("Do documents Payments Runbook and Incident Log define E102 the same way?")
    assert c is not None and c.sides == ("Payments Runbook", "Incident Log") and c.topic == "E102"
    c = comparison_of("What is the difference between TiDB and MySQL?")
    assert c is not None and c.sides == ("TiDB", "MySQL")
    assert comparison_of("What does E102 mean?") is None


def test_conversation_focus() -> None:
    assert focus_terms("Does tikv.yaml in TiDB 7.5.0 follow GDPR per Dana Wu?") == (
        "tikv.yaml",
        "TiDB",
        "7.5.0",
        "GDPR",
        "Dana Wu",
    )
    turns = [
        Turn("user", "What does error E102 mean?"),
        Turn("assistant", "A timeout."),
        Turn("user", "When did it last occur?"),
    ]
    focus = extract_focus(turns)
    assert focus.carried == ("E102",) and focus.query == "When did it last occur? E102"
    # A turn with its own subject carries nothing over.
    own = extract_focus([*turns, Turn("user", "What does error E205 mean?")])
    assert own.carried == () and own.query == "What does error E205 mean?"
    assert leans_on_history("它是什么时候发生的？") and not leans_on_history("What is E205?")
    # Labels in assistant turns are not a focus.
    labels = extract_focus([Turn("assistant", "See [Docab12cd_p3]."), Turn("user", "why?")])
    assert labels.carried == ()
    # ... nor the numbered label of one of several passages on a page.
    labels = extract_focus([Turn("assistant", "See [Docab12cd_p3.2]."), Turn("user", "why?")])
    assert labels.carried == ()


def test_model_routing_rule_and_fallbacks() -> None:
    both = ModelRoutingSettings(
        small=LLMSettings(base_url="http://small/v1", model="s"),
        large=LLMSettings(base_url="http://large/v1", model="l"),
    )
    router = ModelRouter(both, LLMSettings())
    assert router.choose("What is E102?").tier == "small"
    assert router.choose("What is E102?", task="analysis").tier == "large"
    assert router.choose("How does A relate to B?", intent="relation").tier == "large"
    long_q = "Explain " + "the retry policy of the gateway " * 6
    assert router.choose(long_q).tier == "large" and "characters" in router.choose(long_q).reason
    only_default = ModelRouter(ModelRoutingSettings(), LLMSettings(base_url="http://d/v1"))
    choice = only_default.choose("What is E102?")
    assert choice.tier == "default" and "no small endpoint" in choice.reason
    none = ModelRouter(ModelRoutingSettings(), LLMSettings()).choose("What is E102?")
    assert none.tier == "none" and none.model == ""
    # An endpoint without a model name serves the default model name.
    unnamed = ModelRouter(
        ModelRoutingSettings(small=LLMSettings(base_url="http://s/v1", model="")),
        LLMSettings(model="base-model"),
    )
    assert unnamed.choose("hi").model == "base-model"


def test_a_listing_earlier_carries_its_identifiers_not_one_long_name() -> None:
    """ "Errors E100 E101 ... E699" was carried as one 3,000-character term, and the
    follow-up was refused for a question over the length limit."""
    listing = "Errors " + " ".join(f"E{i}" for i in range(100, 700))
    turns = [
        Turn("user", listing),
        Turn("assistant", "ok"),
        Turn("user", "When did it last occur?"),
    ]
    focus = extract_focus(turns)
    assert focus.carried == ("E100", "E101", "E102")
    assert len(focus.query) < 100


def test_a_follow_up_carries_the_subject_not_the_answers_footer() -> None:
    """An OpenAI client sends Ragline's answer back as it came: its "Sources:" list (file
    paths, percent-encoded, pages) was carried as the focus ("qaA",
    "en-wikipedia-duck-docling.html", "p1"; "E4" from "%E4"), and the subject the user
    named ("the Duck article", 个人信息保护法) was not."""
    footer = (
        "\n\nSources:\n[Doc4ee729_p1] Duck (file:///tmp/qaA/pub/en-wikipedia-duck-docling.html"
        ", p1, lines 1005-1005)\n\nNote: best coverage 0.4"
    )
    turns = [
        Turn("user", "What does the Duck article say about the drake?"),
        Turn("assistant", "A drake is an adult male duck. [Doc4ee729_p1]" + footer),
        Turn("user", "What does it eat?"),
    ]
    assert extract_focus(turns).carried == ("Duck",)
    # No subject in the user's turns: the answer's words may be carried, never its footer.
    bare = [turns[1], Turn("user", "And what about bread?")]
    assert extract_focus(bare).carried == ()
    chinese = [
        Turn("user", "个人信息保护法什么时候开始施行？"),
        Turn(
            "assistant",
            "第七十四条 本法自2021年11月1日起施行。[Doc5b2e10_p1]\n\nSources:\n[Doc5b2e10_p1] "
            "个人信息保护法 (file:///tmp/qaA/%E4%B8%AA%E4%BA%BA.md, p1, lines 3-3)",
        ),
        Turn("user", "它规定的个人信息处理者应当履行哪些义务？"),
    ]
    focus = extract_focus(chinese)
    assert focus.carried == ("个人信息保护法",), focus
