"""Alembic revisions against a fresh PostgreSQL database: `upgrade head` builds exactly the
schema of indexing.models (an autogenerate diff is empty), and downgrade/upgrade round-trips.
A model change without a revision fails here."""

from __future__ import annotations

import pytest
from servers import postgres_url
from sqlalchemy import Engine, create_engine, inspect, text

from indexing.migrate import MIGRATIONS_DIR, schema_diff, scratch_database, upgrade
from indexing.models import Base
from indexing.stores.sql_metadata import SqlMetadataStore

pytestmark = pytest.mark.integration


def test_upgrade_head_matches_the_models() -> None:
    with scratch_database(postgres_url()) as url:
        engine = create_engine(url)
        try:
            upgrade(engine)
            assert schema_diff(engine) == []
            tables = set(inspect(engine).get_table_names())
            assert set(Base.metadata.tables) <= tables and "alembic_version" in tables
            upgrade(engine)  # already at head: a no-op
        finally:
            engine.dispose()


def test_downgrade_to_base_and_up_again() -> None:
    with scratch_database(postgres_url()) as url:
        engine = create_engine(url)
        try:
            upgrade(engine)
            upgrade_cfg_downgrade(engine)
            assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
            upgrade(engine)
            assert schema_diff(engine) == []
        finally:
            engine.dispose()


def upgrade_cfg_downgrade(engine: Engine) -> None:
    from alembic import command

    from indexing.migrate import alembic_config

    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "base")


def test_store_on_postgres_migrates_itself() -> None:
    with scratch_database(postgres_url()) as url:
        store = SqlMetadataStore(url)
        try:
            with store.engine.connect() as conn:
                head = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            revisions = sorted(p.stem for p in (MIGRATIONS_DIR / "versions").glob("*.py"))
            assert head is not None and head.split("_")[0] == revisions[-1].split("_")[0]
        finally:
            store.close()


def test_dropping_a_scratch_database_retries_a_session_it_may_not_terminate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An autovacuum worker on the fresh database makes DROP ... WITH (FORCE) fail for a
    moment; the drop is retried, and a lasting failure is raised, not swallowed."""
    from contextlib import contextmanager

    from sqlalchemy.exc import DBAPIError

    import indexing.migrate as migrate

    monkeypatch.setattr(migrate.time, "sleep", lambda _s: None)

    class Admin:
        def __init__(self, failures: int) -> None:
            self.failures, self.calls = failures, 0

        @contextmanager
        def connect(self):  # type: ignore[no-untyped-def]
            yield self

        def execute(self, _stmt: object) -> None:
            self.calls += 1
            if self.calls <= self.failures:
                raise DBAPIError("DROP DATABASE", {}, Exception("must be a member of the role"))

    flaky = Admin(failures=2)
    migrate._drop_database(flaky, "x")  # type: ignore[arg-type]
    assert flaky.calls == 3
    stuck = Admin(failures=99)
    with pytest.raises(DBAPIError):
        migrate._drop_database(stuck, "x", attempts=4)  # type: ignore[arg-type]
    assert stuck.calls == 4
