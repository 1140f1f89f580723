"""A Python child process that talks to its parent over two pipes: the workers that parse
files (ingestion) and embed passages (indexing) are started this way.

Plain `python -m MODULE R W ...` subprocesses, not multiprocessing children: "spawn"
re-imports the caller's __main__, which breaks any script that lacks an
`if __name__ == "__main__"` guard, and "fork" copies the caller's threads and locks. The
child finds this source tree and the caller's import path through PYTHONPATH.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path


@dataclass
class Child:
    proc: subprocess.Popen[bytes]
    out: Connection  # to the child
    inp: Connection  # from the child


def start_child(module: str, *args: str) -> Child:
    """Start `python -m module R W *args`, where R and W are the pipe descriptors the
    child reads its jobs from and writes its replies to. Raises OSError if it cannot."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, *(p for p in sys.path if p and Path(p).is_dir())])
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, str(to_child_r), str(from_child_w), *args],
            pass_fds=(to_child_r, from_child_w),
            env=env,
            stdin=subprocess.DEVNULL,
            close_fds=True,
        )
    except OSError:
        os.close(to_child_w)
        os.close(from_child_r)
        raise
    finally:
        os.close(to_child_r)
        os.close(from_child_w)
    return Child(
        proc, Connection(to_child_w, readable=False), Connection(from_child_r, writable=False)
    )
