"""The MCP server as an agent meets it: a real stdio subprocess and the SDK's own client.

Two Markdown files are ingested into a tmp data dir, one public and one tagged "finance".
Each scripted session below starts its own server process with a different API key, makes
its calls and returns what came back; the tests then judge those results.

No __init__.py in this folder on purpose: as a package it would be named `mcp` and shadow
the SDK.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from typer.testing import CliRunner

from core.ids import parse_label
from core.settings import ApiKey, ApiSettings, Settings
from ragline.app import Ragline
from ragline.cli import app as cli_app
from ragline.mcp.server import ANONYMOUS, StartupError, resolve_principal

REPO = Path(__file__).resolve().parents[2]
KEYS = [
    {"key": "alice-key", "user": "alice"},  # no tags: public documents only
    {"key": "fin-key", "user": "fred", "roles": ["analyst"], "tags": ["finance"]},
]
HANDBOOK = """# Office handbook

The office opens at 8:30 every weekday morning.

## Parking

Visitors park in the north lot behind building C.
"""
BUDGET = """# Budget 2025

The 2025 marketing budget is 4.2 million euros, approved by the board in March.
"""
OPENING_Q = "What time does the office open on weekdays?"
BUDGET_Q = "What is the 2025 marketing budget?"
BUDGET_FACT = "4.2 million"
NO_SUCH_DOC = "0123456789abcdef"


@dataclass(frozen=True)
class Corpus:
    root: Path
    data_dir: Path
    public_file: Path
    public_id: str
    finance_file: Path
    finance_id: str


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("mcp")
    (root / "docs").mkdir()
    public = root / "docs" / "handbook.md"
    finance = root / "docs" / "budget.md"
    public.write_text(HANDBOOK, encoding="utf-8")
    finance.write_text(BUDGET, encoding="utf-8")
    rag = Ragline(Settings(data_dir=root / "data"))
    try:
        (pub,), _ = rag.ingest([public])
        (fin,), _ = rag.ingest([finance], tags=["finance"])
    finally:
        rag.close()
    assert pub.status == fin.status == "indexed", (pub, fin)
    assert pub.doc_id and fin.doc_id
    return Corpus(root, root / "data", public, pub.doc_id, finance, fin.doc_id)


@dataclass
class Outcome:
    """One tool call's result as the client saw it."""

    error: bool
    data: dict[str, Any]  # structured content; {"text": ...} for an error
    text: str


Script = Callable[[ClientSession], Awaitable[dict[str, Any]]]


async def call(session: ClientSession, tool: str, **args: Any) -> Outcome:
    result = await session.call_tool(tool, args)
    text = "".join(getattr(block, "text", "") for block in result.content)
    data = result.structured_content if isinstance(result.structured_content, dict) else {}
    return Outcome(result.is_error, data or {"text": text}, text)


