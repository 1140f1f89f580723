"""Schema of the metadata store on PostgreSQL: Alembic migrations (migrations/ at the repo
root), applied by the store itself on open, and scratch databases for tests and benches.

SQLite (embedded) keeps `create_all`: a single-user file that is rebuilt rather than
migrated. PostgreSQL is shared by the API and the workers, so its schema only changes
through revisions, under an advisory lock so processes starting together migrate once.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from indexing.models import Base

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"
_LOCK_KEY = 0x7261676C696E65  # "ragline": the advisory lock id migrations run under


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to `revision`; a no-op when it is there already."""
    cfg = alembic_config()
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # Held until this transaction ends: concurrent starters wait, then find the
            # schema current.
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def schema_diff(engine: Engine) -> list[Any]:
    """Differences between the live schema and the models (empty = in step)."""
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))


@contextmanager
def scratch_database(url: str, prefix: str = "ragline_tmp") -> Iterator[str]:
    """A new, empty PostgreSQL database next to the one `url` names (the role needs
    CREATEDB); yields its URL and drops it afterwards."""
    base = make_url(url)
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        try:
            _drop_database(admin, name)
        finally:
            admin.dispose()


def _drop_database(admin: Engine, name: str, attempts: int = 10) -> None:
    """DROP DATABASE ... WITH (FORCE), retried: FORCE may not terminate a session of
    another role, such as an autovacuum worker that started on the fresh database after a
    bulk write ("must be a member of the role whose process is being terminated"); it
    finishes or is cancelled within moments."""
    for attempt in range(attempts):
        try:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            return
        except DBAPIError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.5 * (attempt + 1))
