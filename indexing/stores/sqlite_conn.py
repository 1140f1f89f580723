"""The connection the embedded SQLite stores share a pattern for (keyword and graph tables
live in the same file as the metadata)."""

from __future__ import annotations

import sqlite3
import time
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


class RowCount:
    """A table's row count, counted at most every `ttl_s` seconds: COUNT(*) scans the table
    (20 ms and more at 1M rows), and idf-like statistics only need it roughly current.
    The owning store calls `reset` on its own writes; other processes' writes show within
    `ttl_s`. Not locked: call it under the store's lock."""

    def __init__(self, table: str, ttl_s: float = 10.0) -> None:
        self._sql = f"SELECT count(*) FROM {table}"
        self._ttl_s = ttl_s
        self._held: tuple[float, int] | None = None  # (when counted, rows)

    def reset(self) -> None:
        self._held = None

    @property
    def stamp(self) -> float | None:
        """When the count held was taken (None: none held): statistics read alongside it
        are as current as it is while this stays the same."""
        return self._held[0] if self._held else None

    def get(self, conn: sqlite3.Connection) -> int:
        now = time.monotonic()
        if self._held is None or now - self._held[0] > self._ttl_s:
            self._held = (now, int(conn.execute(self._sql).fetchone()[0]))
        return self._held[1]
