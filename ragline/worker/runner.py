"""The `TaskRunner` port the API submits work through, and its in-process adapter.

`InProcessRunner` runs the same task functions as the Celery worker, on one background
thread of this process, with the same retry and failure rules: single-machine mode needs
no Redis. The Celery adapter is `ragline.worker.celery_app.CeleryRunner`.

A broker keeps a task until a worker has done it; a process does not. So the in-process
runner keeps each job's task in the job's row, with a token naming this process, and a
runner starting up (`resume`) takes up the unfinished jobs of processes that are gone: a
server stopped (its queued jobs were never started) or killed (its job stopped halfway;
tasks are safe to run again, as a broker's redelivery runs them).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from ragline.jobs import UNFINISHED
from ragline.worker.tasks import TASKS, TaskContext, backoff_s, is_transient, record_failure

log = logging.getLogger(__name__)


class TaskRunner(Protocol):
    def submit(self, task: str, job_id: str, **kwargs: Any) -> None:
        """Queue `task` (a name in TASKS) for `job_id`; returns without waiting."""
        ...

    def ping(self) -> str | None:
        """None when the queue is reachable, else why not."""
        ...

    def resume(self) -> int:
        """Take up the unfinished jobs of stopped processes (0 where a broker keeps them);
        how many were taken."""
        ...

    def close(self) -> None: ...


def _started(pid: int) -> str | None:
    """When a process started (clock ticks since boot, from /proc), None when it does not
    exist; "" where /proc cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None if Path("/proc/self/stat").exists() else ""
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, after the command's name


def process_token(pid: int | None = None) -> str:
    """This process (or `pid`) on this host: host, pid and start time, so that a reused
    pid is another process."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_started(pid) or ''}"


def process_gone(token: str) -> bool:
    """Whether the process a token names has ended. Only a process of this host can be
    known to be gone: another host's is never taken for it."""
    parts = token.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    return pid_ended(int(parts[1]), parts[2])


def pid_ended(pid: int, started: str = "") -> bool:
    """Whether process `pid` of this host has ended; with `started` (its start time, as a
    token holds it), also when the pid now names another process."""
    now = _started(pid)
    if now is None:
        return True
    if now and started:
        return now != started  # the pid was reused
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


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
        self.token = process_token()

    def submit(self, task: str, job_id: str, **kwargs: Any) -> None:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}")
        if job_id:
            self._hold(task, job_id, kwargs)
        self._run(task, job_id, kwargs)

    def _hold(self, task: str, job_id: str, kwargs: dict[str, Any]) -> None:
        """Keep the job's task with it, for another process to take up if this one stops
        before it is done."""
        try:
            payload = json.dumps({"task": task, "kwargs": kwargs})
        except (TypeError, ValueError) as exc:
            log.warning("job %s: its task cannot be kept for a restart (%s)", job_id, exc)
            return
        self._ctx.rag.stores.metadata.hold_job_task(job_id, self.token, payload)

    def resume(self) -> int:
        """Take up the unfinished jobs whose process is gone, each by one process: queued
        ones a stopped server never started, and ones a killed process left halfway."""
        meta = self._ctx.rag.stores.metadata
        taken = 0
        for job_id, runner, payload in meta.held_job_tasks(UNFINISHED):
            if runner == self.token or not process_gone(runner):
                continue
            if not meta.take_job_task(job_id, runner, self.token):
                continue  # another process took it first
            try:
                held = json.loads(payload)
                task, kwargs = held["task"], dict(held["kwargs"])
                kwargs.pop("job_id", None)
            except (ValueError, KeyError, TypeError) as exc:
                unreadable = RuntimeError(f"its task was unreadable: {exc}")
                record_failure(self._ctx, job_id, unreadable, 1)
                continue
            log.info("job %s: taken up from %s, which stopped before it was done", job_id, runner)
            self._run(task, job_id, kwargs)
            taken += 1
        return taken

    def _run(self, task: str, job_id: str, kwargs: dict[str, Any]) -> None:
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
