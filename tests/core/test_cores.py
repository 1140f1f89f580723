"""Cores this process may use: the affinity mask, capped by a container's CPU quota."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.cores import cores

MASK = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [
        ("max 100000\n", MASK),  # no quota
        ("100000 100000\n", 1),  # docker run --cpus 1
        ("150000 100000\n", min(MASK, 2)),  # 1.5 cores: two processes may share them
        ("50000 100000\n", 1),  # half a core is still one
        ("1000000 100000\n", MASK),  # a quota over the mask: the mask
        ("garbage\n", MASK),
    ],
)
def test_a_container_quota_caps_the_cores(tmp_path: Path, cpu_max: str, expected: int) -> None:
    path = tmp_path / "cpu.max"
    path.write_text(cpu_max)
    assert cores(path) == expected


def test_no_cgroup_file_means_the_mask(tmp_path: Path) -> None:
    assert cores(tmp_path / "missing") == MASK
