"""A calibrated confidence for every answer, 0..1.

Covered extractive answers: the probability that the answer is right, from a logistic model
over evidence an answer has whatever the corpus or the language (no raw retrieval scores,
whose scale changes with a cross-encoder): how well retrieval covered the question, the
share of its words in the quoted passage, whether it pins something down (a year, a name, a
number) the quote meets, how far the best hit stands above the second, how rare the
question's bigrams shared with the best hit are among the candidates, whether the quote
comes from the best hit, the answer's length, how far its best sentence scores above the
next one, how well retrieval covered the question in the passage quoted, and - with the
embedder the weights were fitted with, where the answer step re-read the first quote's
sentences by meaning - how close in meaning it is to the question. A partial answer is
capped.

The weights are fitted by `bench/calibrate_confidence.py` on answerable questions and near
misses alike: the written question sets (policies, price lists, terms in fifteen languages,
60 near misses to 40 answerable questions each), the multilingual SQuAD sets and CMRC, each
SQuAD question also asked with its answer taken away. Every set weighs the same, and the
script reports each set as scored by weights fitted without it. Fitted on CMRC alone (until
session 49), the model had never seen a near miss: on the written sets it ordered right
answers above wrong ones little better than chance (mean AUC 0.65).

Below `retrieval.answer_min_confidence` an answer to a question that pins nothing down is
reported as not covered, with the reason (the answer step applies it; bench/RESULTS.md has
what it trades).
Not-covered answers: how sure the refusal is, fitted on the same questions: by what the
refusal rests on (a name, period, quantity ... the quote lacks, or retrieval matched too
little to quote) and how much retrieval matched.
`ragline bench docs` reports how these numbers line up with being right (mean confidence of
right and wrong answers, Brier score, AUC); `ragline bench squad` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

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
    quote_coverage: float = 0.0  # the retrieval coverage signal of the best hit quoted
    # The cosine similarity to the question of the first quote's best sentence re-read by
    # meaning (`Extract.meaning`); None: none was, or no embedder the weights fit.
    meaning: float | None = None

    def features(self, meaning: bool = True) -> tuple[float, ...]:
        """The model's inputs; the meaning last, when measured and `meaning` asks for it."""
        words = (
            _unit(self.coverage),
            _unit(self.term_share),
            float(self.pinned),
            _unit(self.runner_up),
            _unit(self.rare_bigrams),
            float(self.top_quoted),
            _unit(self.length),
            _unit(self.margin),
            _unit(self.quote_coverage),
        )
        return words if self.meaning is None or not meaning else (*words, _unit(self.meaning))


@dataclass(frozen=True, slots=True)
class RefusalModel:
    """The probability that "not covered" is right, by the kind of refusal (`refusal_kind`)
    and the retrieval coverage of the best hits: an offset per kind on one intercept (a
    kind not fitted has none), and the coverage weighed apart for a refusal of retrieval
    (nothing matched well enough to quote) and for the others (a quote was judged)."""

    intercept: float
    kinds: tuple[tuple[str, float], ...]
    coverage: float  # a judged quote's
    retrieval_coverage: float  # a refusal of retrieval's

    def probability(self, kind: str, coverage: float) -> float:
        offset = next((w for k, w in self.kinds if k == kind), 0.0)
        slope = self.retrieval_coverage if kind == "retrieval" else self.coverage
        z = self.intercept + offset + slope * _unit(coverage)
        return 1.0 / (1.0 + math.exp(-z))


def refusal_kind(verdict: Verdict | None) -> str:
    """What a refusal rests on: "retrieval" (nothing matched well enough to quote), what
    the answer check found the quote lacks (`Verdict.failed`: "name", "subject", "facet",
    "period", "quantity", "unit", "row", "time", "band" ...), else "other"."""
    if verdict is None:
        return "retrieval"
    return verdict.failed or "other"


@dataclass(frozen=True, slots=True)
class Calibration:
    """Fitted weights. A covered answer's: the intercept, then one per
    `AnswerEvidence.features()` entry, in order - without the meaning feature (`words`), and
    with it where `embedder` measured it (`meaning`). A refusal's: `refusal`."""

    words: tuple[float, ...]
    refusal: RefusalModel
    meaning: tuple[float, ...] | None = None
    embedder: str = ""  # the embedder model `meaning` was fitted with

    def probability(self, evidence: AnswerEvidence) -> float:
        """The model's probability that an answer on this evidence is right (not clamped)."""
        weights, meaning = self.words, False
        if self.meaning is not None and evidence.meaning is not None:
            weights, meaning = self.meaning, True
        features = evidence.features(meaning)
        z = weights[0] + sum(w * x for w, x in zip(weights[1:], features, strict=True))
        return 1.0 / (1.0 + math.exp(-z))

    def refusal_confidence(self, kind: str, coverage: float) -> float:
        """Confidence that "not covered" is right (`refusal_kind`; `coverage`: the retrieval
        coverage signal of the best hits)."""
        return _clamp(self.refusal.probability(kind, coverage))


# `bench/calibrate_confidence.py` (bench/RESULTS.md, session 49: the fit and the check of
# each set by weights fitted without it).
CALIBRATION = Calibration(
    words=(-1.31, -0.03, 0.38, 0.54, -1.87, 0.30, 0.87, -0.43, 1.52, 1.95),
    refusal=RefusalModel(
        1.76,
        (
            ("band", -0.49),
            ("facet", -0.99),
            ("kind", 0.11),
            ("name", -0.04),
            ("period", 0.22),
            ("quantity", 0.22),
            ("retrieval", 0.54),
            ("row", 0.59),
            ("subject", 0.7),
            ("time", -0.22),
            ("unit", -0.63),
        ),
        coverage=1.17,
        retrieval_coverage=-1.98,
    ),
    meaning=(-3.04, 0.71, 0.66, 0.49, -2.35, 0.40, 1.08, 0.19, 1.58, 0.47, 3.83),
    embedder="use-multilingual-v3",
)


def calibration_for(embedder: str) -> Calibration:
    """The weights for answers whose meaning is measured with `embedder`: those without
    the meaning feature unless it is the embedder they were fitted with (another model's
    cosines have another scale)."""
    if embedder == CALIBRATION.embedder:
        return CALIBRATION
    return replace(CALIBRATION, meaning=None, embedder="")


def answer_confidence(
    verdict: Verdict, evidence: AnswerEvidence, calibration: Calibration = CALIBRATION
) -> float:
    """Confidence that a covered answer is right."""
    score = calibration.probability(evidence)
    if verdict.partial:
        score = min(score, 0.5)
    return _clamp(score)


def weak_refusal_confidence(probability: float) -> float:
    """Confidence that "not covered" is right when it was said because the best quote's
    probability of being right fell below the configured floor."""
    return _clamp(1.0 - probability)
