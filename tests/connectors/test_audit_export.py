"""The gateway audit as CSV (`ragline audit export --log gateway`): one row per execution
with its trace id, parameters as JSON, and formula-like cells defused."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

from gateway_principals import ANALYST, trace

from connectors.gateway import Gateway
from connectors.records import AuditRecord, GatewayRecords
from monitoring.audit import GATEWAY_COLUMNS, export_gateway


def test_export_has_every_execution_with_its_trace(
    gateway: Gateway, records: GatewayRecords
) -> None:
    t = trace()
    gateway.query_rows(ANALYST, "checks_for_state", {"state": "Utah"}, t)
    gateway.query_rows(ANALYST, "checks_for_state", {"state": "=cmd|' /C calc'!A0"}, trace())
    out = io.StringIO()
    assert export_gateway(records.audit_log(), out) == 2
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert tuple(rows[0]) == GATEWAY_COLUMNS
    assert rows[0]["trace_id"] == t.trace_id and rows[0]["status"] == "ok"
    assert rows[0]["params"] == '{"metric": "total", "region": null, "state": "Utah"}'
    assert rows[1]["status"] == "invalid" and not rows[1]["params"].startswith("=")


def test_export_filters_by_time_and_user(records: GatewayRecords) -> None:
    now = datetime.now(UTC)
    for who, ago in (("ann", 3), ("bob", 2), ("ann", 1)):
        records.audit(
            AuditRecord(
                "t" * 32,
                now - timedelta(hours=ago),
                who,
                "business",
                "rows",
                "top_states",
                {},
                1,
                1.0,
                "ok",
            )
        )
    out = io.StringIO()
    n = export_gateway(records.audit_log(), out, since=now - timedelta(hours=2.5), user="ann")
    assert n == 1
