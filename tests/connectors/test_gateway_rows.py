"""Rows through the gateway on the real sample database: injection and multi-statement
attempts through every parameter of every template, role whitelists checked before any
connector call, principal attributes binding rows, read-only in depth, statement timeout,
breaker, freshness and the audit of every execution."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from gateway_principals import ANALYST, NOBODY, SALES_NONE, SALES_WEST, SUPPORT, trace
from sqlalchemy import create_engine, text

from connectors.config import GatewayConfig, Param, SqlSource, Template
from connectors.gateway import Gateway
from connectors.protocols import RowsFetch
from connectors.records import GatewayRecords
from connectors.sample.database import load_sample
from connectors.sql_rows import SqlRowsConnector
from core.blocks import RowSet
from core.types import Principal

PAYLOADS = [
    "Kentucky'; DROP TABLE nics_checks; --",
    "1; DELETE FROM tickets",
    "' OR '1'='1",
    "1 OR 1=1",
    "2010 UNION SELECT name, loaded_at, 1, 1 FROM sample_meta",
    "x'); ATTACH DATABASE '/tmp/evil.db' AS evil; --",
    "%' OR title LIKE '%",
    "West' --",
    "2023-04'; UPDATE tickets SET state = 'open",
    "\x00; DROP TABLE cash_flows",
]


def _valid(spec: Param) -> Any:
    if spec.type == "enum":
        return spec.values[0]
    if spec.type == "int":
        return int(spec.default if spec.default is not None else spec.min or 1)
    if spec.type == "month":
        return "2023-04"
    return "windows"


def _counts(sample_dir: Path) -> dict[str, int]:
    engine = create_engine(f"sqlite:///{sample_dir / 'sample.db'}")
    with engine.connect() as conn:
        out = {
            t: int(conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar() or 0)
            for t in ("nics_checks", "cash_flows", "tickets", "sample_meta")
        }
        out["open_tickets"] = int(
            conn.execute(text("SELECT COUNT(*) FROM tickets WHERE state != 'closed'")).scalar() or 0
        )
    engine.dispose()
    return out


def test_injection_through_every_parameter_of_every_template(
    gateway: Gateway, sample_config: GatewayConfig, sample_dir: Path, records: GatewayRecords
) -> None:
    before = _counts(sample_dir)
    assert before == {
        "nics_checks": 55,
        "cash_flows": 15,
        "tickets": 172,
        "sample_meta": 1,
        "open_tickets": 0,
    }
    attempts = 0
    for source in sample_config.sql:
        for tpl in source.templates:
            for name in tpl.params:
                for payload in PAYLOADS:
                    params = {n: _valid(p) for n, p in tpl.params.items() if not p.bind}
                    params[name] = payload
                    t = trace()
                    result = gateway.query_rows(ANALYST, tpl.name, params, t)
                    attempts += 1
                    # Types, allowed values and patterns refuse it before any SQL runs.
                    assert result.status == "invalid", (tpl.name, name, payload, result)
                    assert not result.blocks
    assert attempts >= 8 * len(PAYLOADS)
    assert _counts(sample_dir) == before  # nothing dropped, deleted or changed
    refused = [a for a in records.audit_log(limit=10000) if a.status == "invalid"]
    assert refused and any("DROP TABLE" in str(a.params) for a in refused)  # kept as evidence


def test_a_bound_value_is_data_never_sql(tmp_path: Path, records: GatewayRecords) -> None:
    """With a template whose parameter accepts any text, an injection string is compared
    as a value: it matches nothing and changes nothing."""
    db = tmp_path / "sample.db"
    load_sample(f"sqlite:///{db}")
    source = SqlSource(
        id="loose",
        url=f"sqlite:///{db}",
        roles=["analyst"],
        templates=[
            Template(
                name="by_title",
                description="tickets by exact title",
                sql="SELECT COUNT(*) AS n FROM tickets WHERE title = :t",
                params={"t": Param(type="str", max_length=200)},
            )
        ],
    )
    gw = Gateway(GatewayConfig(sql=[source]), tmp_path, records)
    try:
        for payload in PAYLOADS:
            result = gw.query_rows(ANALYST, "by_title", {"t": payload}, trace())
            assert result.status == "ok"
            block = result.blocks[0]
            assert isinstance(block.content, RowSet) and block.content.rows == ((0,),)
        ok = gw.query_rows(ANALYST, "by_title", {"t": "KeyError: 3224"}, trace())
        assert isinstance(ok.blocks[0].content, RowSet) and ok.blocks[0].content.rows == ((1,),)
    finally:
        gw.close()
    assert _counts(tmp_path)["tickets"] == 172


def test_unknown_parameters_and_bad_types_are_refused_with_the_reason(gateway: Gateway) -> None:
    r = gateway.query_rows(ANALYST, "checks_for_state", {"state": "Ohio", "sql": "x"}, trace())
    assert r.status == "invalid" and "unknown parameter" in r.message
    r = gateway.query_rows(ANALYST, "top_states", {"n": "5; DROP TABLE t"}, trace())
    assert r.status == "invalid" and "expected int" in r.message
    r = gateway.query_rows(ANALYST, "top_states", {"n": 500}, trace())
    assert r.status == "invalid" and "above the maximum" in r.message
    r = gateway.query_rows(ANALYST, "no_such_template", {}, trace())
    assert r.status == "invalid" and "checks_for_state" in r.message


@pytest.mark.parametrize(
    "n", [float("inf"), float("-inf"), float("nan"), 2.9, "2_0", "\u0663", "9" * 5000, "1e1"]
)
def test_a_number_that_is_not_one_as_written_is_refused(gateway: Gateway, n: Any) -> None:
    """Not a server error (infinity), not silently another number (2.9 run as 2, "2_0" as
    20, an Arabic-Indic digit as 3)."""
    r = gateway.query_rows(ANALYST, "top_states", {"n": n}, trace())
    assert r.status == "invalid" and "n: " in r.message, r.message


def test_whole_numbers_are_taken_as_written(gateway: Gateway) -> None:
    for n in (3, 3.0, "3", " 3 ", "+3"):
        r = gateway.query_rows(ANALYST, "top_states", {"n": n}, trace())
        assert r.status == "ok" and len(r.blocks[0].content.rows) == 3, (n, r.message)
    r = gateway.query_rows(ANALYST, "states_above", {"threshold": "1,000"}, trace())
    assert r.status == "ok", r.message


@pytest.mark.parametrize(
    ("stamp", "known"),
    [("not a date", False), (None, False), ("2999-01-01T00:00:00", False), (0, True)],
)
def test_a_last_update_that_makes_no_sense_is_never_fresh(
    tmp_path: Path, sample_config: GatewayConfig, records: GatewayRecords, stamp: Any, known: bool
) -> None:
    """Text that is no time, no rows, a time to come: freshness unknown, flagged. Epoch
    seconds are a time (0: 1970, long stale)."""
    url = f"sqlite:///{tmp_path / 'sample.db'}"
    load_sample(url)
    engine = create_engine(url)
    with engine.begin() as conn:
        if stamp is None:
            conn.execute(text("DELETE FROM sample_meta"))
        else:
            conn.execute(text("UPDATE sample_meta SET loaded_at = :v"), {"v": stamp})
    engine.dispose()
    gw = Gateway(sample_config, tmp_path, records)
    try:
        r = gw.query_rows(ANALYST, "checks_for_state", {"state": "Ohio"}, trace())
        assert r.status == "ok", r.message
        fresh = r.blocks[0].freshness
        assert fresh.stale and "may be outdated" in fresh.note()
        assert (fresh.age_s is not None) == known
    finally:
        gw.close()


class SpyRows:
    """A connector that records whether it was called at all."""

    source_id = "business"

    def __init__(self) -> None:
        self.calls = 0

    def run(self, template: str, params: Mapping[str, Any], timeout_s: float) -> RowsFetch:
        self.calls += 1
        return RowsFetch(RowSet(("n",), ((1,),)), 0.1, "")

    def updated_at(self) -> datetime | None:
        return None

    def close(self) -> None:
        pass


def test_a_role_lacking_the_template_is_denied_before_any_connector_call(
    sample_dir: Path, sample_config: GatewayConfig, records: GatewayRecords
) -> None:
    spy = SpyRows()
    gw = Gateway(sample_config, sample_dir, records, rows={"business": spy})
    try:
        t = trace(SALES_WEST)
        r = gw.query_rows(
            SALES_WEST, "cash_flow_line", {"line_item": "repayments", "fiscal_year": 2010}, t
        )
        # Told exactly what an unknown name is told (README: a key is told only of the
        # templates it may use, in errors too); audited and traced as denied.
        unknown = gw.query_rows(
            SALES_WEST, "cash_flow_lines", {"line_item": "repayments", "fiscal_year": 2010}, t
        )
        known = sample_config.usable_templates(SALES_WEST)
        assert "top_states" in known and "cash_flow_line" not in known
        for result, name in ((r, "cash_flow_line"), (unknown, "cash_flow_lines")):
            assert (result.status, result.message, result.source_id, result.detail) == (
                "invalid",
                f"no template {name!r}; known: {known}",
                "",
                {},
            )
            assert not result.blocks
        r2 = gw.query_rows(NOBODY, "checks_for_state", {"state": "Ohio"}, trace(NOBODY))
        assert (r2.status, r2.message) == ("invalid", "no template 'checks_for_state'; known: []")
        assert spy.calls == 0
        denied = [e for e in t.events if e["event"] == "permission"]
        assert denied and denied[0]["allowed"] is False
        audit = records.audit_log(t.trace_id)
        assert {(a.status, a.source_id, a.template, a.error, a.principal) for a in audit} == {
            ("denied", "business", "cash_flow_line", "role not allowed", "wes"),
            ("invalid", "", "cash_flow_lines", "unknown template", "wes"),
        }
        assert gw.query_rows(ANALYST, "checks_for_state", {"state": "Ohio"}, trace()).status == "ok"
        assert spy.calls == 1
        # The catalogue shows a principal only what it may use.
        names = {t["name"] for t in gw.catalogue(SALES_WEST)["templates"]}
        assert "top_states" in names and "cash_flow_line" not in names
        assert gw.catalogue(NOBODY) == {"templates": [], "status_sources": []}

        # A bound parameter is required of a caller without the attribute only.
        def region_required(p: Principal) -> bool:
            (totals,) = [t for t in gw.catalogue(p)["templates"] if t["name"] == "region_totals"]
            return bool(totals["params"]["region"]["required"])

        assert not region_required(SALES_WEST) and region_required(ANALYST)
    finally:
        gw.close()


def test_rows_are_filtered_by_the_principals_region(gateway: Gateway) -> None:
    west = gateway.query_rows(SALES_WEST, "top_states", {"n": 20, "region": "South"}, trace())
    assert west.status == "ok"
    rows = west.blocks[0].content
    assert isinstance(rows, RowSet)
    assert {r[1] for r in rows.rows} == {"West"} and len(rows.rows) == 13  # asked South: no
    assert "region:West" in west.blocks[0].permission_tags
    everyone = gateway.query_rows(ANALYST, "top_states", {"n": 20}, trace())
    assert isinstance(everyone.blocks[0].content, RowSet)
    assert len({r[1] for r in everyone.blocks[0].content.rows}) > 1
    # A sales key without a region attribute sees no region's rows at all.
    assert gateway.query_rows(SALES_NONE, "top_states", {}, trace()).status == "denied"
    # Nor does one state at a time give another region's figures away.
    other = gateway.query_rows(SALES_WEST, "checks_for_state", {"state": "Kentucky"}, trace())
    assert other.status == "empty"
    own = gateway.query_rows(SALES_WEST, "checks_for_state", {"state": "Oregon"}, trace())
    assert own.status == "ok" and own.blocks[0].content.rows[0][:2] == ("Oregon", "West")
    assert (
        gateway.query_rows(SALES_NONE, "checks_for_state", {"state": "Oregon"}, trace()).status
        == "denied"
    )


def test_a_word_searched_for_is_matched_as_written(gateway: Gateway) -> None:
    """LIKE's wildcards in a searched word are its characters, not patterns."""

    def count(term: str) -> int:
        r = gateway.query_rows(SUPPORT, "tickets_mentioning", {"term": term}, trace(SUPPORT))
        assert r.status == "ok", r.message
        return int(r.blocks[0].content.rows[0][0])

    assert count("a_i") == 0  # "api" and the like do not match
    assert count("windows") > 0
    assert count("__") < 172  # not every one of the 172 tickets


