"""Sentence splitting in core.text."""

from __future__ import annotations

from core.text import split_sentences


def test_a_full_stop_after_an_abbreviation_ends_a_sentence_only_before_a_capital() -> None:
    assert split_sentences(
        "Open between 9 a.m. and 5 p.m., Monday to Friday. Closed on Sunday."
    ) == [
        "Open between 9 a.m. and 5 p.m., Monday to Friday.",
        "Closed on Sunday.",
    ]
    assert split_sentences("Use a token, e.g. a key. Open at 5 p.m. The desk closes.") == [
        "Use a token, e.g. a key.",
        "Open at 5 p.m.",
        "The desk closes.",
    ]
