"""`ragline bench load`: agents' traffic against a real `ragline serve`, driven by Locust.

One run measures two server configurations on the same index and questions, in the same
run: the baseline (one process, no in-flight bound: how Ragline served before) and the
candidate (`--workers` processes, `RAGLINE_API__MAX_IN_FLIGHT` bound), at each client count,
and prints their ratios. The query cache is off (TTL 0) so every request does the work.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from core.cores import cores
from core.settings import Settings
from ragline.app import Ragline
from ragline.bench.observer import Observer
from ragline.bench.processes import free_port, stop_group

LOCUSTFILE = Path(__file__).with_name("locustfile.py")
_KEY = "load-bench-key"


@dataclass(frozen=True)
class ServerConfig:
    name: str
    workers: int
    max_in_flight: int
    env: tuple[tuple[str, str], ...] = ()  # settings this server alone runs with


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that makes a child process build these settings."""
    env = {
        "RAGLINE_DATA_DIR": str(settings.data_dir.resolve()),
        "RAGLINE_PROFILE": settings.profile,
        "RAGLINE_METADATA_URL": settings.metadata_url,
    }
    for name, value in settings.backends.model_dump().items():
        env[f"RAGLINE_BACKENDS__{name.upper()}"] = str(value)
    return {k: v for k, v in env.items() if v}


@contextmanager
def running_server(config: ServerConfig, base_env: dict[str, str], log: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        **base_env,
        "RAGLINE_API__KEYS": json.dumps([{"key": _KEY, "user": "load", "can_write": True}]),
        "RAGLINE_API__MAX_IN_FLIGHT": str(config.max_in_flight),
        "RAGLINE_API__CACHE_TTL_S": "0",
        "RAGLINE_MONITORING__INTERVAL_S": "0",
        **dict(config.env),
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from ragline.cli import app; app()",
                "serve",
                "--workers",
                str(config.workers),
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, base, log)
        warm_up(base, config.workers)
        yield base
    finally:
        stop_group(proc)


def wait_ready(proc: subprocess.Popen[bytes], base: str, log: Path, timeout_s: float = 180) -> None:
    """Until the server at `base` answers /readyz; its log's tail in the error otherwise."""
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"ragline serve exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"ragline serve not ready in {timeout_s:g} s: {log.read_text()[-2000:]}"
            )
        time.sleep(0.3)


def warm_up(base: str, workers: int) -> None:
    """Each worker process loads its models on its first query: do that before measuring
    (several concurrent rounds, so every process gets some)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> None:
        httpx.post(
            f"{base}/v1/search",
            headers={"X-API-Key": _KEY},
            timeout=300,
            json={"question": f"warm-up question {i}"},
        )

    with ThreadPoolExecutor(max_workers=2 * workers) as pool:
        list(pool.map(one, range(8 * workers)))


def _num(row: dict[str, str], column: str) -> float:
    try:
        return float(row.get(column) or 0)
    except ValueError:
        return 0.0


def summarise(stats_csv: Path) -> dict[str, Any]:
    """Served vs refused (429) vs failed, from Locust's `_stats.csv`."""
    with stats_csv.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Name"] != "Aggregated"]
    served = [r for r in rows if not r["Name"].endswith(" 429")]
    refused = [r for r in rows if r["Name"].endswith(" 429")]
    main = max(served, key=lambda r: _num(r, "Request Count"), default=None)
    worst_refusal = max(refused, key=lambda r: _num(r, "95%"), default=None)
    return {
        "served_req_per_s": round(sum(_num(r, "Requests/s") for r in served), 2),
        "served": int(sum(_num(r, "Request Count") for r in served)),
        "refused_429": int(sum(_num(r, "Request Count") for r in refused)),
        "errors": int(sum(_num(r, "Failure Count") for r in rows)),
        "p50_ms": _num(main, "50%") if main else None,
        "p95_ms": _num(main, "95%") if main else None,
        "p99_ms": _num(main, "99%") if main else None,
        "refused_p95_ms": _num(worst_refusal, "95%") if worst_refusal else None,
        "per_endpoint": {
            r["Name"]: {
                "requests": int(_num(r, "Request Count")),
                "req_per_s": round(_num(r, "Requests/s"), 2),
                "p50_ms": _num(r, "50%"),
                "p95_ms": _num(r, "95%"),
            }
            for r in rows
        },
    }


