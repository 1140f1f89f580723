"""The covered-answer confidence: a fitted logistic model over `AnswerEvidence`."""

from __future__ import annotations

from dataclasses import replace

from generation.answerable import Verdict
from generation.confidence import AnswerEvidence, answer_confidence

STRONG = AnswerEvidence(
    coverage=1.0,
    term_share=1.0,
    pinned=True,
    runner_up=0.2,
    rare_bigrams=0.8,
    top_quoted=True,
    length=0.5,
    margin=0.6,
)
WEAK = AnswerEvidence(
    coverage=0.3,
    term_share=0.4,
    pinned=False,
    runner_up=0.95,
    rare_bigrams=0.1,
    top_quoted=False,
    length=0.2,
    margin=0.05,
)


def test_strong_evidence_is_confident_and_weak_evidence_is_not() -> None:
    covered = Verdict(True)
    assert answer_confidence(covered, STRONG) > 0.9
    assert answer_confidence(covered, WEAK) < 0.5


def test_each_kind_of_support_raises_the_confidence() -> None:
    """The fitted weights keep the direction each signal should have: more coverage, a
    quote from the best hit, rarer shared bigrams, a best sentence well ahead of the next
    raise it; a close runner-up hit lowers it."""
    covered = Verdict(True)
    base = answer_confidence(covered, WEAK)
    for change in (
        {"coverage": 0.9},
        {"term_share": 0.9},
        {"top_quoted": True},
        {"rare_bigrams": 0.7},
        {"runner_up": 0.3},
        {"margin": 0.5},
    ):
        assert answer_confidence(covered, replace(WEAK, **change)) > base, change


def test_a_partial_answer_is_capped_and_values_stay_in_range() -> None:
    partial = Verdict(True, reason="the documents give 2015 but not 2016", partial=True)
    assert answer_confidence(partial, STRONG) <= 0.5
    wild = replace(STRONG, coverage=7.0, length=40.0, runner_up=-3.0)
    assert 0.05 <= answer_confidence(Verdict(True), wild) <= 0.97
