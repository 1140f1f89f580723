"""Row templates on a SQL database (SQLite embedded, PostgreSQL in production), read-only
in depth: a read-only connection, the parsed single-SELECT check with a forced LIMIT, and
a statement timeout."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from connectors.config import SqlSource, Template
from connectors.protocols import RowsFetch, SourceFailed
from connectors.sql_guard import CheckedSql, check_select
from core.blocks import RowSet
from core.errors import ConfigError


def read_only_engine(url: str) -> Engine:
    """An engine that cannot write: SQLite opened `mode=ro`; PostgreSQL sessions with
    `default_transaction_read_only=on` (use a read-only role as well:
    deploy/postgres/gateway-readonly.sql)."""
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(
                f"file:{quote(path)}?mode=ro", uri=True, check_same_thread=False, timeout=5
            )
            conn.execute("PRAGMA query_only = ON")
            return conn

        return create_engine("sqlite://", creator=connect)
    if url.startswith(("postgresql", "postgres")):
        if url.startswith("postgres://"):
            url = "postgresql://" + url.removeprefix("postgres://")
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
        return create_engine(
            url,
            pool_pre_ping=True,
            pool_size=4,
            connect_args={"options": "-c default_transaction_read_only=on"},
        )
    raise ConfigError(f"unsupported SQL source URL {url.split(':', 1)[0]}: sqlite or postgresql")


class SqlRowsConnector:
    def __init__(self, source: SqlSource, url: str, engine: Engine | None = None) -> None:
        self.source_id = source.id
        self._source = source
        self.engine = engine or read_only_engine(url)
        self.dialect = self.engine.dialect.name
        self._checked: dict[str, CheckedSql] = {}
        self._templates: dict[str, Template] = {t.name: t for t in source.templates}
        for t in source.templates:  # refuse a bad template at start, not at first use
            self._checked[t.name] = self._check(t)

    def _check(self, template: Template) -> CheckedSql:
        int_max = self._int_max(template.name)
        checked = check_select(template.sql, self.dialect, template.limit, int_max)
        missing = checked.params - set(template.params)
        if missing:
            raise ConfigError(f"template {template.name}: SQL uses undeclared {sorted(missing)}")
        return checked

    def _int_max(self, template: str) -> dict[str, int]:
        params = self._templates[template].params
        return {n: int(p.max) for n, p in params.items() if p.type == "int" and p.max}

    def run(self, template: str, params: Mapping[str, Any], timeout_s: float) -> RowsFetch:
        checked = self._checked[template]
        # Defence in depth: the statement that runs is parsed again, every time.
        check_select(checked.sql, self.dialect, checked.limit, self._int_max(template))
        started = time.perf_counter()
        try:
            with self.engine.connect() as conn:
                with _statement_timeout(conn, self.dialect, timeout_s):
                    result = conn.execute(text(checked.sql), dict(params))
                    columns = tuple(result.keys())
                    fetched = result.fetchmany(checked.fetch)
                conn.rollback()
        except (SQLAlchemyError, DBAPIError, sqlite3.Error) as e:
            raise SourceFailed(_reason(e)) from e
        rows = tuple(tuple(_plain(v) for v in r) for r in fetched[: checked.limit])
        truncated = len(fetched) > checked.limit
        return RowsFetch(
            RowSet(columns, rows, truncated), (time.perf_counter() - started) * 1000, checked.sql
        )

    def updated_at(self) -> datetime | None:
        if not self._source.updated_at_sql:
            return None
        check_select(self._source.updated_at_sql, self.dialect, 1)
        try:
            with self.engine.connect() as conn:
                value = conn.execute(text(self._source.updated_at_sql)).scalar()
        except (SQLAlchemyError, sqlite3.Error) as e:
            raise SourceFailed(_reason(e)) from e
        return _as_time(value)

    def close(self) -> None:
        self.engine.dispose()


def _as_time(value: Any) -> datetime | None:
    """The time `updated_at_sql` gave: a timestamp, ISO text or epoch seconds (None: no
    rows). Anything else fails the source's freshness, it is never taken as fresh."""
    if value is None:
        return None
    try:
        if isinstance(value, str):
            value = datetime.fromisoformat(value.strip())
        elif isinstance(value, int | float) and not isinstance(value, bool):
            value = datetime.fromtimestamp(value, UTC)
    except (ValueError, OverflowError, OSError):
        raise SourceFailed(f"updated_at_sql gave {str(value)[:40]!r}, not a time") from None
    if not isinstance(value, datetime):
        raise SourceFailed(f"updated_at_sql gave a {type(value).__name__}, not a time")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class _statement_timeout:
    """PostgreSQL: SET LOCAL statement_timeout for this transaction. SQLite: a progress
    handler that interrupts the statement once the deadline has passed."""

    def __init__(self, conn: Any, dialect: str, timeout_s: float) -> None:
        self._conn = conn
        self._dialect = dialect
        self._timeout_s = timeout_s
        self._raw: Any = None

    def __enter__(self) -> None:
        ms = max(1, int(self._timeout_s * 1000))
        if self._dialect == "postgresql":
            self._conn.execute(text(f"SET LOCAL statement_timeout = {ms}"))
        elif self._dialect == "sqlite":
            deadline = time.monotonic() + self._timeout_s
            self._raw = self._conn.connection.dbapi_connection
            self._raw.set_progress_handler(_interrupt_after(deadline), 1000)

    def __exit__(self, *exc: object) -> None:
        if self._raw is not None:
            self._raw.set_progress_handler(None, 0)


def _interrupt_after(deadline: float) -> Callable[[], int]:
    return lambda: 1 if time.monotonic() > deadline else 0


def _plain(value: Any) -> Any:
    """JSON-friendly cells: numbers, text, ISO dates."""
    if isinstance(value, int | float | str) or value is None:
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    try:
        return float(value)  # Decimal
    except (TypeError, ValueError):
        return str(value)


def _reason(e: BaseException) -> str:
    orig = getattr(e, "orig", None) or e
    first = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    return f"{type(orig).__name__}: {first}"[:300]
