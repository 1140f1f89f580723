"""A calibrated-by-construction confidence for every answer, 0..1.

Covered answers: how much of the question the best quote matches (its term/bigram
relevance), how well retrieval covered the question, and whether the quote meets the
question's key constraints; a partial answer is capped. Not-covered answers: how sure the
refusal is — a constraint that nothing quoted meets (a year, a name, a quantity) is strong
evidence; a weak retrieval match is weaker evidence. `ragline bench docs` reports how these
numbers line up with being right (mean confidence of right and wrong answers, Brier score).
"""

from __future__ import annotations

from generation.answerable import Verdict

_FLOOR, _CEIL = 0.05, 0.97


def _clamp(x: float) -> float:
    return round(min(_CEIL, max(_FLOOR, x)), 3)


def answer_confidence(
    verdict: Verdict, relevance: float, coverage: float, term_share: float = 1.0
) -> float:
    """Confidence that a covered answer is right. `relevance`: the best quote's match with
    the question (0..~1.5); `coverage`: the retrieval coverage signal of the best hit;
    `term_share`: the share of the question's words found in the best quote's passage (a
    word found nowhere there is often the thing the documents do not have)."""
    r = min(1.0, max(0.0, relevance))
    c = min(1.0, max(0.0, coverage))
    t = min(1.0, max(0.0, term_share))
    score = 0.1 + 0.35 * r + 0.15 * c + 0.35 * t
    if verdict.constraints:
        score += 0.1 * verdict.met / verdict.constraints
    if verdict.partial:
        score = min(score, 0.5)
    return _clamp(score)


def refusal_confidence(verdict: Verdict | None, coverage: float) -> float:
    """Confidence that "not covered" is right. `verdict` is None when retrieval alone
    decided (nothing matched well enough to quote)."""
    if verdict is None:
        return _clamp(0.9 - 0.5 * min(1.0, max(0.0, coverage)))
    if verdict.constraints and verdict.met < verdict.constraints:
        return _clamp(0.7 + 0.2 * (1 - verdict.met / verdict.constraints))
    return _clamp(0.6)
