"""A calibrated confidence for every answer, 0..1.

Covered extractive answers: the probability that the answer is right, from a logistic model
over evidence an answer has whatever the corpus or the language (no raw scores, whose scale
changes with a cross-encoder): how well retrieval covered the question, the share of its
words in the quoted passage, whether it pins something down (a year, a name, a number) the
quote meets, how far the best hit stands above the second, how rare the question's bigrams
shared with the best hit are among the candidates, whether the quote comes from the best
hit, the answer's length, and how far its best sentence scores above the next one. The
weights are fitted by `bench/calibrate_confidence.py` on the first 803 CMRC train
questions, which no reported set contains; a partial answer is capped. Below
`retrieval.answer_min_confidence` (0.5) an answer to a question that pins nothing down is
reported as not covered, with the reason (the answer step applies it; bench/RESULTS.md
has what it trades).
Not-covered answers: how sure the refusal is — a constraint that nothing quoted meets (a
year, a name, a quantity) is strong evidence; a weak retrieval match is weaker evidence.
`ragline bench docs` reports how these numbers line up with being right (mean confidence of
right and wrong answers, Brier score, AUC); `ragline bench squad` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generation.answerable import Verdict

_FLOOR, _CEIL = 0.05, 0.97


def _clamp(x: float) -> float:
    return round(min(_CEIL, max(_FLOOR, x)), 3)


def _unit(x: float) -> float:
    return min(1.0, max(0.0, x))


@dataclass(frozen=True, slots=True)
class AnswerEvidence:
    """What a covered extractive answer rests on, each in 0..1 (see the module doc)."""

    coverage: float  # the retrieval coverage signal of the best hits
    term_share: float  # the question's words found in the best quote's passage
    pinned: bool  # the question has key constraints (all met, or it would be refused)
    runner_up: float  # the second hit's relevance over the first's
    rare_bigrams: float  # the best hit's candidate-idf bigram overlap with the question
    top_quoted: bool  # the answer quotes the best hit
    length: float  # the answer's characters / 300
    margin: float = 1.0  # the best sentence's score above the next one's, as a share of it

    def features(self) -> tuple[float, ...]:
        return (
            _unit(self.coverage),
            _unit(self.term_share),
            float(self.pinned),
            _unit(self.runner_up),
            _unit(self.rare_bigrams),
            float(self.top_quoted),
            _unit(self.length),
            _unit(self.margin),
        )


# Intercept, then one weight per `AnswerEvidence.features()` entry, in order
# (`bench/calibrate_confidence.py`; bench/RESULTS.md has the fit and its held-out check).
WEIGHTS = (-1.53, 1.00, 0.65, 0.39, -1.59, 2.18, 1.31, 0.85, 1.17)


def answer_probability(evidence: AnswerEvidence) -> float:
    """The model's probability that an answer on this evidence is right (not clamped)."""
    z = WEIGHTS[0] + sum(w * x for w, x in zip(WEIGHTS[1:], evidence.features(), strict=True))
    return 1.0 / (1.0 + math.exp(-z))


def answer_confidence(verdict: Verdict, evidence: AnswerEvidence) -> float:
    """Confidence that a covered answer is right."""
    score = answer_probability(evidence)
    if verdict.partial:
        score = min(score, 0.5)
    return _clamp(score)


def weak_refusal_confidence(probability: float) -> float:
    """Confidence that "not covered" is right when it was said because the best quote's
    probability of being right fell below the configured floor."""
    return _clamp(1.0 - probability)


def refusal_confidence(verdict: Verdict | None, coverage: float) -> float:
    """Confidence that "not covered" is right. `verdict` is None when retrieval alone
    decided (nothing matched well enough to quote)."""
    if verdict is None:
        return _clamp(0.9 - 0.5 * min(1.0, max(0.0, coverage)))
    if verdict.constraints and verdict.met < verdict.constraints:
        return _clamp(0.7 + 0.2 * (1 - verdict.met / verdict.constraints))
    return _clamp(0.6)
