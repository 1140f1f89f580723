"""Thread sizing: BLAS/OpenMP threads set once per process from settings, pools per core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.settings import ThreadSettings
from ragline.threads import blocking_pool_size, cores, retrieve_pool_size

ROOT = Path(__file__).resolve().parents[2]


def test_pools_are_sized_from_the_cores_unless_set() -> None:
    n = cores()
    assert retrieve_pool_size(ThreadSettings()) == max(3, 2 * n)
    assert blocking_pool_size(ThreadSettings()) == max(4, 4 * n)
    assert retrieve_pool_size(ThreadSettings(retrieve=5)) == 5
    assert blocking_pool_size(ThreadSettings(blocking=7)) == 7


def test_processes_sharing_the_cores_size_their_pools_from_their_share() -> None:
    """`serve --workers N`: each of N processes counts cores // N (at least one)."""
    n = cores()
    shared = ThreadSettings(processes=n)
    assert retrieve_pool_size(shared) == 3 and blocking_pool_size(shared) == 4
    assert retrieve_pool_size(ThreadSettings(processes=4 * n)) == 3  # never under one core


def test_a_ragline_process_runs_every_blas_library_on_the_configured_threads(
    tmp_path: Path,
) -> None:
    """numpy's and FAISS's BLAS and OpenMP start one thread per core; after Ragline is
    built they all run on RAGLINE_THREADS__BLAS (in a fresh process: the limit is global)."""
    code = (
        "import json\n"
        "from threadpoolctl import threadpool_info\n"
        "from core.settings import Settings\n"
        "from ragline.app import Ragline\n"
        f"rag = Ragline(Settings(data_dir={str(tmp_path)!r}))\n"
        "print(json.dumps([i['num_threads'] for i in threadpool_info()]))\n"
        "rag.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAGLINE_THREADS__BLAS": "1"}
    env.pop("OMP_NUM_THREADS", None)
    env.pop("OPENBLAS_NUM_THREADS", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    threads = json.loads(out.stdout.strip().splitlines()[-1])
    assert threads  # numpy's OpenBLAS at least
    assert set(threads) == {1}
