"""`ragline` command line: ingest, search, ask, documents, check/repair, bench."""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

# Start-up: `ragline --help` and the start of `ragline ask` must not pay for the stores,
# models and web stack. Everything heavy is imported inside the command that needs it;
# tests/ragline/test_cli_startup.py fails when a heavy module is imported here again.
from core.formats import DOC_TYPES_HELP
from core.ids import readable_source
from ragline.bench.cli import bench_app
from ragline.cli.common import (
    AsJson,
    DataDir,
    Roles,
    User,
    console,
    err,
    fail,
    labelled,
    open_app,
    require_data,
    settings_for,
)
from ragline.cli.gateway import register as register_gateway_commands
from ragline.cli.monitoring import register as register_monitoring_commands
from ragline.cli.service import register as register_service_commands
from ragline.mcp.server import mcp_command

if TYPE_CHECKING:
    from concurrent.futures import Future

    from core.settings import Settings
    from core.types import Principal
    from indexing.embedders import Embedder
    from ragline.app import Ragline
    from ragline.ingest import FileOutcome

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__, rich_markup_mode=None)
app.add_typer(bench_app, name="bench")
register_service_commands(app)  # serve, worker, jobs
register_monitoring_commands(app)  # audit export, alerts check
app.command("mcp")(mcp_command)  # MCP tools for agents (stdio or streamable HTTP)
register_gateway_commands(app)  # rows, status, trace, remember, recall, gateway ...

ApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        envvar="RAGLINE_CLI_API_KEY",
        help="Act as this key of RAGLINE_API__KEYS (its write rights are checked); "
        "default: the operator.",
    ),
]
Tags = Annotated[list[str] | None, typer.Option("--tag", help="An access tag (repeatable).")]
TopK = Annotated[int | None, typer.Option("--top-k", min=1, max=100)]
DocTypes = Annotated[list[str] | None, typer.Option("--doc-type", help=DOC_TYPES_HELP)]
Task = Annotated[
    str,
    typer.Option(
        "--task",
        help="Task type for routing: qa, compliance_review, troubleshooting, lookup, analysis.",
    ),
]
Filters = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        help="KEY=VALUE (repeatable): doc_type, department, date_from, date_to, "
        "date_range=FROM..TO, entities, region.",
    ),
]


def _embedder_loading(settings: Settings) -> Future[Embedder]:
    """The embedder, its model loading on a thread from now on: `ragline ask` and `search`
    load it while they import the query path (reading the weights and setting up the C++
    tokenizer let go of the GIL), not after. A load that fails here fails again, with its
    message, where the query first needs the model."""
    import threading
    from concurrent.futures import Future

    made: Future[Embedder] = Future()

    def load() -> None:
        try:
            from indexing.embedders import make_embedder

            embedder = make_embedder(settings.embedder)
        except BaseException as exc:  # the command reports it where it needs the embedder
            made.set_exception(exc)
            return
        made.set_result(embedder)
        with contextlib.suppress(Exception):
            embedder.load()

    threading.Thread(target=load, name="model-load", daemon=True).start()
    return made


@contextlib.contextmanager
def _file_progress(quiet: bool) -> Iterator[Callable[[FileOutcome, int, int], None]]:
    """Progress of an ingest on stderr, none when `quiet`: a bar on a terminal, else a
    plain line per file, so a log of a long run shows how far it got."""
    if quiet:
        yield lambda *_: None
        return
    if err.is_terminal:
        from rich.progress import Progress

        with Progress(console=err, transient=True) as bar:
            task = bar.add_task("ingesting", total=None)
            yield lambda _, done, found: bar.update(task, completed=done, total=found)
        return

    def line(outcome: FileOutcome, done: int, found: int) -> None:
        what = f"{outcome.chunks} chunks, {outcome.seconds:.2f} s" if outcome.chunks else ""
        note = "; ".join(x for x in (what, outcome.note) if x)
        name = Path(outcome.path).name
        err.print(f"{done}/{found} {outcome.status} {name}" + (f": {note}" if note else ""))

    yield line


@dataclass
class _Stop:
    """How far a long command got, and the signal that stopped it (0: none)."""

    signal: int = 0
    done: int = 0
    found: int = 0


