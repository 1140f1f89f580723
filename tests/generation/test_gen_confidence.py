"""The covered-answer confidence: a fitted logistic model over `AnswerEvidence`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generation.answerable import Verdict
from generation.confidence import (
    CALIBRATION,
    AnswerEvidence,
    answer_confidence,
    calibration_for,
)

STRONG = AnswerEvidence(
    coverage=1.0,
    term_share=1.0,
    pinned=True,
    runner_up=0.2,
    rare_bigrams=0.8,
    top_quoted=True,
    length=0.5,
    margin=0.6,
    quote_coverage=1.0,
    meaning=0.6,
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
    quote_coverage=0.3,
    meaning=0.2,
)


@pytest.mark.parametrize("meaning", [True, False])
def test_strong_evidence_is_confident_and_weak_evidence_is_not(meaning: bool) -> None:
    covered = Verdict(True)
    strong, weak = (
        (STRONG, WEAK) if meaning else (replace(STRONG, meaning=None), replace(WEAK, meaning=None))
    )
    assert answer_confidence(covered, strong) > 0.85
    assert answer_confidence(covered, weak) < 0.3


def test_each_kind_of_support_raises_the_confidence() -> None:
    """The fitted weights keep the direction each signal should have: more retrieval
    coverage, a quote from the best hit, rarer shared bigrams, a best sentence well ahead
    of the next, a quote closer in meaning to the question raise it; a close runner-up hit
    lowers it (the probability before it is clamped to the reported range)."""
    base = CALIBRATION.probability(WEAK)
    for change in (
        {"coverage": 0.9, "quote_coverage": 0.9},
        {"term_share": 0.9},
        {"top_quoted": True},
        {"rare_bigrams": 0.7},
        {"runner_up": 0.3},
        {"margin": 0.5},
        {"meaning": 0.6},
    ):
        assert CALIBRATION.probability(replace(WEAK, **change)) > base, change


def test_meaning_is_weighed_only_with_the_embedder_it_was_fitted_with() -> None:
    """Another embedder's cosines have another scale: its answers are scored without them,
    as answers whose meaning was not measured are."""
    assert calibration_for(CALIBRATION.embedder) == CALIBRATION
    other = calibration_for("bge-m3")
    assert other.meaning is None
    assert other.probability(STRONG) == other.probability(replace(STRONG, meaning=None))
    assert CALIBRATION.probability(STRONG) != CALIBRATION.probability(replace(STRONG, meaning=0.1))
    assert other.probability(STRONG) == CALIBRATION.probability(replace(STRONG, meaning=None))


def test_a_partial_answer_is_capped_and_values_stay_in_range() -> None:
    partial = Verdict(True, reason="the documents give 2015 but not 2016", partial=True)
    assert answer_confidence(partial, STRONG) <= 0.5
    wild = replace(STRONG, coverage=7.0, length=40.0, runner_up=-3.0, meaning=-2.0)
    assert 0.05 <= answer_confidence(Verdict(True), wild) <= 0.97