def test_rows_are_filtered_by_the_principals_department(
    tmp_path: Path, records: GatewayRecords
) -> None:
    db = tmp_path / "dept.db"
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE budget (department TEXT, item TEXT, amount INT)"))
        conn.execute(
            text(
                "INSERT INTO budget VALUES ('finance', 'audit', 10), ('finance', 'tax', 20),"
                " ('hr', 'hiring', 30), ('hr', 'training', 40), ('it', 'servers', 50)"
            )
        )
    engine.dispose()
    source = SqlSource(
        id="budgets",
        url=f"sqlite:///{db}",
        roles=["staff"],
        templates=[
            Template(
                name="budget_lines",
                description="budget lines of a department",
                sql="SELECT department, item, amount FROM budget WHERE department = :dept "
                "ORDER BY item",
                params={"dept": Param(type="str", bind="department")},
            )
        ],
    )
    gw = Gateway(GatewayConfig(sql=[source]), tmp_path, records)
    fin = Principal("fay", roles=frozenset({"staff"}), attributes=(("department", "finance"),))
    hr = Principal("hal", roles=frozenset({"staff"}), attributes=(("department", "hr"),))
    none = Principal("ned", roles=frozenset({"staff"}))
    try:
        t = trace(fin)
        r = gw.query_rows(fin, "budget_lines", {"dept": "hr"}, t)  # asks for another's rows
        assert isinstance(r.blocks[0].content, RowSet)
        assert r.blocks[0].content.rows == (("finance", "audit", 10), ("finance", "tax", 20))
        assert any(e["event"] == "rows_restricted" for e in t.events)  # logged, not shown
        r = gw.query_rows(hr, "budget_lines", {}, trace(hr))
        assert isinstance(r.blocks[0].content, RowSet)
        assert [row[1] for row in r.blocks[0].content.rows] == ["hiring", "training"]
        assert gw.query_rows(none, "budget_lines", {"dept": "it"}, trace(none)).status == "denied"
    finally:
        gw.close()


