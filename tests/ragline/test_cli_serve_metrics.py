"""`ragline serve` shares its workers' metric files in the data dir: a new run removes the
files of processes that are gone, never those of a server still running on the same data
(a second `serve` wiped the first one's counters, even when it failed to bind)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.settings import Settings
from monitoring.metrics import MULTIPROC_ENV
from ragline.cli.service import _share_metrics


def test_only_the_metric_files_of_ended_processes_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Set (empty: the data dir's folder is used) so that monkeypatch restores it after:
    # _share_metrics sets it for the workers it would start.
    monkeypatch.setenv(MULTIPROC_ENV, "")
    shared = tmp_path / "data" / "metrics"
    shared.mkdir(parents=True)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    mine = os.getpid()
    names = [
        f"counter_{mine}.db",
        f"gauge_livesum_{mine}.db",
        f"counter_{ended.pid}.db",
        f"histogram_{ended.pid}.db",
    ]
    for name in names:
        (shared / name).write_bytes(b"x")
    _share_metrics(Settings(data_dir=tmp_path / "data"))
    assert os.environ[MULTIPROC_ENV] == str(shared.resolve())
    assert sorted(p.name for p in shared.iterdir()) == sorted(names[:2])
