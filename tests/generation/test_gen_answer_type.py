"""generation.answer_type and generation.yes_no: what kind of answer a question asks for."""

from __future__ import annotations

import pytest

from generation.answer_type import asks_date
from generation.yes_no import asks_yes_no


@pytest.mark.parametrize(
    ("question", "date"),
    [
        ("What date does the financial year end?", True),
        ("In what years was the rule changed?", True),
        ("Which month is the audit in?", True),
        # "what month" inside "what monthly": an uptime was refused as "asks for a date"
        ("What monthly uptime does Standard support include?", False),
        ("Which daily limit applies?", False),
    ],
)
def test_a_date_is_asked_by_its_word_not_by_a_longer_one(question: str, date: bool) -> None:
    assert asks_date(question) is date


@pytest.mark.parametrize(
    ("question", "yes_no"),
    [
        ("Does the SLA cover beta features?", True),
        ("The turnaround is quoted in working days. Do bank holidays count toward it?", True),
        ("The rule is clear. How many days may I take?", False),
        ("实习生可以弹性上班吗？", True),
        ("计算加班费的时候，绩效奖金算不算在基数里？", True),
        ("报销包不包括市内交通？", True),
        ("Kann ich Resturlaub übertragen?", True),
        ("¿Puedo teletrabajar desde otro país?", True),
        ("Puis-je travailler à distance le lundi ?", True),
        ("How many days may interns work remotely?", False),
        ("Wie viele Urlaubstage bekommen Werkstudenten?", False),
        ("¿Cuántos días puedo teletrabajar?", False),
        ("实习生每周可以远程办公几天？", False),
    ],
)
def test_a_yes_no_question_in_several_languages(question: str, yes_no: bool) -> None:
    assert asks_yes_no(question) is yes_no
