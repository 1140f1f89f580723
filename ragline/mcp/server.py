"""`ragline mcp`: search and cited answers as MCP tools, for agents that speak MCP.

One server process serves one principal, fixed at startup from an API key
(`--api-key` or RAGLINE_MCP_API_KEY, looked up in RAGLINE_API__KEYS like the HTTP API);
no tool argument can widen what it sees. Without a key it is anonymous and sees only
public documents.

Built on the official MCP SDK (mcp 2.x, where FastMCP is called `MCPServer`). The SDK is
imported inside the functions that need it: `ragline.cli` imports this module to register
the command, and every other command should not pay for loading it.

No `from __future__ import annotations` here: the SDK reads the tool closures' parameter
annotations to build their schemas, and stringified annotations of closures could not be
resolved against this module's globals.
"""

import contextlib
import ipaddress
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from core.errors import validation_summary
from core.types import Principal

if TYPE_CHECKING:  # core.settings is imported where used: `ragline --help` stays light
    from mcp.server.mcpserver import MCPServer
    from pydantic import ValidationError

    from core.settings import Settings
    from ragline.app import Ragline

ANONYMOUS = Principal(user="anonymous")
DEFAULT_PORT = 8090  # the HTTP API defaults to 8080, vLLM to 8000

INSTRUCTIONS = (
    "Ragline answers from a company's documents, limited to what this caller may see. "
    "Use `ask` for a cited answer, `search` for the passages themselves. Every passage and "
    "answer sentence carries a label like [Docab12cd_p7]; keep it when you quote, it "
    "resolves to a file, page and line span. covered=false means the documents do not "
    "cover the question: say so rather than answering from general knowledge."
)


class Transport(StrEnum):
    stdio = "stdio"
    streamable_http = "streamable-http"


class StartupError(Exception):
    """The server cannot start as asked; the message says why and what to set."""


def resolve_principal(settings: "Settings", api_key: str | None) -> Principal:
    """The principal an API key stands for, through the same key ring as the HTTP API.

    No key at all means anonymous (public documents only). A key that does not resolve is
    an error rather than a silent fall-back to anonymous: an operator who passed a key
    expects its permissions, and a typo should be loud. White space around a key is
    dropped, as the HTTP and gRPC doors drop it from their headers (an environment file
    often leaves a trailing space or line break); a key of white space alone is an error.
    """
    from ragline.api.auth import KeyRing

    if api_key is None or api_key == "":
        return ANONYMOUS
    if not api_key.strip():
        raise StartupError("the API key given is blank")
    api_key = api_key.strip()
    ring = KeyRing(settings.api.keys)
    if not len(ring):
        raise StartupError("an API key was given, but no keys are configured (RAGLINE_API__KEYS)")
    principal = ring.principal(api_key)
    if principal is None:
        raise StartupError("the API key is not one of RAGLINE_API__KEYS")
    return principal


