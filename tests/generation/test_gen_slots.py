"""The quote is about a sibling of what was asked (generation/slots.py), and the judge
refuses it; paraphrases, synonyms, acronyms and word forms are not siblings."""

from gen_cases import make_chunk, make_hits

from generation.answerable import judge
from generation.extractive import extract
from generation.quantities import unit_forms
from generation.similarity import Similarity
from generation.slots import cell_substitution, mentioned, row_substitution, substitution

STATION = "毕竟国际空间站的造价高达1500亿美元，而且其运行速度达到了每小时27680公里。"


def test_a_sibling_in_the_slot_beside_a_shared_word_is_found() -> None:
    sub = substitution("光明网文章中，天宫空间站的造价是多少？", STATION, passage=STATION)
    assert sub is not None and (sub.asked, sub.anchor, sub.instead) == ("天宫", "空间站", "国际")


def test_english_questions_are_left_to_the_facet_check() -> None:
    """No tagger tells an English sibling from a paraphrase ("most recent eruption" /
    "last eruption", "fresh lava dome" / "new lava dome"): the check is Chinese only."""
    steamer = "Three species of steamer duck are almost flightless, however."
    q = "How many species of eider duck are almost flightless?"
    assert substitution(q, steamer, document=steamer) is None
    q = "Which village was overrun by lava during the most recent eruption of Vesuvius?"
    quote = "The last eruption of Vesuvius, in 1944, destroyed the village of San Sebastiano."
    assert substitution(q, quote, document=quote) is None


def test_the_thing_asked_named_anywhere_in_the_passage_is_no_sibling() -> None:
    # The quote's subject is implicit ("成鸟…"), the passage names the thing asked.
    passage = "天宫空间站是中国的空间站。" + STATION
    assert substitution("天宫空间站的造价是多少？", STATION, passage=passage) is None


def test_paraphrases_are_not_siblings() -> None:
    # Verbs and other non-nouns in the slot: a paraphrase, not another thing.
    q = "按南小二系统需求规格说明书的约束条件，项目代码用什么工具做版本管理？"
    quote = "项目使用 Git 进行版本管理。"
    assert substitution(q, quote, passage=quote) is None
    # Forms of one word share a character: 藏书量 / 藏书.
    quote = "图书馆藏书约110万册。"
    assert substitution("山东女子学院图书馆藏书量是多少？", quote, passage=quote) is None
    # A synonym the route applied (to a part of the word jieba cut): 个人数据 -> 个人信息.
    q = "个人数据处理者利用个人数据进行自动化决策，应当保证什么？"
    quote = "个人信息处理者利用个人信息进行自动化决策，应当保证决策的透明度。"
    assert substitution(q, quote, passage=quote) is not None
    assert substitution(q, quote, passage=quote, synonyms={"个人数据": ["个人信息"]}) is None
    # An acronym of the question's Latin words: "AOA" is the angle of attack.
    q = "两个 angle of attack 传感器的输入不一致时，系统会怎样？"
    quote = "两个 AOA 传感器的输入不一致时，系统停止工作。"
    assert substitution(q, quote, passage=quote) is None
    assert substitution(q, "两个 MCAS 传感器的输入不一致时，系统停止工作。", passage="") is not None


def test_the_judge_refuses_a_quote_about_a_sibling_and_says_why() -> None:
    hits = make_hits(make_chunk(STATION, title="太空饮酒"))
    question = "光明网文章中，天宫空间站的造价是多少？"
    ex = extract(question, hits)
    v = judge(question, "general", [q.text for q in ex.quotes], ex.chosen, [h.chunk for h in hits])
    assert not v.covered and v.failed == "subject" and v.asked == "天宫"
    assert "国际" in v.reason
    ok_q = "国际空间站的造价是多少？"
    ok = extract(ok_q, hits)
    verdict = judge(
        ok_q, "general", [q.text for q in ok.quotes], ok.chosen, [h.chunk for h in hits]
    )
    assert verdict.covered


def test_a_unit_counts_in_any_of_its_written_forms() -> None:
    assert "cm" in unit_forms("厘米") and unit_forms("furlong") == ("furlong",)
    # Any form asked finds every other one, not only those listed after it.
    hits = make_hits(make_chunk("成鸟全长约30厘米。"))
    q = "成鸟全长是多少公分？"
    ex = extract(q, hits)
    assert judge(q, "numeric", [x.text for x in ex.quotes], ex.chosen).covered
    small = "该种是一个小小的毛毡苔，全长通常只有2cm（0.79英尺）。"
    hits = make_hits(make_chunk(small, title="锦地罗"))
    q = "锦地罗的全长是多少厘米？"
    ex = extract(q, hits)
    assert judge(q, "numeric", [x.text for x in ex.quotes], ex.chosen).covered
    hits = make_hits(make_chunk("The model m has a full length of two feet."))
    q = "What is the full length of the model in metres? How many 米?"
    ex = extract(q, hits)
    assert not judge(q, "numeric", [x.text for x in ex.quotes], ex.chosen).covered


