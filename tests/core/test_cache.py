"""Cache entries: stale versions of one cache are removed, the current one and recently
used ones are kept."""

from __future__ import annotations

import os
import time
from pathlib import Path

from core.cache import mark_used, prune_stale


def _aged(path: Path, days: float) -> Path:
    stamp = time.time() - days * 86400
    os.utime(path, (stamp, stamp))
    return path


def test_stale_versions_go_and_the_rest_stay(tmp_path: Path) -> None:
    old_dir = tmp_path / "usem3-old"
    (old_dir / "weights").mkdir(parents=True)
    (old_dir / "weights" / "table.npy").write_bytes(b"x")
    _aged(old_dir, 30)
    recent = tmp_path / "usem3-recent"
    recent.mkdir()
    _aged(recent, 3)
    current = tmp_path / "usem3-current"
    current.mkdir()
    _aged(current, 30)  # the one in use stays whatever its age
    other_kind = tmp_path / "jieba-old.marshal"
    other_kind.touch()
    _aged(other_kind, 30)
    prune_stale(tmp_path, "usem3-", current.name)
    assert not old_dir.exists()
    assert recent.exists() and current.exists() and other_kind.exists()


def test_an_entry_marked_used_is_not_stale(tmp_path: Path) -> None:
    entry = tmp_path / "jieba-a.marshal"
    entry.write_bytes(b"x")
    _aged(entry, 30)
    mark_used(entry)
    prune_stale(tmp_path, "jieba-", "jieba-b.marshal")
    assert entry.exists()
    _aged(entry, 30)
    prune_stale(tmp_path, "jieba-", "jieba-b.marshal")
    assert not entry.exists()
