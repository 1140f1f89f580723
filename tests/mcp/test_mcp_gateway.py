"""The gateway's MCP tools as an agent meets them: a real stdio server subprocess with the
sample sources, the SDK's own client, one key (sales in the West region, may write)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from connectors.config import PACKAGED_SAMPLE
from connectors.sample.database import load_sample
from connectors.sample.status_service import StatusService

REPO = Path(__file__).resolve().parents[2]
KEYS = [
    {
        "key": "west-key",
        "user": "wes",
        "roles": ["sales", "support"],
        "attributes": {"region": "West"},
        "can_write": True,
    }
]


async def _call(session: ClientSession, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await session.call_tool(tool, args)
    text = "".join(getattr(b, "text", "") for b in result.content)
    data = result.structured_content if isinstance(result.structured_content, dict) else {}
    return bool(result.is_error), data or {"text": text}


@pytest.fixture(scope="module")
def session_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("mcp-gw")
    load_sample(f"sqlite:///{root / 'data' / 'sample.db'}")
    tickets = StatusService().start()
    env = {
        "RAGLINE_DATA_DIR": str(root / "data"),
        "RAGLINE_API__KEYS": json.dumps(KEYS),
        "RAGLINE_GATEWAY__SOURCES": str(PACKAGED_SAMPLE),
        "RAGLINE_SAMPLE_STATUS_URL": tickets.url,
        "RAGLINE_MCP_API_KEY": "west-key",
        "RAGLINE_CONFIG_FILE": str(root / "absent.toml"),
        "PYTHONPATH": str(REPO),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ragline.mcp.server"], env=env, cwd=str(root)
    )

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with (root / "stderr.log").open("w", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                with anyio.fail_after(90):
                    out["sources"] = await _call(session, "list_sources")
                    out["rows"] = await _call(
                        session,
                        "query_rows",
                        template="top_states",
                        params={"n": 20, "region": "South"},
                    )
                    out["rows_q"] = await _call(
                        session, "query_rows", question="How many tickets mention windows?"
                    )
                    out["denied"] = await _call(
                        session,
                        "query_rows",
                        template="cash_flow_line",
                        params={"line_item": "sold", "fiscal_year": 2009},
                    )
                    out["unknown"] = await _call(
                        session,
                        "query_rows",
                        template="cash_flow_lines",
                        params={"line_item": "sold", "fiscal_year": 2009},
                    )
                    out["jobs"] = await _call(
                        session, "lookup_status", source="jobs", params={"job_id": "x"}
                    )
                    out["jobz"] = await _call(
                        session, "lookup_status", source="jobz", params={"job_id": "x"}
                    )
                    out["status"] = await _call(
                        session, "lookup_status", source="tickets", params={"ticket_id": "645"}
                    )
                    out["remember"] = await _call(session, "remember", text="likes short answers")
                    out["recall"] = await _call(session, "recall")
        return out

    try:
        return anyio.run(main)
    finally:
        tickets.stop()


def test_rows_are_bound_to_the_keys_region(session_results: dict[str, Any]) -> None:
    error, data = session_results["rows"]
    assert not error and data["status"] == "ok"
    rows = data["blocks"][0]["content"]["rows"]
    assert {r[1] for r in rows} == {"West"} and data["blocks"][0]["label"] == "[DB_top_states_1]"
    error, data = session_results["rows_q"]
    assert data["blocks"][0]["content"]["rows"] == [[3, 3, 318]]


def test_a_template_outside_the_keys_roles_is_denied(session_results: dict[str, Any]) -> None:
    error, data = session_results["sources"]
    names = {t["name"] for t in data["templates"]}
    assert "cash_flow_line" not in names and "top_states" in names
    # Refused exactly like a name that does not exist: the key learns of no other template.
    error, denied = session_results["denied"]
    _, unknown = session_results["unknown"]
    assert not error and denied["status"] == "invalid" and not denied["blocks"]
    assert denied["message"] == f"no template 'cash_flow_line'; known: {sorted(names)}"
    assert {**denied, "trace_id": "", "message": ""} == {**unknown, "trace_id": "", "message": ""}
    assert unknown["message"] == denied["message"].replace("line'", "lines'", 1)
    # And a status source likewise.
    _, jobs = session_results["jobs"]
    _, jobz = session_results["jobz"]
    assert (jobs["status"], jobs["message"]) == (
        "invalid",
        "no status source 'jobs'; known: ['tickets']",
    )
    assert (jobz["status"], jobz["message"]) == (
        "invalid",
        "no status source 'jobz'; known: ['tickets']",
    )


def test_live_status_and_memory(session_results: dict[str, Any]) -> None:
    error, data = session_results["status"]
    assert not error and data["blocks"][0]["content"]["state"] == "closed"
    assert data["blocks"][0]["label"] == "[API_tickets_1]"
    error, data = session_results["remember"]
    assert not error and data["text"] == "likes short answers" and "never cited" in data["message"]
    error, data = session_results["recall"]
    assert data["authoritative"] is False
    assert data["memory"][0]["source_kind"] == "memory" and data["memory"][0]["label"] == ""