def test_the_connection_is_read_only(sample_dir: Path, sample_config: GatewayConfig) -> None:
    conn = SqlRowsConnector(sample_config.sql[0], f"sqlite:///{sample_dir / 'sample.db'}")
    try:
        with conn.engine.connect() as c, pytest.raises(Exception, match=r"readonly|read-only"):
            c.exec_driver_sql("DELETE FROM tickets")
    finally:
        conn.close()
    assert _counts(sample_dir)["tickets"] == 172


def test_forced_limit_truncates_and_says_so(gateway: Gateway) -> None:
    r = gateway.query_rows(ANALYST, "top_states", {"n": 20}, trace())
    rows = r.blocks[0].content
    assert isinstance(rows, RowSet) and len(rows.rows) == 20 and not rows.truncated
    assert r.blocks[0].label == "[DB_top_states_1]"


def _slow_gateway(tmp_path: Path, records: GatewayRecords, db: Path) -> Gateway:
    slow = SqlSource(
        id="slow",
        url=f"sqlite:///{db}",
        roles=["analyst"],
        timeout_s=0.3,
        templates=[
            Template(
                name="count_forever",
                description="a deliberately slow query",
                sql="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                "WHERE x < 1000000000) SELECT COUNT(*) AS n FROM c",
            )
        ],
    )
    return Gateway(
        GatewayConfig(sql=[slow]), tmp_path, records, breaker_failures=2, breaker_cooldown_s=0.6
    )


