"""Alternatives regrouped by first character find the same matches (core.alternation)."""

from __future__ import annotations

import re

import pytest

from core.alternation import by_first_char


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def test_branches_are_grouped_by_their_first_character_in_order() -> None:
    grouped = by_first_char(r"to be |tb[cd]|[Ww]ill be |(?:displayed|posted) (?:at|on)\b")
    assert grouped == (
        r"t(?:o be |b[cd])|W(?:ill be )|w(?:ill be )|d(?:isplayed (?:at|on)\b)"
        r"|p(?:osted (?:at|on)\b)"
    )


def test_the_branch_tried_first_still_wins_where_two_match() -> None:
    """ "ab" before "abc": at "abc" the first wins, as written, and so in the regrouped
    pattern; a branch of another first character in between changes nothing."""
    written = r"ab|x|abc"
    assert _spans(re.compile(by_first_char(written)), "abc xabc") == [(0, 2), (4, 5), (5, 7)]
    assert _spans(re.compile(written), "abc xabc") == [(0, 2), (4, 5), (5, 7)]


@pytest.mark.parametrize("bad", [r"\bword", r".x", r"a?b", r"[a-z]x", r"[^a]x", r"(?:a|b)*c"])
def test_a_branch_that_cannot_be_regrouped_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        by_first_char(bad)
