"""`ragline serve --workers N` as a user runs it: N real worker processes behind one port,
each with its own in-flight bound; a burst past the bound is refused with 429, never queued
and never an error."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from ragline.bench.load import wait_ready

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
KEY = {"X-API-Key": "serve-test-key"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


def test_serve_runs_n_worker_processes_and_refuses_a_burst_with_429(tmp_path: Path) -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RAGLINE_DATA_DIR": str(tmp_path / "data"),
        "RAGLINE_API__KEYS": json.dumps([{"key": "serve-test-key", "user": "sam"}]),
        "RAGLINE_API__MAX_IN_FLIGHT": "2",
        "RAGLINE_MONITORING__INTERVAL_S": "0",
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
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_ready(proc, base, log, timeout_s=120)
        assert len(_children(proc.pid)) >= 2, "expected two worker processes"

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
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