def run_locust(
    base: str,
    users: int,
    duration_s: int,
    scenario: str,
    questions: Path,
    out: Path,
    period_s: float,
    client: str = "fast",
    retry_after: str = "ignore",
) -> dict[str, Any]:
    prefix = out / f"{scenario}-{users}"
    env = {
        **os.environ,
        "RAGLINE_LOAD_CLIENT": client,
        "RAGLINE_LOAD_KEY": _KEY,
        "RAGLINE_LOAD_SCENARIO": scenario,
        "RAGLINE_LOAD_QUESTIONS": str(questions),
        "RAGLINE_LOAD_PERIOD_S": str(period_s),
        "RAGLINE_LOAD_RETRY_AFTER": retry_after,
    }
    cmd = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(LOCUSTFILE),
        "--headless",
        "-u",
        str(users),
        "-r",
        str(max(1, users)),
        "-t",
        f"{duration_s}s",
        "--host",
        base,
        "--csv",
        str(prefix),
        "--only-summary",
        "--stop-timeout",
        "10",
        "--loglevel",
        "WARNING",
    ]
    observer = _observer(base, scenario, questions)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The observer calls while every agent is running: after Locust has started them
    # (it spawns all at once) and until the run's end, not while it stops them.
    lead = min(1.0, duration_s / 5)
    try:
        _wait(proc, lead)
        observer.start()
        _wait(proc, duration_s - lead - 0.5)
        observer.stop()
        _out, err = proc.communicate(timeout=duration_s + 120)
    finally:
        observer.stop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stats = Path(f"{prefix}_stats.csv")
    if not stats.is_file():
        raise RuntimeError(f"locust wrote no stats ({proc.returncode}): {err[-2000:]}")
    return {**summarise(stats), "observer": observer.summary()}


def _wait(proc: subprocess.Popen[str], seconds: float) -> None:
    """Up to `seconds`, less if the process ends first."""
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=max(0.0, seconds))


def _observer(base: str, scenario: str, questions: Path) -> Observer:
    """One agent beside the load, asking the scenario's main endpoint (the questions from
    the end of the file: the agents start at its beginning)."""
    asked = load_questions(questions)[::-1] or ["observer question"]
    endpoint, extra = ("/v1/ask", {}) if scenario == "ask" else ("/v1/search", {"top_k": 5})
    return Observer(
        f"{base}{endpoint}", {"X-API-Key": _KEY}, ({"question": q, **extra} for q in asked)
    )


def load_questions(path: Path) -> list[str]:
    """`question` fields of a JSONL file, or SQuAD JSON questions, or plain lines."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line)["question"] for line in text.splitlines() if line.strip()]
    if path.suffix == ".json":
        data = json.loads(text)
        return [
            qa["question"]
            for article in data["data"]
            for para in article["paragraphs"]
            for qa in para["qas"]
        ]
    return [line.strip() for line in text.splitlines() if line.strip()]


def run_load(
    settings: Settings,
    docs: Path,
    questions_file: Path,
    scenario: str,
    users: Sequence[int],
    duration_s: int,
    candidate: ServerConfig,
    baseline: ServerConfig | None,
    period_s: float = 2.0,
    client: str = "fast",
    retry_after: str = "ignore",
) -> dict[str, Any]:
    rag = Ragline(settings)
    try:
        t0 = time.perf_counter()
        outcomes, _report = rag.ingest([docs])
        ingest_s = time.perf_counter() - t0
        chunks = sum(o.chunks for o in outcomes)
    finally:
        rag.close()
    with tempfile.TemporaryDirectory(prefix="ragline-load-") as tmp:
        out = Path(tmp)
        qfile = out / "questions.txt"
        qfile.write_text("\n".join(load_questions(questions_file)) + "\n", encoding="utf-8")
        runs: dict[str, dict[str, Any]] = {}
        for config in [c for c in (baseline, candidate) if c is not None]:
            runs[config.name] = {
                "workers": config.workers,
                "max_in_flight": config.max_in_flight,
                "env": dict(config.env),
            }
            with running_server(config, settings_env(settings), out / f"{config.name}.log") as base:
                for u in users:
                    print(
                        f"load: {config.name} {scenario} {u} clients for {duration_s} s",
                        file=sys.stderr,
                        flush=True,
                    )
                    runs[config.name][str(u)] = run_locust(
                        base, u, duration_s, scenario, qfile, out, period_s, client, retry_after
                    )
    ratios: dict[str, dict[str, float | None]] = {}
    if baseline is not None:
        for u in users:
            b, c = runs[baseline.name][str(u)], runs[candidate.name][str(u)]
            ratios[str(u)] = {
                "served_req_per_s": (
                    round(c["served_req_per_s"] / b["served_req_per_s"], 2)
                    if b["served_req_per_s"]
                    else None
                ),
                "p95_ms": (
                    round(c["p95_ms"] / b["p95_ms"], 2) if b["p95_ms"] and c["p95_ms"] else None
                ),
            }
    return {
        "load": {
            "scenario": scenario,
            "duration_s": duration_s,
            "period_s": period_s if scenario == "open" else None,
            "client": client,
            "retry_after": retry_after,
            "documents": len([o for o in outcomes if o.status in ("indexed", "unchanged")]),
            "chunks": chunks,
            "ingest_s": round(ingest_s, 1),
            "cores": cores(),
            "runs": runs,
            "ratio_candidate_vs_baseline": ratios,
        }
    }