def test_a_slow_source_times_out_trips_the_breaker_and_half_opens(
    tmp_path: Path, records: GatewayRecords, sample_dir: Path
) -> None:
    gw = _slow_gateway(tmp_path, records, sample_dir / "sample.db")
    try:
        for _ in range(2):
            started = time.perf_counter()
            r = gw.query_rows(ANALYST, "count_forever", {}, trace())
            assert r.status == "unavailable" and "source unavailable" in r.message
            assert time.perf_counter() - started < 2.0  # the statement timeout, not a hang
        assert gw.breakers["slow"].state == "open"
        started = time.perf_counter()
        t = trace()
        r = gw.query_rows(ANALYST, "count_forever", {}, t)
        assert r.status == "unavailable" and "circuit open" in r.message
        assert time.perf_counter() - started < 0.1  # degraded at once
        assert any(e["event"] == "breaker_open" for e in t.events)
        time.sleep(0.7)
        assert gw.breakers["slow"].state == "half-open"
        r = gw.query_rows(ANALYST, "count_forever", {}, trace())  # the one trial call
        assert r.status == "unavailable" and gw.breakers["slow"].state == "open"
        statuses = [a.status for a in records.audit_log()]
        assert statuses.count("unavailable") == 4
    finally:
        gw.close()


def test_stale_data_is_flagged(
    tmp_path: Path, sample_config: GatewayConfig, records: GatewayRecords
) -> None:
    load_sample(
        f"sqlite:///{tmp_path / 'sample.db'}", loaded_at=datetime.now(UTC) - timedelta(days=30)
    )
    gw = Gateway(sample_config, tmp_path, records)
    try:
        r = gw.query_rows(ANALYST, "checks_for_state", {"state": "Ohio"}, trace())
        fresh = r.blocks[0].freshness
        assert fresh.stale and fresh.window_s == 604800 and fresh.age_s is not None
        assert fresh.age_s > 29 * 86400 and "may be outdated" in fresh.note()
        assert r.blocks[0].confidence < 1.0
    finally:
        gw.close()


