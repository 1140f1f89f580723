"""Arguments the MCP tools refuse are refused in plain words, as the HTTP API refuses them:
the in-process server and the SDK's own client (no subprocess: nothing is searched)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from core.settings import Settings
from ragline.app import Ragline
from ragline.mcp.server import ANONYMOUS, create_mcp_server

PYDANTIC = ("validation error for", "errors.pydantic.dev", "Arguments", "input_value", "type=")


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ragline]:
    rag = Ragline(Settings(data_dir=tmp_path_factory.mktemp("mcp-args")))
    yield rag
    rag.close()


def _calls(rag: Ragline, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    server = create_mcp_server(rag, ANONYMOUS)

    async def main() -> list[tuple[bool, str]]:
        out = []
        async with Client(server) as client:
            for tool, args in calls:
                result = await client.call_tool(tool, args)
                text = "".join(getattr(b, "text", "") for b in result.content)
                out.append((bool(result.is_error), text))
        return out

    return anyio.run(main)


def test_top_k_out_of_bounds_is_refused_like_http(rag: Ragline) -> None:
    """top_k 0 was pydantic's "1 validation error for askArguments ... https://errors.
    pydantic.dev/..."; it is now the message of the limit every door shares."""
    limit = rag.settings.api.max_top_k
    results = _calls(
        rag,
        [
            ("ask", {"question": "duck", "top_k": 0}),
            ("search", {"question": "duck", "top_k": 0}),
            ("ask", {"question": "duck", "top_k": limit + 1}),
            ("list_documents", {"limit": 0}),
        ],
    )
    expected = f"top_k must be between 1 and {limit} (RAGLINE_API__MAX_TOP_K)"
    assert results == [
        (True, f"Error executing tool ask: {expected}"),
        (True, f"Error executing tool search: {expected}"),
        (True, f"Error executing tool ask: {expected}"),
        (True, "Error executing tool list_documents: limit must be between 1 and 500"),
    ]


def test_other_refused_arguments_are_plain_too(rag: Ragline) -> None:
    results = _calls(
        rag,
        [
            ("ask", {"question": "duck", "top_k": "many"}),
            ("ask", {}),
            ("query_rows", {"params": "state=Ohio"}),
        ],
    )
    assert all(error for error, _ in results), results
    for _, text in results:
        assert not any(p in text for p in PYDANTIC), text
        assert "invalid arguments: " in text, text
    assert results[0][1].startswith("Error executing tool ask: invalid arguments: top_k: ")
    assert results[1][1] == "Error executing tool ask: invalid arguments: question: Field required"
    assert "params" in results[2][1]


def test_the_schema_still_publishes_the_bounds(rag: Ragline) -> None:
    server = create_mcp_server(rag, ANONYMOUS)

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    schemas = anyio.run(main)
    top_k = schemas["ask"]["properties"]["top_k"]
    assert (top_k["minimum"], top_k["maximum"]) == (1, rag.settings.api.max_top_k)
    assert schemas["list_documents"]["properties"]["limit"]["maximum"] == 500


def test_plain_errors_say_where_and_what_only(tmp_path: Path) -> None:
    from pydantic import BaseModel, Field, ValidationError

    from ragline.mcp.server import plain_errors

    class Args(BaseModel):
        n: int = Field(ge=1)

    with pytest.raises(ValidationError) as err:
        Args.model_validate({"n": 0})
    assert (
        plain_errors(err.value)
        == "invalid arguments: n: Input should be greater than or equal to 1"
    )
