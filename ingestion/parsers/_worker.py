"""Entry point of a parse worker process: `python -m ingestion.parsers._worker R W [MB]`,
where R and W are the pipe file descriptors it reads jobs from and writes results to and
MB caps the worker's address space (0 or absent: no cap)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

if __name__ == "__main__":
    from ingestion.parse import worker_loop

    worker_loop(
        Connection(int(sys.argv[1]), writable=False),
        Connection(int(sys.argv[2]), readable=False),
        int(sys.argv[3]) if len(sys.argv) > 3 else 0,
    )
