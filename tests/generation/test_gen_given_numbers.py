"""Numbers a question gives must be met by the quote: a sibling's number ("SP 800-207"
for SP 800-53, 第八条 for 第八十条, 十四周岁 for 十六周岁) answers another question."""

from gen_cases import make_chunk, make_hits, make_table

from core.text import chinese_numeral, han_number
from core.types import Hit
from generation.answerable import Verdict, judge
from generation.extractive import extract
from generation.given_numbers import given_numbers


def _verdict(question: str, hits: list[Hit]) -> Verdict:
    ex = extract(question, hits)
    return judge(
        question, "general", [q.text for q in ex.quotes], ex.chosen, [h.chunk for h in hits]
    )


def test_which_numbers_a_question_gives() -> None:
    def texts(q: str) -> list[str]:
        return [g.text for g in given_numbers(q)]

    assert texts("How many pages does NIST SP 800-53 have?") == ["800-53"]
    assert texts("个人信息保护法第75条的内容是什么？") == ["第75条"]
    assert texts("处理不满十六周岁未成年人个人信息需要谁同意？") == ["十六周岁"]
    assert texts("三级公路停车区用地指标基准值是多少？") == ["三级"]
    assert texts("What is error 404?") == ["404"]
    # Not given: a year (a period), a bound, a one-digit count, digits in a name.
    assert texts("How many permit checks were there in November 2015?") == []
    assert texts("Which states had more than 10,000 permit checks?") == []
    assert texts("超过 100 人的部门有哪些？") == []
    assert texts("What are the 3 approaches to zero trust?") == []
    assert texts("Does the P12.1.2 patch support IPv6?") == []


def test_han_numerals_read_both_ways() -> None:
    for n in (0, 3, 10, 14, 16, 75, 80, 105, 2380, 99999):
        assert han_number(chinese_numeral(n)) == n
    assert han_number("两") == 2 and han_number("16") == 16 and han_number("abc") is None


def test_a_sibling_number_does_not_answer() -> None:
    nist = make_chunk("NIST SP 800-207, 59 pages (August 2020)")
    hits = make_hits(nist)
    assert _verdict("How many pages does NIST SP 800-207 have?", hits).covered
    miss = _verdict("How many pages does NIST SP 800-53 have?", hits)
    assert not miss.covered and "800-53" in miss.reason


def test_a_clause_or_age_is_met_in_digits_or_han_numerals_never_by_a_neighbour() -> None:
    law = make_chunk(
        "第八条 处理个人信息应当保证个人信息的质量。\n"
        "第三十一条 个人信息处理者处理不满十四周岁未成年人个人信息的，"
        "应当取得未成年人的父母的同意。\n"
        "第十六条 个人信息处理者不得以个人不同意为由拒绝提供产品或者服务。",
        title="中华人民共和国个人信息保护法",
    )
    hits = make_hits(law)
    assert _verdict("个人信息保护法第八条规定了什么？", hits).covered
    assert not _verdict("个人信息保护法第八十条规定了什么？", hits).covered
    assert _verdict("处理未满 14 岁孩子的个人信息须征得谁同意？", hits).covered
    # "第十六条" is a clause, not the age sixteen.
    sixteen = _verdict("处理不满十六周岁未成年人个人信息需要取得谁的同意？", hits)
    assert not sixteen.covered and "十六周岁" in sixteen.reason


def test_a_number_naming_the_subject_may_be_met_elsewhere_in_its_document() -> None:
    doc = "dd00000000000000"
    intro = make_chunk("The proposed AD covers Boeing Model 737–8 airplanes.", doc_id=doc)
    fact = make_chunk(
        "The accident airplane was operated by Lion Air on October 29, 2018.",
        doc_id=doc,
        ordinal=1,
    )
    verdict = _verdict(
        "Which airline operated the Boeing 737-8 in the accident?", make_hits(fact, intro)
    )
    assert verdict.covered, verdict.reason


def test_the_clause_named_leads_over_the_same_words_in_another() -> None:
    """Asked with 第二十七条's own words, the quote is 第二十七条, not the list item of
    第十三条 that repeats them (the check refuses that one: the answer was lost)."""
    title, chapter = "中华人民共和国个人信息保护法", ("第二章 个人信息处理规则",)
    own = make_chunk(
        "第二十七条 个人信息处理者可以在合理的范围内处理个人自行公开或者其他已经合法公开的"
        "个人信息；个人明确拒绝的除外。",
        title=title,
        section_path=chapter,
    )
    other = make_chunk(
        "第十三条 符合下列情形之一的，个人信息处理者方可处理个人信息：\n"
        "（六）依照本法规定在合理的范围内处理个人自行公开或者其他已经合法公开的个人信息；",
        title=title,
        ordinal=1,
        section_path=chapter,
    )
    question = (
        "第二十七条 个人信息处理者可以在合理的范围内处理个人自行公开或者其他已经合法公开"
        "的个人信息；"
    )
    hits = make_hits(own, other)
    assert extract(question, hits).quotes[0].text.startswith("第二十七条")
    assert _verdict(question, hits).covered


