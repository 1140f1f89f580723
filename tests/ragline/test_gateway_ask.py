"""`Ragline.aask` with the gateway: a refused or failed source falls back to documents
and says why; stale rows give way to documents that cover the question, and are answered
with a "may be outdated" flag when nothing fresher can answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from connectors.config import PACKAGED_SAMPLE
from connectors.sample.database import load_sample
from connectors.sample.status_service import StatusService
from core.settings import GatewaySettings, Settings
from core.types import Principal
from ragline.app import Ragline

ANALYST = Principal("ann", roles=frozenset({"analyst"}))
INTERN = Principal("ivy", roles=frozenset({"intern"}))
QUESTION = "How many permit checks did Kentucky have?"


def _rag(root: Path, loaded_days_ago: float) -> Ragline:
    load_sample(
        f"sqlite:///{root / 'sample.db'}",
        loaded_at=datetime.now(UTC) - timedelta(days=loaded_days_ago),
    )
    return Ragline(Settings(data_dir=root, gateway=GatewaySettings(sources=str(PACKAGED_SAMPLE))))


@pytest.fixture(scope="module")
def stale_rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ragline]:
    root = tmp_path_factory.mktemp("stale")
    rag = _rag(root, loaded_days_ago=30)
    notes = root / "docs"
    notes.mkdir()
    (notes / "kentucky.md").write_text(
        "# Kentucky permits\n\nKentucky had 264,140 permit checks in November 2015, "
        "because Kentucky runs a monthly permit recheck.\n",
        encoding="utf-8",
    )
    rag.ingest([notes])
    yield rag
    rag.close()


def test_a_source_the_key_may_not_use_is_never_routed_to_nor_named(
    stale_rag: Ragline,
) -> None:
    """The intern may use no template: its question goes to documents, and neither the
    answer nor its warnings name a template or a refusal (README: what was restricted is
    logged and traced, never shown)."""
    answer = stale_rag.ask(QUESTION, INTERN)
    assert answer.knowledge["kind"] == "documents", answer.knowledge
    assert answer.knowledge["answered_by"] == "documents"
    assert answer.covered and "264,140" in answer.text
    shown = " ".join([*answer.warnings, str(answer.knowledge)])
    assert "denied" not in shown and "checks_for_state" not in shown
    rows = asyncio.run(stale_rag.query_rows(INTERN, question=QUESTION))
    assert rows.status == "no_match" and "checks_for_state" not in rows.message
    unknown = asyncio.run(stale_rag.query_rows(INTERN, "no_such_template", {}))
    assert unknown.status == "invalid" and "checks_for_state" not in unknown.message
    analyst = asyncio.run(stale_rag.query_rows(ANALYST, "no_such_template", {}))
    assert "checks_for_state" in analyst.message  # its own catalogue
    (audited,) = stale_rag.records.audit_log(unknown.trace_id)  # refusals are audited too
    assert audited.status == "invalid" and audited.error == "unknown template"


def test_stale_rows_give_way_to_covering_documents(stale_rag: Ragline) -> None:
    answer = stale_rag.ask(QUESTION, ANALYST)
    assert answer.knowledge["answered_by"] == "documents", answer
    assert answer.covered and "264,140" in answer.text
    assert any("freshness window" in w for w in answer.warnings)
    assert all(b.source_kind == "document" for b in answer.blocks) and answer.blocks
    trace = stale_rag.records.trace(answer.trace_id)
    assert trace is not None and any(e["event"] == "skip_stale" for e in trace.events)


def test_stale_rows_are_flagged_when_nothing_fresher_answers(stale_rag: Ragline) -> None:
    answer = stale_rag.ask("How many tickets were opened in May 2023?", ANALYST)
    assert answer.knowledge["answered_by"] == "rows"
    assert "tickets_opened: 59 [DB_tickets_opened_1]" in answer.text
    assert "may be outdated" in answer.text and answer.blocks[0].freshness.stale
    assert any("may be outdated" in w for w in answer.warnings)
    # A stale block's lower confidence is the answer's.
    assert answer.confidence == answer.blocks[0].confidence and 0 < answer.confidence < 1.0
    assert answer.model is not None and answer.model.tier == "none"


def test_the_agent_gets_gateway_tools_only_for_sources_its_principal_may_use(
    stale_rag: Ragline,
) -> None:
    """Issue 11's agent loop reaches rows through the gateway's own checks: an analyst's
    registry offers query_rows, and calling it runs the template as that analyst."""
    import asyncio

    from core.types import QueryFilter
    from ragline.agent_tools import AgentTools

    settings = stale_rag.settings.agent
    analyst = AgentTools(stale_rag, ANALYST, QueryFilter.for_principal(ANALYST), settings)
    intern = AgentTools(stale_rag, INTERN, QueryFilter.for_principal(INTERN), settings)
    assert "query_rows" in analyst.registry()
    assert "query_rows" not in intern.registry()  # default deny: the tool is not even offered
    rows = analyst.registry()._tools["query_rows"]
    out = asyncio.run(rows.handler({"question": QUESTION}))
    assert out.content["status"] == "ok", out.content
    assert out.content["blocks"][0]["label"].startswith("[DB_")
    assert "264140" in str(out.content["blocks"][0]["content"]).replace(",", "")


def test_an_answer_says_which_parameters_ran(tmp_path: Path) -> None:
    """A West sales key asking about the South gets West's rows (its region is bound):
    the answer's knowledge names West, and a warning says it is not the South's."""
    rag = _rag(tmp_path, loaded_days_ago=0)
    west = Principal("sam", roles=frozenset({"sales"}), attributes=(("region", "West"),))
    try:
        answer = rag.ask("Which 3 states had the most handgun checks in the South region?", west)
    finally:
        rag.close()
    assert answer.knowledge["answered_by"] == "rows", answer.knowledge
    assert answer.knowledge["params"]["region"] == "West"
    # Only the bound parameter is named: "3" asked and 3 run is the same number.
    assert [w for w in answer.warnings if "answered for" in w] == [
        "answered for region=West, the one this key may read, not South"
    ], answer.warnings


def test_rows_name_their_years_without_separators_and_warn_of_nothing_bound(
    tmp_path: Path,
) -> None:
    """A fiscal year is a name, not an amount ("2010", not "2,010"); amounts keep their
    separators; a key with no bound attribute gets no "answered for" warning."""
    rag = _rag(tmp_path, loaded_days_ago=0)
    try:
        answer = rag.ask("What were IDA principal repayments in 2010?", ANALYST)
    finally:
        rag.close()
    assert answer.knowledge["answered_by"] == "rows", answer.knowledge
    assert "fiscal_year: 2010" in answer.text, answer.text
    assert not any("answered for" in w for w in answer.warnings), answer.warnings


def test_rows_and_status_answers_have_a_confidence_a_reason_and_a_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a document answer: a confidence (the block's), a reason when not covered, and a
    model object (tier "none": no LLM writes a rows or status answer)."""
    tickets = StatusService().start()
    monkeypatch.setenv("RAGLINE_SAMPLE_STATUS_URL", tickets.url)
    rag = _rag(tmp_path, loaded_days_ago=0)
    west = Principal("sam", roles=frozenset({"sales"}), attributes=(("region", "West"),))
    support = Principal("sue", roles=frozenset({"support"}))
    try:
        found = rag.ask(QUESTION, ANALYST)
        other_region = rag.ask("How many permit checks did Kentucky have in November 2015?", west)
        ticket = rag.ask("What is the status of ticket #645?", support)
        no_ticket = rag.ask("What is the status of ticket #99999?", support)
    finally:
        rag.close()
        tickets.stop()
    answers = (found, other_region, ticket, no_ticket)
    assert [a.knowledge["answered_by"] for a in answers] == ["rows", "rows", "status", "status"]
    assert [a.covered for a in answers] == [True, False, True, False]
    assert [a.confidence for a in answers] == [1.0, 1.0, 1.0, 1.0]
    assert [a.reason for a in answers] == [
        "",
        "no rows match state=Kentucky, metric=permit, region=West",
        "",
        "tickets: nothing found for ticket_id=99999",
    ]
    for a in answers:
        assert a.model is not None and (a.model.tier, a.model.model) == ("none", "")
        assert a.model.reason.startswith(f"answered from {a.knowledge['answered_by']}")
