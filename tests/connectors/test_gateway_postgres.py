"""The sample business database on a real PostgreSQL (a scratch database per test run):
every template answers as on SQLite, sessions are read-only, the reader role cannot write
even when it asks to, the statement timeout cancels a slow query, and the audit tables
exist through the Alembic migration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from gateway_principals import ANALYST, trace
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from connectors.config import GatewayConfig, Param, SqlSource, Template
from connectors.gateway import Gateway
from connectors.records import AuditRecord, GatewayRecords
from connectors.sample.database import grant_read_only, load_sample
from connectors.sql_rows import SqlRowsConnector
from core.blocks import RowSet
from indexing.migrate import scratch_database, upgrade

pytestmark = pytest.mark.integration


def _pg_url() -> str:
    url = os.environ.get("RAGLINE_TEST_PG_URL", "")
    if not url:
        pytest.skip('RAGLINE_TEST_PG_URL is not set (eval "$(deploy/local/env.sh)")')
    try:
        create_engine(url).connect().close()
    except Exception as e:  # server down: skip with the reason
        pytest.skip(f"PostgreSQL at RAGLINE_TEST_PG_URL does not answer: {e}")
    return url


@pytest.fixture(scope="module")
def pg_sample() -> Iterator[str]:
    with scratch_database(_pg_url(), prefix="ragline_gw") as url:
        load_sample(url)
        yield url


def _queries() -> list[tuple[str, dict[str, object]]]:
    return [
        ("checks_for_state", {"state": "Kentucky", "metric": "permit"}),
        ("top_states", {"metric": "handgun", "n": 3}),
        ("region_totals", {"region": "Midwest"}),
        ("states_above", {"threshold": 100000}),
        ("cash_flow_line", {"line_item": "repayments", "fiscal_year": 2010}),
        ("cash_flow_history", {"line_item": "subscriptions"}),
        ("tickets_opened", {"month": "2023-05"}),
        ("tickets_mentioning", {"term": "windows"}),
    ]


def test_every_template_answers_the_same_on_postgres_and_sqlite(
    pg_sample: str,
    sample_dir: Path,
    sample_config: GatewayConfig,
    records: GatewayRecords,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lite = Gateway(sample_config, sample_dir, records)
    monkeypatch.setenv("RAGLINE_SAMPLE_DB_URL", pg_sample)
    pg = Gateway(sample_config, sample_dir, records)
    try:
        for template, params in _queries():
            a = lite.query_rows(ANALYST, template, params, trace())
            b = pg.query_rows(ANALYST, template, params, trace())
            assert a.status == b.status == "ok", (template, a.message, b.message)
            ra, rb = a.blocks[0].content, b.blocks[0].content
            assert isinstance(ra, RowSet) and isinstance(rb, RowSet)
            assert ra.columns == rb.columns
            assert [tuple(map(str, r)) for r in ra.rows] == [tuple(map(str, r)) for r in rb.rows]
            assert not b.blocks[0].freshness.stale and b.blocks[0].freshness.age_s is not None
        assert (
            pg.query_rows(
                ANALYST, "checks_for_state", {"state": "Kentucky", "metric": "permit"}, trace()
            )
            .blocks[0]
            .content.rows[0][3]
            == 264140
        )  # type: ignore[union-attr]
    finally:
        lite.close()
        pg.close()


def test_gateway_sessions_are_read_only(pg_sample: str, sample_config: GatewayConfig) -> None:
    conn = SqlRowsConnector(sample_config.sql[0], pg_sample)
    try:
        with conn.engine.connect() as c, pytest.raises(Exception, match="read-only transaction"):
            c.exec_driver_sql("DELETE FROM tickets")
    finally:
        conn.close()


def test_the_reader_role_cannot_write_even_when_it_asks_to(pg_sample: str) -> None:
    reader = os.environ.get("RAGLINE_TEST_PG_READER_URL", "")
    if not reader:
        pytest.skip("RAGLINE_TEST_PG_READER_URL is not set (deploy/local/postgres.sh makes it)")
    grant_read_only(pg_sample, make_url(reader).username or "ragline_reader")
    url = make_url(reader).set(database=make_url(pg_sample).database)
    # Autocommit: each statement its own transaction, so switching read-only off would
    # take effect for the next one; only the missing privileges stop it.
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as c:
            assert c.execute(text("SELECT COUNT(*) FROM tickets")).scalar() == 172
            assert c.execute(text("SHOW default_transaction_read_only")).scalar() == "on"
        with engine.connect() as c, pytest.raises(Exception, match="permission denied"):
            c.exec_driver_sql("SET default_transaction_read_only = off")
            c.exec_driver_sql("DELETE FROM tickets")
        with engine.connect() as c, pytest.raises(Exception, match="permission denied"):
            c.exec_driver_sql("SET default_transaction_read_only = off")
            c.exec_driver_sql("CREATE TABLE evil (a int)")
    finally:
        engine.dispose()


def test_statement_timeout_cancels_a_slow_query(pg_sample: str, records: GatewayRecords) -> None:
    slow = SqlSource(
        id="slow_pg",
        url=pg_sample,
        roles=["analyst"],
        timeout_s=0.5,
        templates=[
            Template(
                name="slow_count",
                description="a deliberately slow query",
                sql="SELECT COUNT(*) AS n FROM generate_series(1, :upto) AS g",
                params={"upto": Param(type="int", min=1, max=2_000_000_000)},
            )
        ],
    )
    gw = Gateway(GatewayConfig(sql=[slow]), Path("."), records)
    try:
        ok = gw.query_rows(ANALYST, "slow_count", {"upto": 10}, trace())
        assert ok.status == "ok"
        r = gw.query_rows(ANALYST, "slow_count", {"upto": 2_000_000_000}, trace())
        assert r.status == "unavailable"
        assert "statement timeout" in r.message or "timed out" in r.message
    finally:
        gw.close()


def test_audit_and_trace_tables_come_from_the_migration() -> None:
    with scratch_database(_pg_url(), prefix="ragline_gwaudit") as url:
        engine = create_engine(url)
        try:
            upgrade(engine)
            records = GatewayRecords(engine)
            records.audit(
                AuditRecord(
                    "t" * 32,
                    datetime.now(UTC),
                    "ann",
                    "business",
                    "rows",
                    "top_states",
                    {"n": 3},
                    3,
                    1.5,
                    "ok",
                )
            )
            (row,) = records.audit_log("t" * 32)
            assert row.params == {"n": 3} and row.row_count == 3
            item = records.remember("ann", "note", "", "remember me")
            assert records.recall("ann")[0].id == item.id
        finally:
            engine.dispose()
