"""The parsed-statement check: one SELECT only, a forced LIMIT, no writes hidden anywhere."""

from __future__ import annotations

import pytest

from connectors.sql_guard import UnsafeSql, check_select

REFUSED = [
    "SELECT 1; DROP TABLE t",
    "SELECT 1; SELECT 2",
    "SELECT 1 -- comment\n; DELETE FROM t",
    "DELETE FROM t",
    "UPDATE t SET a = 1",
    "INSERT INTO t VALUES (1)",
    "DROP TABLE t",
    "CREATE TABLE x (a int)",
    "ALTER TABLE t ADD COLUMN b int",
    "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
    "SELECT * INTO x FROM t",
    "SELECT * FROM t FOR UPDATE",
    "SELECT 1 UNION SELECT 2",
    "SELECT pg_sleep(10)",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT load_extension('x')",
    "COPY t TO '/tmp/x'",
    "PRAGMA writable_schema = 1",
    "BEGIN",
    "",
]


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize("sql", REFUSED)
def test_anything_but_one_select_is_refused(sql: str, dialect: str) -> None:
    with pytest.raises(UnsafeSql):
        check_select(sql, dialect, 20)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_limit_is_forced_and_one_extra_row_detects_truncation(dialect: str) -> None:
    checked = check_select("SELECT a FROM t WHERE b = :b ORDER BY a", dialect, 20)
    assert checked.sql.endswith("LIMIT 21") and checked.limit == 20 and checked.fetch == 21
    assert checked.params == {"b"}
    assert ":b" in checked.sql  # parameters stay bound, never inlined


def test_a_larger_literal_limit_is_cut_and_a_smaller_one_kept() -> None:
    assert check_select("SELECT a FROM t LIMIT 500", "sqlite", 20).sql.endswith("LIMIT 21")
    kept = check_select("SELECT a FROM t LIMIT 3", "sqlite", 20)
    assert kept.sql.endswith("LIMIT 3") and kept.limit == 3


def test_a_limit_parameter_needs_a_bounded_int() -> None:
    with pytest.raises(UnsafeSql, match="max <= 20"):
        check_select("SELECT a FROM t LIMIT :n", "sqlite", 20)
    with pytest.raises(UnsafeSql):
        check_select("SELECT a FROM t LIMIT :n", "sqlite", 20, {"n": 1000})
    assert check_select("SELECT a FROM t LIMIT :n", "sqlite", 20, {"n": 10}).limit == 10
