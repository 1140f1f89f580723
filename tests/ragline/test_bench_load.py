"""`ragline bench load`: Locust's numbers are read back correctly, and a short real run
against a real `ragline serve` produces served requests and no errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragline.bench.load import load_questions, summarise

ROOT = Path(__file__).resolve().parents[2]

_HEADER = (
    "Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,"
    "Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,"
    "50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%"
)


def test_summarise_separates_served_refused_and_failed(tmp_path: Path) -> None:
    stats = tmp_path / "s_stats.csv"
    stats.write_text(
        "\n".join(
            [
                _HEADER,
                "POST,search,900,3,40,50,5,900,100,90.0,0.3,40,45,50,55,70,120,200,300,800,900,900",
                "POST,search 429,100,0,2,2,1,9,80,10.0,0,2,2,2,2,3,4,6,8,9,9,9",
                "POST,ask,50,0,90,95,20,400,300,5.0,0,90,95,99,100,150,300,350,380,400,400,400",
                ",Aggregated,1050,3,30,40,1,900,100,105.0,0.3,30,40,45,50,60,110,190,290,800,900,900",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    s = summarise(stats)
    assert s["served"] == 950 and s["refused_429"] == 100 and s["errors"] == 3
    assert s["served_req_per_s"] == 95.0
    assert s["p95_ms"] == 120.0  # the busiest served endpoint
    assert s["refused_p95_ms"] == 4.0
    assert set(s["per_endpoint"]) == {"search", "search 429", "ask"}


def test_questions_load_from_jsonl_squad_and_text(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"question": "a?"}\n{"question": "b?"}\n')
    squad = {"data": [{"paragraphs": [{"qas": [{"question": "c?"}]}]}]}
    (tmp_path / "q.json").write_text(json.dumps(squad))
    (tmp_path / "q.txt").write_text("d?\n\ne?\n")
    assert load_questions(tmp_path / "q.jsonl") == ["a?", "b?"]
    assert load_questions(tmp_path / "q.json") == ["c?"]
    assert load_questions(tmp_path / "q.txt") == ["d?", "e?"]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("client", "retry_after", "bound", "scenario"),
    [
        ("fast", "ignore", 32, "mixed"),
        ("requests", "ignore", 32, "mixed"),
        ("fast", "honour", 1, "mixed"),
        ("fast", "honour", 32, "open"),
    ],
)
def test_a_short_load_run_serves_requests_without_errors(
    tmp_path: Path, client: str, retry_after: str, bound: int, scenario: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text(
        "# Travel\n\nEmployees book trains for trips under 500 km.\n\n"
        "# Expenses\n\nReceipts are filed within 30 days of the trip.\n",
        encoding="utf-8",
    )
    questions = tmp_path / "q.txt"
    questions.write_text("When are receipts filed?\nHow do employees travel?\n")
    out = tmp_path / "load.json"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from ragline.cli import app; app()",
            "bench",
            "load",
            "--docs",
            str(docs),
            "--questions",
            str(questions),
            "--scenario",
            scenario,
            "--users",
            "4",
            "--duration",
            "6",
            "--workers",
            "1",
            "--no-baseline",
            "--client",
            client,
            "--retry-after",
            retry_after,
            "--max-in-flight",
            str(bound),
            "--json",
            str(out),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    point = json.loads(out.read_text())["load"]["runs"]["candidate"]["4"]
    assert point["served"] > 0
    assert point["errors"] == 0, point
    # The observer called beside the agents for most of the 6 s, and was answered.
    seen = point["observer"]
    assert seen["calls"] >= 5 and seen["errors"] == 0, seen
    assert seen["served"] + seen["refused_429"] == seen["calls"]
    if scenario == "open":  # four agents, one call each every 2 s, for 6 s
        assert set(point["per_endpoint"]) == {"search"}
        assert 4 <= point["served"] <= 4 * 4, point
        return
    assert {"search", "ask"} <= set(point["per_endpoint"])
    load = json.loads(out.read_text())["load"]
    assert load["client"] == client and load["retry_after"] == retry_after
    if retry_after == "honour":
        # One request at a time for four agents: some are refused, and each refused agent
        # waits a second, so refusals stay far fewer than a client hammering would send.
        assert 0 < point["refused_429"] <= 4 * (6 + 1)
