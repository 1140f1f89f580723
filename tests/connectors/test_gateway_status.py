"""Live status through the gateway against a real HTTP service started here: the sample
ticket service (URL template, JSONPath mapping, auth header from the environment, TTL
cache inside the freshness window, GET retries), a slow service tripping the breaker, and
a stale result reported as stale."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from gateway_principals import ANALYST, NOBODY, SUPPORT, trace

from connectors.config import GatewayConfig, HttpSource, StatusParam
from connectors.gateway import Gateway
from connectors.http_status import HttpStatusConnector
from connectors.jsonpath import compile_path, extract
from connectors.params import InvalidParameter
from connectors.records import GatewayRecords
from connectors.sample.status_service import StatusService

MAPPING = {"state": "$.ticket.state", "title": "$.ticket.title", "opened": "$.ticket.opened"}


@pytest.fixture
def service() -> Iterator[StatusService]:
    s = StatusService(token="s3cret").start()
    yield s
    s.stop()


def _source(service: StatusService, **kw: object) -> HttpSource:
    base = {
        "id": "tickets",
        "url": "{base}/tickets/{ticket_id}",
        "base_url_env": "TEST_TICKETS_URL",
        "params": {"ticket_id": StatusParam(pattern=r"\d{1,6}")},
        "roles": ["support", "analyst"],
        "auth_header": "Authorization",
        "auth_env": "TEST_TICKETS_TOKEN",
        "auth_prefix": "Bearer ",
        "timeout_s": 1.0,
        "retries": 2,
        "freshness_window_s": 60.0,
        "cache_ttl_s": 30.0,
        "mapping": MAPPING,
    }
    return HttpSource.model_validate({**base, **kw})


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, service: StatusService) -> None:
    monkeypatch.setenv("TEST_TICKETS_URL", service.url)
    monkeypatch.setenv("TEST_TICKETS_TOKEN", "s3cret")


def _gateway(records: GatewayRecords, *sources: HttpSource, **kw: object) -> Gateway:
    from pathlib import Path

    return Gateway(GatewayConfig(http=list(sources)), Path("."), records, **kw)  # type: ignore[arg-type]


def test_lookup_maps_fields_and_cites_the_block(
    env: None, service: StatusService, records: GatewayRecords
) -> None:
    gw = _gateway(records, _source(service))
    try:
        t = trace(SUPPORT)
        r = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "645"}, t)
        assert r.status == "ok", r.message
        (block,) = r.blocks
        assert block.content == {
            "state": "closed",
            "title": "KeyError: 3224",
            "opened": "2023-06-16",
        }
        assert block.label == "[API_tickets_1]" and block.source_kind == "status"
        assert not block.freshness.stale and block.freshness.window_s == 60.0
        assert "s3cret" not in str(block.locator)  # the credential never leaves
        assert "127.0.0.1" not in str(block.locator)  # nor the upstream's address
        (audit,) = records.audit_log(t.trace_id)
        assert audit.kind == "status" and audit.params == {"ticket_id": "645"}
        assert audit.principal == "sue" and audit.status == "ok"
    finally:
        gw.close()


def test_cache_serves_repeats_within_the_ttl_and_never_past_the_window(
    env: None, service: StatusService, records: GatewayRecords
) -> None:
    gw = _gateway(records, _source(service, cache_ttl_s=30.0, freshness_window_s=0.3))
    try:
        gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "2"}, trace())
        second = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "2"}, trace())
        assert service.requests == 1 and second.blocks[0].locator["cached"] is True
        time.sleep(0.35)  # the TTL is capped at the 0.3 s window: refetched
        third = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "2"}, trace())
        assert service.requests == 2 and third.blocks[0].locator["cached"] is False
        assert not third.blocks[0].freshness.stale
    finally:
        gw.close()


def test_a_missing_credential_or_a_wrong_one_is_a_clear_failure(
    monkeypatch: pytest.MonkeyPatch, service: StatusService, records: GatewayRecords
) -> None:
    monkeypatch.setenv("TEST_TICKETS_URL", service.url)
    monkeypatch.delenv("TEST_TICKETS_TOKEN", raising=False)
    gw = _gateway(records, _source(service))
    try:
        r = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "2"}, trace())
        assert r.status == "unavailable" and "TEST_TICKETS_TOKEN" in r.message
        monkeypatch.setenv("TEST_TICKETS_TOKEN", "wrong")
        r = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "3"}, trace())
        assert r.status == "unavailable" and "HTTP 401" in r.message
    finally:
        gw.close()


def test_unknown_ids_and_bad_parameters(
    env: None, service: StatusService, records: GatewayRecords
) -> None:
    gw = _gateway(records, _source(service))
    try:
        assert (
            gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "99999"}, trace()).status == "empty"
        )
        for bad in ("1/../../admin", "1?x=1", "abc", "", "1" * 7):
            r = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": bad}, trace())
            assert r.status == "invalid", bad
        assert service.requests == 1  # refused values never reach the service
    finally:
        gw.close()


def test_roles_are_checked_before_the_request(
    env: None, service: StatusService, records: GatewayRecords
) -> None:
    gw = _gateway(records, _source(service), _source(service, id="jobs", roles=["operator"]))
    try:
        t = trace(NOBODY)
        r = gw.lookup_status(NOBODY, "tickets", {"ticket_id": "2"}, t)
        assert service.requests == 0
        # Answered exactly like a source that does not exist (a key is told only of the
        # sources it may use, in errors too), audited as denied.
        missing = gw.lookup_status(NOBODY, "tickez", {"ticket_id": "2"}, trace(NOBODY))
        assert (r.status, r.message, r.source_id, r.detail) == (
            "invalid",
            "no status source 'tickets'; known: []",
            "tickets",
            {},
        )
        assert (missing.status, missing.message, missing.source_id, missing.detail) == (
            "invalid",
            "no status source 'tickez'; known: []",
            "tickez",
            {},
        )
        assert [(a.status, a.error) for a in records.audit_log(t.trace_id)] == [
            ("denied", "role not allowed")
        ]
        # A key that may use one source is told of that one only.
        jobs = gw.lookup_status(SUPPORT, "jobs", {"ticket_id": "2"}, trace(SUPPORT))
        assert (jobs.status, jobs.message) == (
            "invalid",
            "no status source 'jobs'; known: ['tickets']",
        )
        assert service.requests == 0
    finally:
        gw.close()


def test_server_errors_are_retried_on_get_then_reported(
    env: None, service: StatusService, records: GatewayRecords
) -> None:
    gw = _gateway(records, _source(service, retries=2))
    try:
        service.fail_with = 503
        r = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "2"}, trace())
        assert r.status == "unavailable" and "503" in r.message
        assert service.requests == 3  # one try and two retries
        service.fail_with = 500  # not a transient status: no retry
        gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "3"}, trace())
        assert service.requests == 4
    finally:
        gw.close()


def test_a_slow_service_trips_the_breaker_and_degrades_at_once(
    env: None, service: StatusService, records: GatewayRecords
) -> None:
    gw = _gateway(
        records,
        _source(service, timeout_s=0.3, retries=0),
        breaker_failures=2,
        breaker_cooldown_s=60,
    )
    try:
        service.delay_s = 1.0
        for _ in range(2):
            started = time.perf_counter()
            r = gw.lookup_status(ANALYST, "tickets", {"ticket_id": "2"}, trace())
            assert r.status == "unavailable" and "timed out" in r.message
            assert time.perf_counter() - started < 0.9
        started = time.perf_counter()
        r = gw.lookup_status(ANALYST, "tickets", {"ticket_id": "2"}, trace())
        assert r.status == "unavailable" and "circuit open" in r.message
        assert time.perf_counter() - started < 0.05
        assert gw.breakers["tickets"].state == "open"
    finally:
        service.delay_s = 0
        gw.close()


def test_a_result_past_its_window_is_reported_stale_when_refetching_fails(
    env: None, service: StatusService, records: GatewayRecords
) -> None:
    gw = _gateway(records, _source(service, freshness_window_s=0.2, cache_ttl_s=0.2))
    try:
        first = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "2"}, trace())
        assert not first.blocks[0].freshness.stale
        time.sleep(0.3)
        service.fail_with = 503
        t = trace()
        stale = gw.lookup_status(SUPPORT, "tickets", {"ticket_id": "2"}, t)
        assert stale.status == "ok" and stale.blocks[0].freshness.stale
        assert "may be outdated" in stale.message
        assert stale.blocks[0].content == first.blocks[0].content
        assert any(e["event"] == "stale_fallback" for e in t.events)
        assert stale.blocks[0].locator["cached"] is True  # the last good answer, kept
    finally:
        gw.close()


def test_jsonpath_subset() -> None:
    doc = {"a": {"b": [{"c": 1}, {"c": 2}]}, "odd key": "x"}
    assert extract(doc, compile_path("$.a.b[1].c")) == 2
    assert extract(doc, compile_path('$["odd key"]')) == "x"
    assert extract(doc, compile_path("$.a.missing")) is None
    assert extract(doc, compile_path("$.a.b[5].c")) is None
    with pytest.raises(ValueError):
        compile_path("a.b")


def test_connector_refuses_undeclared_parameters(service: StatusService) -> None:
    conn = HttpStatusConnector(_source(service))
    try:
        with pytest.raises(InvalidParameter):
            conn.check({"ticket_id": "2", "extra": "1"})
    finally:
        conn.close()
