"""How many cores this process may use: the one place pools and threads are sized from."""

from __future__ import annotations

import os


def cores() -> int:
    """Cores this process may run on (the affinity mask, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1
