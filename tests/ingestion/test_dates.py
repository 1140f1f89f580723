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
    ],
)
def test_effective_date(text: str, expected: date | None) -> None:
    assert effective_date([text]) == expected


def test_effective_beats_published_and_tail_is_read() -> None:
    head = "2021年8月20日 常务委员会通过\n" + "正文。" * 4000
    assert effective_date([head, "第七十四条 本法自2021年11月1日起施行。"]) == date(2021, 11, 1)
