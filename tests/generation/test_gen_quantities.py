"""What a question asks for and what a quote states (generation.quantities)."""

from __future__ import annotations

import pytest

from generation.quantities import asked_measure, states_measure


@pytest.mark.parametrize(
    "question",
    [
        "If I'm caught using a sprinkler on my plot, how big is the fine?",
        "How much is the deposit for a mobile home?",
        "If I don't return my laptop, how much exactly will be deducted from my final pay?",
        "学员平安保险如果受伤，最高可以理赔多少钱？",
        "我想報陶藝課，材料費大概要多少錢？",
        "What's the monthly fee to join the Pet Health Club?",
        "How much would a month's season ticket cost me as an adult?",
    ],
)
def test_a_sum_asked_by_what_it_is_is_a_sum_of_money(question: str) -> None:
    """(Session 52.) A fine, a deposit, a deduction, 多少钱: what answers is an amount of
    money, and a quote that gives none (only dates, or "its depreciated value") does not."""
    assert asked_measure(question) == "sum of money"


@pytest.mark.parametrize(
    "question",
    [
        "How much annual leave is deducted for a half day?",  # days, not money
        "How much will I get refunded if I cancel?",  # often a share: "70% of the fee"
        "退課能退回多少？",  # 多少 alone asks any amount
    ],
)
def test_an_amount_that_may_be_no_money_is_not_asked_as_money(question: str) -> None:
    assert asked_measure(question) != "sum of money"


def test_chinese_sums_are_stated_in_yuan_kuai_or_by_the_currency_name() -> None:
    for stated in ("月費: NT$988", "每学分500块", "新臺幣500元", "人民币300"):
        assert states_measure("sum of money", stated), stated
    assert not states_measure("sum of money", "雜費已包含學員平安保險之保費")


def test_pence_and_cents_are_money() -> None:
    """(Held-out pass, session 53.) "35p per page in colour" states a price."""
    for stated in ("10p per page in black and white, 35p per page in colour", "50 cents each"):
        assert states_measure("sum of money", stated), stated
    for stated in ("20 per cent off", "open until 10 p.m."):
        assert not states_measure("sum of money", stated), stated


def test_rubles_abbreviated_are_money_and_a_pronoun_is_no_counted_noun() -> None:
    """(Held-out pass, session 53.) "Будни: 180 руб." states a price; "сколько мне вернут?"
    asks an amount (50% of the fare), not a count of anything."""
    from generation.quantities import counted_noun

    assert states_measure("sum of money", "Будни: 180 руб. | Выходные: 210 руб.")
    assert counted_noun("Если я сдам билет за 10 часов, сколько мне вернут?") == ""
    assert counted_noun("Сколько туристов приехало в 2019 году?") != ""
