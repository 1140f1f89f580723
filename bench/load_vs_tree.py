"""Load against an older checkout in the same run: its `ragline serve` (one process, as it
was) and this tree's `serve --workers N`, alternating, through `ragline bench load`'s
Locust harness and observer. Issue 13 asks for ratios against the server as it was when
the issue was filed, measured in the same run; this measures exactly that.

    git worktree add /tmp/issue13 17b0dd9^
    .venv/bin/python bench/load_vs_tree.py --tree /tmp/issue13 --docs ../shared/data/docs \
        --questions ../shared/data/cmrc2018/trial.json --scenario ask --users 50 \
        --duration 20 --rounds 2 --json bench/results/load_vs_issue13_ask.json

Each tree ingests the documents into its own data directory with its own code first. The
older tree runs on this virtual environment (PYTHONPATH puts its sources first), so it
must import with today's dependencies. `--tree-workers N` serves the older tree with
`--workers N` too (a tree from after `--workers` existed: this session against the last).

Each round also records the server's CPU per request (its processes, from /proc): on a
machine whose speed drifts between rounds, what a request costs is steadier than what
the machine served.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragline.bench.load import (
    _KEY,
    load_questions,
    run_locust,
    wait_ready,
    warm_up,
)
from ragline.bench.processes import free_port

_CLI = [sys.executable, "-c", "from ragline.cli import app; app()"]


def _env(tree: Path | None) -> dict[str, str]:
    env = {
        **os.environ,
        "RAGLINE_API__KEYS": json.dumps([{"key": _KEY, "user": "load", "can_write": True}]),
        "RAGLINE_MONITORING__INTERVAL_S": "0",
        "RAGLINE_API__CACHE_TTL_S": "0",
    }
    env.pop("PYTHONPATH", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def _ingest(tree: Path | None, docs: Path, data: Path) -> None:
    done = subprocess.run(
        [*_CLI, "ingest", str(docs.resolve()), "--data-dir", str(data)],
        env=_env(tree),
        cwd=tempfile.gettempdir(),  # not this checkout: its sources would come first
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"ingest with {tree or 'this tree'} failed: {done.stderr[-2000:]}")


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a process and all its descendants, from /proc."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        p = int(stat.parent.name)
        parents[p] = int(fields[1])
        ticks[p] = int(fields[11]) + int(fields[12])
    family, todo = set(), [pid]
    while todo:
        p = todo.pop()
        family.add(p)
        todo += [c for c, parent in parents.items() if parent == p and c not in family]
    return sum(ticks.get(p, 0) for p in family) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _server(tree: Path | None, data: Path, workers: int, log: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    cmd = [*_CLI, "serve", "--port", str(port), "--log-level", "warning"]
    cmd += ["--cache-ttl", "0", "--data-dir", str(data)]
    env = _env(tree)
    if workers > 0:
        cmd += ["--workers", str(workers)]
        env["RAGLINE_API__MAX_IN_FLIGHT"] = "32"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=tempfile.gettempdir(),
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, base, log)
        warm_up(base, max(1, workers))
        yield base, proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, required=True, help="the older checkout")
    ap.add_argument("--docs", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--scenario", default="ask", choices=("search", "ask", "mixed", "open"))
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="this tree's serve processes")
    ap.add_argument(
        "--tree-workers",
        type=int,
        default=0,
        help="the older tree's serve processes (0: its `serve` as it was, one process)",
    )
    ap.add_argument(
        "--retry-after",
        default="honour",
        choices=("honour", "ignore"),
        help="ignore: a refused agent calls again at once (the worst case)",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragline-vs-tree-"))
    qfile = work / "questions.txt"
    qfile.write_text("\n".join(load_questions(args.questions)) + "\n", encoding="utf-8")
    trees = {"then": args.tree.resolve(), "now": None}
    for name, tree in trees.items():
        print(f"{name}: ingesting {args.docs}", file=sys.stderr, flush=True)
        _ingest(tree, args.docs, work / name)
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in trees}
    for r in range(args.rounds):
        for name, tree in trees.items():
            workers = args.workers if tree is None else args.tree_workers
            with _server(tree, work / name, workers, work / f"{name}.log") as (base, pid):
                cpu0 = _tree_cpu_s(pid)
                point = run_locust(
                    base, args.users, args.duration, args.scenario, qfile, work, 2.0,
                    "fast", args.retry_after,
                )  # fmt: skip
                # The server's CPU per answered request (429s included): what each costs,
                # whatever share of the cores the machine gave it this round.
                calls = int(point["served"]) + int(point["refused_429"])
                point["server_cpu_ms_per_request"] = round(
                    (_tree_cpu_s(pid) - cpu0) * 1000 / max(1, calls), 2
                )
            runs[name].append(point)
            print(
                f"round {r + 1} {name}: {point['served_req_per_s']} req/s, "
                f"p95 {point['p95_ms']} ms, refused {point['refused_429']}, "
                f"errors {point['errors']}, "
                f"server CPU {point['server_cpu_ms_per_request']} ms a request",
                flush=True,
            )
    then = [float(p["served_req_per_s"]) for p in runs["then"]]  # type: ignore[arg-type]
    now = [float(p["served_req_per_s"]) for p in runs["now"]]  # type: ignore[arg-type]
    result = {
        # The older tree by its commit (a path here would name this machine's folders).
        "tree_commit": subprocess.run(
            ["git", "-C", str(args.tree), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "scenario": args.scenario,
        "users": args.users,
        "duration_s": args.duration,
        "retry_after": args.retry_after,
        "runs": runs,
        "ratio_per_round": [round(b / a, 2) if a else None for a, b in zip(then, now, strict=True)],
        "ratio_of_means": round(statistics.mean(now) / statistics.mean(then), 2),
    }
    print(
        f"now / then, per round: {result['ratio_per_round']}; "
        f"of the means: {result['ratio_of_means']}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