def test_a_row_with_another_key_value_than_the_one_asked_is_found() -> None:
    lanes = (("公路技术等级", "高速公路"), ("车道数", "八"), ("用地指标基准值", "2.5000"))
    table = "公路技术等级 | 车道数 | 用地指标基准值\n高速公路 | 八 | 2.5000\n高速公路 | 六 | 2.1333"
    q = "表 7.5 中，十车道高速公路停车区用地指标基准值是多少公顷？"
    sub = row_substitution(q, lanes, table)
    assert sub is not None and (sub.asked, sub.instead) == ("十", "八")
    # The value asked for is the row's, or another row of the table has it.
    assert row_substitution(q.replace("十", "八"), lanes, table) is None
    assert row_substitution(q.replace("十", "六"), lanes, table) is None
    fields = (("Field Name", "url"), ("Type", "string"))
    q = "In what form MUST the phone field of the Contact Object be given?"
    assert row_substitution(q, fields, "Field Name | Type\nname | string\nurl | string") is not None
    # A word the document uses elsewhere, or a cell listing several things, is no key.
    assert row_substitution(q, fields, "url | string", document="call the phone number") is None
    food = (("Kind", "Grain"), ("Food", "Corn, Buckwheat, Barley"), ("Calories", "200"))
    q = "In the table of duck food, how many calories does a portion of grain provide?"
    assert row_substitution(q, food, "Kind | Food | Calories\nGrain | Corn, Barley | 200") is None


def test_the_judge_refuses_the_wrong_row_and_names_it() -> None:
    table = make_chunk(
        "| 公路技术等级 | 车道数 | 用地指标基准值 |\n|---|---|---|\n"
        "| 高速公路 | 八 | 2.5000 |\n| 高速公路 | 六 | 2.1333 |",
        kind="table",
    )
    hits = make_hits(table)
    q = "十车道高速公路停车区用地指标基准值是多少？"
    ex = extract(q, hits)
    assert ex.chosen and ex.chosen[0].is_table_row, ex.quotes
    v = judge(q, "numeric", [x.text for x in ex.quotes], ex.chosen, [table])
    assert not v.covered and v.failed == "row" and "十" in v.reason
    q = "六车道高速公路停车区用地指标基准值是多少？"
    ex = extract(q, hits)
    assert judge(q, "numeric", [x.text for x in ex.quotes], ex.chosen, [table]).covered


def test_a_one_character_word_the_passage_never_has_is_a_slot() -> None:
    q = "按《Java 开发手册（黄山版）》，单个类的总行数不超过多少行？"
    quote = "11.【推荐】单个方法的总行数不超过 80 行。"
    sub = substitution(q, quote, passage=quote + "说明：除注释之外的方法签名、左右大括号。")
    assert sub is not None and sub.asked == "类" and sub.instead == "方法"
    # The character anywhere in the quoted passages: the quote may name it in other words.
    assert substitution(q, quote, passage=quote + "类的方法不宜过长。") is None
    # The other-document retry asks whether a passage mentions the word asked: a single
    # character is looked for, not taken as found.
    assert mentioned("类", "类的方法不宜过长。") and not mentioned("类", quote)
    # A one-character word that is no noun (若, "if") is no slot.
    q = "TiDB 的硬件建议里，TiKV 若使用 PCIe SSD，单盘容量上限建议是多少？"
    quote = "- TiKV 硬盘大小配置建议 PCIe SSD 不超过 4 TB，普通 SSD 不超过 1.5 TB。"
    assert substitution(q, quote, passage=quote) is None


