"""Token buckets in a SQLite file, shared by the API processes (and the gRPC server) of one
host: each take is one short write transaction, ~15 us. The state is only a rate limit's
memory, so it is written without waiting for the disk (`synchronous=OFF`)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from ragline.api.buckets import BucketsUnavailable, refill_and_take

# A take waits at most this long for another process's transaction (each is microseconds);
# past it the caller falls back to its own process's bucket rather than stall a request.
_BUSY_MS = 200


class SqliteBuckets:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self._path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            db.execute(
                "CREATE TABLE IF NOT EXISTS buckets "
                "(name TEXT PRIMARY KEY, tokens REAL NOT NULL, stamp REAL NOT NULL) WITHOUT ROWID"
            )
            self._db = db
        return self._db

    def take(self, bucket: str, rate: float, burst: float) -> float:
        with self._lock:
            try:
                db = self._connect()
                db.execute("BEGIN IMMEDIATE")
                try:
                    now = time.time()  # every process of the host reads the same clock
                    row = db.execute(
                        "SELECT tokens, stamp FROM buckets WHERE name = ?", (bucket,)
                    ).fetchone()
                    held, stamp = row or (burst, now)
                    tokens, wait = refill_and_take(held, stamp, now, rate, burst)
                    db.execute(
                        "INSERT OR REPLACE INTO buckets (name, tokens, stamp) VALUES (?, ?, ?)",
                        (bucket, tokens, now),
                    )
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except (sqlite3.Error, OSError) as exc:
                raise BucketsUnavailable(f"rate-limit file {self._path}: {exc}") from exc
        return wait

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
