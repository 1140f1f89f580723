"""`ragline rows | status | trace | remember | recall` and `ragline gateway ...`: the
knowledge gateway from the command line, for one principal given by options."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragline.cli.common import (
    AsJson,
    DataDir,
    Roles,
    User,
    console,
    err,
    open_app,
    settings_for,
)

if TYPE_CHECKING:  # imported where used: `ragline --help` stays light
    from core.blocks import GatewayResult
    from core.types import Principal
    from ragline.app import Ragline


gateway_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, help="Sample data and sources of the gateway."
)

Attrs = Annotated[
    list[str] | None,
    typer.Option("--attr", help="A principal attribute NAME=VALUE, e.g. region=West."),
]
Params = Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE.")]
Question = Annotated[str, typer.Option("--question", "-q", help="Pick by rules from this.")]


def _pairs(items: list[str] | None, what: str) -> dict[str, str]:
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"{what} must be NAME=VALUE, got {item!r}")
        out[name.strip()] = value
    return out


def _principal(user: str, roles: list[str] | None, attrs: list[str] | None) -> Principal:
    from core.types import Principal

    return Principal(
        user=user,
        roles=frozenset(roles or ()),
        attributes=tuple(sorted(_pairs(attrs, "--attr").items())),
    )


def _print(view: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(view, ensure_ascii=False, indent=2, default=str))
        return
    console.print(f"{view['status']}  trace {view['trace_id']}")
    if view["message"]:
        console.print(view["message"])
    for b in view["blocks"]:
        stale = "  (stale)" if b["freshness"]["stale"] else ""
        console.print(f"{b['label']} {b['title']}{stale}")
        console.print(b["text"])


def rows(
    template: Annotated[str, typer.Argument(help="Template name; omit with --question.")] = "",
    param: Params = None,
    question: Question = "",
    user: User = "cli",
    role: Roles = None,
    attr: Attrs = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Rows from a declared SQL template (RAGLINE_GATEWAY__SOURCES)."""
    if not template and not question:
        raise typer.BadParameter("give a TEMPLATE or --question")
    principal, params = _principal(user, role, attr), _pairs(param, "--param")
    _gateway_call(
        data_dir,
        lambda rag: rag.query_rows(principal, template, params, question=question),
        as_json,
    )


def status(
    source: Annotated[str, typer.Argument(help="Status source id; omit with --question.")] = "",
    param: Params = None,
    question: Question = "",
    user: User = "cli",
    role: Roles = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Live state from a declared HTTP status source."""
    if not source and not question:
        raise typer.BadParameter("give a SOURCE or --question")
    principal, params = _principal(user, role, None), _pairs(param, "--param")
    _gateway_call(
        data_dir,
        lambda rag: rag.lookup_status(principal, source, params, question=question),
        as_json,
    )


def _gateway_call(
    data_dir: Path | None,
    call: Callable[[Ragline], Coroutine[Any, Any, GatewayResult]],
    as_json: bool,
) -> None:
    """One gateway call on a Ragline of its own, printed; exit status 1 unless it gave rows
    or status, or found nothing."""
    from ragline.render import gateway_view

    rag = open_app(data_dir)
    try:
        result = asyncio.run(call(rag))
        _print(gateway_view(result), as_json)
    finally:
        rag.close()
    if result.status not in ("ok", "empty"):
        raise typer.Exit(1)


def trace(
    trace_id: str,
    role: Roles = None,
    data_dir: DataDir = None,
) -> None:
    """What one request did: route decision, permission checks, timings, counts, audit."""
    from core.types import Principal
    from ragline.app import NotAllowed

    rag = open_app(data_dir, existing=True)  # reads only: a mistyped dir is no empty store
    try:
        principal = Principal(user="cli", roles=frozenset(role or ()), superuser=not role)
        try:
            record = rag.trace(trace_id, principal)
        except NotAllowed as e:
            err.print(str(e))
            raise typer.Exit(1) from e
        if record is None:
            err.print(f"no trace {trace_id}")
            raise typer.Exit(1)
        audit = [asdict(a) for a in reversed(rag.records.audit_log(trace_id))]
        typer.echo(
            json.dumps(
                {**asdict(record), "audit": audit}, default=str, indent=2, ensure_ascii=False
            )
        )
    finally:
        rag.close()


def remember(
    text: str,
    kind: Annotated[str, typer.Option("--kind", help="note | preference")] = "note",
    key: Annotated[str, typer.Option("--key")] = "",
    user: User = "cli",
    data_dir: DataDir = None,
) -> None:
    """Keep a note or preference for a user (memory: never a source, never cited)."""
    from core.types import Principal
    from ragline.app import NotAllowed

    rag = open_app(data_dir)
    try:
        item = rag.remember(Principal(user=user, can_write=True), text, kind, key)
    except NotAllowed as e:
        err.print(str(e))
        raise typer.Exit(1) from e
    finally:
        rag.close()
    console.print(f"remembered {item.kind} #{item.id} for {item.owner}: {item.text}")


def recall(user: User = "cli", data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """A user's notes and preferences, labelled as memory."""
    from core.types import Principal
    from ragline.render import block_view

    rag = open_app(data_dir, existing=True)
    try:
        blocks = [block_view(b) for b in rag.recall(Principal(user=user))]
    finally:
        rag.close()
    if as_json:
        typer.echo(json.dumps(blocks, ensure_ascii=False, indent=2, default=str))
    for b in [] if as_json else blocks:
        console.print(f"[memory] {b['title']}: {b['text']}")


@gateway_app.command("load-sample")
def load_sample_cmd(
    url: Annotated[str, typer.Option("--url", help="SQLAlchemy URL; default the data dir.")] = "",
    data_dir: DataDir = None,
    grant: Annotated[str, typer.Option("--grant", help="PostgreSQL: read-only role.")] = "",
) -> None:
    """Build the sample business database from the real public tables (SOURCES.md)."""
    from connectors.config import PACKAGED_SAMPLE
    from connectors.sample.database import grant_read_only, load_sample

    settings = settings_for(data_dir)
    target = url or f"sqlite:///{settings.data_dir / 'sample.db'}"
    report = load_sample(target)
    if grant:
        grant_read_only(target, grant)
    console.print(f"loaded {report.tables} into {report.url}")
    console.print(
        f"enable it: RAGLINE_GATEWAY__SOURCES={PACKAGED_SAMPLE}"
        + ("" if not url else f" RAGLINE_SAMPLE_DB_URL={url}"),
    )


@gateway_app.command("sources")
def sources_cmd(
    user: User = "cli", role: Roles = None, attr: Attrs = None, data_dir: DataDir = None
) -> None:
    """The templates and status sources a principal may use."""
    rag = open_app(data_dir)
    try:
        typer.echo(
            json.dumps(
                rag.gateway_catalogue(_principal(user, role, attr)), indent=2, ensure_ascii=False
            )
        )
    finally:
        rag.close()


@gateway_app.command("status-service")
def status_service_cmd(
    port: Annotated[int, typer.Option("--port")] = 8790,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
) -> None:
    """Serve the sample ticket status service (GET /tickets/{number})."""
    from connectors.sample.status_service import StatusService

    service = StatusService(host, port)
    console.print(f"ticket status service on {service.url}")
    service.serve_forever()


def register(app: typer.Typer) -> None:
    app.command("rows")(rows)
    app.command("status")(status)
    app.command("trace")(trace)
    app.command("remember")(remember)
    app.command("recall")(recall)
    app.add_typer(gateway_app, name="gateway")