def test_a_compound_whose_head_no_passage_has_is_not_the_quotes_subject() -> None:
    """Asked about 请求头 (request header), the quote speaks of 请求 (request) alone, as a
    word that names nothing of its own: not covered. Where the quote's 请求 names a thing
    (请求体), the sibling rule decides; where the passages have the head, or the quote
    writes the compound, it is covered."""
    q = "按《Java 开发手册（黄山版）》，HTTP 请求头不能超过多少字节？"
    quote = "7.【强制】HTTP 请求通过 URL 传递参数时，不能超过 2048 字节。"
    sub = substitution(q, quote, passage=quote)
    assert sub is not None and (sub.asked, sub.anchor, sub.instead) == ("头", "请求", "")
    assert "'请求头'" in sub.describe()
    assert substitution(q, quote, passage=quote + "请求头的大小由服务器决定。") is None
    assert substitution(q, "HTTP 请求头通过代理时不能超过 8 KB。", passage="") is None
    # The same question asked about what the quote says: covered.
    q = "按《Java 开发手册（黄山版）》，HTTP 请求通过 URL 传递参数时不能超过多少字节？"
    assert substitution(q, quote, passage=quote) is None
    # A verb and its object (处理孩子), or an attribute after 的: no compound.
    q = "处理孩子的个人信息必须征得家长同意，这个年龄界限是多少？"
    quote = "个人信息处理者处理不满十四周岁未成年人个人信息的，应当取得父母的同意。"
    assert substitution(q, quote, passage=quote, synonyms={"家长": ["父母"]}) is None
    q = "第7届日本参议院议员通常选举的重要性是什么？"
    quote = "第7届日本参议院议员通常选举于昭和40年7月4日举行，改选出125名参议员。"
    assert substitution(q, quote, passage=quote) is None


def test_a_word_the_quote_says_in_other_words_is_no_sibling(meaning: Similarity) -> None:
    """ "出差补贴标准" of "出差伙食补助标准": 补贴 and 补助 mean the same (0.73), so the
    quote is not about another thing; 天宫 for 国际 (0.23) still is."""
    meal = "第五条 出差伙食补助标准为每人每天150元，按出差自然天数计算。"
    question = "出差补贴标准是多少？"
    assert substitution(question, meal, passage=meal) is not None
    assert substitution(question, meal, passage=meal, similarity=meaning) is None
    station = "光明网文章中，天宫空间站的造价是多少？"
    assert substitution(station, STATION, passage=STATION, similarity=meaning) is not None


def test_words_of_one_head_are_siblings_whatever_jieba_tags_them() -> None:
    """婚假 quoted for 丧假 (jieba tags 丧假 a verb): one length, the same last character
    and no other in common make two kinds of one thing. Words sharing another character
    stay forms of one word (藏书量/藏书, in `test_paraphrases_are_not_siblings`)."""
    quote = "第五条 员工婚假为3天，晚婚不再增加假期。"
    sub = substitution("员工丧假有几天？", quote, passage=quote)
    assert sub is not None and (sub.asked, sub.anchor, sub.instead) == ("丧假", "员工", "婚假")
    assert substitution("员工婚假有几天？", quote, passage=quote) is None
    # The word asked anywhere in the quoted passages: the quote may be about it.
    passage = quote + "员工丧假为3天。"
    assert substitution("员工丧假有几天？", quote, passage=passage) is None
    # A word tagged otherwise that is no sibling of a noun of the quote is no slot.
    assert substitution("员工旅行有几天？", quote, passage=quote) is None


def test_a_verb_before_a_column_header_is_no_value_asked_of_it() -> None:
    """(Held-out pass, session 50.) "Ile wyniesie cena za dobę?" (what will the price per
    day come to): "wyniesie" is no value of the column "Cena za dobę (1–6 dni)"."""
    row = [("Klasa", "D"), ("Cena za dobę (1–6 dni)", "219 zł")]
    table = "Klasa | Cena za dobę (1–6 dni)\nD | 219 zł"
    question = "Chcę wynająć kombi na 10 dni. Ile wyniesie cena za dobę?"
    assert row_substitution(question, row, table) is None


def test_a_modifier_the_cell_leaves_out_is_no_other_thing() -> None:
    """(Held-out pass, session 50.) "my third parking contravention" of the row "Third
    contravention in 12 months": the question adds a word where the cell has none, which
    the cell's rule covers; the cell's other words come after, not between."""
    cells = [("Contravention", "Third contravention in 12 months"), ("Action", "Permit withdrawn")]
    asked = "This would be my third parking contravention within a year. What happens to me?"
    assert cell_substitution(asked, cells) is None
    bolt = [("Product", "Steel bolt M8"), ("Price", "0.20")]
    assert cell_substitution("What is the price of a steel nut M8?", bolt) is not None


def test_one_of_a_rates_unit_is_the_rate_asked_not_another_row() -> None:
    """(Held-out pass, session 53.) "for one night" of a column "Maximum per night": the
    question asks the rate, not a row whose value is "one"."""
    cells = [("Location", "Other UK cities"), ("Maximum per night (room only)", "£125")]
    asked = "What's the most I can spend on a hotel room for one night in Manchester?"
    assert row_substitution(asked, cells, "Location | Maximum per night (room only)") is None
    field = [("Field Name", "url"), ("Type", "string")]
    assert row_substitution("What type is the phone field?", field, "Field Name | Type") is not None
