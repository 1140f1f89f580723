"""`ragline serve`, `ragline worker` and `ragline jobs`: the serving processes and the ingestion
jobs, registered on the main CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from ragline.cli.common import (
    AsJson,
    DataDir,
    console,
    err,
    fail,
    open_app,
    open_metadata,
    settings_for,
)
from ragline.worker import DEFAULT_QUEUE

if TYPE_CHECKING:  # imported where used: `ragline --help` stays light
    from core.settings import Settings

Queue = Annotated[
    str,
    typer.Option(
        "--queue", help="Celery queue (and events channel) name; API and worker must agree."
    ),
]


def serve(
    host: Annotated[str | None, typer.Option(help="Default: RAGLINE_API__HOST.")] = None,
    port: Annotated[int | None, typer.Option(help="Default: RAGLINE_API__PORT.")] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", min=0, help="Processes; 0 = one per core. Default: RAGLINE_API__WORKERS."
        ),
    ] = None,
    queue: Queue = DEFAULT_QUEUE,
    cache_ttl: Annotated[
        float | None,
        typer.Option("--cache-ttl", help="Query cache TTL, s. Default: RAGLINE_API__CACHE_TTL_S."),
    ] = None,
    data_dir: DataDir = None,
    log_level: Annotated[str, typer.Option("--log-level")] = "info",
) -> None:
    """Run the HTTP API (uvicorn), in one process per core by default. Without
    RAGLINE_WORKER__BROKER_URL it also runs the ingestion tasks itself, in-process."""
    import os

    import uvicorn

    from core.cores import cores
    from ragline.api.asgi import QUEUE_ENV
    from ragline.api.server import uvicorn_options

    settings = settings_for(data_dir)
    # Opened once here first: a data dir that cannot be used, a damaged store or settings
    # the application refuses end the command in one line (exit 2). Found by the worker
    # processes instead, each printed a traceback, and with several the server exited 0.
    open_app(data_dir, settings=settings).close()
    count = workers if workers is not None else settings.api.workers
    count = count or cores()
    # Worker processes rebuild the app from the environment: hand them what this command
    # resolved from its own flags.
    os.environ["RAGLINE_DATA_DIR"] = str(settings.data_dir.resolve())
    os.environ[QUEUE_ENV] = queue
    # Checked above: a worker started later (in place of one that died) serves without a
    # FAISS file damaged since, instead of failing to start and stopping the server.
    os.environ.setdefault("RAGLINE_BACKENDS__DENSE_DAMAGED", "serve")
    if cache_ttl is not None:
        os.environ["RAGLINE_API__CACHE_TTL_S"] = str(cache_ttl)
    # Each process sizes its thread pools from its share of the cores.
    os.environ.setdefault("RAGLINE_THREADS__PROCESSES", str(count))
    if count > 1:
        _share_metrics(settings)
    err.print(
        f"ragline serve: {count} process(es) on {host or settings.api.host}:"
        f"{port or settings.api.port}, data in {settings.data_dir}"
    )
    uvicorn.run(
        "ragline.api.asgi:app_from_env",
        factory=True,
        workers=count,
        host=host or settings.api.host,
        port=port or settings.api.port,
        log_level=log_level,
        access_log=False,
        **uvicorn_options(settings.api, count),
    )


def _share_metrics(settings: Settings) -> None:
    """Worker processes count into one set of files, so a scrape answered by any of them
    reports everyone's totals (prometheus_client multiprocess mode). Set before the workers
    import prometheus_client; the files of a previous run are removed first, those of
    processes still running are not (another server on the same data: a second `serve`
    wiped the first one's counters, even when it then failed to bind its port)."""
    import os

    from monitoring.metrics import MULTIPROC_ENV
    from ragline.worker.runner import pid_ended

    shared = Path(os.environ.get(MULTIPROC_ENV) or settings.data_dir.resolve() / "metrics")
    shared.mkdir(parents=True, exist_ok=True)
    for old in shared.glob("*.db"):
        pid = old.stem.rpartition("_")[2]  # counter_1234.db, gauge_livesum_1234.db
        if not pid.isdigit() or pid_ended(int(pid)):
            old.unlink(missing_ok=True)
    os.environ[MULTIPROC_ENV] = str(shared)


def worker(
    concurrency: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    queue: Queue = DEFAULT_QUEUE,
    pool: Annotated[str, typer.Option(help="prefork | solo | threads")] = "prefork",
    visibility_timeout: Annotated[
        float,
        typer.Option(
            "--visibility-timeout",
            help="Redelivery delay of a task whose worker died, s; must exceed the longest task.",
        ),
    ] = 1800.0,
    data_dir: DataDir = None,
    log_level: Annotated[str, typer.Option("--log-level")] = "INFO",
) -> None:
    """Run a Celery ingestion worker (plus beat when RAGLINE_WORKER__SYNC_FOLDERS is set)."""
    from ragline.worker.celery_app import run_worker

    settings = settings_for(data_dir)
    if not settings.worker.broker_url:
        fail(
            "error",
            "`ragline worker` needs RAGLINE_WORKER__BROKER_URL (redis://...); "
            "without a broker, `ragline serve` runs the tasks in-process",
            2,
        )
    run_worker(settings, queue, concurrency, log_level, visibility_timeout, pool)


def jobs(
    job_id: Annotated[str | None, typer.Argument(help="One job; default: the latest.")] = None,
    batch: Annotated[str, typer.Option("--batch", help="Jobs of this batch.")] = "",
    limit: Annotated[int, typer.Option(min=1, max=100_000)] = 50,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Ingestion jobs: state (queued, parsing, indexing, searchable, failed) and reason."""
    from ragline.jobs import batch_view, job_view

    # Only the metadata store: reading jobs must not load the embedder.
    store = open_metadata(data_dir)
    try:
        if job_id:
            job = store.job(job_id)
            if job is None:
                err.print(f"no job {job_id}")
                raise typer.Exit(1)
            records = [job]
        else:
            records = store.jobs(batch_id=batch, limit=limit)
    finally:
        store.close()
    if as_json:
        view = job_view(records[0]) if job_id else batch_view(batch, records)
        print(json.dumps(view, ensure_ascii=False, indent=2))
        return
    table = Table("job", "kind", "state", "doc", "source", "updated", "reason")
    for j in records:
        colour = {"failed": "red", "searchable": "green"}.get(j.state, "")
        table.add_row(
            j.job_id[:12],
            j.kind,
            Text(j.state, style=colour),
            j.doc_id[:6],
            j.source[-40:],
            j.updated_at.strftime("%Y-%m-%d %H:%M:%S") if j.updated_at else "",
            j.reason[:60],
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(worker)
    app.command()(jobs)
