"""Choosing the answer sentence by meaning as well as words, and trying other quotes when
the best one fails the question's constraints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gen_cases import make_chunk, make_hits

from core.text import content_terms
from core.types import Route
from generation.answer import AnswerGenerator
from generation.extractive import extract
from generation.quantities import asks_quantity, has_quantity

TIDB = "ee44550000000000"
LAW = "aa77880000000000"


class FakeMeaning:
    """Similarity by declared pairs: the texts it names are close to any question."""

    def __init__(self, close: dict[str, float]) -> None:
        self.close = close
        self.calls: list[list[str]] = []

    def __call__(self, question: str, texts: Sequence[str]) -> list[float]:
        self.calls.append(list(texts))
        return [next((v for k, v in self.close.items() if k in t), 0.4) for t in texts]


def _quoted(question: str, hits, meaning=None) -> str:  # type: ignore[no-untyped-def]
    return " ".join(q.text for q in extract(question, hits, 1, meaning).quotes)


def test_meaning_picks_the_paraphrased_answer_over_a_wordier_sentence() -> None:
    chunk = make_chunk(
        "并且该磁盘容量建议不小于总容量的 10%，否则它可能成为瓶颈。"
        "TiKV 硬盘大小配置建议 PCIe SSD 不超过 4 TB。",
        doc_id=TIDB,
    )
    question = "TiKV 若使用 PCIe SSD，单盘容量上限建议是多少？"
    hits = make_hits(chunk)
    meaning = FakeMeaning({"不超过 4 TB": 0.7})
    assert "4 TB" in _quoted(question, hits, meaning)
    assert meaning.calls, "the similarity was never asked"


def test_meaning_leaves_table_rows_to_their_columns() -> None:
    table = make_chunk(
        "Food | Calories\nBerries | 150\nLeaves | 50",
        kind="table",
        table_header=("Food", "Calories per portion"),
        table_rows=(("Berries", "150"), ("Leaves", "50")),
    )
    meaning = FakeMeaning({"Leaves": 0.9})
    text = _quoted(
        "How many calories does a portion of berries provide?", make_hits(table), meaning
    )
    assert "150" in text and "Leaves" not in text
    assert all("Berries" not in t for call in meaning.calls for t in call)


def test_a_sentence_that_alone_names_the_pinned_identifier_keeps_its_place() -> None:
    chunk = make_chunk(
        "CTEX论坛 ID 翻译章节 经典问题 前言 高原之狼 第一章 第五章 custom.tex\n"
        "Frogge: 第一章 gprsnl: 第五章 2.5-2.11",
    )
    meaning = FakeMeaning({"CTEX论坛": 0.8, "gprsnl": 0.3})
    text = _quoted(
        "CTEX 论坛 ID 为 gprsnl 的译者负责翻译第五章的哪几节？", make_hits(chunk), meaning
    )
    assert "2.5-2.11" in text


def test_question_form_and_source_words_are_not_content() -> None:
    terms = content_terms("据光明网这篇文章，宇航员起飞前多长时间之内绝对不能喝酒？")
    assert "宇航员" in terms and "喝酒" in terms
    assert not {"多长时间", "时间", "长时间", "多长", "文章", "据"} & set(terms)
    english = content_terms("In the sample Word document's table, how many calories are there?")
    assert "calories" in english and not {"s", "many", "document"} & set(english)


def test_when_inside_a_question_is_not_a_time_question() -> None:
    assert asks_quantity("When was Firefox released?")
    assert not asks_quantity(
        "Which checklist does the FAA propose to add for when the two indicators disagree?"
    )


def test_a_word_naming_a_quantity_asks_for_one_only_without_another_question_word() -> None:
    # "数量", "minimum" inside what the question is about do not make it a quantity question
    # when it asks who, why or what is done ...
    assert not asks_quantity("达到国家网信部门规定数量的处理者应当指定谁来监督？", "numeric")
    assert not asks_quantity("南美貘的数量为什么减少了？", "numeric")
    assert not asks_quantity(
        "What would operators with an existing FAA-approved minimum equipment list have to "
        "incorporate to dispatch the airplane?",
        "numeric",
    )
    # ... but they do when nothing else is asked, and a question word for a quantity always does.
    assert asks_quantity("摩根士丹利购入维德广场的金额是？", "numeric")
    assert asks_quantity("What maximum request body size does the specification allow?", "numeric")
    assert asks_quantity("谁获得的票数是多少？")
    assert asks_quantity("How many people does the minimum crew include, and why?")


def test_a_clause_number_is_not_the_quantity_asked() -> None:
    chunk = make_chunk(
        "第十四条 基于个人同意处理个人信息的，该同意应当由个人自愿作出。\n"
        "第三十一条 处理不满十四周岁未成年人个人信息的，"
        "应当取得未成年人的父母或者其他监护人的同意。",
        doc_id=LAW,
    )
    text = _quoted("要处理未满 14 岁孩子的个人信息，必须先征得谁同意？", make_hits(chunk))
    assert "监护人" in text


def test_the_copy_in_the_named_document_is_quoted() -> None:
    row = "Food | Calories per portion\nBerries | 150"
    other = make_chunk(row, doc_id="bb" + "0" * 14, title="MinerU supports DOCX parsing")
    named = make_chunk(row, doc_id="cc" + "0" * 14, title="Word sample")
    ex = extract(
        "In the Word sample, how many calories do berries provide?", make_hits(other, named), 1
    )
    assert ex.quotes[0].sources[0].chunk.doc_id == named.doc_id


def _answer(gen: AnswerGenerator, question: str, hits, route: Route):  # type: ignore[no-untyped-def]
    return gen.answer(question, hits, True, route, {}, "t")


def test_a_quote_chosen_by_meaning_that_lacks_the_number_falls_back_to_words(
    route: Route,
) -> None:
    chunk = make_chunk(
        "Audit logs matter for security reviews and are kept carefully.\n"
        "Audit logs are retained for 90 days.",
    )
    meaning = FakeMeaning({"matter for security": 0.9, "90 days": 0.2})
    gen = AnswerGenerator(None, max_sentences=1, similarity=meaning)
    answer = _answer(gen, "How many days are audit logs retained?", make_hits(chunk), route)
    assert answer.covered and "90 days" in answer.text


def test_another_document_answers_when_the_best_quote_misses_the_name(route: Route) -> None:
    java = make_chunk(
        "反例：仓库内某二方库版本号从 1.0.0.0 开始，一直默默升级成 1.0.0.64。",
        doc_id="ab" + "0" * 14,
    )
    tex = make_chunk("TeX 的版本号不断趋近于 π，现在为 3.141592。", doc_id="cd" + "0" * 14)
    gen = AnswerGenerator(None, max_sentences=1)
    answer = _answer(
        gen, "TeX 的版本号一直在变，它目前的版本号是多少？", make_hits(java, tex), route
    )
    assert answer.covered and "3.141592" in answer.text


def test_another_document_is_not_tried_for_a_period_it_does_not_cover(route: Route) -> None:
    sheet = make_chunk(
        "Net cash used in operating activities | 2010 | -1852", doc_id="ab" + "0" * 14
    )
    news = make_chunk(
        "In a report released in November 2012, Mozilla reported revenue of $163 million.",
        doc_id="cd" + "0" * 14,
    )
    gen = AnswerGenerator(None, max_sentences=1)
    answer = _answer(
        gen,
        "What was the net cash used in operating activities in fiscal year 2012?",
        make_hits(sheet, news),
        route,
    )
    assert not answer.covered


def test_a_glossary_entry_is_an_answer_not_a_heading() -> None:
    front = make_chunk(
        "National Institute of Standards and Technology Special Publication 800-207 Natl.",
        doc_id="ab" + "0" * 14,
        page_start=3,
        ordinal=1,
        title="NIST SP 800-207",
    )
    glossary = make_chunk(
        "Appendix A—Acronyms\nPDP: Policy Decision Point\nPEP: Policy Enforcement Point",
        doc_id="ab" + "0" * 14,
        page_start=54,
        ordinal=2,
        title="NIST SP 800-207",
    )
    hits = make_hits(front, glossary)
    text = _quoted("What does the acronym PDP stand for in SP 800-207?", hits)
    assert "Policy Decision Point" in text


def test_a_number_the_question_gives_is_not_the_quantity_it_asks() -> None:
    assert not has_quantity("Release of the OpenAPI Specification 3.1.0", "OpenAPI 3.1.0")
    assert has_quantity("A name is at most 64 characters in 3.1.0", "OpenAPI 3.1.0")


def test_a_digit_inside_a_latin_name_is_not_a_quantity_but_a_version_is() -> None:
    for name in ("Digests use SHA256 only", "IPv6 addresses", "mp3 files", "Safety4 tyres"):
        assert not has_quantity(name), name
    for stated in ("Install v2 first", "load P12.1.2 on FCC A", "the limit is 4TB", "共有3个"):
        assert has_quantity(stated), stated


def test_a_how_many_question_is_not_answered_by_a_name_with_a_digit(route: Route) -> None:
    chunk = make_chunk("Audit digests are computed with SHA256 by the collector.")
    gen = AnswerGenerator(None, max_sentences=1)
    answer = _answer(
        gen, "How many audit digests does the collector keep?", make_hits(chunk), route
    )
    assert not answer.covered
    assert "quantity" in answer.reason


def test_a_padding_line_that_names_the_thing_asked_does_not_make_an_answer(
    route: Route,
) -> None:
    versions = make_chunk(
        "Version: 3.1.0 | Date: 2021-02-15 | Notes: Release of the OpenAPI Specification 3.1.0",
        doc_id="ab" + "0" * 14,
        ordinal=1,
    )
    example = make_chunk("operationId: getUserAddressByUUID", doc_id="ab" + "0" * 14, ordinal=2)
    gen = AnswerGenerator(None, max_sentences=3)
    answer = _answer(
        gen,
        "When was the operationId string limited in OpenAPI 3.1.0?",
        make_hits(versions, example),
        route,
    )
    assert not answer.covered, answer.text


def test_an_inline_list_is_quoted_whole_with_its_intro() -> None:
    chunk = make_chunk(
        "乡里制是中国古代农村社会基层组织体系。"
        "其特点主要有以下三点：第一，职官与长者并用。既设立行政官吏，又注意发挥地方长老作用。"
        "第二，刑禁与教化并施。第三，秩序制和晋升制于一体。"
        "宋代仍承前朝行乡里制。"
    )
    text = _quoted("乡里制的特点是什么？", make_hits(chunk))
    squashed = "".join(text.split())
    assert "第一，职官与长者并用。既设立行政官吏，又注意发挥地方长老作用。第二" in squashed
    assert "第三，秩序制和晋升制于一体。" in squashed
    assert "宋代" not in text


def test_a_sentence_that_follows_from_the_one_before_brings_it() -> None:
    chunk = make_chunk(
        "玉山箭竹的地下茎在每年四、五月间萌发新芽。"
        "所以到了七、八月间，整个草原呈现一片碧草如茵的景致。"
    )
    text = _quoted("碧草如茵景致形成的原因是什么？", make_hits(chunk))
    assert "萌发新芽" in text and "碧草如茵" in text


def test_a_clause_ending_in_a_semicolon_is_quoted_to_the_full_stop() -> None:
    chunk = make_chunk(
        "莎莉公司成立于1939年。2012年7月4日，莎莉公司拆分成两家公司：一家名为希尔夏品牌，"
        "主要在北美地区营运；另一家名为布兰德斯大师，主营咖啡与茶。此后公司总部迁往芝加哥。"
    )
    text = _quoted("莎莉公司在2012年被拆分成哪两家公司？", make_hits(chunk))
    assert "另一家名为布兰德斯大师，主营咖啡与茶。" in text
    assert "芝加哥" not in text


def test_an_abbreviation_does_not_end_a_sentence() -> None:
    chunk = make_chunk(
        "教堂建于1638年。在主要的入口后，两旁摆著St. John of Matha及St. Felix of Valois的雕像。"
    )
    text = _quoted("教堂的主要入口后摆有什么雕像？", make_hits(chunk))
    assert "St. Felix of Valois的雕像" in text


def test_a_list_item_ending_in_a_semicolon_does_not_bring_the_next_items() -> None:
    chunk = make_chunk(
        "第五十五条 有下列情形之一的，个人信息处理者应当事前进行个人信息保护影响评估：\n"
        "（一）处理敏感个人信息；\n"
        "（二）利用个人信息进行自动化决策；\n"
        "（三）委托处理个人信息；"
    )
    ex = extract("利用个人信息进行自动化决策需要做什么评估？", make_hits(chunk), 1)
    text = " ".join(q.text for q in ex.quotes)
    assert "（二）利用个人信息进行自动化决策；" in text
    assert "（三）" not in text


def test_meaning_reads_a_sentence_with_its_passages_topic() -> None:
    # The embedding favours the sentence that repeats the plant's name; the answer is the
    # one about the leaflets, which names the plant only through its passage.
    chunk = make_chunk(
        "盾柱木是豆科盾柱木属的植物，原产于东南亚。"
        "羽片8~14对，对生或近对生，羽轴基部膨大。"
        "盾柱木常作行道树栽培。",
        doc_id=LAW,
    )
    meaning = FakeMeaning({"盾柱木": 0.9})
    text = _quoted("盾柱木的羽片有什么特点？", make_hits(chunk), meaning)
    assert text.startswith("羽片8~14对")
    # What the similarity was asked about: the sentence with the topic before it.
    assert any(
        "盾柱" in t
        and t.endswith("羽片8~14对，对生或近对生，羽轴基部膨大。")
        and not t.startswith("羽片")
        for t in meaning.calls[0]
    )


def test_only_sentences_within_the_window_of_the_best_are_embedded() -> None:
    chunk = make_chunk(
        "TiKV 硬盘大小配置建议 PCIe SSD 不超过 4 TB。"
        "TiKV 的 SSD 容量建议不超过 2 TB。"
        "集群部署时请参考官方文档。"
    )
    question = "TiKV 使用 PCIe SSD 时单盘容量上限建议是多少？"
    hits = make_hits(chunk)
    every, window = FakeMeaning({}), FakeMeaning({})
    extract(question, hits, 1, every, semantic_window=0.0)
    extract(question, hits, 1, window, semantic_window=0.5)
    embedded = {t for call in every.calls for t in call}
    kept = {t for call in window.calls for t in call}
    # The sentence sharing one word of the question is scored far below the other two.
    assert any("官方文档" in t for t in embedded)
    assert not any("官方文档" in t for t in kept)
    assert any("4 TB" in t for t in kept) and any("2 TB" in t for t in kept)


def _servers():  # type: ignore[no-untyped-def]
    return make_chunk(
        "组件 | CPU | 内存\nTiDB | 16 核+ | 48 GB+\nTiKV | 16 核+ | 64 GB+",
        kind="table",
        table_header=("组件", "CPU", "内存"),
        table_rows=(("TiDB", "16 核+", "48 GB+"), ("TiKV", "16 核+", "64 GB+")),
    )


def test_a_term_the_route_expanded_is_met_by_its_synonym(route: Route) -> None:
    table = _servers()
    question = "生产环境中 TiKV 节点需要多少 RAM？"
    gen = AnswerGenerator(None, max_sentences=1)
    plain = _answer(gen, question, make_hits(table), route)
    assert not plain.covered and "RAM" in plain.reason
    expanded = replace(route, synonyms_applied={"RAM": ["内存", "memory"]})
    answer = _answer(gen, question, make_hits(table), expanded)
    assert answer.covered and "64 GB+" in answer.text


def test_an_acronym_is_a_whole_word_or_its_plural() -> None:
    from generation.names import word_found

    assert not word_found("PD", "see the pdf files")
    assert word_found("PD", "the pd node") and word_found("PD", "pd同机器")
    assert word_found("SSD", "two ssds") and word_found("SSD", "the ssd's cache")
    assert word_found("Kentucky", "kentucky's checks")  # names keep their endings


def test_the_unit_asked_is_read_past_a_classifier_and_cores_count() -> None:
    from generation.quantities import asked_unit

    assert asked_unit("比赛持续了几个小时？") == "小时"
    assert asked_unit("生产环境中 TiFlash 需要几核处理器？") == "核"
    assert asked_unit("他在国外住了多少个月？") == "个月"
    assert asked_unit("有多少个国家参加？") == ""  # 个 alone counts anything


def test_a_row_holding_the_synonym_outscores_prose_that_names_it_without_a_number(
    route: Route,
) -> None:
    prose = make_chunk(
        "TiFlash 推荐与 TiKV 部署在不同节点，如果条件所限必须将 TiFlash 与 TiKV 部署在相同节点，"
        "则需要适当增加 CPU 核数和内存，且尽量将 TiFlash 与 TiKV 部署在不同的磁盘。"
    )
    table = _servers()
    question = "生产环境中 TiKV 节点需要多少 RAM？"
    gen = AnswerGenerator(None, max_sentences=3)
    expanded = replace(route, synonyms_applied={"RAM": ["内存", "memory"]})
    answer = _answer(gen, question, make_hits(prose, table), expanded)
    assert answer.covered and "64 GB+" in answer.text and "48 GB+" not in answer.text


def test_a_row_whose_key_the_question_writes_whole_beats_a_sibling_row(route: Route) -> None:
    header = ("组件", "CPU", "内存")
    siblings = make_chunk(
        "组件 | CPU | 内存\nTiFlash Write Node | 32 核+ | 64 GB+\n"
        "TiFlash Compute Node | 32 核+ | 64 GB+",
        kind="table",
        table_header=header,
        table_rows=(
            ("TiFlash Write Node", "32 核+", "64 GB+"),
            ("TiFlash Compute Node", "32 核+", "64 GB+"),
        ),
    )
    servers = make_chunk(
        "组件 | CPU | 内存\nTiKV | 16 核+ | 64 GB+\nTiFlash | 48 核+ | 128 GB+",
        kind="table",
        table_header=header,
        table_rows=(("TiKV", "16 核+", "64 GB+"), ("TiFlash", "48 核+", "128 GB+")),
    )
    gen = AnswerGenerator(None, max_sentences=1)
    answer = _answer(gen, "生产环境中 TiFlash 需要多少内存？", make_hits(siblings, servers), route)
    assert answer.covered and "128 GB+" in answer.text


def test_a_row_quotes_the_column_a_synonym_names(route: Route) -> None:
    table = make_chunk(
        "组件 | CPU | 内存 | 实例数量(最低要求)\nPD | 4 核+ | 8 GB+ | 1\nTiKV | 8 核+ | 32 GB+ | 3",
        kind="table",
        table_header=("组件", "CPU", "内存", "实例数量(最低要求)"),
        table_rows=(("PD", "4 核+", "8 GB+", "1"), ("TiKV", "8 核+", "32 GB+", "3")),
    )
    gen = AnswerGenerator(None, max_sentences=1)
    expanded = replace(route, synonyms_applied={"RAM": ["内存", "memory"]})
    answer = _answer(gen, "开发及测试环境中 PD 的 RAM 要求是多少？", make_hits(table), expanded)
    # "要求" names the last column, the synonym the 内存 one: both are quoted.
    assert answer.covered and "内存: 8 GB+" in answer.text


def test_a_sibling_row_does_not_answer_for_a_name_only_the_title_gives(route: Route) -> None:
    siblings = make_chunk(
        "组件 | CPU | 内存\nTiFlash Write Node | 32 核+ | 64 GB+",
        kind="table",
        title="TiDB 软件和硬件环境需求",
        table_header=("组件", "CPU", "内存"),
        table_rows=(("TiFlash Write Node", "32 核+", "64 GB+"),),
    )
    storage = make_chunk(
        "组件 | 磁盘类型\nTiDB | 建议使用 SSD",
        kind="table",
        title="TiDB 软件和硬件环境需求",
        table_header=("组件", "磁盘类型"),
        table_rows=(("TiDB", "建议使用 SSD"),),
    )
    gen = AnswerGenerator(None, max_sentences=1)
    answer = _answer(gen, "TiDB 节点的内存要求是多少？", make_hits(siblings, storage), route)
    assert not answer.covered and "TiFlash Write Node" in answer.reason


def test_the_next_sentence_is_quoted_when_it_holds_the_rest_of_the_question() -> None:
    chunk = make_chunk(
        "第四十条 关键信息基础设施运营者收集和产生的个人信息应当存储在境内。"
        "确需向境外提供的，应当通过国家网信部门组织的安全评估。"
        "第四十一条 中华人民共和国主管机关根据有关法律处理外国司法机构的请求。"
    )
    text = _quoted(
        "关键信息基础设施运营者收集的个人信息确需出境的，应当通过什么？", make_hits(chunk)
    )
    assert "安全评估" in text and "第四十一条" not in text


def test_a_leading_when_clause_before_another_question_word_is_a_condition() -> None:
    assert not asks_quantity(
        "When enum is defined for a server variable, where must the value exist?"
    )
    assert asks_quantity("When was Firefox released?")
    assert asks_quantity("When the indicators disagree, when was the fix released?")


def test_a_price_asked_by_naming_it_is_a_quantity_asked(route: Route) -> None:
    """(Held-out pass, session 51, unseen_policies15 after it was measured.) "What's the
    price of …", "What does … cost?", "Was kostet …", "Quali saranno le tariffe …",
    "1時間いくらですか", "可以打幾折" ask an amount, as "how much" does: a quote stating none
    ("Aqua-fit classes are priced in the separate price list") does not answer. "Free"
    answers a price; a question about costs in general asks none."""
    from generation.quantities import FREE, asks_price

    for q in (
        "What's the price of an aqua-fit class at Riverside?",
        "What does a sauna session cost?",
        "Was kostet die Abholung eines Kühlschranks?",
        "Quali saranno le tariffe al minuto nel 2026?",
        "土曜日に和室を借りたいのですが、1時間いくらですか？",
        "身心障礙者月租汽車位可以打幾折？",
    ):
        assert asks_quantity(q) and asks_price(q), q
    assert not asks_quantity("What does the policy say about costs?")
    assert FREE.search("Children under 3 swim free.") and FREE.search("入館無料")
    assert FREE.search("No charges apply to the first replacement card.")
    pool = make_chunk(
        "Aqua-fit and aqua-natal classes are priced in the separate Fitness Classes price list."
    )
    gen = AnswerGenerator()
    asked = "What's the price of an aqua-fit class at Riverside?"
    answer = gen.answer(asked, make_hits(pool), True, route, {}, "t")
    assert not answer.covered, answer
    free = make_chunk("Children under 3 swim free at all times.")
    answer = gen.answer(
        "What's the price of a swim for my 2-year-old (under 3)?",
        make_hits(free),
        True,
        route,
        {},
        "t",
    )
    assert answer.covered, answer
