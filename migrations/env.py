"""Alembic environment: the target schema is indexing.models.Base.metadata.

The URL, first found: a connection handed in by indexing.migrate (config.attributes
["connection"]), `-x url=...`, `sqlalchemy.url` in the config, RAGLINE_METADATA_URL.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection, create_engine

from indexing.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = (
        context.get_x_argument(as_dictionary=True).get("url")
        or config.get_main_option("sqlalchemy.url")
        or os.environ.get("RAGLINE_METADATA_URL", "")
    )
    if not url:
        raise SystemExit("no database URL: set RAGLINE_METADATA_URL or pass -x url=...")
    return url


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite ALTER via copy
    )
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(_url())
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
