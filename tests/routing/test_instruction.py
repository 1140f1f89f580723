import asyncio
from datetime import date

import pytest

from core.errors import InvalidRequest
from core.types import Principal, QueryFilter
from routing.instruction import (
    InstructionBuilder,
    TaskContext,
    parse_filter_args,
    rules_instruction,
)


def test_context_becomes_filters_and_query() -> None:
    ctx = TaskContext.parse(
        {
            "task": "compliance_review",
            "entities": ["第十三条", "敏感个人信息"],
            "region": "广东",
            "date_range": "2021-01-01..2021-12-31",
            "doc_types": ["markdown"],
            "department": "legal",
        }
    )
    ins = rules_instruction("个人信息处理者何时可以处理个人信息？", ctx)
    assert ins.query.endswith("第十三条 敏感个人信息 广东")
    assert ins.filters_view() == {
        "doc_type": ["markdown"],
        "department": ["legal"],
        "date_range": ["2021-01-01", "2021-12-31"],
    }
    assert ins.boost_terms == ("第十三条", "敏感个人信息")
    where = ins.apply(QueryFilter.for_principal(Principal(user="amy")))
    assert where.doc_types == {"markdown"} and where.departments == {"legal"}
    assert where.modified_from == date(2021, 1, 1) and where.modified_to == date(2021, 12, 31)
    assert "user:amy" in (where.access_tokens or ())  # the ACL is never dropped


def test_filters_only_narrow() -> None:
    base = QueryFilter(access_tokens=frozenset({"x"}), doc_types=frozenset({"pdf", "docx"}))
    assert base.narrowed(doc_types=frozenset({"pdf", "html"})).doc_types == {"pdf"}
    none = base.narrowed(doc_types=frozenset({"html"}))
    assert none.doc_types and not none.doc_types & {"pdf", "docx", "html"}
    dated = QueryFilter(modified_from=date(2020, 1, 1)).narrowed(modified_from=date(2019, 1, 1))
    assert dated.modified_from == date(2020, 1, 1)


def test_entities_alone_are_a_query() -> None:
    ins = rules_instruction("", TaskContext(task="lookup", entities=("P12.1.2",)))
    assert ins.query == "P12.1.2"
    assert rules_instruction("  ", TaskContext()).query == ""  # finds nothing, no error


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"depatment": "hr"}, "unknown task context keys"),
        ({"date_from": "yesterday"}, "not a date"),
        ({"date_range": "2024-05-01..2024-01-01"}, "empty"),
        ({"entities": [1, 2]}, "list of strings"),
        ({"task": "DROP TABLE"}, "task name"),
        ({"doc_types": ["pfd"]}, "doc_types: 'pfd' is not a document format"),
        ({"doc_type": "markdwon"}, "doc_type: 'markdwon'"),
    ],
)
def test_bad_context_is_refused(data: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        TaskContext.parse(data)


def test_cli_filter_flags() -> None:
    ctx = parse_filter_args(
        ["doc_type=pdf,docx", "department=it", "date_range=2024-01-01..", "entities=TiKV"],
        task="troubleshooting",
    )
    assert ctx.task == "troubleshooting" and ctx.doc_types == ("docx", "pdf")
    assert ctx.departments == ("it",) and ctx.date_from == date(2024, 1, 1) and not ctx.date_to
    with pytest.raises(InvalidRequest, match="key=value"):
        parse_filter_args(["pdf"])
    # Extensions name the format files are stored as.
    assert parse_filter_args(["doc_type=md,HTM", "doc_types=csv"]).doc_types == (
        "html",
        "markdown",
        "text",
    )


def test_llm_instruction_cached_and_rules_fallback() -> None:
    calls: list[str] = []

    async def good(prompt: str) -> str:
        calls.append(prompt)
        return (
            'Sure: {"query": "TiDB 内存 要求", "entities": ["TiKV"], "doc_types": ["markdown"],'
            ' "date_from": null}'
        )

    ctx = TaskContext(task="lookup", departments=("it",))
    builder = InstructionBuilder(good)
    first = asyncio.run(builder.build("TiDB 需要多少内存", ctx))
    again = asyncio.run(builder.build("TiDB 需要多少内存", ctx))
    assert first.source == "llm" and first.query == "TiDB 内存 要求"
    assert first.doc_types == {"markdown"} and first.departments == {"it"}  # caller's kept
    assert again is first and len(calls) == 1

    async def nonsense(prompt: str) -> str:
        return "I cannot help with that"

    async def slow(prompt: str) -> str:
        await asyncio.sleep(1)
        return "{}"

    out = asyncio.run(InstructionBuilder(nonsense).build("TiDB 内存", ctx))
    assert out.source.startswith("rules (llm failed") and out.query == "TiDB 内存"
    out = asyncio.run(InstructionBuilder(slow, timeout_s=0.05).build("TiDB 内存", ctx))
    assert out.source == "rules (llm failed: timeout)"
