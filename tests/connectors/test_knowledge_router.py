"""Routing by knowledge type: identifiers -> status, figures over a declared entity ->
rows (with parameters read from the question), everything else -> documents; an optional
LLM is only consulted when the rules say documents, and its pick is checked."""

from __future__ import annotations

import pytest

from connectors.config import GatewayConfig
from connectors.params import parse_month
from connectors.router import KnowledgeRouter


@pytest.mark.parametrize(
    ("question", "kind", "template", "params"),
    [
        (
            "How many handgun checks did Nevada have?",
            "rows",
            "checks_for_state",
            {"state": "Nevada", "metric": "handgun"},
        ),
        (
            "How many checks were done in West Virginia?",
            "rows",
            "checks_for_state",
            {"state": "West Virginia"},
        ),  # the longer name wins over "Virginia"
        ("top 4 states by permit checks", "rows", "top_states", {"n": "4", "metric": "permit"}),
        (
            "How many states had more than 1,000 long gun checks?",
            "rows",
            "states_above",
            {"threshold": "1,000", "metric": "long_gun"},
        ),
        (
            "What were IDA principal repayments in 2010?",
            "rows",
            "cash_flow_line",
            {"line_item": "Development Credits - Principal repayments", "fiscal_year": "2010"},
        ),
        (
            "How many tickets were opened in March 2023?",
            "rows",
            "tickets_opened",
            {"month": "2023-03"},
        ),
        ("status of ticket #17", "status", "", {"ticket_id": "17"}),
        ("工单 号 88 处理完了吗", "status", "", {"ticket_id": "88"}),
        ("What is a background check?", "documents", "", {}),  # no figure asked
        ("How many checks did Atlantis have?", "documents", "", {}),  # no such state
        ("How many articles does the law have?", "documents", "", {}),  # no template entity
        ("What were IDA disbursements?", "documents", "", {}),  # year missing, no series cue
    ],
)
def test_rules(
    sample_config: GatewayConfig, question: str, kind: str, template: str, params: dict[str, str]
) -> None:
    d = KnowledgeRouter(sample_config).decide(question)
    assert d.kind == kind, d
    assert d.template == template
    assert {k: v for k, v in d.params.items() if k in params} == params
    assert d.reasons and d.by == "rules"


def test_a_job_id_goes_to_the_jobs_source(sample_config: GatewayConfig) -> None:
    job = "0123456789abcdef0123456789abcdef"
    d = KnowledgeRouter(sample_config).decide(f"where is job {job}?")
    assert (d.kind, d.source_id, d.params) == ("status", "jobs", {"job_id": job})


def test_the_llm_is_asked_only_when_rules_say_documents_and_its_pick_is_checked(
    sample_config: GatewayConfig,
) -> None:
    asked: list[str] = []

    def llm(reply: str):  # type: ignore[no-untyped-def]
        def call(messages: list[dict[str, str]]) -> str:
            asked.append(messages[0]["content"])
            return reply

        return call

    pick = '{"kind": "rows", "name": "tickets_opened", "params": {"month": "2023-05"}}'
    d = KnowledgeRouter(sample_config, llm(pick)).decide("Was May 2023 a busy month for support?")
    assert (d.kind, d.template, d.by) == ("rows", "tickets_opened", "llm")
    assert "tickets_opened" in asked[0]
    d = KnowledgeRouter(sample_config, llm(pick)).decide("How many tickets mention gpu?")
    assert d.by == "rules" and len(asked) == 1  # rules decided: the LLM is not asked
    bogus = '{"kind": "rows", "name": "drop_everything", "params": {}}'
    d = KnowledgeRouter(sample_config, llm(bogus)).decide("Was May busy?")
    assert d.kind == "documents" and d.by == "rules"
    d = KnowledgeRouter(sample_config, llm("I think rows?")).decide("Was May busy?")
    assert d.kind == "documents" and any("llm" in r for r in d.reasons)


@pytest.mark.parametrize(
    ("text", "month"),
    [
        ("April 2023", "2023-04"),
        ("in sept. 2022", "2022-09"),
        ("2023年6月", "2023-06"),
        ("2023-13", None),
        ("may I ask", None),
    ],
)
def test_months(text: str, month: str | None) -> None:
    assert parse_month(text) == month


def test_a_bound_parameter_counts_only_when_the_principal_has_the_attribute(
    sample_config: GatewayConfig,
) -> None:
    from core.types import Principal

    router = KnowledgeRouter(sample_config)
    q = "How many handgun checks were there in total in my region?"
    west = Principal("w", roles=frozenset({"sales"}), attributes=(("region", "West"),))
    assert router.decide(q, west).template == "region_totals"
    analyst = Principal("a", roles=frozenset({"analyst"}))  # no region: must name one
    assert router.decide(q, analyst).template != "region_totals"
