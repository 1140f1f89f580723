"""Malformed HTTP against a real server (uvicorn with Ragline's protocols, httptools and
h11, as `ragline serve` runs them): bodies, headers, sizes, auth and query syntax (SQL-,
Lucene-, FTS5-like). Every answer is a 4xx in the JSON error shape, or a 200 for a
question that is merely odd; never a 500, never text/plain, never a hang (issue 14, item
10)."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from core.settings import ApiKey, ApiSettings, Settings
from ragline.api import create_app
from ragline.api.server import uvicorn_options
from tests.served import serving

KEY = "malformed-writer-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
HEADER_TIMEOUT_S = 1.5
BODY_TIMEOUT_S = 1.5

# Query syntax of the stores behind the API, and a few classics: each must be a question
# like any other (the stores quote terms; nothing is interpreted).
NASTY_QUESTIONS = [
    "'; DROP TABLE documents; --",
    '" OR 1=1 --',
    "1' UNION SELECT acl_tags FROM documents WHERE '1'='1",
    "title:* AND acl:finance",
    "text:(secret OR plan)^10 AND NOT public:true",
    "{!lucene}*:*",
    "/.*secret.*/",
    'acl : "finance" OR text : *',
    "NEAR(secret plan, 2) OR secret*",
    '"unterminated phrase',
    "^title:secret",
    "{text title section} : secret",
    "a AND OR NOT b (((",
    "MATCH (n) DETACH DELETE n",
    "\\u0000\u0000 nul byte",
    "%00%27%22",
    "💥" * 50,
    "汉字 AND 秘密 OR *",
    "${jndi:ldap://x}",
    "<script>alert(1)</script>",
]


@pytest.fixture(scope="module", params=["httptools", "h11"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    api = ApiSettings(
        http=request.param,
        keys=[ApiKey(key=KEY, user="mal", can_write=True)],
        max_upload_mb=0.05,
        max_query_chars=300,
        max_top_k=5,
        header_timeout_s=HEADER_TIMEOUT_S,
        body_timeout_s=BODY_TIMEOUT_S,
        max_header_kb=16,
    )
    settings = Settings(data_dir=tmp_path_factory.mktemp("malformed"), api=api)
    with serving(create_app(settings, cache_ttl_s=0), **uvicorn_options(api)) as (srv, base):
        _ready(srv, base, request.param)
        yield base


def _ready(srv: uvicorn.Server, base: str, protocol: str) -> None:
    """Checks that the protocol serving is the one asked for; uploads the plan."""
    deadline = time.monotonic() + 60
    with httpx.Client(base_url=base) as c:  # the protocol serving is the one asked for
        c.get("/healthz")
        expected = HttpToolsProtocol if protocol == "httptools" else H11Protocol
        conns = srv.server_state.connections
        assert conns and all(isinstance(p, expected) for p in conns), conns
    files = {"file": ("plan.md", b"# Plan\n\nThe secret plan is filed under P-77.\n")}
    r = httpx.post(f"{base}/v1/documents", headers=AUTH, files=files, timeout=30)
    assert r.status_code == 202, r.text
    job = r.json()["job_id"]
    while httpx.get(f"{base}/v1/jobs/{job}", headers=AUTH).json()["state"] != "searchable":
        assert time.monotonic() < deadline
        time.sleep(0.1)


def _json_error(r: httpx.Response, *statuses: int) -> dict[str, Any]:
    assert r.status_code in statuses, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()["error"]
    assert body["type"] and isinstance(body["message"], str) and body["message"]
    return dict(body)


def _raw(port_url: str, payload: bytes, wait_s: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read until the server closes; returns status, headers, body."""
    host, port = port_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait_s) as sock:
        sock.sendall(payload)
        data = b""
        while True:
            try:
                block = sock.recv(65536)
            except TimeoutError:
                break
            if not block:
                break
            data += block
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return status, headers, body


def test_huge_api_key_header_gets_json_431(server: str) -> None:
    for name in ("X-API-Key", "Authorization"):
        value = "k" * 65536 if name == "X-API-Key" else "Bearer " + "k" * 65536
        r = httpx.get(f"{server}/v1/models", headers={name: value}, timeout=10)
        error = _json_error(r, 431)
        assert "RAGLINE_API__MAX_HEADER_KB" in error["message"]
    # Under the limit but still not a key: the usual 401.
    r = httpx.get(f"{server}/v1/models", headers={"X-API-Key": "k" * 8000}, timeout=10)
    _json_error(r, 401)


