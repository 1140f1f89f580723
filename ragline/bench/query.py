"""`ragline bench query`: where one query's CPU time goes, and how much of it is the work
*around* the stores (issue 13: at most 3 ms once model inference and store I/O are taken
out). Each side runs in its own process (`query_runner.py`, see there for what is
measured); with `--baseline-ref` the same runner also runs an older tree of this
repository (`git archive`, nothing in the repository changes) on the same index and
questions, in the same run, and the ratios are printed."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

from monitoring.latency_window import quantile

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("query_runner.py")


@dataclass(frozen=True)
class QuestionSet:
    name: str
    questions: list[str]


def load_questions(path: Path, limit: int | None) -> QuestionSet:
    """JSON lines with `question`, or SQuAD-format JSON (CMRC 2018 is)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        found = [
            qa["question"]
            for article in data["data"]
            for para in article["paragraphs"]
            for qa in para.get("qas", [])
        ]
    else:
        found = [json.loads(line)["question"] for line in text.splitlines() if line.strip()]
    found = [q for q in found if q.strip()]  # a blank question is refused, not timed
    return QuestionSet(path.stem, found[:limit] if limit else found)


def tree_at(ref: str, into: Path) -> Path:
    """The repository's files at `ref`, unpacked under `into` (read-only use of git)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


class Side:
    """One runner process with `tree` first on the import path."""

    def __init__(
        self, name: str, tree: Path, job: dict[str, Any], env: dict[str, str] | None = None
    ) -> None:
        self.name = name
        self.tree = tree
        self.rows: list[dict[str, Any]] = []
        env = {**os.environ, **(env or {}), "PYTHONPATH": str(tree)}
        self._proc = subprocess.Popen(
            [sys.executable, "-c", RUNNER.read_text(encoding="utf-8")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tree,
            text=True,
        )
        self._send(job)

    def _send(self, payload: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(payload) + "\n")
        self._proc.stdin.flush()

    def _read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            err = self._proc.stderr.read() if self._proc.stderr else ""
            raise RuntimeError(f"query runner ({self.name}, {self.tree}) failed: {err[-3000:]}")
        row: dict[str, Any] = json.loads(line)
        return row

    def ready(self) -> None:
        self._read()

    def ask(self, set_name: str, question: str) -> None:
        self._send({"question": question})
        self.rows.append({"set": set_name, **self._read()})

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def stat(key: str) -> dict[str, float]:
        values = [r[key] for r in rows]
        return {
            "p50": round(statistics.median(values), 3),
            "p95": round(quantile(values, 0.95), 3),  # median above: values are never empty
            "mean": round(statistics.fmean(values), 3),
        }

    kinds = sorted({k for r in rows for k in r["stores"]})
    stages = sorted({k for r in rows for k in r["stages"]})
    return {
        "questions": len(rows),
        "cpu_ms": stat("cpu_ms"),
        "stores_ms": stat("stores_ms"),
        "around_ms": stat("around_ms"),
        "wall_ms": stat("wall_ms"),
        "stores_cpu_ms_mean": {
            k: round(statistics.fmean(r["stores"].get(k, 0.0) for r in rows), 3) for k in kinds
        },
        "stages_wall_ms_p50": {
            k: round(statistics.median(r["stages"].get(k, 0.0) for r in rows), 3) for k in stages
        },
    }


def side_result(rows: list[dict[str, Any]]) -> dict[str, Any]:
    sets = sorted({r["set"] for r in rows})
    return {
        "summary": summarise(rows),
        "by_set": {n: summarise([r for r in rows if r["set"] == n]) for n in sets},
    }


def _ratio(before: float, after: float) -> float | None:
    return round(before / after, 2) if after > 0 else None


def compare(baseline: dict[str, Any], candidate: dict[str, Any]) -> dict[str, Any]:
    def ratios(b: dict[str, Any], c: dict[str, Any]) -> dict[str, Any]:
        return {
            key: {
                "baseline_p50": b[key]["p50"],
                "candidate_p50": c[key]["p50"],
                "ratio_p50": _ratio(b[key]["p50"], c[key]["p50"]),
            }
            for key in ("around_ms", "cpu_ms", "stores_ms", "wall_ms")
        }

    out = {"all": ratios(baseline["summary"], candidate["summary"])}
    for name, summary in candidate["by_set"].items():
        if name in baseline["by_set"]:
            out[name] = ratios(baseline["by_set"][name], summary)
    return out


def run_query_bench(
    data_dir: Path,
    sets: list[QuestionSet],
    mode: str,
    warmup: int,
    baseline_ref: str | None,
    llm_url: str = "",
) -> dict[str, Any]:
    """`llm_url`: answer through this OpenAI-compatible server (both sides)."""
    questions = [[s.name, q] for s in sets for q in s.questions[warmup:]]
    warm = [q for s in sets for q in s.questions[:warmup]]
    job = {"data_dir": str(data_dir), "mode": mode, "warmup": warm}
    result: dict[str, Any] = {
        "mode": mode,
        "measure": "process CPU time per question (time.process_time), one question at a "
        "time; stores_ms = CPU inside store calls and model inference (thread CPU of the "
        "calling thread); around_ms = cpu_ms - stores_ms",
        "questions": {s.name: max(0, len(s.questions) - warmup) for s in sets},
    }
    env = {"RAGLINE_LLM__BASE_URL": llm_url, "RAGLINE_LLM__MODEL": "quoting"} if llm_url else {}
    if llm_url:
        result["llm"] = "a stand-in quoting the first source (ragline/bench/quoting_llm.py)"
    with tempfile.TemporaryDirectory(prefix="ragline-baseline-") as tmp:
        sides = [Side("candidate", ROOT, job, env)]
        if baseline_ref:
            sides.insert(0, Side("baseline", tree_at(baseline_ref, Path(tmp)), job, env))
            result["baseline_ref"] = baseline_ref
        try:
            for side in sides:
                side.ready()
            # Question by question, alternating: both sides see the same machine load.
            for i, (set_name, question) in enumerate(questions):
                for side in sides if i % 2 == 0 else reversed(sides):
                    side.ask(set_name, question)
        finally:
            for side in sides:
                side.close()
    for side in sides:
        result[side.name] = side_result(side.rows)
    if baseline_ref:
        result["ratio"] = compare(result["baseline"], result["candidate"])
    result["target_around_ms_p50"] = 3.0
    return result


def print_table(result: dict[str, Any]) -> None:
    """The per-stage breakdown and the around-the-stores totals, for the terminal."""
    for side in ("baseline", "candidate"):
        if side not in result:
            continue
        s = result[side]["summary"]
        code = result.get("baseline_ref", "") if side == "baseline" else "this tree"
        print(f"== {side} ({code})", file=sys.stderr)
        print(
            f"  around the stores p50 {s['around_ms']['p50']:.2f} ms CPU "
            f"(p95 {s['around_ms']['p95']:.2f}); whole query {s['cpu_ms']['p50']:.2f} ms CPU; "
            f"stores+models {s['stores_ms']['p50']:.2f} ms CPU; wall {s['wall_ms']['p50']:.1f} ms",
            file=sys.stderr,
        )
        stores = ", ".join(f"{k} {v:.2f}" for k, v in s["stores_cpu_ms_mean"].items())
        print(f"  stores/models CPU ms (mean): {stores}", file=sys.stderr)
        stages = ", ".join(f"{k} {v:.2f}" for k, v in s["stages_wall_ms_p50"].items())
        print(f"  stages wall ms (p50): {stages}", file=sys.stderr)
        for name, sub in result[side]["by_set"].items():
            print(
                f"  {name}: around p50 {sub['around_ms']['p50']:.2f} / p95 "
                f"{sub['around_ms']['p95']:.2f} ms, cpu p50 {sub['cpu_ms']['p50']:.2f} ms",
                file=sys.stderr,
            )
    for name, r in result.get("ratio", {}).items():
        a = r["around_ms"]
        print(
            f"ratio {name}: around the stores {a['baseline_p50']:.2f} -> {a['candidate_p50']:.2f}"
            f" ms ({a['ratio_p50']}x less); whole query CPU {r['cpu_ms']['ratio_p50']}x",
            file=sys.stderr,
        )
