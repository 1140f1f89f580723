"""Freshness: seconds from upload to searchable, through the real deployment shape.

Starts `ragline serve` and one `ragline worker` as subprocesses against a Redis broker,
uploads every supported file of a folder over HTTP, and polls each job until it is
searchable (or failed). A warm-up upload first makes sure the worker has loaded its
models, so the numbers measure ingestion, not process start.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from core.settings import Settings
from ragline.bench.common import percentile
from ragline.bench.processes import free_port, stop_group

_KEY = "freshness-bench-key"
_HEADERS = {"Authorization": f"Bearer {_KEY}"}
_POLL_S = 0.02


@dataclass
class _Service:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        stop_group(self.proc, grace_s=20)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""


def _start(name: str, args: list[str], env: dict[str, str], workdir: Path) -> _Service:
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragline.worker.main", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: stopping it stops its pool too
        )
    return _Service(name, proc, log)


def _env(data_dir: Path, redis_url: str, port: int, max_upload_mb: float) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        RAGLINE_DATA_DIR=str(data_dir),
        RAGLINE_WORKER__BROKER_URL=redis_url,
        RAGLINE_WORKER__RESULT_BACKEND=redis_url,
        RAGLINE_API__PORT=str(port),
        RAGLINE_API__HOST="127.0.0.1",
        RAGLINE_API__MAX_UPLOAD_MB=str(max_upload_mb),
        RAGLINE_API__KEYS=json.dumps([{"key": _KEY, "user": "bench", "can_write": True}]),
    )
    return env


async def _wait_ready(
    client: httpx.AsyncClient, services: list[_Service], timeout_s: float
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for s in services:
            if s.proc.poll() is not None:
                raise RuntimeError(f"{s.name} exited ({s.proc.returncode}):\n{s.tail()}")
        try:
            if (await client.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError(f"API not ready in {timeout_s}s:\n{services[0].tail()}")


async def _upload_and_wait(
    client: httpx.AsyncClient, path: Path, key: str, timeout_s: float
) -> dict[str, Any]:
    t0 = time.perf_counter()
    with path.open("rb") as fh:
        r = await client.post(
            "/v1/documents", headers=_HEADERS, files={"file": (path.name, fh)}, data={"key": key}
        )
    if r.status_code != 202:
        return {"file": path.name, "state": "rejected", "reason": r.text[:300], "seconds": None}
    up = r.json()
    job = up
    while time.perf_counter() - t0 < timeout_s:
        job = (await client.get(f"/v1/jobs/{up['job_id']}", headers=_HEADERS)).json()
        if job.get("done"):
            break
        await asyncio.sleep(_POLL_S)
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {
        "file": path.name,
        "format": path.suffix.lower().lstrip("."),
        "bytes": path.stat().st_size,
        "state": job["state"] if job.get("done") else "timeout",
        "reason": job.get("reason", ""),
        "seconds": round(seconds, 3),
        "attempts": job.get("attempts"),
    }
    if out["state"] == "searchable":
        meta = (await client.get(f"/v1/documents/{up['doc_id']}/meta", headers=_HEADERS)).json()
        out["pages"] = meta.get("pages")
    return out


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r["seconds"] for r in rows if r["state"] == "searchable"]
    pdf10 = [
        r["seconds"]
        for r in rows
        if r["state"] == "searchable" and r["format"] == "pdf" and (r.get("pages") or 0) <= 10
    ]
    by_format: dict[str, list[float]] = {}
    for r in rows:
        if r["state"] == "searchable":
            by_format.setdefault(r["format"], []).append(r["seconds"])
    return {
        "uploaded": sum(r["state"] != "rejected" for r in rows),
        "searchable": len(ok),
        "failed": sum(r["state"] in ("failed", "timeout", "rejected") for r in rows),
        "p50_s": round(percentile(ok, 50), 3),
        "p95_s": round(percentile(ok, 95), 3),
        "max_s": round(max(ok), 3) if ok else 0.0,
        "pdf_up_to_10_pages": {"n": len(pdf10), "p95_s": round(percentile(pdf10, 95), 3)},
        "by_format": {
            f: {
                "n": len(v),
                "p50_s": round(percentile(v, 50), 3),
                "p95_s": round(percentile(v, 95), 3),
            }
            for f, v in sorted(by_format.items())
        },
    }


async def _run(
    base_url: str,
    services: list[_Service],
    files: list[Path],
    concurrency: int,
    timeout_s: float,
    workdir: Path,
) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        await _wait_ready(client, services, 120)
        warm = workdir / "warmup.md"
        warm.write_text("# Warm-up\n\nThis document loads the worker's models.\n", "utf-8")
        warmup = await _upload_and_wait(client, warm, "bench-warmup", 180)
        if warmup["state"] != "searchable":
            raise RuntimeError(f"warm-up upload did not become searchable: {warmup}")
        gate = asyncio.Semaphore(concurrency)

        async def one(path: Path) -> dict[str, Any]:
            async with gate:
                return await _upload_and_wait(client, path, f"bench/{path.name}", timeout_s)

        t0 = time.perf_counter()
        rows = await asyncio.gather(*(one(p) for p in files))
        wall = time.perf_counter() - t0
    return {"warmup_s": warmup["seconds"], "wall_s": round(wall, 3), "files": rows}


def run_freshness(
    docs_dir: Path,
    redis_url: str,
    concurrency: int = 1,
    timeout_s: float = 600.0,
    workdir: Path | None = None,
) -> dict[str, Any]:
    exts = {e.lower() for e in Settings().ingest.extensions}
    candidates = sorted(
        p for p in docs_dir.rglob("*") if p.is_file() and not p.name.startswith(".")
    )
    files = [p for p in candidates if p.suffix.lower() in exts]
    skipped = [p.name for p in candidates if p.suffix.lower() not in exts]
    with ExitStack() as stack:
        root = workdir or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="ragline-fresh-"))
        )
        port = free_port()
        queue = f"ragline-bench-{uuid.uuid4().hex[:8]}"
        biggest_mb = max((p.stat().st_size for p in files), default=0) / 2**20
        env = _env(root / "data", redis_url, port, max(100.0, biggest_mb + 1))
        services = [
            _start("api", ["serve", "--queue", queue, "--log-level", "warning"], env, root),
            _start("worker", ["worker", "--queue", queue, "--concurrency", "1"], env, root),
        ]
        for s in services:
            stack.callback(s.stop)
        result = asyncio.run(
            _run(f"http://127.0.0.1:{port}", services, files, concurrency, timeout_s, root)
        )
    rows = result.pop("files")
    return {
        "freshness": {
            **_summary(rows),
            "concurrency": concurrency,
            "workers": 1,
            "broker": redis_url,
            **result,
            "skipped": skipped,
            "files": rows,
        }
    }
