"""`ragline serve --workers N` as a user runs it: N real worker processes behind one port,
each with its own in-flight bound; a burst past the bound is refused with 429, never queued
and never an error."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from ragline.bench.load import wait_ready
from ragline.bench.processes import free_port, stop_group

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
KEY = {"X-API-Key": "serve-test-key"}


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _sample(scrape: str, name: str, *labels: str) -> int:
    """The sum of a metric's samples whose labels include all of `labels`."""
    total = 0.0
    for line in scrape.splitlines():
        if line.startswith(name + "{") and all(label in line for label in labels):
            total += float(line.rsplit(" ", 1)[1])
    return round(total)


@contextmanager
def _serving(tmp_path: Path, **env: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`ragline serve --workers 2` with `env` added; yields the process and its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    full_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RAGLINE_DATA_DIR": str(tmp_path / "data"),
        "RAGLINE_API__KEYS": json.dumps([{"key": "serve-test-key", "user": "sam"}]),
        "RAGLINE_MONITORING__INTERVAL_S": "0",
        **env,
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from ragline.cli import app; app()",
                "serve",
                "--workers",
                "2",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_ready(proc, base, log, timeout_s=120)
        assert len(_children(proc.pid)) >= 2, "expected two worker processes"
        yield proc, base
    finally:
        stop_group(proc)


def test_serve_runs_n_worker_processes_and_refuses_a_burst_with_429(tmp_path: Path) -> None:
    with _serving(tmp_path, RAGLINE_API__MAX_IN_FLIGHT="2") as (_proc, base):

        def ask(i: int) -> tuple[int, str, str]:
            r = httpx.post(
                f"{base}/v1/search",
                headers=KEY,
                timeout=60,
                json={"question": f"what does clause {i} of the handbook require"},
            )
            return r.status_code, r.headers.get("retry-after", ""), r.text

        with ThreadPoolExecutor(max_workers=48) as pool:
            results = list(pool.map(ask, range(240)))
        codes = [code for code, _, _ in results]
        assert set(codes) <= {200, 429}, [t for c, _, t in results if c not in (200, 429)][:3]
        assert 200 in codes and 429 in codes, codes
        for code, retry, text in results:
            if code == 429:
                assert retry.isdigit() and int(retry) >= 1
                assert json.loads(text)["error"]["type"] == "too_many_requests"
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
        # One scrape, answered by either process, counts the requests of both.
        scrape = httpx.get(f"{base}/metrics", timeout=10).text
        assert _sample(scrape, "ragline_requests_refused_total", 'reason="in_flight"') == (
            codes.count(429)
        )
        served = _sample(
            scrape, "ragline_http_requests_total", 'endpoint="/v1/search"', 'status="200"'
        )
        assert served == codes.count(200)


def test_a_keys_rate_limit_holds_across_the_worker_processes(tmp_path: Path) -> None:
    """A key allowed 1 request a second, 4 at once, gets that from the two processes
    together (their buckets are in one file), not 4 from each."""
    keys = [{"key": "serve-test-key", "user": "sam", "rate_per_s": 1, "burst": 4}]
    with _serving(tmp_path, RAGLINE_API__KEYS=json.dumps(keys)) as (_proc, base):

        def call(_i: int) -> tuple[int, str]:
            # A new connection each: both processes accept some of them.
            r = httpx.get(f"{base}/v1/catalog", headers=KEY, timeout=30)
            return r.status_code, r.text

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=16) as pool:
            results = list(pool.map(call, range(40)))
        elapsed = time.monotonic() - started
    codes = [code for code, _ in results]
    assert set(codes) <= {200, 429}, [t for c, t in results if c not in (200, 429)][:3]
    assert 4 <= codes.count(200) <= 4 + math.ceil(elapsed), (codes.count(200), elapsed)
    refused = next(t for c, t in results if c == 429)
    assert "rate limit of 1 requests/s" in json.loads(refused)["error"]["message"]
