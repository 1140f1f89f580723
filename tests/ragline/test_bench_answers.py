"""`ragline bench squad` and `bench docs` report how answers' confidence lines up with
being right (issue 8: a calibrated confidence)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.settings import Settings
from ragline.app import Ragline
from ragline.bench.common import calibration_of
from ragline.bench.squad import run_squad


def test_calibration_scores_brier_auc_and_means() -> None:
    rows = [(0.9, True), (0.8, True), (0.6, False), (0.8, False)]
    got = calibration_of(rows)
    # Right above wrong: (0.9 > 0.6, 0.9 > 0.8, 0.8 > 0.6, 0.8 = 0.8 counts half) / 4.
    assert got["auc"] == pytest.approx(3.5 / 4)
    assert got["brier"] == pytest.approx((0.01 + 0.04 + 0.36 + 0.64) / 4, abs=1e-4)
    assert got["mean_when_right"] == pytest.approx(0.85)
    assert got["mean_when_wrong"] == pytest.approx(0.7)
    assert calibration_of([(0.7, True)])["auc"] is None  # no wrong answer to order against
    assert calibration_of([]) == {}


def test_the_covered_answers_confidence_leaves_refusals_out() -> None:
    """Covered answers only: a refusal's confidence says how sure "not covered" is, and is
    not scored as an answer's; a covered answer with its answer taken away is wrong."""
    from ragline.bench.common import covered_calibration

    answered = [(0.9, True, True), (0.3, True, False), (0.95, False, False)]
    removed = [(0.2, False), (0.99, True)]
    out = covered_calibration(answered, removed)
    assert out["n"] == 3  # two covered answers and the removed one answered
    assert out["auc"] == 1.0  # the right answer above both wrong ones
    assert out["mean_when_wrong"] == 0.25


def test_squad_bench_reports_the_confidence_of_its_answers(tmp_path: Path) -> None:
    paragraphs = [
        (
            "p1",
            "The Loire is the longest river in France, 1,006 km long.",
            "How long is the Loire?",
            "1,006 km",
        ),
        (
            "p2",
            "Mount Kosciuszko, 2,228 m high, is the highest mountain of Australia.",
            "How high is Mount Kosciuszko?",
            "2,228 m",
        ),
        (
            "p3",
            "The okapi lives in the rainforests of the Congo.",
            "Where does the okapi live?",
            "Congo",
        ),
    ]
    data = {
        "data": [
            {
                "title": key,
                "paragraphs": [
                    {
                        "context": text,
                        "qas": [
                            {
                                "id": f"{key}-q",
                                "question": q,
                                "answers": [{"text": a, "answer_start": text.find(a)}],
                            }
                        ],
                    }
                ],
            }
            for key, text, q, a in paragraphs
        ]
    }
    # CMRC 2018 trial holds two blank questions: the service refuses them before any
    # search; the bench counts them as misses and names them instead of stopping.
    blank = {"id": "p3-blank", "question": " ", "answers": [{"text": "Congo", "answer_start": 0}]}
    data["data"][2]["paragraphs"][0]["qas"].append(blank)
    file = tmp_path / "tiny.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        out = run_squad(rag, file, [], None, tmp_path / "work")
    finally:
        rag.close()
    conf = out["confidence"]
    assert conf["n"] == 3
    assert 0.0 <= conf["brier"] <= 1.0
    # Each answer is in its one paragraph; the blank question is a miss.
    assert out["pipeline"]["answer_contains"] == 0.75
    assert out["pipeline"]["recall@1"] == 0.75
    assert out["pipeline"]["invalid_questions"] == ["p3-blank"]
    assert conf["mean_when_right"] is not None and conf["mean_when_wrong"] is None
    # Asked again with its paragraph hidden, each question has nothing left to answer from.
    removed = out["removed_answer"]
    assert removed["questions"] == 3
    assert removed["refused"] == 1.0
    assert removed["confidence_with_answerable"]["n"] == 6
    # Over covered answers alone (what an agent acting on "covered" meets): the three
    # answered, and none of the removed-answer questions, which were all refused.
    covered = out["confidence_covered"]
    assert covered["n"] == 3 and covered["mean_when_right"] is not None


def test_the_answer_hider_hides_every_document_that_holds_a_gold_answer() -> None:
    from ragline.bench.common import AnswerHider

    hider = AnswerHider(
        {
            "d1": "The Loire is 1,006 km long.",
            "d2": "Its length, 1,006  KM, makes it France's longest river.",  # spaces, case
            "d3": "The Seine flows through Paris.",
        }
    )
    assert hider.without(["1,006 km"], "d1") == frozenset({"d3"})
    # No answer text: only the question's own document is hidden.
    assert hider.without([""], "d1") == frozenset({"d2", "d3"})
    assert hider.without(["Paris"]) == frozenset({"d1", "d2"})


def test_docs_bench_asks_again_with_the_answer_taken_away(tmp_path: Path) -> None:
    from ragline.bench.docs import run_docs

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "loire.txt").write_text(
        "The Loire is the longest river in France, 1,006 km long.", encoding="utf-8"
    )
    (docs / "okapi.txt").write_text(
        "The okapi lives in the rainforests of the Congo.", encoding="utf-8"
    )
    (docs / "seine.txt").write_text("The Seine flows through Paris.", encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "a",
            "file": "loire.txt",
            "page": None,
            "question": "How long is the Loire?",
            "answer": "1,006 km",
            "kind": "numeric",
        },
        {
            "id": "b",
            "file": "okapi.txt",
            "page": None,
            "question": "Where does the okapi live?",
            "answer": "Congo",
            "kind": "fact",
        },
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        out = run_docs(rag, docs, [questions])
        quiet = run_docs(rag, docs, [questions], negatives=False)
    finally:
        rag.close()
    assert out["pipeline"]["answer_contains"] == 1.0
    removed = out["removed_answer"]
    assert removed["questions"] == 2 and removed["refused"] == 1.0
    assert removed["sets"] == {"q.jsonl": 1.0}
    assert out["confidence_covered"]["n"] == 2
    assert "removed_answer" not in quiet
