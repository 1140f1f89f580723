"""`rarest_within`: the rarest keys while their counts fit the budget."""

from __future__ import annotations

from indexing.stores.budget import rarest_within


def test_rarest_keys_are_kept_while_their_counts_fit() -> None:
    held = {"year": 220_000, "olympics": 2_800, "diving": 77, "team": 40_000}
    assert rarest_within(held, 3_000) == {"diving", "olympics"}
    assert rarest_within(held, 50_000) == {"diving", "olympics", "team"}
    assert rarest_within(held, 10**9) == set(held)


def test_the_rarest_key_stays_past_the_budget_and_ties_break_stably() -> None:
    assert rarest_within({"a": 500, "b": 900}, 10) == {"a"}
    assert rarest_within({"y": 5, "x": 5}, 5) == {"x"}
    assert rarest_within({}, 10) == set()