def create_mcp_server(rag: "Ragline", principal: Principal) -> "MCPServer":
    """An MCP server whose four read-only tools query `rag` as `principal`."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    from pydantic import Field

    from ragline.mcp import tools as t

    tools = t.RaglineTools(rag, principal)
    # WARNING: the SDK logs every request at INFO, which would drown the server's stderr.
    server: MCPServer = _server_class()(
        name="ragline", instructions=INSTRUCTIONS, log_level="WARNING"
    )
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    Question = Annotated[str, Field(description="The question, in natural language.")]
    # The bounds are published in the schema and checked by the tools with the limits every
    # door shares ("top_k must be between 1 and 50"), not by the SDK's argument validation.
    max_top_k = rag.settings.api.max_top_k
    TopK = Annotated[
        int,
        Field(
            description=f"How many passages to retrieve (1..{max_top_k}).",
            json_schema_extra={"minimum": 1, "maximum": max_top_k},
        ),
    ]
    Task = Annotated[
        str,
        Field(description="Task type: qa, compliance_review, troubleshooting, lookup, analysis."),
    ]
    Context = Annotated[
        dict[str, Any] | None,
        Field(
            description="Task context: entities, region, date_from, date_to or date_range "
            "('FROM..TO'), doc_types, departments; filters apply inside every store."
        ),
    ]

    @server.tool(description=t.SEARCH_DESCRIPTION, annotations=read_only)
    async def search(
        question: Question,
        top_k: TopK = 8,
        doc_types: Annotated[
            list[str] | None,
            Field(description='Only these formats, e.g. ["pdf", "markdown"]; none = all.'),
        ] = None,
        task: Task = "qa",
        context: Context = None,
    ) -> t.SearchResult:
        return await tools.search(question, top_k, doc_types or [], task, context)

    @server.tool(description=t.ASK_DESCRIPTION, annotations=read_only)
    async def ask(
        question: Question, top_k: TopK = 8, task: Task = "qa", context: Context = None
    ) -> t.CitedAnswer:
        return await tools.ask(question, top_k, task, context)

    @server.tool(description=t.META_DESCRIPTION, annotations=read_only)
    async def get_document_meta(
        doc_id: Annotated[str, Field(description="The doc_id of a hit, citation or listing.")],
    ) -> t.DocumentMeta:
        return await tools.document_meta(doc_id)

    @server.tool(description=t.LIST_DESCRIPTION, annotations=read_only)
    async def list_documents(
        limit: Annotated[
            int,
            Field(
                description=f"At most this many (1..{t.MAX_LIST}).",
                json_schema_extra={"minimum": 1, "maximum": t.MAX_LIST},
            ),
        ] = 50,
    ) -> t.DocumentList:
        return await tools.list_documents(limit)

    from ragline.mcp.gateway import register_gateway_tools

    register_gateway_tools(server, rag, principal)  # query_rows, lookup_status, memory
    return server


def plain_errors(exc: "ValidationError") -> str:
    """Arguments the SDK refused, said plainly like the HTTP API's 422: each argument and
    what is wrong with it; no pydantic model name, echoed value or documentation link."""
    return "invalid arguments: " + validation_summary(
        exc.errors(include_url=False, include_input=False)
    )


def _server_class() -> "type[MCPServer]":
    """`MCPServer` whose argument errors are plain (see `plain_errors`): the SDK reports a
    refused argument with pydantic's own text, model name, input and URL included."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    class RaglineMCPServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError:
                raise  # a crash: its text stays on the server
            except ToolError as exc:
                # Only the SDK's validation of the caller's arguments has this cause; the
                # cause is kept, so the SDK still logs the refused fields, not their values.
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(
                        f"Error executing tool {name}: {plain_errors(exc.__cause__)}"
                    ) from exc.__cause__
                raise

    return RaglineMCPServer


def _describe(principal: Principal) -> str:
    if principal == ANONYMOUS:
        return (
            "no API key given (--api-key or RAGLINE_MCP_API_KEY): serving as an anonymous "
            "principal that sees only public (untagged) documents"
        )
    roles = ",".join(sorted(principal.roles)) or "-"
    tags = ",".join(sorted(principal.tags)) or "-"
    return f"serving as user {principal.user} (roles {roles}; tags {tags})"


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def serve(
    settings: "Settings",
    api_key: str | None,
    transport: Transport = Transport.stdio,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
) -> None:
    """Resolve the principal, open Ragline, serve until the client goes away, close."""
    from ragline.app import Ragline

    principal = resolve_principal(settings, api_key)
    log = typer.echo
    log(f"ragline mcp: {_describe(principal)}", err=True)
    if transport is Transport.streamable_http and not _is_loopback(host):
        # The principal is fixed per process: whoever reaches the port acts as it.
        log(f"ragline mcp: warning: {host}:{port} is reachable beyond this machine", err=True)
    # On stdio, stdout is the protocol wire: anything a library prints while the stores
    # and the model load must land on stderr instead.
    with contextlib.redirect_stdout(sys.stderr):
        rag = Ragline(settings)
        rag.embedder.load()  # now, so the first tool call does not wait for the model
    try:
        server = create_mcp_server(rag, principal)
        if transport is Transport.stdio:
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port)
    finally:
        rag.close()


def mcp_command(
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="RAGLINE_MCP_API_KEY",
            help="A key of RAGLINE_API__KEYS; its principal decides what the tools see. "
            "Prefer the environment variable (command lines are visible to other users). "
            "None: anonymous, public documents only.",
        ),
    ] = None,
    transport: Annotated[
        Transport, typer.Option("--transport", help="stdio for a local agent.")
    ] = Transport.stdio,
    host: Annotated[str, typer.Option(help="streamable-http only.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="streamable-http only.")] = DEFAULT_PORT,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Where the embedded stores live (RAGLINE_DATA_DIR)."),
    ] = None,
) -> None:
    """Serve search, ask, get_document_meta and list_documents as MCP tools (stdio by
    default; --transport streamable-http --port N for HTTP at /mcp)."""
    from core.errors import RaglineError
    from core.settings import load_settings

    try:
        settings = load_settings(data_dir=data_dir) if data_dir else load_settings()
        serve(settings, api_key, transport, host, port)
    except (StartupError, RaglineError) as exc:
        typer.echo(f"ragline mcp: error: {exc}", err=True)
        raise typer.Exit(2) from exc


if __name__ == "__main__":
    typer.run(mcp_command)