def run_session(
    corpus: Corpus, script: Script, *, api_key: str | None, via_cli: bool = False
) -> tuple[dict[str, Any], str]:
    """Start a server subprocess, run `script` against it, return its results and the
    server's stderr."""
    env = {
        "RAGLINE_DATA_DIR": str(corpus.data_dir),
        "RAGLINE_API__KEYS": json.dumps(KEYS),
        # A developer's ragline.toml must not leak into the test.
        "RAGLINE_CONFIG_FILE": str(corpus.root / "absent.toml"),
        "PYTHONPATH": str(REPO),
    }
    if via_cli:  # the console script, with the key as a flag
        command = str(Path(sys.executable).with_name("ragline"))
        args = ["mcp", *(["--api-key", api_key] if api_key else [])]
    else:  # the module entry point, with the key from the environment
        command, args = sys.executable, ["-m", "ragline.mcp.server"]
        if api_key:
            env["RAGLINE_MCP_API_KEY"] = api_key
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(corpus.root))
    errlog = corpus.root / f"stderr-{api_key or 'anonymous'}.log"

    async def main() -> dict[str, Any]:
        with errlog.open("w", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                with anyio.fail_after(60):
                    return await script(session)

    results = anyio.run(main)
    return results, errlog.read_text(encoding="utf-8")


# -- sessions ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fred(corpus: Corpus) -> dict[str, Any]:
    """Holds the "finance" tag; started as `ragline mcp --api-key`."""

    async def script(s: ClientSession) -> dict[str, Any]:
        return {
            "tools": (await s.list_tools()).tools,
            "ask_budget": await call(s, "ask", question=BUDGET_Q),
            "search_budget": await call(s, "search", question=BUDGET_Q, top_k=5),
            "docs": await call(s, "list_documents"),
            "meta_finance": await call(s, "get_document_meta", doc_id=corpus.finance_id),
        }

    results, _ = run_session(corpus, script, api_key="fin-key", via_cli=True)
    return results


@pytest.fixture(scope="module")
def alice(corpus: Corpus) -> dict[str, Any]:
    """No tags; started as `python -m ragline.mcp.server` with RAGLINE_MCP_API_KEY."""

    async def script(s: ClientSession) -> dict[str, Any]:
        return {
            "ask_opening": await call(s, "ask", question=OPENING_Q, top_k=4),
            "ask_budget": await call(s, "ask", question=BUDGET_Q),
            "search_budget": await call(s, "search", question=BUDGET_Q, top_k=8),
            "search_md": await call(s, "search", question=OPENING_Q, doc_types=["markdown"]),
            "search_pdf": await call(s, "search", question=OPENING_Q, doc_types=["pdf"]),
            "search_md_ext": await call(s, "search", question=OPENING_Q, doc_types=["md"]),
            "search_pfd": await call(s, "search", question=OPENING_Q, doc_types=["pfd"]),
            "docs": await call(s, "list_documents", limit=50),
            "meta_public": await call(s, "get_document_meta", doc_id=corpus.public_id),
            "meta_finance": await call(s, "get_document_meta", doc_id=corpus.finance_id),
            "meta_missing": await call(s, "get_document_meta", doc_id=NO_SUCH_DOC),
            "ask_empty": await call(s, "ask", question="   "),
            "search_entities": await call(
                s, "search", question="", context={"entities": ["office"]}
            ),
            "search_top_k_0": await call(s, "search", question=OPENING_Q, top_k=0),
        }

    results, _ = run_session(corpus, script, api_key="alice-key")
    return results


def doc_ids(outcome: Outcome) -> set[str]:
    return {d["doc_id"] for d in outcome.data["documents"]}


# -- tools and descriptions -------------------------------------------------------------
def test_lists_the_tools_with_descriptions(fred: dict[str, Any]) -> None:
    tools = {t.name: t for t in fred["tools"]}
    assert set(tools) == {
        "search",
        "ask",
        "get_document_meta",
        "list_documents",
        # the knowledge gateway (ragline/mcp/gateway.py)
        "query_rows",
        "lookup_status",
        "list_sources",
        "remember",
        "recall",
    }
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.output_schema, f"{tool.name} has no output schema"
    # An agent must learn what "covered" means and that labels resolve to sources.
    assert "covered" in tools["ask"].description and "does not cover" in tools["ask"].description
    assert "[Doc" in tools["search"].description and "covered" in tools["search"].description
    assert set(tools["search"].input_schema["properties"]) == {
        "question",
        "top_k",
        "doc_types",
        "task",
        "context",
    }
    assert set(tools["ask"].input_schema["properties"]) == {"question", "top_k", "task", "context"}
    assert tools["ask"].input_schema["required"] == ["question"]


# -- answers and citations --------------------------------------------------------------
def test_ask_answers_with_a_label_that_resolves_to_the_file(
    alice: dict[str, Any], corpus: Corpus
) -> None:
    got = alice["ask_opening"]
    assert not got.error, got.text
    answer = got.data
    assert answer["covered"] is True
    assert "8:30" in answer["answer"]
    cited = answer["citations"][0]
    assert cited["label"] in answer["answer"]
    handle_page = parse_label(cited["label"])
    assert handle_page == (corpus.public_id[:6], 1)
    assert Path(cited["file"]) == corpus.public_file.resolve()
    assert cited["doc_id"] == corpus.public_id
    assert cited["page_start"] == 1 and cited["line_start"] >= 1 and cited["content_id"]


def test_document_meta_and_listing_for_a_visible_document(
    alice: dict[str, Any], corpus: Corpus
) -> None:
    meta = alice["meta_public"]
    assert not meta.error, meta.text
    assert meta.data["title"] == "Office handbook"
    assert meta.data["pages"] == 1 and meta.data["current_version"]
    assert [v["status"] for v in meta.data["versions"]] == ["current"]
    assert meta.data["versions"][0]["searchable_at"]
    listing = alice["docs"].data
    assert doc_ids(alice["docs"]) == {corpus.public_id}
    assert listing["total"] == 1 and listing["truncated"] is False


def test_search_narrows_by_format(alice: dict[str, Any], corpus: Corpus) -> None:
    md = alice["search_md"].data["hits"]
    assert md and md[0]["doc_id"] == corpus.public_id and "8:30" in md[0]["text"]
    assert alice["search_pdf"].data["hits"] == []
    # An extension names its format; a format no document can have is an error.
    assert alice["search_md_ext"].data["hits"] == md
    pfd = alice["search_pfd"]
    assert pfd.error and "'pfd' is not a document format" in pfd.text, pfd.text


def test_bad_input_is_a_tool_error_with_a_reason(alice: dict[str, Any]) -> None:
    assert alice["ask_empty"].error and "question is empty" in alice["ask_empty"].text
    assert alice["search_top_k_0"].error and "top_k" in alice["search_top_k_0"].text
    # As over HTTP: a task context naming entities stands in for a blank question.
    hits = alice["search_entities"].data["hits"]
    assert not alice["search_entities"].error and "8:30" in hits[0]["text"]


# -- permissions -------------------------------------------------------------------------
def test_finance_key_sees_the_tagged_document(fred: dict[str, Any], corpus: Corpus) -> None:
    ask = fred["ask_budget"].data
    assert ask["covered"] is True and BUDGET_FACT in ask["answer"]
    assert Path(ask["citations"][0]["file"]) == corpus.finance_file.resolve()
    hits = fred["search_budget"].data["hits"]
    assert hits[0]["doc_id"] == corpus.finance_id and BUDGET_FACT in hits[0]["text"]
    assert doc_ids(fred["docs"]) == {corpus.public_id, corpus.finance_id}
    meta = fred["meta_finance"]
    assert not meta.error and meta.data["title"] == "Budget 2025"


def test_untagged_key_never_sees_the_tagged_document(alice: dict[str, Any], corpus: Corpus) -> None:
    search = alice["search_budget"].data
    assert corpus.finance_id not in {h["doc_id"] for h in search["hits"]}
    assert all(BUDGET_FACT not in h["text"] for h in search["hits"])
    ask = alice["ask_budget"].data
    assert BUDGET_FACT not in ask["answer"]
    assert ask["covered"] is False and ask["citations"] == []
    assert corpus.finance_id not in doc_ids(alice["docs"])
    hidden, missing = alice["meta_finance"], alice["meta_missing"]
    assert hidden.error and "no document" in hidden.text
    # A tagged document's id answers exactly like an id that does not exist.
    assert hidden.text.replace(corpus.finance_id, "ID") == missing.text.replace(NO_SUCH_DOC, "ID")


def test_without_a_key_the_server_is_anonymous_and_says_so(corpus: Corpus) -> None:
    async def script(s: ClientSession) -> dict[str, Any]:
        return {"docs": await call(s, "list_documents")}

    results, stderr = run_session(corpus, script, api_key=None)
    assert doc_ids(results["docs"]) == {corpus.public_id}
    assert "anonymous" in stderr and "public" in stderr


# -- startup -----------------------------------------------------------------------------
def test_keys_resolve_through_the_api_key_ring() -> None:
    settings = Settings(api=ApiSettings(keys=[ApiKey(**k) for k in KEYS]))  # type: ignore[arg-type]
    fred = resolve_principal(settings, "fin-key")
    assert fred.user == "fred" and fred.tags == frozenset({"finance"})
    assert resolve_principal(settings, None) == ANONYMOUS
    assert resolve_principal(settings, "") == ANONYMOUS
    assert resolve_principal(settings, " fin-key\n") == fred  # as HTTP and gRPC trim it
    with pytest.raises(StartupError, match="blank"):
        resolve_principal(settings, "  ")
    with pytest.raises(StartupError, match="not one of"):
        resolve_principal(settings, "fin-key-typo")
    with pytest.raises(StartupError, match="no keys are configured"):
        resolve_principal(Settings(), "fin-key")


def test_cli_refuses_to_start_with_an_unknown_key(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli_app,
        ["mcp", "--api-key", "nope", "--data-dir", str(tmp_path)],
        env={"RAGLINE_API__KEYS": json.dumps(KEYS)},
    )
    assert result.exit_code == 2
    assert "not one of RAGLINE_API__KEYS" in result.output
