"""The connection the embedded SQLite stores share a pattern for (keyword and graph tables
live in the same file as the metadata)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_sqlite(path: Path | str, schema: str, busy_timeout_s: float) -> sqlite3.Connection:
    """One connection shared by the caller's threads (serialised by the store's lock);
    autocommit mode with explicit BEGIN IMMEDIATE so a writer never deadlocks upgrading a
    read; WAL so readers never wait for the writer."""
    conn = sqlite3.connect(
        str(path), timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
    conn.executescript(schema)
    return conn
