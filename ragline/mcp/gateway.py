"""MCP tools of the knowledge gateway: rows, live status, the catalogue, and memory.

Registered beside the document tools by `ragline.mcp.server.create_mcp_server`. Like the
HTTP routes, each tool is one call on `Ragline` for the server's fixed principal.
No `from __future__ import annotations`: the SDK reads the tools' annotations at run time.
"""

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from core.types import Principal
from ragline.render import block_view

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ragline.app import Ragline

ROWS_DESCRIPTION = """\
Rows from the company's databases, only through declared query templates (see
`list_sources`). Give `template` and `params`, or a `question` and the template and its
parameters are picked by rules. Returns content blocks: `content` holds `columns` and
`rows`; cite a row set with its `label`, like [DB_top_states_1]. `status` says why there
are no rows: invalid (no such template for this key, or a parameter was refused), denied
(this key lacks the attribute a parameter is bound to), unavailable (the database failed
or is cooling down), no_match."""

STATUS_DESCRIPTION = """\
Live state from a declared status API (see `list_sources`), e.g. a support ticket by
number or a Ragline ingestion job by id. Give `source` and `params`, or a `question` that
names the identifier. The block's `freshness.stale` says whether the state is older than
the source's window; cite it with its `label`, like [API_tickets_1]."""

SOURCES_DESCRIPTION = """\
The query templates (name, description, parameters with types and allowed values) and
status sources this key may use. Parameters `bound_to` an attribute come from the key,
not from the caller."""

REMEMBER_DESCRIPTION = """\
Remember a note or preference for this key's user. Memory is kept apart from the
knowledge: it is never returned as a source and never cited. Needs a key with write
permission; the reply says exactly what was stored."""

RECALL_DESCRIPTION = """\
This user's remembered notes and preferences, newest first, labelled as memory (not
authoritative, no citation label)."""


class GatewayAnswer(BaseModel):
    trace_id: str
    status: str = Field(description="ok | empty | denied | invalid | unavailable | no_match")
    message: str
    source_id: str
    blocks: list[dict[str, Any]]


class Remembered(BaseModel):
    id: int
    kind: str
    key: str
    text: str
    message: str


def _answer(result: Any) -> GatewayAnswer:
    return GatewayAnswer(
        trace_id=result.trace_id,
        status=result.status,
        message=result.message,
        source_id=result.source_id,
        blocks=[block_view(b) for b in result.blocks],
    )


def register_gateway_tools(server: "MCPServer", rag: "Ragline", principal: Principal) -> None:
    from mcp.types import ToolAnnotations

    from ragline.app import NotAllowed

    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    live = ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=True)
    Params = Annotated[
        dict[str, str | int | float] | None,
        Field(description="Parameter values by name (see list_sources)."),
    ]
    Question = Annotated[str, Field(description="Or: the question, in natural language.")]

    @server.tool(description=ROWS_DESCRIPTION, annotations=read_only)
    async def query_rows(
        template: Annotated[str, Field(description="Template name.")] = "",
        params: Params = None,
        question: Question = "",
    ) -> GatewayAnswer:
        if not template and not question.strip():
            raise ToolError("give a template (see list_sources) or a question")
        return _answer(
            await rag.query_rows(principal, template, dict(params or {}), question=question)
        )

    @server.tool(description=STATUS_DESCRIPTION, annotations=live)
    async def lookup_status(
        source: Annotated[str, Field(description="Status source id.")] = "",
        params: Params = None,
        question: Question = "",
    ) -> GatewayAnswer:
        if not source and not question.strip():
            raise ToolError("give a source (see list_sources) or a question")
        values = {k: str(v) for k, v in (params or {}).items()}
        return _answer(await rag.lookup_status(principal, source, values, question=question))

    @server.tool(description=SOURCES_DESCRIPTION, annotations=read_only)
    async def list_sources() -> dict[str, Any]:
        return rag.gateway_catalogue(principal)

    @server.tool(description=REMEMBER_DESCRIPTION)
    async def remember(
        text: Annotated[str, Field(min_length=1, max_length=4000)],
        kind: Literal["note", "preference"] = "note",
        key: Annotated[str, Field(max_length=128)] = "",
    ) -> Remembered:
        try:
            item = await asyncio.to_thread(rag.remember, principal, text, kind, key)
        except NotAllowed as e:
            raise ToolError(str(e)) from e
        return Remembered(
            id=item.id,
            kind=item.kind,
            key=item.key,
            text=item.text,
            message=f"remembered {item.kind} #{item.id}: {item.text!r} (memory, never cited)",
        )

    @server.tool(description=RECALL_DESCRIPTION, annotations=read_only)
    async def recall() -> dict[str, Any]:
        blocks = await asyncio.to_thread(rag.recall, principal)
        return {"memory": [block_view(b) for b in blocks], "authoritative": False}