def test_a_tier_an_occurrence_and_a_letter_grade_pick_out_one_rule() -> None:
    """三线 is not 一线 or 二线, 第四次 is not 第三次, B级 is not C级: each must be in the
    quote. (第一次 is written 首次 or 首播 as often: no number to meet.)"""
    meals = make_hits(make_chunk("一线城市每人每天120元，二线城市每人每天100元。"))
    miss = _verdict("三线城市的伙食补助是多少？", meals)
    assert not miss.covered and "三线" in miss.reason
    assert _verdict("二线城市的伙食补助是多少？", meals).covered
    rules = make_hits(
        make_chunk("首次违规的，给予警告；第二次违规的，通报批评；第三次违规的，降级。")
    )
    assert not _verdict("第四次违规怎么处理？", rules).covered
    assert _verdict("第三次违规怎么处理？", rules).covered
    assert _verdict("第一次违规怎么处理？", rules).covered
    grades = make_hits(make_chunk("连续两年被评为C级的供应商，取消其供应商资格。"))
    miss = _verdict("被评为B级的供应商会被如何处理？", grades)
    assert not miss.covered and "b级" in miss.reason
    assert _verdict("被评为C级的供应商会被如何处理？", grades).covered


def test_a_grade_after_a_clause_number_is_met() -> None:
    """ "6.2 二级保养…" states 二级: the clause number before it (squashed to "6.2二级" when
    spaces are dropped) is no longer numeral of which 二 is the tail. "12级" still is
    not "2级"."""
    (grade,) = given_numbers("做二级保养需要提前几天提停机申请？")
    assert grade.found("6.2 二级保养须提前 3 个工作日提交停机申请")
    (two,) = given_numbers("2级设备多久检修一次？")
    assert not two.found("12级设备每年检修一次")
    rule = make_chunk("6.2 二级保养须提前 3 个工作日提交停机申请，经生产部确认停机时间。")
    assert _verdict("做二级保养需要提前几天提停机申请？", make_hits(rule)).covered


def test_a_number_written_with_a_leading_zero_is_a_code() -> None:
    """(Session 47.) "farina tipo 00" names a kind of flour: it is met as written, not as
    the value zero."""
    (code,) = given_numbers("Quanti campioni per la farina tipo 00?")
    assert code.value is None and code.found("farina di grano tenero tipo 00 | mp-010")
    assert not code.found("farina di grano tenero tipo 0 | mp-010")


def test_a_clock_time_is_no_number_given() -> None:
    """(Held-out pass, session 50.) "home at 20:15" says when, not which: no quote must
    write 20 or 15."""
    assert given_numbers("I was home at 20:15. How much may I claim for dinner?") == ()
    assert [g.text for g in given_numbers("What is the fee for tier 20 at 10:30?")] == ["20"]


def test_a_part_numbered_in_brackets_picks_out_its_row() -> None:
    """(Held-out pass, session 50.) "日文入門（二）" is a sibling of the row "日文入門（一）": the
    quote must state its number, in either bracket and either numeral."""
    (part,) = given_numbers("下學期的日文入門（二）學分費多少？")
    assert part.picks_out and part.value == 2
    assert not part.found("日文入門(一) | 學分費: 3200元")
    assert part.found("日文入門（二） | 學分費: 3400元") and part.found("level (2): 3400")
    assert given_numbers("我有2个孩子") == ()


def test_a_count_is_met_by_the_band_of_counts_that_holds_it() -> None:
    """(Held-out pass, session 54.) "I'd like 20 glossy 6x4 prints …" was refused: no
    quote wrote "20", while the row's column "Price each 10-49" holds it. A band met so
    is a range of counts, not a piece of a telephone number or a clock time."""
    from generation.given_numbers import in_count_band

    header = (
        "Item: Gloss photo print | Price each 1-9: £0.35 | Price each 10-49: £0.27 | 50+: £0.19"
    )
    assert in_count_band(20, header) and in_count_band(60, header) and in_count_band(3, header)
    assert not in_count_band(20, "Price each 1-9: £0.35")
    assert not in_count_band(300, "Call 02-2345-6789")
    assert not in_count_band(12, "Off-peak (10:00–16:00): £32")
    assert not in_count_band(20, "Season 2025-26: £450")
    prints = make_table(
        ("Item", "Size", "Price each 1-9", "Price each 10-49"),
        (("Gloss photo print", "6x4 in", "£0.35", "£0.27"),),
    )
    assert (
        "'20'"
        not in _verdict("How much is a gloss 6x4 print if I order 20?", make_hits(prints)).reason
    )
    assert (
        "'75'" in _verdict("How much is a gloss 6x4 print if I order 75?", make_hits(prints)).reason
    )


def test_a_count_asked_picks_out_its_column_of_a_row_priced_by_count() -> None:
    """(Held-out pass, session 54.) "How much do 2,500 business cards cost?" was answered
    with the row "100 pcs: £24 | … | 1000 pcs: £55": a count a row's columns are priced by
    must be one of them, wherever else the document writes it. A count written with a
    thousands separator after one digit ("2,500") is a number the question gives."""
    assert [g.value for g in given_numbers("How much do 2,500 business cards cost?")] == [2500]
    cards = make_table(
        ("Product", "100 pcs", "500 pcs", "1000 pcs"),
        (("Business cards", "£24", "£39", "£55"),),
    )
    flyers = make_chunk("Flyers are printed in runs of 2,500.", ordinal=1)
    many = _verdict("How much do 2,500 business cards cost?", make_hits(cards, flyers))
    assert not many.covered and "2,500" in many.reason, many
    assert _verdict("How much do 500 business cards cost?", make_hits(cards, flyers)).covered
