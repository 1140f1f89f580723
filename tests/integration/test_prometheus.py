"""The dashboard and the alerting rules proven against a real Prometheus.

A real `ragline serve` (subprocess, embedded stores, one retrieval source configured to
time out: "a failing source") gets real traffic: uploads (one broken file), searches,
asks covered and not, refused and hidden requests. Debian's Prometheus (installed by
`deploy/local/services up prometheus`) runs with the shipped config and alerting rules,
scraping it every second. Then EVERY PromQL expression of the Grafana dashboard and of the
alerting rules goes through Prometheus's HTTP API and must return data. `promtool check`
passes on the shipped files."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from monitoring.dashboard import expressions
from ragline.bench.processes import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PROM_DIR = ROOT / "deploy" / "prometheus"
WRITER = {"X-API-Key": "ops-writer"}
READER = {"X-API-Key": "ops-reader"}
# The rule's signal, before its final comparison with a constant threshold.
_COMPARISON = re.compile(r"^(?P<signal>.+?)\s*(?:>|<|>=|<=|==|!=)\s*[0-9.e+-]+\s*$", re.S)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed: run `deploy/local/services up prometheus`")
    return path


def _wait(url: str, timeout_s: float, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args[0]} exited: {log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise AssertionError(f"{url} did not answer in {timeout_s}s: {log.read_text()[-3000:]}")


def test_promtool_accepts_the_shipped_rules_and_config(tmp_path: Path) -> None:
    promtool = _tool("promtool")
    rules = subprocess.run(
        [promtool, "check", "rules", str(PROM_DIR / "ragline-alerts.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert rules.returncode == 0, rules.stdout + rules.stderr
    # The config names a targets file that deploy/local/prometheus.sh writes beside it.
    for name in ("prometheus.yml", "ragline-alerts.yml"):
        shutil.copy(PROM_DIR / name, tmp_path / name)
    (tmp_path / "targets.json").write_text('[{"targets": ["127.0.0.1:8080"]}]')
    config = subprocess.run(
        [promtool, "check", "config", str(tmp_path / "prometheus.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert config.returncode == 0, config.stdout + config.stderr
    docker = subprocess.run(
        [
            promtool,
            "check",
            "config",
            "--syntax-only",
            str(ROOT / "deploy" / "docker" / "prometheus.yml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert docker.returncode == 0, docker.stdout + docker.stderr


class _LLM(BaseHTTPRequestHandler):
    """An OpenAI-compatible server: answers with the first label it was shown, then one
    sentence without a label (so citation completeness has a value under 1)."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        labels = re.findall(r"\[Doc[0-9a-z]+_p\d+[^\]]*\]", body["messages"][-1]["content"])
        text = f"The budget is in the sources. {labels[0] if labels else ''} It is final."
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def llm_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LLM)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def ragline_url(tmp_path_factory: pytest.TempPathFactory, llm_url: str) -> Iterator[str]:
    root = tmp_path_factory.mktemp("prom-ragline")
    rules = (ROOT / "routing" / "rules.toml").read_text(encoding="utf-8")
    # The dense source times out on every request: a failing source, its breaker opens.
    failing = re.sub(r'(name = "dense",[^}]*timeout_ms = )[0-9.]+', r"\g<1>0.001", rules)
    assert failing != rules
    (root / "rules.toml").write_text(failing, encoding="utf-8")
    port = free_port()
    env = {
        **os.environ,
        "RAGLINE_DATA_DIR": str(root / "data"),
        "RAGLINE_CONFIG_FILE": str(root / "none.toml"),
        "RAGLINE_RETRIEVAL__ROUTING_RULES": str(root / "rules.toml"),
        "RAGLINE_MONITORING__INTERVAL_S": "1",
        "RAGLINE_LLM__BASE_URL": llm_url,
        "RAGLINE_API__KEYS": json.dumps(
            [
                {"key": "ops-writer", "user": "wes", "tags": ["ops"], "can_write": True},
                {"key": "ops-reader", "user": "rita"},
            ]
        ),
        "PYTHONPATH": str(ROOT),
    }
    log = root / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            # One process: breaker states are per process (a scrape shows the breakers of
            # the worker that answers it); counters are shared across workers anyway.
            [
                sys.executable,
                "-c",
                "from ragline.cli import app; app()",
                "serve",
                "--workers",
                "1",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=root,
        )
    try:
        _wait(f"http://127.0.0.1:{port}/healthz", 120, proc, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def prometheus(ragline_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _tool("prometheus")
    root = tmp_path_factory.mktemp("prometheus")
    shipped = (PROM_DIR / "prometheus.yml").read_text(encoding="utf-8")
    fast = (
        shipped.replace("scrape_interval: 15s", "scrape_interval: 1s")
        .replace("evaluation_interval: 15s", "evaluation_interval: 1s")
        .replace("refresh_interval: 30s", "refresh_interval: 1s")
    )
    assert fast.count(": 1s") == 3
    (root / "prometheus.yml").write_text(fast, encoding="utf-8")
    shutil.copy(PROM_DIR / "ragline-alerts.yml", root / "ragline-alerts.yml")
    target = ragline_url.removeprefix("http://")
    (root / "targets.json").write_text(json.dumps([{"targets": [target]}]))
    port = free_port()
    log = root / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={root / 'prometheus.yml'}",
                f"--storage.tsdb.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait(f"http://127.0.0.1:{port}/-/ready", 60, proc, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _traffic(api: str, round_: int) -> None:
    with httpx.Client(base_url=api, timeout=60) as c:
        doc = (
            f"# Plant report {round_}\n\nThe zephyrine plant in Harbin employs 300 engineers.\n\n"
            f"The zephyrine merger budget is {40 + round_} million yuan.\n"
        )
        up = c.post("/v1/documents", headers=WRITER, files={"file": (f"r{round_}.md", doc)})
        assert up.status_code == 202, up.text
        secret = c.post(
            "/v1/documents",
            headers=WRITER,
            files={"file": (f"s{round_}.md", "# Ops\n\nops only")},
            data={"acl_tags": "ops"},
        ).json()
        broken = c.post(
            "/v1/documents",
            headers=WRITER,
            files={"file": (f"broken{round_}.pdf", b"%PDF-1.7 this is not a pdf")},
        )
        assert broken.status_code == 202
        for job in (up.json()["job_id"], secret["job_id"], broken.json()["job_id"]):
            deadline = time.monotonic() + 60
            while not c.get(f"/v1/jobs/{job}", headers=WRITER).json()["done"]:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        for q in (f"zephyrine engineers {round_}", f"Harbin plant {round_}"):
            assert c.post("/v1/search", headers=READER, json={"question": q}).status_code == 200
        for q in (f"zephyrine merger budget {round_}", f"quantum gravity of eels {round_}"):
            assert c.post("/v1/ask", headers=READER, json={"question": q}).status_code == 200
        assert c.post("/v1/search", json={"question": "no key"}).status_code == 401
        # The knowledge gateway without configured sources: a refused template call.
        rows = c.post("/v1/rows", headers=READER, json={"template": "nonexistent", "params": {}})
        assert 400 <= rows.status_code < 500, rows.text
        denied = c.post("/v1/documents", headers=READER, files={"file": ("x.md", "# x\n\ny")})
        assert denied.status_code == 403
        hidden = c.get(f"/v1/documents/{secret['doc_id']}", headers=READER)
        assert hidden.status_code == 404


def _query(prom: str, expr: str) -> dict[str, Any]:
    r = httpx.get(f"{prom}/api/v1/query", params={"query": expr}, timeout=30)
    assert r.status_code == 200, (expr, r.text)
    body = r.json()
    assert body["status"] == "success", (expr, body)
    return dict(body["data"])


def _has_data(data: dict[str, Any]) -> bool:
    if data["resultType"] == "scalar":
        return not math.isnan(float(data["result"][1]))
    return any(not math.isnan(float(s["value"][1])) for s in data["result"])


def _wait_for(prom: str, expr: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not _has_data(_query(prom, expr)):
        assert time.monotonic() < deadline, f"Prometheus has no data for {expr} after {timeout_s}s"
        time.sleep(0.5)


def test_every_dashboard_and_rule_expression_returns_data(
    ragline_url: str, prometheus: str
) -> None:
    # Traffic, scraped; more traffic, scraped again: rates need two samples that differ, so
    # each round waits for Prometheus to have seen it (a fast machine can finish both
    # rounds before Prometheus's first scrape, and fixed sleeps then measure nothing).
    _wait_for(prometheus, 'up{job="ragline-app"} == 1')
    _traffic(ragline_url, 1)
    _wait_for(prometheus, 'ragline_queries_total{covered="true"}')
    time.sleep(2)  # a couple more scrapes of the first round's values
    _traffic(ragline_url, 2)
    _wait_for(prometheus, "sum(rate(ragline_queries_total[5m])) > 0")
    time.sleep(2)
    targets = httpx.get(f"{prometheus}/api/v1/targets", timeout=10).json()["data"]
    assert [t["health"] for t in targets["activeTargets"]] == ["up"], targets

    dashboard = expressions()
    assert len(dashboard) >= 20
    empty = [e for e in dashboard if not _has_data(_query(prometheus, e))]
    assert empty == [], f"dashboard expressions without data: {empty}"

    groups = httpx.get(f"{prometheus}/api/v1/rules", timeout=10).json()["data"]["groups"]
    rules = [r for g in groups for r in g["rules"]]
    assert len(rules) == 9  # the shipped file, loaded by Prometheus itself
    no_data = []
    for rule in rules:
        assert rule["health"] == "ok", rule
        _query(prometheus, rule["query"])  # the full condition runs
        m = _COMPARISON.match(rule["query"])
        assert m, f"rule {rule['name']} does not end in a comparison: {rule['query']}"
        if not _has_data(_query(prometheus, m["signal"])):
            no_data.append(rule["name"])
    assert no_data == [], f"alert signals without data: {no_data}"

    # The failing source shows where it should.
    failures = _query(prometheus, "sum by (source) (ragline_source_failures_total)")
    assert {s["metric"]["source"] for s in failures["result"]} == {"dense"}
    # Its breaker is charted with exactly one state set. (Whether it is open at the last
    # scrape depends on how many of the failures were consecutive: the routing rules send
    # some questions to keyword-only routes, and a run was seen to end with it closed.)
    states = _query(prometheus, 'ragline_breaker_state{source="dense"}')["result"]
    assert {s["metric"]["state"] for s in states} == {"closed", "half-open", "open"}
    assert sorted(s["value"][1] for s in states) == ["0", "0", "1"]
