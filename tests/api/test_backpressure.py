"""Backpressure: requests over the in-flight bound and over a key's rate are refused at once
with 429, Retry-After and the API's JSON error shape; probes are never refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from core.settings import ApiKey, ApiSettings, Settings
from ragline.api import create_app
from ragline.api.backpressure import InFlight, InFlightLimit, RateLimiter


def _gated_app(gate: asyncio.Event, limit: int) -> tuple[InFlightLimit, list[str]]:
    async def slow(_req: Request) -> JSONResponse:
        await gate.wait()
        return JSONResponse({"ok": True})

    async def health(_req: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    inner = Starlette(routes=[Route("/v1/search", slow), Route("/healthz", health)])
    refused: list[str] = []
    in_flight = InFlight(limit, retry_after_s=2, on_refuse=refused.append)
    return InFlightLimit(inner, in_flight), refused


def test_requests_over_the_in_flight_bound_get_429_and_the_rest_are_served() -> None:
    asyncio.run(_over_the_bound())


async def _over_the_bound() -> None:
    gate = asyncio.Event()
    app, refused = _gated_app(gate, limit=3)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        held = [asyncio.create_task(client.get("/v1/search")) for _ in range(3)]
        while app.gate.active < 3:  # the three are inside the handler, waiting on the gate
            await asyncio.sleep(0.001)
        extra = await client.get("/v1/search")  # answered while the three still wait
        probe = await client.get("/healthz")
        gate.set()
        served = await asyncio.gather(*held)
        after = await client.get("/v1/search")
    assert extra.status_code == 429
    assert extra.headers["retry-after"] == "2"
    assert extra.json()["error"]["type"] == "too_many_requests"
    assert "RAGLINE_API__MAX_IN_FLIGHT" in extra.json()["error"]["message"]
    assert probe.status_code == 200  # liveness answers while saturated
    assert [r.status_code for r in served] == [200, 200, 200]
    assert after.status_code == 200 and app.gate.active == 0
    assert refused == ["in_flight"]


def test_an_erroring_handler_releases_its_slot() -> None:
    asyncio.run(_erroring_handler())


async def _erroring_handler() -> None:
    async def boom(_req: Request) -> JSONResponse:
        raise RuntimeError("handler failed")

    app = InFlightLimit(Starlette(routes=[Route("/v1/x", boom)]), InFlight(1))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for _ in range(3):
            assert (await client.get("/v1/x")).status_code == 500
    assert app.gate.active == 0


def test_token_bucket_refills_at_its_rate() -> None:
    now = [100.0]
    limiter = RateLimiter(clock=lambda: now[0])
    assert limiter.wait_s("a", rate=2.0, burst=2) == 0
    assert limiter.wait_s("a", rate=2.0, burst=2) == 0
    wait = limiter.wait_s("a", rate=2.0, burst=2)
    assert wait == pytest.approx(0.5)
    assert limiter.wait_s("b", rate=2.0, burst=2) == 0  # another key has its own bucket
    now[0] += 0.5
    assert limiter.wait_s("a", rate=2.0, burst=2) == 0
    assert limiter.wait_s("a", rate=0.0, burst=0) == 0  # rate 0 = unlimited
    # Default depth: two seconds' worth.
    assert [limiter.wait_s("c", rate=5.0, burst=0) for _ in range(11)][-2:] == [0, 0.2]


def test_a_key_over_its_rate_limit_gets_429_with_retry_after(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        api=ApiSettings(
            keys=[
                ApiKey(key="slow-key", user="sam", rate_per_s=0.01, burst=2),
                ApiKey(key="free-key", user="fay"),
            ]
        ),
    )
    with TestClient(create_app(settings)) as client:
        slow = {"X-API-Key": "slow-key"}
        body = {"question": "anything at all"}
        codes = [client.post("/v1/search", headers=slow, json=body).status_code for _ in range(2)]
        over = client.post("/v1/search", headers=slow, json=body)
        other = client.post("/v1/search", headers={"X-API-Key": "free-key"}, json=body)
        metrics = client.get("/metrics").text
    assert codes == [200, 200]
    assert over.status_code == 429
    assert int(over.headers["retry-after"]) >= 1
    assert over.json()["error"]["type"] == "too_many_requests"
    assert other.status_code == 200  # one key's limit is not everyone's
    assert 'ragline_requests_refused_total{reason="rate_limit"} 1.0' in metrics


def test_the_in_flight_bound_is_outermost_and_no_middleware_wraps_bodies(tmp_path: Path) -> None:
    """A refusal must cost no other layer's work, and no layer may be a BaseHTTPMiddleware
    (a task and a body stream per request and layer)."""
    from starlette.middleware.base import BaseHTTPMiddleware

    app = create_app(Settings(data_dir=tmp_path))
    layers = [m.cls for m in app.user_middleware]
    assert layers[0] is InFlightLimit
    assert not [c for c in layers if isinstance(c, type) and issubclass(c, BaseHTTPMiddleware)]


def test_a_refused_request_is_answered_without_reading_its_body() -> None:
    asyncio.run(_refused_unread())


async def _refused_unread() -> None:
    gate = asyncio.Event()
    app, _refused = _gated_app(gate, limit=1)
    reads: list[str] = []

    async def never_read(scope: dict, receive: object, send: object) -> None:
        await app(scope, _counting(receive, reads), send)  # type: ignore[arg-type]

    transport = httpx.ASGITransport(app=never_read)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        held = asyncio.create_task(client.get("/v1/search"))
        while app.gate.active < 1:
            await asyncio.sleep(0.001)
        reads.clear()
        over = await client.post("/v1/search", content=b"x" * 100_000)
        gate.set()
        await held
    assert over.status_code == 429
    assert reads == []  # the 100 kB body was never pulled from the connection


def _counting(receive: object, reads: list[str]) -> object:
    async def inner() -> object:
        message = await receive()  # type: ignore[operator]
        reads.append(message["type"])
        return message

    return inner


def test_the_served_app_hands_its_gate_to_the_http_protocol(tmp_path: Path) -> None:
    """`create_app`'s lifespan state carries the in-flight gate, so uvicorn's protocol
    refuses with the application's own bound, response and refusal metric."""
    from ragline.api.backpressure import IN_FLIGHT_STATE
    from ragline.api.server import uvicorn_options
    from tests.served import serving

    api = ApiSettings(keys=[ApiKey(key="k", user="u")], max_in_flight=7, retry_after_s=4)
    settings = Settings(data_dir=tmp_path, api=api)
    key = {"X-API-Key": "k"}
    with serving(create_app(settings, cache_ttl_s=0), **uvicorn_options(api)) as (srv, base):
        gate = srv.lifespan.state[IN_FLIGHT_STATE]
        assert isinstance(gate, InFlight) and gate.limit == 7
        gate.active = gate.limit
        try:
            over = httpx.post(f"{base}/v1/search", headers=key, json={"question": "x"}, timeout=10)
        finally:
            gate.active = 0
        served = httpx.post(f"{base}/v1/search", headers=key, json={"question": "x"}, timeout=30)
        metrics = httpx.get(f"{base}/metrics", timeout=10).text
    assert over.status_code == 429 and over.headers["retry-after"] == "4"
    assert over.json()["error"]["type"] == "too_many_requests"
    assert served.status_code == 200
    assert 'ragline_requests_refused_total{reason="in_flight"} 1.0' in metrics
