"""`ragline audit export` and `ragline alerts check`, registered on the main CLI."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, TextIO, get_args

import typer

from ragline.cli.common import DataDir, err, fail, one_of, open_metadata, settings_for

if TYPE_CHECKING:  # imported where used: `ragline --help` stays light
    from monitoring.alerts import Alert


audit_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, help="Export the audit logs as CSV."
)
alerts_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, help="Evaluate the alert rules."
)

AuditLog = Literal["passages", "queries", "ingest", "alerts", "gateway"]
GapStatus = Literal["open", "closed", "all"]


def _when(value: str | None, option: str) -> datetime | None:
    """An ISO 8601 date or time; without a zone it is taken as UTC."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise typer.BadParameter(
            f"not an ISO 8601 date or time: {value!r}", param_hint=option
        ) from exc


@audit_app.command("export")
def export(
    since: Annotated[str | None, typer.Option("--since", help="From (ISO, inclusive).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Until (ISO, exclusive).")] = None,
    user: Annotated[str | None, typer.Option("--user", help="Only this user's queries.")] = None,
    out: Annotated[
        Path | None, typer.Option("--csv", "--out", help="CSV file; default stdout.")
    ] = None,
    log: Annotated[
        AuditLog,
        typer.Option(
            "--log",
            parser=one_of(*get_args(AuditLog)),
            help="passages: one row per cited passage per answer; queries: "
            "one per answer; ingest: file outcomes; alerts: firings, actions, "
            "recoveries; gateway: SQL/status executions.",
        ),
    ] = "passages",
    doc: Annotated[
        str | None, typer.Option("--doc", help="passages: only this document (doc_id).")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=10_000_000, help="At most this many rows.")
    ] = 100_000,
    data_dir: DataDir = None,
) -> None:
    """An audit log as CSV. The default, passages: one row per cited passage per answer
    (answer, document version, passage and processing lineage)."""
    from core.times import naive_utc
    from monitoring.audit import (
        ALERT_COLUMNS,
        alert_row,
        export_gateway,
        export_ingest,
        export_passages,
        export_queries,
        write_csv,
    )

    lo, hi = _when(since, "--since"), _when(until, "--until")
    if log in ("ingest", "alerts") and user is not None:
        raise typer.BadParameter(f"the {log} log records no user", param_hint="--user")
    if doc is not None and log != "passages":
        raise typer.BadParameter("--doc filters the passages log", param_hint="--doc")
    metadata = open_metadata(data_dir)
    try:
        with ExitStack() as files:
            # stdout is not ours to close.
            stream = files.enter_context(_csv_file(out)) if out else sys.stdout
            if log == "ingest":
                n = export_ingest(metadata, stream, since=lo, until=hi, limit=limit)
            elif log == "gateway":
                from connectors.records import GatewayRecords

                records = GatewayRecords(metadata.engine).audit_log(since=lo, limit=limit)
                n = export_gateway(records, stream, since=lo, until=hi, user=user)
            elif log == "alerts":
                events = metadata.alert_events(naive_utc(lo), naive_utc(hi), limit)
                n = write_csv(stream, ALERT_COLUMNS, (alert_row(e) for e in reversed(events)))
            elif log == "passages":
                n = export_passages(
                    metadata, stream, since=lo, until=hi, user=user, doc_id=doc, limit=limit
                )
            else:
                n = export_queries(metadata, stream, since=lo, until=hi, user=user, limit=limit)
    finally:
        metadata.close()
    err.print(f"{n} rows" + (f" written to {out}" if out else ""))


def _csv_file(out: Path) -> TextIO:
    """`--out`, opened for the CSV (newline="": the csv module writes its own line ends).
    A path that cannot be written (no such folder, a folder) ends the command with one
    plain line, not a traceback."""
    try:
        return out.open("w", newline="", encoding="utf-8")
    except OSError as exc:
        fail("error", f"cannot write {out}: {exc.strerror or exc}", 2)


def _alert_line(a: Alert) -> str:
    value = "n/a" if a.value is None else f"{a.value:g}"
    return f"[{a.severity}] {a.name}: {a.message} (value {value}, threshold {a.threshold:g})"


@alerts_app.command("check")
def check(
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Evaluate every enabled rule once and print what fires; exit 1 if anything does."""
    from core.errors import RaglineError
    from indexing.stores.sql_metadata import SqlMetadataStore
    from monitoring.alert_scheduler import utcnow
    from ragline.monitor import alert_evaluator, metadata_alert_source, rag_alert_source

    settings = settings_for(data_dir, existing=True)
    try:
        evaluator = alert_evaluator(settings)
    except RaglineError as exc:
        fail("error", exc, 2)
    if evaluator.needs_derived_stores:
        from ragline.app import Ragline

        rag = Ragline(settings)
        try:
            firing = evaluator.evaluate(rag_alert_source(rag), utcnow())
        finally:
            rag.close()
    else:
        metadata = SqlMetadataStore(settings.resolved_metadata_url)
        try:
            firing = evaluator.evaluate(metadata_alert_source(metadata), utcnow())
        finally:
            metadata.close()
    if as_json:
        print(json.dumps([a.as_dict() for a in firing], ensure_ascii=False, indent=2))
    elif firing:
        for a in firing:
            print(_alert_line(a))
    else:
        print(f"ok: {len(evaluator.rules)} rules, none firing")
    if firing:
        raise typer.Exit(1)


def gaps(
    since: Annotated[
        str | None, typer.Option("--since", help="Last asked at or after (ISO).")
    ] = None,
    status: Annotated[
        GapStatus,
        typer.Option("--status", parser=one_of(*get_args(GapStatus)), help="Which gaps."),
    ] = "open",
    as_csv: Annotated[bool, typer.Option("--csv", help="CSV for spreadsheets.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, max=100_000)] = 1000,
    data_dir: DataDir = None,
) -> None:
    """Knowledge gaps: questions answered "not covered" or with low coverage, deduplicated,
    most asked first, with who asked and the nearest documents. A gap closes by itself
    when a later ingest makes its question answerable."""
    from monitoring.gaps import gap_view, gaps_csv

    lo = _when(since, "--since")
    metadata = open_metadata(data_dir)
    try:
        rows = metadata.gaps(since=lo, status=None if status == "all" else status, limit=limit)
    finally:
        metadata.close()
    if as_csv:
        sys.stdout.write(gaps_csv(rows))
        return
    if as_json:
        print(json.dumps([gap_view(g) for g in rows], ensure_ascii=False, indent=2))
        return
    if not rows:
        print(f"no {status if status != 'all' else ''} knowledge gaps".replace("  ", " "))
        return
    for g in rows:
        roles = ", ".join(g.roles) or "-"
        near = "; ".join(m["title"] or m["source"] for m in g.near_misses) or "-"
        print(
            f"{g.count:>4}x  {g.question}  [{g.status}; {g.reason}; roles: {roles}; "
            f"first {g.first_at:%Y-%m-%d %H:%M}, last {g.last_at:%Y-%m-%d %H:%M}; near: {near}]"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
    app.add_typer(alerts_app, name="alerts")
    app.command("gaps")(gaps)