def test_short_body_gets_408_instead_of_a_hang(server: str) -> None:
    started = time.monotonic()
    status, headers, body = _raw(
        server,
        b"POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + KEY.encode()
        + b'\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"question":',
    )
    took = time.monotonic() - started
    assert status == 408 and headers["content-type"] == "application/json", (status, body)
    assert json.loads(body)["error"]["type"] == "request_timeout"
    assert BODY_TIMEOUT_S <= took < BODY_TIMEOUT_S + 5


def test_headers_over_the_limit_in_one_piece_get_431(server: str) -> None:
    status, headers, body = _raw(
        server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * 20_000 + b"\r\n\r\n"
    )
    assert status == 431 and headers["content-type"] == "application/json", (status, body)
    assert json.loads(body)["error"]["type"] == "request_header_fields_too_large"


def test_pipelined_requests_are_answered_in_order(server: str) -> None:
    status, _, rest = _raw(
        server,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    statuses = [status] + [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", rest)]
    assert statuses == [200, 401, 200], rest[:500]


def test_slow_headers_on_a_kept_alive_connection_get_408(server: str) -> None:
    """The header timer starts again at the first byte of the next request."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while not data.endswith(b'{"status":"ok"}'):
            data += sock.recv(65536)
        started = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")
        while block := sock.recv(65536):
            data += block
    assert re.findall(rb"HTTP/1\.1 (\d{3}) ", data) == [b"200", b"408"], data
    assert HEADER_TIMEOUT_S - 0.2 <= time.monotonic() - started < HEADER_TIMEOUT_S + 5


def test_slow_headers_get_408(server: str) -> None:
    started = time.monotonic()
    status, _, body = _raw(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    assert status == 408 and json.loads(body)["error"]["type"] == "request_timeout"
    assert time.monotonic() - started < HEADER_TIMEOUT_S + 5


@pytest.mark.parametrize(
    "payload",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n: no-name\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Name: v\r\n\r\n",
        b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        b"POST /v1/search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: \x00\x01\r\n\r\n",
    ],
)
def test_malformed_requests_get_json_400(server: str, payload: bytes) -> None:
    status, headers, body = _raw(server, payload)
    assert status == 400, (status, body)
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["error"]["type"] == "bad_request"


def test_bad_bodies_sizes_and_auth_get_json_4xx(server: str) -> None:
    c = httpx.Client(base_url=server, timeout=30)
    search = "/v1/search"
    cases: list[tuple[str, str, dict[str, Any], tuple[int, ...]]] = [
        # auth
        ("post", search, {"json": {"question": "x"}}, (401,)),
        ("post", search, {"json": {"question": "x"}, "headers": {"X-API-Key": ""}}, (401,)),
        (
            "post",
            search,
            {"json": {"question": "x"}, "headers": {"Authorization": "Basic Zm9v"}},
            (401,),
        ),
        (
            "post",
            search,
            {"json": {"question": "x"}, "headers": {"Authorization": "Bearer"}},
            (401,),
        ),
        (
            "post",
            search,
            {"json": {"question": "x"}, "headers": {"X-API-Key": "ключ".encode()}},
            (401,),
        ),
        # bodies
        ("post", search, {"content": b"{not json", "headers": AUTH}, (422,)),
        ("post", search, {"content": b"\xff\xfe\x00", "headers": AUTH}, (422,)),
        ("post", search, {"json": [], "headers": AUTH}, (422,)),
        ("post", search, {"json": {"question": 5}, "headers": AUTH}, (422,)),
        ("post", search, {"json": {"question": ""}, "headers": AUTH}, (422,)),
        ("post", search, {"json": {"question": "   "}, "headers": AUTH}, (422,)),
        ("post", search, {"json": {"question": "x", "top_k": 10**12}, "headers": AUTH}, (422,)),
        ("post", search, {"json": {"question": "x", "top_k": "all"}, "headers": AUTH}, (422,)),
        ("post", search, {"json": {"question": "x", "doc_types": "pdf"}, "headers": AUTH}, (422,)),
        ("post", search, {"json": {"question": "x", "tags": ["finance"]}, "headers": AUTH}, (422,)),
        ("post", "/v1/ask", {"json": {"question": "q" * 5000}, "headers": AUTH}, (422,)),
        ("post", "/v1/chat/completions", {"json": {"messages": []}, "headers": AUTH}, (422,)),
        ("post", "/v1/chat/completions", {"json": {"messages": "hi"}, "headers": AUTH}, (422,)),
        (
            "post",
            "/v1/chat/completions",
            {"json": {"messages": [{"role": "user", "content": 7}]}, "headers": AUTH},
            (422,),
        ),
        (
            "post",
            "/v1/chat/completions",
            {
                "json": {"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]},
                "headers": AUTH,
            },
            (404,),
        ),
        (
            "post",
            "/v1/chat/completions",
            {
                "json": {"stream": "yes please", "messages": [{"role": "user", "content": "x"}]},
                "headers": AUTH,
            },
            (422,),
        ),
        # documents and jobs
        ("post", "/v1/documents", {"headers": AUTH}, (422,)),
        (
            "post",
            "/v1/documents",
            {
                "content": b"--x\r\n",
                "headers": {**AUTH, "Content-Type": "multipart/form-data; boundary=x"},
            },
            (400, 422),
        ),
        (
            "post",
            "/v1/documents",
            {"files": {"file": ("a.md", b"x" * 70_000)}, "headers": AUTH},
            (413,),
        ),
        ("post", "/v1/documents", {"files": {"file": ("a.md", b"")}, "headers": AUTH}, (422,)),
        (
            "post",
            "/v1/documents",
            {"files": {"file": ("a.exe", b"MZ\x90\x00" + bytes(300))}, "headers": AUTH},
            (415,),
        ),
        (
            "post",
            "/v1/documents",
            {"files": {"file": ("a.md", b"x")}, "data": {"source_trust": "2"}, "headers": AUTH},
            (422,),
        ),
        (
            "post",
            "/v1/documents",
            {"files": {"file": ("a.md", b"x")}, "data": {"modified": "yesterday"}, "headers": AUTH},
            (422,),
        ),
        (
            "post",
            "/v1/documents",
            {"files": {"file": ("a.md", b"x")}, "data": {"key": "k" * 600}, "headers": AUTH},
            (422,),
        ),
        ("post", "/v1/documents", {"files": {"file": ("", b"x")}, "headers": AUTH}, (422,)),
        ("get", "/v1/documents/..%2f..%2fetc%2fpasswd", {"headers": AUTH}, (404,)),
        ("get", "/v1/documents/" + "0" * 5000, {"headers": AUTH}, (404,)),
        ("delete", "/v1/documents/' OR 1=1 --", {"headers": AUTH}, (404,)),
        ("get", "/v1/jobs/%00", {"headers": AUTH}, (404,)),
        ("get", "/v1/jobs", {"params": {"limit": "-1"}, "headers": AUTH}, (422,)),
        ("get", "/v1/jobs", {"params": {"batch_id": "b" * 100}, "headers": AUTH}, (422,)),
        # routing
        ("get", "/v1/nope", {"headers": AUTH}, (404,)),
        ("put", search, {"headers": AUTH}, (405,)),
        ("post", "/v1/models", {"headers": AUTH}, (405,)),
    ]
    for method, path, kw, statuses in cases:
        r = getattr(c, method)(path, **kw)
        _json_error(r, *statuses)
    # A Content-Length over the upload limit is refused before the body is read.
    status, headers, body = _raw(
        server,
        b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + KEY.encode()
        + b"\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000000"
        b"\r\n\r\n--b\r\n",
    )
    assert status == 413 and headers["content-type"] == "application/json", (status, body)


def test_query_syntax_is_just_text(server: str) -> None:
    c = httpx.Client(base_url=server, timeout=60)
    for question in NASTY_QUESTIONS:
        for path in ("/v1/search", "/v1/ask"):
            r = c.post(path, headers=AUTH, json={"question": question})
            if r.status_code != 200:
                _json_error(r, 422)
        r = c.post(
            "/v1/chat/completions",
            headers=AUTH,
            json={"messages": [{"role": "user", "content": question}]},
        )
        assert r.status_code in (200, 422), (question, r.text[:300])
    r = c.post("/v1/search", headers=AUTH, json={"question": "secret plan P-77"})
    assert r.status_code == 200 and r.json()["hits"], r.text  # the server is still sane
