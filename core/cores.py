"""How many cores this process may use: the one place pools, threads and `serve`'s
processes are sized from."""

from __future__ import annotations

import math
import os
from pathlib import Path

_CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def cores(cpu_max: Path = _CGROUP_CPU_MAX) -> int:
    """Cores this process may run on: the affinity mask (else the machine's count), and
    no more than a container's CPU quota (cgroup v2 `cpu.max`, as `docker run --cpus`
    sets it), which the mask does not show."""
    try:
        count = len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - not on Linux
        count = os.cpu_count() or 1
    quota = _quota(cpu_max)
    return max(1, min(count, math.ceil(quota))) if quota else count


def _quota(cpu_max: Path) -> float | None:
    """The quota in cores ("200000 100000" -> 2.0); None when unlimited or unreadable."""
    try:
        limit, period = cpu_max.read_text().split()[:2]
        return int(limit) / int(period) if limit != "max" and int(period) > 0 else None
    except (OSError, ValueError):
        return None
