"""Files a process keeps between runs so the next one starts faster: where they live and
how they are written. A cache can make start-up faster, never wrong: it is keyed by what it
was built from, lives in a directory only this user writes, and is replaced atomically."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

STALE_DAYS = 14.0


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/ragline`, or `~/.cache/ragline`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ragline"


def cache_key(version: str, *files: str) -> str:
    """A short key for a cache built from these files by this version of their reader."""
    parts = [version]
    for f in files:
        st = os.stat(f)
        parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def private_dir(path: Path) -> Path:
    """The directory, made if missing (0700); refused when another user owns it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_uid != os.getuid():  # a cache another user controls is not read
        raise PermissionError(f"{path} belongs to another user")
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write the file whole or not at all: readers never see half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def mark_used(path: Path) -> None:
    """Note that this cache entry was read now (prune_stale keeps what is in use)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def prune_stale(directory: Path, prefix: str, current: str, days: float = STALE_DAYS) -> None:
    """Remove the other versions of one cache (`prefix*` in `directory`, not `current`)
    unused for `days`: every upgrade of a model or library, every new environment, writes
    a new version (70 MB for the embedder), and nothing else would ever remove the old."""
    cutoff = time.time() - days * 86400
    for entry in directory.glob(f"{prefix}*"):
        if entry.name == current or entry.name.startswith("."):
            continue
        try:
            if entry.stat().st_mtime >= cutoff:
                continue
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError:
            pass  # another process's, or gone already
