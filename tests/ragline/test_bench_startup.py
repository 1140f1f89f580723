"""`ragline bench startup`: cold `ragline ask` / `search` processes, timed to their first
model call, this tree against a git ref in one run."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

from core.settings import Settings
from ragline.app import Ragline
from ragline.bench.startup import run_startup_bench

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None, reason="git archive makes the baseline tree")
def test_both_sides_report_wall_time_and_the_first_model_call(tmp_path: Path) -> None:
    if subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True
    ).returncode:
        pytest.skip("not a git checkout")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text(
        "# Opening hours\n\nThe archive opens at 9 a.m. and closes at 5 p.m. on weekdays.\n"
        "\n档案馆周一至周五上午九点开放，下午五点关闭。\n",
        encoding="utf-8",
    )
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        rag.ingest([docs])
    finally:
        rag.close()
    result = run_startup_bench(tmp_path / "data", ["档案馆几点开放？"], 1, "HEAD")
    assert result["baseline_ref"] == "HEAD"
    for command in ("ask 档案馆几点开放？", "search 档案馆几点开放？"):
        entry = result["commands"][command]
        for side in ("baseline", "candidate"):
            s = entry[side]
            assert 0 < s["first_model_call_s_median"] < s["wall_s_median"], (command, side)
        assert math.isfinite(entry["ratio_wall"]) and entry["ratio_wall"] > 0


def test_a_side_starts_with_its_bytecode_compiled(tmp_path: Path) -> None:
    """As `make setup` leaves this tree: an exported baseline tree compiled too, or it would
    pay for compiling every module at each start (PYTHONDONTWRITEBYTECODE) and lose."""
    from ragline.bench.startup import _compiled

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    (tmp_path / "loose.py").write_text("Y = 2\n")  # not a package: left alone
    assert _compiled(tmp_path) == tmp_path
    assert list((tmp_path / "pkg" / "__pycache__").glob("mod.*.pyc"))
    assert not (tmp_path / "__pycache__").exists()
