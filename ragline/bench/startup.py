"""`ragline bench startup`: how long `ragline ask` and `ragline search` take from a cold
shell (a new process each time), and when in that time a model is first called (issue 13:
at most 1 s before it). With `--baseline-ref` an older tree of this repository runs the
same commands, alternating run by run, in the same run of the bench."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragline.bench.query import ROOT, tree_at

RUNNER = Path(__file__).with_name("startup_runner.py")
_MARK = "RAGLINE_FIRST_MODEL_CALL "
TARGET_FIRST_MODEL_CALL_S = 1.0


def _run_once(tree: Path, argv: list[str]) -> dict[str, float]:
    """One cold `ragline ...` process: its wall time and the time to its first model call
    (from just before the process is started)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", RUNNER.read_text(encoding="utf-8"), *argv],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"ragline {' '.join(argv)} ({tree}) failed: {done.stderr[-2000:]}")
    marks = [line for line in done.stderr.splitlines() if line.startswith(_MARK)]
    first = float(marks[0][len(_MARK) :]) - started if marks else float("nan")
    return {"wall_s": wall, "first_model_call_s": first}


def _compiled(tree: Path) -> Path:
    """The tree with its bytecode compiled, as `make setup` and a wheel install leave it:
    both sides then start alike, whatever PYTHONDONTWRITEBYTECODE says."""
    packages = [p.name for p in sorted(tree.iterdir()) if (p / "__init__.py").is_file()]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *packages],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    return tree


def _summary(rows: list[dict[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in ("wall_s", "first_model_call_s"):
        values = sorted(r[key] for r in rows)
        out[f"{key}_median"] = statistics.median(values)
        out[f"{key}_min"] = values[0]
        out[f"{key}_max"] = values[-1]
    return out


def run_startup_bench(
    data_dir: Path, questions: list[str], runs: int, baseline_ref: str | None
) -> dict[str, Any]:
    commands = [
        [command, "--data-dir", str(data_dir), question]
        for question in questions
        for command in ("ask", "search")
    ]
    result: dict[str, Any] = {
        "measure": "wall time of a new `ragline` process (interpreter start to exit), and "
        "the time from its start to the first call of a model; median of --runs, sides "
        "alternating run by run",
        "runs": runs,
        "target_first_model_call_s": TARGET_FIRST_MODEL_CALL_S,
        "commands": {},
    }
    with tempfile.TemporaryDirectory(prefix="ragline-baseline-") as tmp:
        sides = {"candidate": _compiled(ROOT)}
        if baseline_ref:
            sides = {"baseline": _compiled(tree_at(baseline_ref, Path(tmp))), **sides}
            result["baseline_ref"] = baseline_ref
        for argv in commands:
            name = f"{argv[0]} {argv[-1]}"
            rows: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
            _run_once(ROOT, argv)  # the caches a first start writes, and the page cache
            for i in range(runs):
                order = list(sides) if i % 2 == 0 else list(reversed(sides))
                for side in order:
                    rows[side].append(_run_once(sides[side], argv))
            entry: dict[str, Any] = {side: _summary(r) for side, r in rows.items()}
            if baseline_ref:
                entry["ratio_wall"] = (
                    entry["baseline"]["wall_s_median"] / entry["candidate"]["wall_s_median"]
                )
            result["commands"][name] = entry
    return result


def print_table(result: dict[str, Any]) -> None:
    sides = ["baseline", "candidate"] if "baseline_ref" in result else ["candidate"]
    for name, entry in result["commands"].items():
        parts = []
        for side in sides:
            s = entry[side]
            parts.append(
                f"{side}: wall {s['wall_s_median']:.2f} s ({s['wall_s_min']:.2f}-"
                f"{s['wall_s_max']:.2f}), first model call {s['first_model_call_s_median']:.2f} s"
            )
        ratio = f"  ratio {entry['ratio_wall']:.2f}x" if "ratio_wall" in entry else ""
        print(f"ragline {name}\n  " + "\n  ".join(parts) + ratio)
    print(f"target: first model call <= {result['target_first_model_call_s']:.1f} s")
