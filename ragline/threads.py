"""Thread sizing for one process (issue 13): BLAS/OpenMP threads and the pools that run
blocking store calls, from `settings.threads`, with defaults per core count.

On the 2-core machine numpy's OpenBLAS, FAISS's OpenBLAS and libgomp each started one
thread per core, and the USE embedder's per-call thread limit needs `threadpoolctl` (absent,
it silently used them all): a query's few-microsecond matmuls then woke spinning BLAS
threads that competed with the request threads, which is how the embedder's 1 ms became
60-400 ms under load. One BLAS thread per process, set once at start, avoids that.

OpenBLAS's count is one for the whole process; OpenMP's is a setting of each thread, so the
limit here reaches only the thread that starts the app. FAISS therefore sets it in every
thread that calls it (`FaissDenseIndex._one_team`, from `settings.model_threads`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from core.cores import cores
from core.settings import ThreadSettings

log = logging.getLogger("ragline")

_BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def own_cores(t: ThreadSettings) -> int:
    """This process's share of the cores: all of them, or 1/N each for `serve --workers N`."""
    return max(1, cores() // t.processes)


def retrieve_pool_size(t: ThreadSettings) -> int:
    return t.retrieve if t.retrieve > 0 else max(3, 2 * own_cores(t))


def blocking_pool_size(t: ThreadSettings) -> int:
    return t.blocking if t.blocking > 0 else max(4, 4 * own_cores(t))


def answer_pool_size(t: ThreadSettings) -> int:
    return t.answer if t.answer > 0 else own_cores(t)


def lowered(t: ThreadSettings) -> Callable[[], None] | None:
    """A pool thread's initializer that lowers its priority by `t.nice` (None when 0)."""
    if t.nice <= 0 or not hasattr(os, "nice"):
        return None
    step = t.nice

    def lower() -> None:
        try:
            os.nice(step)  # Linux: the calling thread only
        except OSError as exc:  # pragma: no cover - raising niceness needs no privilege
            log.warning("could not lower a pool thread's priority: %s", exc)

    return lower


def blas_threads(t: ThreadSettings) -> int:
    return t.blas if t.blas > 0 else own_cores(t)


def limit_blas(t: ThreadSettings) -> dict[str, int]:
    """Set BLAS threads for this process, and OpenMP threads for the calling thread
    (already loaded libraries through threadpoolctl; the environment for libraries loaded
    later and for child processes).
    Returns {library: threads} as now set."""
    n = blas_threads(t)
    for name in _BLAS_ENV:
        os.environ[name] = str(n)
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:  # pragma: no cover - a core dependency
        log.warning("threadpoolctl is missing: BLAS threads are not limited")
        return {}
    threadpool_limits(limits=n)
    info: list[dict[str, Any]] = threadpool_info()
    return {
        f"{i['internal_api']}:{os.path.basename(i['filepath'])}": i["num_threads"] for i in info
    }
