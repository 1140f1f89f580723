"""The `TaskRunner` port the API submits work through, and its in-process adapter.

`InProcessRunner` runs the same task functions as the Celery worker, on one background
thread of this process, with the same retry and failure rules: single-machine mode needs
no Redis. The Celery adapter is `ragline.worker.celery_app.CeleryRunner`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from ragline.worker.tasks import TASKS, TaskContext, backoff_s, is_transient, record_failure

log = logging.getLogger(__name__)


class TaskRunner(Protocol):
    def submit(self, task: str, job_id: str, **kwargs: Any) -> None:
        """Queue `task` (a name in TASKS) for `job_id`; returns without waiting."""
        ...

    def ping(self) -> str | None:
        """None when the queue is reachable, else why not."""
        ...

    def close(self) -> None: ...


def run_with_retries(
    ctx: TaskContext,
    task: str,
    job_id: str,
    kwargs: dict[str, Any],
    max_retries: int,
    backoff_base_s: float = 1.0,
    stop: threading.Event | None = None,
) -> dict[str, Any] | None:
    """Run one task: transient errors retried with backoff, the last failure recorded."""
    fn = TASKS[task]
    for attempt in range(max_retries + 1):
        try:
            return fn(ctx, **kwargs)
        except Exception as exc:
            if is_transient(exc) and attempt < max_retries:
                delay = backoff_s(attempt, backoff_base_s)
                log.warning("%s %s: %s; retry in %.1fs", task, job_id, exc, delay)
                if stop is not None and stop.wait(delay):
                    break
                if stop is None:
                    time.sleep(delay)
                continue
            log.exception("%s %s failed", task, job_id)
            record_failure(ctx, job_id, exc, attempt + 1)
            return None
    return None


class InProcessRunner:
    """One background thread: tasks run in submission order, like one worker would."""

    def __init__(
        self,
        ctx: TaskContext,
        max_retries: int,
        backoff_base_s: float = 1.0,
        initializer: Callable[[], None] | None = None,
    ) -> None:
        self._ctx = ctx
        self._max_retries = max_retries
        self._backoff = backoff_base_s
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="ragline-task", initializer=initializer
        )
        self._futures: set[Future[Any]] = set()
        self._lock = threading.Lock()

    def submit(self, task: str, job_id: str, **kwargs: Any) -> None:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}")
        kw = {"job_id": job_id, **kwargs}
        future = self._pool.submit(
            run_with_retries,
            self._ctx,
            task,
            job_id,
            kw,
            self._max_retries,
            self._backoff,
            self._stop,
        )
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._futures.discard(future)

    def drain(self, timeout_s: float = 60.0) -> None:
        """Wait until every submitted task finished (tests, orderly shutdown)."""
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                pending = list(self._futures)
            if not pending:
                return
            for f in pending:
                f.result(timeout=max(0.0, deadline - time.monotonic()))

    def ping(self) -> str | None:
        return None

    def close(self) -> None:
        self._stop.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
