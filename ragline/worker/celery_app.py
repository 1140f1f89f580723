"""The Celery adapter: an app factory (Redis broker and result backend from
settings.worker), the task wrappers, and `CeleryRunner`, the API's side of the queue.

Delivery guarantees: `acks_late` + `task_reject_on_worker_lost` mean a task is removed
from the queue only after it finished; a worker killed mid-task leaves it unacknowledged
and Redis hands it out again after `visibility_timeout_s`. The tasks are idempotent, so
the redelivery finishes the job without duplicating anything.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from celery import Celery, Task

from core.settings import Settings
from ragline.worker import DEFAULT_QUEUE
from ragline.worker.tasks import TASKS, TaskContext, backoff_s, is_transient, record_failure

log = logging.getLogger(__name__)


def events_channel(queue: str) -> str:
    """Events are scoped like the queue, so two deployments on one Redis stay apart."""
    return f"{queue}:events"


class ProcessContext:
    """Builds the worker's `TaskContext` once per process, on first use.

    Celery's prefork pool forks children after the app is created; each child builds its
    own Ragline here (the parent never does, so no model or file handle crosses a fork).
    """

    def __init__(self, settings: Settings, queue: str) -> None:
        self._settings = settings
        self._queue = queue
        self._ctx: TaskContext | None = None
        self._lock = threading.Lock()

    def get(self, **_signal_kwargs: Any) -> TaskContext:
        with self._lock:
            if self._ctx is None:
                from ragline.app import Ragline
                from ragline.events import make_event_bus

                s = self._settings
                self._ctx = TaskContext(
                    rag=Ragline(s),
                    events=make_event_bus(s, events_channel(self._queue)),
                    max_attempts=s.worker.max_retries + 1,
                    sync_folders=list(s.worker.sync_folders),
                )
            return self._ctx

    def close(self, **_signal_kwargs: Any) -> None:
        with self._lock:
            if self._ctx is not None:
                self._ctx.rag.close()
                self._ctx.events.close()
                self._ctx = None


def create_celery(
    settings: Settings,
    queue: str = DEFAULT_QUEUE,
    visibility_timeout_s: float = 1800.0,
    restore_interval_s: float = 10.0,
) -> Celery:
    """`visibility_timeout_s` bounds how long a task killed with its worker waits before
    redelivery; it must exceed the longest task, or a slow task is handed out twice
    (harmless, the tasks are idempotent, but wasted work)."""
    broker = settings.worker.broker_url
    if not broker:
        raise ValueError("Celery needs RAGLINE_WORKER__BROKER_URL (e.g. redis://host:6379/0)")
    app = Celery("ragline", broker=broker, backend=settings.worker.result_backend or None)
    app.conf.update(
        task_default_queue=queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,  # a long ingest must not hold other tasks hostage
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_track_started=True,
        result_expires=timedelta(days=1),
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": visibility_timeout_s,
            "unacked_restore_interval": restore_interval_s,
            "unacked_restore_throttle": 1,
        },
        worker_hijack_root_logger=False,
    )
    if settings.worker.sync_folders:
        app.conf.beat_schedule = {
            "sync-folders": {
                "task": "ragline.sync_folders",
                "schedule": timedelta(seconds=settings.worker.sync_interval_s),
                "options": {"queue": queue},
            }
        }
    holder = ProcessContext(settings, queue)
    app.conf.ragline_context = holder  # for the worker command's process signals
    max_retries = settings.worker.max_retries
    for name in TASKS:
        _register(app, holder, name, max_retries)
    return app


def _register(app: Celery, holder: ProcessContext, name: str, max_retries: int) -> None:
    fn = TASKS[name]

    def run(self: Task, **kwargs: Any) -> dict[str, Any] | None:
        ctx = holder.get()
        job_id = str(kwargs.get("job_id", ""))
        try:
            return fn(ctx, **kwargs)
        except Exception as exc:
            retries = int(self.request.retries or 0)
            if is_transient(exc) and retries < max_retries:
                log.warning("%s %s: %s; retry %d", name, job_id, exc, retries + 1)
                raise self.retry(exc=exc, countdown=backoff_s(retries)) from exc
            log.exception("%s %s failed", name, job_id)
            record_failure(ctx, job_id, exc, retries + 1)
            return None

    app.task(
        name=f"ragline.{name}",
        bind=True,
        acks_late=True,
        reject_on_worker_lost=True,
        max_retries=max_retries,
        shared=False,  # this app only: Celery's shared-task registry is process-global
    )(run)


class CeleryRunner:
    """Publishes task messages; the job id doubles as the Celery task id."""

    def __init__(self, app: Celery, queue: str = DEFAULT_QUEUE) -> None:
        self._app = app
        self._queue = queue

    def submit(self, task: str, job_id: str, **kwargs: Any) -> None:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}")
        self._app.send_task(
            f"ragline.{task}",
            kwargs={"job_id": job_id, **kwargs},
            task_id=job_id or None,
            queue=self._queue,
            retry=True,
            retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5},
        )

    def resume(self) -> int:
        """The broker redelivers a lost worker's tasks itself (`acks_late`)."""
        return 0

    def ping(self) -> str | None:
        try:
            with self._app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            return None
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        self._app.close()


def run_worker(
    settings: Settings,
    queue: str = DEFAULT_QUEUE,
    concurrency: int = 1,
    loglevel: str = "INFO",
    visibility_timeout_s: float = 1800.0,
    pool: str = "prefork",
) -> None:
    """`ragline worker`: a Celery worker, plus the embedded beat when folders are synced."""
    from celery import signals

    app = create_celery(settings, queue, visibility_timeout_s)
    holder: ProcessContext = app.conf.ragline_context
    # Warm each pool process before its first task: the first upload then pays no
    # model-loading time. With the solo pool the worker process itself runs tasks.
    signal = signals.worker_init if pool == "solo" else signals.worker_process_init
    signal.connect(holder.get, weak=False)
    signals.worker_process_shutdown.connect(holder.close, weak=False)
    argv = [
        "worker",
        f"--concurrency={concurrency}",
        f"--queues={queue}",
        f"--loglevel={loglevel}",
        f"--pool={pool}",
        f"--hostname={queue}@%h",
        "--without-gossip",
        "--without-mingle",
    ]
    if settings.worker.sync_folders:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        argv += ["--beat", f"--schedule={settings.data_dir / 'celerybeat-schedule'}"]
    app.worker_main(argv)