def test_fresh_data_is_not_flagged(gateway: Gateway) -> None:
    r = gateway.query_rows(ANALYST, "checks_for_state", {"state": "Ohio"}, trace())
    assert not r.blocks[0].freshness.stale and r.blocks[0].freshness.age_s is not None


def test_every_execution_is_audited(gateway: Gateway, records: GatewayRecords) -> None:
    t = trace(SUPPORT)
    r = gateway.query_rows(SUPPORT, "tickets_opened", {"month": "April 2023"}, t)
    assert r.status == "ok"
    rows = r.blocks[0].content
    assert isinstance(rows, RowSet) and rows.rows == (("2023-04", 81),)
    (audit,) = records.audit_log(t.trace_id)
    assert audit.principal == "sue" and audit.template == "tickets_opened"
    assert audit.params == {"month": "2023-04"} and audit.row_count == 1
    assert audit.duration_ms > 0 and audit.status == "ok" and audit.kind == "rows"
    events = [e["event"] for e in t.events]
    assert events == ["permission", "params", "source_ok", "rows"]


def test_a_key_whose_attribute_the_template_does_not_allow_is_refused(gateway: Gateway) -> None:
    """A configuration fault of the key, not a bad request: denied, saying so."""
    odd = Principal("pat", roles=frozenset({"sales"}), attributes=(("region", "Pacific"),))
    r = gateway.query_rows(odd, "top_states", {"n": 3}, trace(odd))
    assert r.status == "denied" and "this key's region attribute" in r.message, r.message
