from datetime import date

import pytest

from ingestion.dates import effective_date


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("第七十四条 本法自2021年11月1日起施行。", date(2021, 11, 1)),
        ("实施日期：二〇二三年三月一日", date(2023, 3, 1)),
        ("SUMMARY: ...\nDATES: This rule is effective October 1, 2020.", date(2020, 10, 1)),
        ("Effective date: 2024-02-29", date(2024, 2, 29)),
        ("Published: August 11, 2020", date(2020, 8, 11)),
        # An adoption date is not a commencement date; too common in prose to trust.
        ("2021年8月20日 第十三届全国人民代表大会常务委员会第三十次会议通过", None),
        ("Nothing dated here, only 2021 as a year.", None),
        ("effective February 30, 2020", None),  # not a date
        ("本办法自2024年3月1日起实施。", date(2024, 3, 1)),
        ("……附则。\n本规定自二〇二二年一月一日起施行", date(2022, 1, 1)),
        ("These standards become effective on March 1, 2021.", date(2021, 3, 1)),
        ("DATES: This AD is effective September 9, 2020.", date(2020, 9, 9)),
        # A date the text reports in passing is an event it describes, not its own date.
        ("根据该条约第七条的规定，本条约自一九六一年九月十日起生效。", None),
        ("萨尔在1955年公投后加入联邦德国，并自1957年1月1日起生效。", None),
        ("The treaty became effective on January 1, 1994, after ratification.", None),
    ],
)
def test_effective_date(text: str, expected: date | None) -> None:
    assert effective_date([text]) == expected


def test_effective_beats_published_and_tail_is_read() -> None:
    head = "2021年8月20日 常务委员会通过\n" + "正文。" * 4000
    assert effective_date([head, "第七十四条 本法自2021年11月1日起施行。"]) == date(2021, 11, 1)