@contextlib.contextmanager
def _interruptible(stop: _Stop) -> Iterator[None]:
    """SIGTERM ends the block as Ctrl-C does (KeyboardInterrupt), so that the command can
    say how far it got; the signal is noted in `stop`."""
    import signal

    def interrupt(signum: int, _frame: object) -> None:
        stop.signal = signum
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    except KeyboardInterrupt:
        stop.signal = stop.signal or signal.SIGINT
        raise
    finally:
        signal.signal(signal.SIGTERM, before)


def _every_few_seconds(seconds: float = 2.0) -> Callable[[str, int, int], None]:
    """Progress of a long rebuild on stderr: "dense 5120/90000 chunks", at most one line
    every few seconds, and the last one."""
    import time

    last = 0.0

    def line(store: str, done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= seconds or done == total:
            err.print(f"{store} {done}/{total} chunks")
            last = now

    return line


def _span_text(citation: dict[str, Any], of: str = "") -> str:
    """Where a cited sentence (`of`="chunk_": its passage) is: "p3 lines 14-20", or across
    a page break "p33 line 14 - p34 line 10" (line numbers count within their page)."""
    first, last = citation[f"{of}page_start"], citation[f"{of}page_end"]
    start, end = citation[f"{of}line_start"], citation[f"{of}line_end"]
    if first == last:
        return f"p{first} lines {start}-{end}"
    return f"p{first} line {start} - p{last} line {end}"


def _writer(rag: Ragline, api_key: str | None) -> Principal | None:
    """The principal a write acts for: None (the operator) without a key; with one, the
    key's principal from RAGLINE_API__KEYS, whose write rights are then checked."""
    if not api_key:
        return None
    from ragline.mcp.server import StartupError, resolve_principal

    try:
        return resolve_principal(rag.settings, api_key)
    except StartupError as exc:
        raise typer.BadParameter(str(exc), param_hint="--api-key") from exc


def _principal(user: str, roles: list[str] | None, tags: list[str] | None) -> Principal:
    from core.types import Principal

    return Principal(user=user, roles=frozenset(roles or ()), tags=frozenset(tags or ()))


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(exists=True, help="Files or folders.")],
    tag: Annotated[
        list[str] | None,
        typer.Option(
            "--tag",
            help="ACL tag for these documents (repeatable); replaces their tags. Without "
            "--tag or --public an existing document keeps its tags.",
        ),
    ] = None,
    public: Annotated[
        bool, typer.Option("--public", help="Remove the documents' ACL tags (everyone sees).")
    ] = False,
    api_key: ApiKeyOpt = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Parse, chunk, embed and index files; unchanged files are skipped (a change of tags
    alone is applied as a metadata update), changed ones replace their old version,
    files gone from an ingested folder are removed."""
    if public and tag:
        raise typer.BadParameter("--public and --tag exclude each other")
    tags: list[str] | None = [] if public else tag
    from core.errors import RaglineError

    rag = open_app(data_dir)
    stop = _Stop()
    try:
        principal = _writer(rag, api_key)
        with _file_progress(quiet=as_json) as progress, _interruptible(stop):

            def counted(outcome: FileOutcome, done: int, found: int) -> None:
                stop.done, stop.found = done, found
                progress(outcome, done, found)

            outcomes, report = rag.ingest(paths, tags=tags, progress=counted, principal=principal)
    except KeyboardInterrupt:
        err.print(
            f"interrupted after {stop.done} of {stop.found or 'the'} files: those are kept; "
            "run the same command again to go on (files done are skipped as unchanged)"
        )
        raise typer.Exit(128 + (stop.signal or 2)) from None
    except RaglineError as exc:  # the ingest as a whole cannot run: settings, stores
        fail("error", exc, 2)
    finally:
        rag.close()
    if as_json:
        print(
            json.dumps(
                {
                    "files": [asdict(o) for o in outcomes],
                    "sync": {
                        "applied": report.applied,
                        "errors": report.errors,
                        "promoted": len(report.promoted),
                    },
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        from rich.table import Table

        table = Table("file", "status", "chunks", "tables", "pages", "s", "reason")

        for o in outcomes:
            colour = {
                "failed": "red",
                "indexed": "green",
                "updated": "cyan",
                "deleted": "yellow",
            }.get(o.status, "")
            if o.status == "indexed" and o.warnings:
                colour = "yellow"
            table.add_row(
                Path(o.path).name,
                Text(o.status, style=colour),
                str(o.chunks),
                str(o.tables),
                str(o.pages),
                f"{o.seconds:.2f}",
                o.note,
            )
        console.print(table)
        counts = Counter(o.status for o in outcomes)
        warned = sum(o.status == "indexed" and bool(o.warnings) for o in outcomes)
        console.print(
            ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            + (f" ({warned} with warnings)" if warned else "")
        )
        for store, error in report.errors.items():
            err.print(labelled(f"{store} store not updated", f"{error} — run `ragline sync` later"))
    if report.errors:
        raise typer.Exit(1)


def _query(
    question: str,
    data_dir: Path | None,
    user: str,
    role: list[str] | None,
    tag: list[str] | None,
    doc_type: list[str] | None,
    top_k: int | None,
    ask: bool,
    task: str = "qa",
    filters: list[str] | None = None,
) -> dict[str, Any]:
    settings = settings_for(data_dir)
    if not (ask and settings.gateway.sources):  # the gateway's own sources can answer
        require_data(settings)
    from core.errors import InvalidRequest
    from core.formats import doc_type_filter
    from routing.instruction import parse_filter_args

    # Checked before the model starts loading: exiting while a thread is inside the
    # model's native code aborts the process.
    try:
        context = parse_filter_args(filters or (), task)
        doc_types = doc_type_filter(doc_type or (), "--doc-type")
    except InvalidRequest as exc:
        fail("error", exc, 2)
    embedder = _embedder_loading(settings)
    from core.types import QueryFilter
    from ragline.render import answer_view, search_view

    rag = open_app(data_dir, embedder, settings)
    try:
        principal = _principal(user, role, tag)
        where = QueryFilter.for_principal(principal, doc_types=doc_types)
        if ask:
            return answer_view(
                rag.ask(question, principal, where=where, top_k=top_k, context=context)
            )
        return search_view(
            rag.search(question, principal, where=where, top_k=top_k, context=context)
        )
    except InvalidRequest as exc:
        fail("error", exc, 2)
    finally:
        rag.close()


@app.command()
def search(
    question: str,
    user: User = "anonymous",
    role: Roles = None,
    tag: Tags = None,
    doc_type: DocTypes = None,
    top_k: TopK = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
    task: Task = "qa",
    filters: Filters = None,
) -> None:
    """Ranked passages for a question, with the route taken and per-source timings."""
    view = _query(question, data_dir, user, role, tag, doc_type, top_k, False, task, filters)
    if as_json:
        print(json.dumps(view, ensure_ascii=False, indent=2))
        return
    console.print(
        f"route: {view['route']['rule']} ({view['route']['strategy']}), covered: {view['covered']}"
    )
    for i, h in enumerate(view["hits"], 1):
        console.print(
            Text.assemble(
                (f"{i}. {h['label']}", "bold"),
                f" {h['score']:.4f}  {h['title']}  p{h['page_start']}-{h['page_end']}",
            )
        )
        console.print("   " + h["text"][:300].replace("\n", " "))
    for w in view["warnings"]:
        err.print(f"note: {w}")


@app.command()
def ask(
    question: str,
    user: User = "anonymous",
    role: Roles = None,
    tag: Tags = None,
    doc_type: DocTypes = None,
    top_k: TopK = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
    task: Task = "qa",
    filters: Filters = None,
) -> None:
    """An answer built only from retrieved text, every sentence cited as [DocX_pY] (or
    [DocX_pY.N] when several passages of one page are cited), with a confidence."""
    view = _query(question, data_dir, user, role, tag, doc_type, top_k, True, task, filters)
    if as_json:
        print(json.dumps(view, ensure_ascii=False, indent=2, default=str))
        return
    console.print(view["answer"])
    if view["citations"]:
        console.print("\nSources", style="bold")
        for c in view["citations"]:
            console.print(
                f"  {c['label']} {c['title']} — {readable_source(c['source'])} {_span_text(c)} "
                f"(passage {_span_text(c, 'chunk_')}, "
                f"{c['content_id']})",
            )
    console.print(
        f"\nconfidence: {view['confidence']:.2f}"
        + (f" — {view['reason']}" if view["reason"] else ""),
    )
    for s in view["sentences"]:
        if not s["supported"]:
            err.print(labelled("unsupported", s["text"][:120], "yellow"))
    gateway_blocks = [b for b in view.get("blocks", []) if b["source_kind"] != "document"]
    if gateway_blocks:
        console.print(
            Text.assemble(
                ("\nSources", "bold"), f" (answered by {view['knowledge'].get('answered_by')})"
            )
        )
        for b in gateway_blocks:
            where = b["locator"].get("template") or b["locator"].get("url", "")
            console.print(
                f"  {b['label']} {b['source_id']} {where} {b['locator'].get('params', {})}",
            )
    for w in view["warnings"]:
        err.print(f"note: {w}")
    route = view["route"]
    line = f"route: {route['rule']} ({route['strategy']})"
    if route["synonyms_applied"]:
        line += "; synonyms: " + ", ".join(
            f"{k} -> {' / '.join(v)}" for k, v in route["synonyms_applied"].items()
        )
    if route["fallback"]:
        line += f"; fallback: {route['fallback']}"
    err.print(line)


@app.command()
def docs(data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """List indexed documents."""
    rag = open_app(data_dir, existing=True)
    try:
        rows = [
            (d, rag.stores.metadata.current_version(d.doc_id))
            for d in rag.stores.metadata.documents()
        ]
    finally:
        rag.close()
    if as_json:
        print(
            json.dumps(
                [
                    {
                        **asdict(d),
                        "acl_tags": sorted(d.acl_tags),
                        "modified": str(d.modified),
                        "handle": d.handle,
                        "current_version": v,
                    }
                    for d, v in rows
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    from rich.table import Table

    table = Table("handle", "doc_id", "type", "title", "tags", "version")
    for d, v in rows:
        table.add_row(
            d.handle,
            d.doc_id,
            d.doc_type,
            d.title[:50],
            ",".join(sorted(d.acl_tags)),
            (v or "pending")[:12],
        )
    console.print(table)


@app.command()
def delete(doc_id: str, api_key: ApiKeyOpt = None, data_dir: DataDir = None) -> None:
    """Remove a document from every store."""
    from ragline.writes import WriteDenied

    rag = open_app(data_dir, existing=True)
    try:
        principal = _writer(rag, api_key)
        resolved = _resolve_doc(rag, doc_id, principal)
        ok = rag.delete(resolved, principal)
    except WriteDenied as exc:
        fail("refused", exc)
    finally:
        rag.close()
    done = "deleted" if resolved == doc_id else f"deleted {resolved}"
    console.print(done if ok else f"no document {doc_id}")
    if not ok:
        raise typer.Exit(1)


def _resolve_doc(rag: Ragline, given: str, principal: Principal | None) -> str:
    """The doc_id `given` names: itself when it is one, else the one document whose
    doc_id it begins (the handle `ragline docs` shows, at least 6 hex digits). A prefix
    of several documents is refused with their ids; only documents `principal` may see
    are counted, so a refusal names no document it could not delete."""
    from core.ids import HANDLE_LEN

    wanted = given.strip().lower()
    hexadecimal = len(wanted) >= HANDLE_LEN and all(c in "0123456789abcdef" for c in wanted)
    if rag.stores.metadata.document(given) is not None or not hexadecimal:
        return given
    found = sorted(
        d.doc_id
        for d in rag.stores.metadata.documents()
        if d.doc_id.startswith(wanted) and (principal is None or principal.can_see(d.acl_tags))
    )
    if len(found) > 1:
        fail("ambiguous", f"{given} begins {len(found)} documents: {', '.join(found)}")
    return found[0] if found else given


@app.command()
def sync(data_dir: DataDir = None) -> None:
    """Apply pending outbox entries to the derived stores (resumes a half-done ingest)."""
    rag = open_app(data_dir)
    try:
        report = rag.sync()
    finally:
        rag.close()
    console.print(f"applied {report.applied}, promoted {len(report.promoted)} versions")
    for store, error in report.errors.items():
        err.print(labelled(store, error))
    if report.errors:
        raise typer.Exit(1)


def _divergence(repairing: bool, data_dir: Path | None, stores: bool = True) -> None:
    rag = open_app(data_dir, existing=not repairing)
    try:
        found = (rag.repair() if repairing else rag.check()) if stores else []
        # Unneeded originals go first: only what something needs is shared.
        swept = rag.sweep_originals() if repairing else 0
        shared = rag.uploads.share_local() if repairing else 0
    finally:
        rag.close()
    if swept:
        console.print(f"uploads  {swept} stored files no document or job needs removed")
    if shared:
        console.print(f"uploads  {shared} from this host now kept in the database too")
    for d in found:
        state = (
            "ok"
            if d.ok
            else f"{len(d.missing)} missing, {len(d.extra)} extra, "
            f"{len(d.stale)} with stale metadata (ACL, title, ...)"
        )
        console.print(f"{d.store:8s} {state}{' (repaired)' if repairing and not d.ok else ''}")
    if not repairing and not all(d.ok for d in found):
        raise typer.Exit(1)


@app.command("check")
def check_cmd(data_dir: DataDir = None) -> None:
    """Compare every derived store with the metadata store; exit 1 on divergence."""
    _divergence(False, data_dir)


@app.command("repair")
def repair_cmd(
    data_dir: DataDir = None,
    rebuild: Annotated[
        list[str] | None,
        typer.Option(
            "--rebuild",
            help="Rebuild this store from the metadata store (dense|keyword|graph, "
            "repeatable); dense re-embeds with the configured embedder.",
        ),
    ] = None,
    uploads_only: Annotated[
        bool,
        typer.Option(
            "--uploads-only",
            help="Only the uploads: no store is compared (cheap enough for a periodic job "
            "on every host).",
        ),
    ] = False,
) -> None:
    """Make every derived store agree with the metadata store, remove uploaded files no
    document or job needs (this host's and the database's), and keep this host's uploads
    in the database when uploads are shared (RAGLINE_API__UPLOAD_STORE)."""
    if uploads_only and rebuild:
        fail("error", "--uploads-only rebuilds nothing; leave out --rebuild", 2)
    if rebuild:
        from core.errors import RaglineError
        from ragline.rebuild import rebuild as rebuild_stores

        try:
            counts = rebuild_stores(settings_for(data_dir), rebuild, _every_few_seconds())
        except (RaglineError, ValueError) as exc:
            fail("error", exc, 2)
        for name, n in counts.items():
            console.print(f"{name:8s} rebuilt: {n} chunks")
    _divergence(True, data_dir, stores=not uploads_only)


@app.command("inspect")
def inspect_cmd(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="One file.")],
    as_json: AsJson = False,
) -> None:
    """How a file parses: block tree, chunks, tables, page spans, PII counts, warnings.
    Nothing is embedded or stored."""
    from core.errors import RaglineError
    from ragline.inspect import inspect_file, render

    try:
        report = inspect_file(file, settings_for(None))
    except RaglineError as exc:
        if as_json:
            print(json.dumps({"file": str(file), "error": str(exc)}, ensure_ascii=False))
        else:
            err.print(f"cannot parse {file}: {exc}", style="red")
        raise typer.Exit(1) from exc
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        render(report, console)


@app.command("grpc")
def grpc_serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Bind address (RAGLINE_GRPC__HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (RAGLINE_GRPC__PORT).")] = None,
) -> None:
    """Serve the gRPC API (ragline/grpc/ragline.proto): Search, Ask (streamed),
    GetDocumentMeta, UploadDocument, GetJob, DeleteDocument; API keys in the
    `authorization` metadata."""
    import asyncio

    from core.errors import RaglineError
    from ragline.grpc.server import serve

    settings = settings_for(data_dir)
    update = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    settings.grpc = settings.grpc.model_copy(update=update)
    try:
        asyncio.run(serve(settings, ready=lambda a: err.print(f"gRPC listening on {a}")))
    except KeyboardInterrupt:
        pass
    except RaglineError as exc:
        fail("error", exc, 2)


def main() -> None:  # pragma: no cover - the `ragline` command
    # The process is ending: the interpreter's last garbage collections walk every object
    # left (0.1-0.3 s of a `ragline ask` from the shell), and the system frees them anyway.
    # Frozen objects are skipped; atexit handlers registered later still run first.
    atexit.register(gc.freeze)
    sys.exit(app())
