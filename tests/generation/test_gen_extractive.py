"""The no-LLM answer: the right sentence, its label, and only text found in the hits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gen_cases import LABEL, make_chunk, make_hits, quoted_parts, squash

from core.ids import citation_label
from core.text import content_terms, has_han
from core.types import Hit
from generation.extractive import extract, extractive_answer, focus_terms
from generation.passages import candidates

FAA = "ab12cd0000000000"
TEX = "dd22330000000000"
NICS = "cc00110000000000"
TIDB = "ee44550000000000"


def assert_verbatim(answer: str, hits_text: list[str]) -> None:
    corpus = [squash(t) for t in hits_text]
    for part in quoted_parts(answer):
        assert any(squash(part) in c for c in corpus), f"not in any chunk: {part!r}"


def test_english_number_sentence_beats_heading_that_repeats_the_question() -> None:
    heading = make_chunk(
        "Flight Control Computer Operational Program Version\n"
        "The FAA proposes to require certain actions for the airplanes.",
        doc_id=FAA,
        page_start=5,
        ordinal=1,
    )
    body = make_chunk(
        "Required Actions\n"
        "For airplanes with an original airworthiness certificate, install FCC OPS software\n"
        "version P12.1.2 on FCC A and FCC B, or a later approved version.",
        doc_id=FAA,
        page_start=6,
        ordinal=2,
    )
    ducks = make_chunk("Ducks swim in ponds. A male is called a drake.", doc_id="ef3456" + "0" * 10)
    hits = make_hits(heading, body, ducks)

    text, citations = extractive_answer(
        "Which flight control computer operational program version (or a later approved one) "
        "must be loaded on FCC A and FCC B under the proposed 737 MAX directive?",
        hits,
    )

    first, label = text.split(" [", 1)
    assert "P12.1.2" in first and first.startswith("For airplanes")
    assert label.startswith("Docab12cd_p6]")
    assert "Flight Control Computer Operational Program Version" not in text
    assert "drake" not in text
    assert_verbatim(text, [h.chunk.text for h in hits])
    assert [c.label for c in citations] == sorted(set(LABEL.findall(text)), key=text.index)
    assert citations[0].content_id == body.content_id


def test_chinese_answer_sentence_and_label() -> None:
    title_line = make_chunk("TeX 的版本号", doc_id=TEX, page_start=16, ordinal=1)
    body = make_chunk(
        "第一章 TeX 的历史\n"
        "TeX 是高德纳编写的排版软件。TeX 的版本号不断趋近于 π，现在为 3.141592。\n"
        "它的稳定性非常好。",
        doc_id=TEX,
        page_start=17,
        ordinal=2,
    )
    hits = make_hits(title_line, body)

    text, citations = extractive_answer(
        "TeX 的版本号一直在向圆周率逼近，按这本 LaTeX 入门手册的说法，它目前的版本号是多少？", hits
    )

    assert text.startswith("TeX 的版本号不断趋近于 π，现在为 3.141592。 [Docdd2233_p17]")
    assert_verbatim(text, [h.chunk.text for h in hits])
    assert citations[0].label == "[Docdd2233_p17]"
    assert citations[0].content_id == body.content_id


def test_wrapped_pdf_lines_are_rejoined_into_one_sentence() -> None:
    chunk = make_chunk(
        "A contextual trust algorithm keeps a history of each subject. For example, an\n"
        "HR employee who normally looks up 20 records a day would raise an alert if access\n"
        "requests suddenly exceed 100 records in a day.",
        doc_id=FAA,
        page_start=29,
    )
    text, _ = extractive_answer(
        "In the HR-department example, what daily volume of record lookups would make a "
        "contextual trust algorithm raise an alert?",
        make_hits(chunk),
        max_sentences=1,
    )
    assert "exceed 100 records in a day" in text
    # Both wraps were joined, the one before a capital ("HR") by line width alone.
    assert "For example, an HR employee" in text
    assert_verbatim(text, [chunk.text])


def test_quantity_question_prefers_the_sentence_with_the_number() -> None:
    chunk = make_chunk(
        "The alert threshold for records is set by the administrator. "
        "The alert threshold for records is 100 per day."
    )
    text, _ = extractive_answer(
        "How many records make the alert threshold?", make_hits(chunk), max_sentences=1
    )
    assert text == "The alert threshold for records is 100 per day. [Docab12cd_p1]"


def test_a_length_asked_prefers_the_sentence_with_a_length_over_an_area() -> None:
    # Both sentences name the river and kilometres; only one gives its length.
    chunk = make_chunk(
        "La cuenca del Orinoco se extiende por unos 880 000 kilómetros cuadrados. "
        "El Orinoco, con unos 2140 kilómetros, describe un gran arco por Venezuela."
    )
    text, _ = extractive_answer(
        "¿Cuántos kilómetros mide el Orinoco?", make_hits(chunk), max_sentences=1
    )
    assert text.startswith("El Orinoco, con unos 2140 kilómetros"), text


def test_multi_page_chunk_is_cited_by_the_page_holding_the_sentence() -> None:
    chunk = make_chunk(
        "The operator keeps a log of every change.\f"
        "Backups are retained for 35 days before deletion.",
        doc_id=FAA,
        page_start=8,
        page_end=9,
    )
    text, citations = extractive_answer(
        "How many days are backups retained?", make_hits(chunk), max_sentences=1
    )
    assert text == "Backups are retained for 35 days before deletion. [Docab12cd_p9]"
    assert [c.label for c in citations] == [citation_label(chunk.doc_id, 9)]
    # The citation still resolves to the whole chunk.
    assert (citations[0].page_start, citations[0].page_end) == (8, 9)


def test_table_row_keeps_its_header_names() -> None:
    table = make_chunk(
        "State | Permit | Permit Recheck | Handgun | Long Gun\n"
        "Kansas | 1,000 | 0 | 5,000 | 6,000\n"
        "Kentucky | 264,140 | 0 | 12,155 | 14,847\n"
        "Louisiana | 1,500 | 0 | 15,000 | 18,000",
        doc_id=NICS,
        kind="table",
        ordinal=2,
    )
    heading = make_chunk("NICS Firearm Checks: Month/Year by State\nNovember 2015", doc_id=NICS)
    text, citations = extractive_answer(
        "How many permit checks did the FBI record for Kentucky in the November 2015 NICS tally?",
        make_hits(heading, table),
    )
    # The row key and the columns the question asks about, each value under its header.
    assert text.startswith("State: Kentucky | Permit: 264,140 | Permit Recheck: 0 [Doc")
    assert "Handgun" not in text
    assert "Kansas" not in text and "Louisiana" not in text  # other rows are not the answer
    assert text.rstrip().endswith("[Doccc0011_p1]")
    assert citations[0].content_id == table.content_id


def test_markdown_table_in_chinese_picks_the_matching_row() -> None:
    table = make_chunk(
        "| 组件 | 默认端口 | 说明 |\n"
        "| :-- | :-- | :-- |\n"
        "| TiDB | 4000 | 应用及 DBA 工具访问通信端口 |\n"
        "| PD | 2379 | 提供 TiDB 和 PD 通信端口 |\n"
        "| PD | 2380 | PD 集群节点间通信端口 |",
        doc_id=TIDB,
        kind="table",
    )
    text, _ = extractive_answer(
        "TiDB 集群中 PD 各节点之间相互通信，默认占用哪个端口？", make_hits(table)
    )
    # The row key, the asked column, and the cell that matched the question's words.
    assert text.startswith("组件: PD | 默认端口: 2380 | 说明: PD 集群节点间通信端口 [Docee4455_p1]")
    assert "2379" not in text


def test_wide_table_row_is_cut_to_key_and_matching_cells() -> None:
    headers = ["State", *[f"Col{i}" for i in range(1, 12)], "Permit"]
    row = ["Kentucky", *[str(i) for i in range(1, 12)], "264,140"]
    other = ["Kansas", *["7"] * 11, "1,000"]
    table = make_chunk(
        "\n".join(" | ".join(r) for r in (headers, other, row)), doc_id=NICS, kind="table"
    )
    text, _ = extractive_answer("How many permit checks for Kentucky?", make_hits(table))
    assert "State: Kentucky" in text and "Permit: 264,140" in text
    assert "Col11" not in text  # cut: 8 cells at most


def test_near_duplicates_from_overlapping_chunks_appear_once() -> None:
    sentence = "The retention period for audit logs is 90 days."
    a = make_chunk(f"Logs are kept centrally. {sentence}", doc_id=FAA, ordinal=1)
    b = make_chunk(f"{sentence} Older logs are archived to tape.", doc_id=FAA, ordinal=2)
    text, _ = extractive_answer("What is the retention period for audit logs?", make_hits(a, b))
    assert text.count("90 days") == 1


def test_max_sentences_and_one_citation_per_label() -> None:
    chunk = make_chunk(
        "Audit logs are retained for 90 days. Audit logs are encrypted at rest. "
        "Audit logs are reviewed weekly by the audit team. Audit logs are exported daily.",
        doc_id=FAA,
    )
    text, citations = extractive_answer("How are audit logs handled?", make_hits(chunk), 2)
    assert len(LABEL.findall(text)) == 2
    assert len(citations) == 1 and citations[0].label == "[Docab12cd_p1]"


def test_paraphrase_with_no_shared_words_still_quotes_the_top_hit() -> None:
    chunk = make_chunk("Overview\nAstronauts must not drink alcohol 12 hours before flight.")
    text, _ = extractive_answer("宇航员起飞前多久不能喝酒？", make_hits(chunk), 1)
    assert text == "Astronauts must not drink alcohol 12 hours before flight. [Docab12cd_p1]"


def test_nothing_to_quote() -> None:
    assert extractive_answer("anything?", []) == ("", [])


def test_a_list_is_quoted_with_its_items() -> None:
    chunk = make_chunk(
        "Zero trust > Tenets\n"
        "A zero trust architecture follows these basic tenets:\n"
        "1. All data sources are considered resources. Devices count too.\n"
        "2. All communication is secured regardless of location. Detail follows.\n"
        "3. Access is granted per session.",
        doc_id=FAA,
    )
    text, _ = extractive_answer("What are the basic tenets of zero trust?", make_hits(chunk))
    # A short list is quoted in one piece: intro, items and what explains them, in order.
    squashed = squash(text)
    assert (
        squash(
            "A zero trust architecture follows these basic tenets: 1. All data sources are "
            "considered resources. Devices count too. 2. All communication is secured regardless "
            "of location. Detail follows. 3. Access is granted per session."
        )
        in squashed
    )

    long_note = " ".join(["Each resource is inventoried and monitored continuously."] * 12)
    chunk = make_chunk(
        "Zero trust > Tenets\n"
        "A zero trust architecture follows these basic tenets:\n"
        f"1. All data sources are considered resources. {long_note}\n"
        "2. All communication is secured regardless of location. Detail follows.\n"
        "3. Access is granted per session.",
        doc_id=FAA,
    )
    text, _ = extractive_answer("What are the basic tenets of zero trust?", make_hits(chunk))
    parts = quoted_parts(text)
    assert parts[0].endswith("tenets:")
    assert "1. All data sources are considered resources." in parts
    assert "2. All communication is secured regardless of location." in parts
    assert "3. Access is granted per session." in parts
    assert "Detail follows." not in text  # in a long list an item's explanation is left out


def test_focus_terms_are_the_words_beside_a_chinese_question_word() -> None:
    def focus(q: str) -> set[str]:
        return focus_terms(q, content_terms(q))

    assert "为食" in focus("斯氏腔吻鳕主要以什么为食？")
    assert focus("洛拉·帕尼亚尼在大学研究什么？") == {"研究"}
    assert "著作" in focus("魏玩的著作有哪些？")
    # 把 moves the object away from the question word: 文档 does not stand beside the
    # answer (who did it).
    assert "文档" not in focus("修订记录里，是谁把文档升级到 V1.1 的？")
    assert focus("What does the policy engine decide?") == set()


def test_words_beside_the_question_word_pick_the_sentence() -> None:
    chunk = make_chunk(
        "斯氏腔吻鳕为辐鳍鱼纲鳕形目鼠尾鳕科的其中一种。"
        "本鱼分布于西太平洋区，栖息在大陆棚斜坡。"
        "生活在混浊的泥沙底质上，几乎是以多毛类为食，偶在胃中发现甲壳类。",
        doc_id=TIDB,
    )
    text, _ = extractive_answer("斯氏腔吻鳕主要以什么为食？", make_hits(chunk), max_sentences=1)
    assert "以多毛类为食" in text


def test_a_word_beside_the_question_word_counts_through_its_characters() -> None:
    # 美誉 asked, 被誉为 said; 颜色 asked, 体呈淡蓝红色 said: of the sentences naming the
    # topic, the one that keeps a character of the word asked wins.
    praised = make_chunk(
        "王爱爱，女，1940年生，山西省榆次人。王爱爱擅长青衣。王爱爱被誉为晋剧皇后。",
        doc_id=TIDB,
    )
    text, _ = extractive_answer("王爱爱有什么美誉？", make_hits(praised), max_sentences=1)
    assert "晋剧皇后" in text
    fish = make_chunk(
        "黄鳍紫鱼，又称黄鳍姬鲷，为辐鳍鱼纲鲈形目笛鲷科的其中一个种。"
        "黄鳍紫鱼分布于印度太平洋区。黄鳍紫鱼体呈淡蓝红色，头部有网状斑点。",
        doc_id=TIDB,
    )
    text, _ = extractive_answer("黄鳍紫鱼的身体是什么颜色的？", make_hits(fish), max_sentences=1)
    assert "淡蓝红色" in text


def test_a_description_goes_on_into_the_sentence_that_continues_it() -> None:
    chunk = make_chunk(
        "战事在猪苗代湖北岸展开，开战初期风向为西，烈风变成顺风，对芦名军十分有利。"
        "但当风向转为东风后，伊达军的形势开始渐入佳境。"
        "战后伊达政宗进入黑川城。",
        doc_id=TIDB,
    )
    hits = make_hits(chunk)
    text, _ = extractive_answer("风向对这次战事有什么影响？", hits, max_sentences=1)
    assert "对芦名军十分有利。但当风向转为东风后" in text  # one quote, as the passage writes it
    assert "黑川城" not in text
    assert_verbatim(text, [chunk.text])
    # A question for a number is answered by the sentence that has it, nothing more.
    number, _ = extractive_answer("开战初期烈风从哪个方向来，有几级？", hits, max_sentences=1)
    assert "但当风向" not in number


def test_a_list_partly_quoted_already_is_not_quoted_whole_around_the_gap() -> None:
    chunk = make_chunk(
        "TiFlash 存算分离架构下 TiFlash Write Node 和 Compute Node 的推荐要求如下：\n"
        "- 软件：与存算一体架构一致。\n"
        "- 磁盘空间：\n"
        "  - TiFlash Write Node 磁盘空间：推荐 200 GB+，用作上传数据前的本地缓冲区。\n"
        "  - TiFlash Compute Node：推荐 100 GB+，用于缓存从 Write Node 读取的数据。\n"
        "- CPU 以及内存等要求参考下文。",
        doc_id=TIDB,
    )
    text, _ = extractive_answer(
        "TiFlash 存算分离架构中，TiFlash Write Node 推荐多大的磁盘空间？", make_hits(chunk)
    )
    assert "200 GB+" in text
    assert_verbatim(text, [chunk.text])  # every quote is one contiguous run of the text


def test_a_run_of_sentences_is_quoted_as_the_passage_writes_it() -> None:
    """Consecutive sentences of one passage are joined with what the passage has between
    them: nothing after a Chinese full stop or semicolon, or where the splitter cut inside
    a title (《CDTV×Sacas！》); a space where the passage has one. An inserted space made
    the quote differ from the document ("水源； 因此")."""
    chunk = make_chunk(
        "吉斯伯恩有长时间的日照，肥沃的土壤和河川带来丰富的水源；因此，畜牧业发达；"
        "其他园艺、农业等种植的农产品，如葡萄经过加工酿制成酒。"
        "2008年3月播放的《CDTV×Sacas！》节目中第一次于公开场合演唱。",
        doc_id=TIDB,
    )
    text, _ = extractive_answer("为什么吉斯伯恩的畜牧业发达？", make_hits(chunk))
    assert "水源；因此，畜牧业发达" in text
    text, _ = extractive_answer("第一次在公开场合演唱是什么节目？", make_hits(chunk))
    assert "《CDTV×Sacas！》节目中第一次" in text
    english = make_chunk("The index is rebuilt nightly. It takes an hour.", doc_id=TIDB)
    text, _ = extractive_answer("How long does the nightly rebuild take?", make_hits(english))
    assert "nightly. It takes" in text or "It takes an hour." in text


def test_the_breadcrumb_is_never_glued_to_a_sentence_that_goes_on_from_the_last_chunk() -> None:
    from generation.passages import candidates

    crumb = "7 Migrating to ZTA > 7.3.6 Initial Deployment and Monitoring"
    chunk = make_chunk(
        f"{crumb}\nas denying requests that fail MFA should be enforced and logged.\n"
        "Once the baseline is known, anomalies are easier to find.",
        section_path=("7 Migrating to ZTA", "7.3.6 Initial Deployment and Monitoring"),
        line_map=((1, 0, 0), (1, 4, 4), (1, 5, 5)),
    )
    texts = [c.text for c in candidates(chunk, 0)]
    assert texts[0] == crumb
    assert texts[1].startswith("as denying requests")
    # Without a line map, the section path written out marks the breadcrumb.
    bare = make_chunk(
        f"{crumb}\nas denying requests that fail MFA should be enforced.",
        section_path=("7 Migrating to ZTA", "7.3.6 Initial Deployment and Monitoring"),
    )
    assert candidates(bare, 0)[0].text == crumb


def test_only_sentences_that_could_rank_are_tested_for_the_kind_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import generation.extractive as extractive
    from generation.answer_type import Kind

    tested: list[str] = []
    real = extractive.has_answer_type

    def spy(text: str, kind: Kind, question: str) -> bool:
        tested.append(text)
        return real(text, kind, question)

    monkeypatch.setattr(extractive, "has_answer_type", spy)
    filler = "。".join(f"大桥第{i}次维修时记载了当地的气候" for i in range(12))
    text = f"长江大桥由茅以升主持设计。长江大桥全长一千六百米。{filler}。"
    question = "长江大桥由谁设计？"
    cands = extractive.candidates(make_chunk(text), 0)

    def best(ranked: int) -> list[str]:
        tested.clear()
        scored = extractive._score(question, cands, None, ranked)
        return [s.cand.text for s in sorted(scored, key=lambda s: -s.score)[:ranked]]

    # Every sentence tested: the order every signal gives.
    everything = best(len(cands))
    assert len(tested) == len(cands) and "茅以升" in everything[0]
    # Two places to fill: the same two, and the filler never tested.
    assert best(2) == everything[:2]
    assert 0 < len(tested) < 6 and not any("气候" in t for t in tested)


def test_a_sentence_matching_nothing_of_the_question_is_not_cut_into_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import generation.extractive as extractive

    cut: list[str] = []
    real = extractive.iter_index_tokens

    def spy(text: str) -> Iterator[str]:
        cut.append(text)
        return real(text)

    monkeypatch.setattr(extractive, "iter_index_tokens", spy)
    text = "长江大桥由茅以升主持设计。当地的气候温和湿润。长江大桥长江大桥。"
    scored = extractive._score("长江大桥由谁设计？", extractive.candidates(make_chunk(text), 0))
    by_text = {s.cand.text: s for s in scored}
    unrelated = by_text["当地的气候温和湿润。"]
    # Nothing of the question: it scores 0 whatever its words, and they are not cut.
    assert unrelated.relevance == 0 and unrelated.score == 0 and not unrelated.novel
    assert "当地的气候温和湿润。" not in cut
    # A sentence sharing words is cut to tell whether it says more than the question.
    assert by_text["长江大桥由茅以升主持设计。"].novel
    assert not by_text["长江大桥长江大桥。"].novel
    assert "长江大桥由茅以升主持设计。" in cut


def test_terms_are_matched_as_if_every_text_were_cut_into_tokens() -> None:
    # A text is cut only when a term's stem is written in it: the same terms are found as
    # when every text is cut (each token is a piece of the lowered text).
    import generation.extractive as extractive
    from core.text import index_tokens

    texts = [
        "The firearm checks were processed in November 2015.",
        "Permits: 264,140 issued; checks by NICS.",
        "Новосибирска находится в Сибири, города России.",
        "서울의 인구는 천만 명입니다. İstanbul'da yaşıyor.",
        "TiSpark P12.1.2 版本在 FCC A 上加载，检查 UTF-8 编码。",
        "Programs use RAM; a ram is an animal.",
        "",
    ]
    questions = [
        "How many firearm checks in November 2015?",
        "What is the permit count?",
        "Где находится Новосибирск?",
        "서울 인구는?",
        "TiSpark 的 p12.1.2 版本在哪里加载？utf-8",
        "How much RAM do programs use?",
    ]
    for question in questions:
        terms = content_terms(question)
        for text in texts:
            stems = {extractive._stem(t) for t in index_tokens(text)}
            by_token = {t for t in terms if not has_han(t) and extractive._stem(t) in stems}
            found = extractive._matched_terms(terms, text)
            assert by_token <= found, (question, text)
            # Whatever else is found is found another way: Han substrings, numerals,
            # identifiers with separators.
            tests = extractive._term_tests(tuple(terms))
            other = {*tests.han, *(t for t, _ in tests.numerals), *tests.joined}
            assert found - by_token <= other, (question, text)
    assert extractive._matched_terms(content_terms(questions[0]), texts[0]) >= {
        "firearm",
        "checks",
    }


def test_names_found_block_by_block_are_those_of_the_whole_sentence() -> None:
    # jieba tags each block between punctuation on its own, so tagging block by block (and
    # stopping at the first name) finds a person or place exactly when tagging the whole
    # sentence does.
    import jieba.posseg

    from generation.answer_type import has_answer_type

    sentences = [
        "罗保铭，天津人，1969年5月参加工作，南开大学明清史专业毕业。",
        "该国徽于1965年塞内加尔取得独立5年后采用，并自此成为该国的官方徽章。",
        "Tower Bridge 由 Horace Jones 设计，1894年6月30日开放。",
        "工业洗衣机的最大容量可以达到300千克。",
    ]
    flags = {"person": ("nr", "nrt", "nrfg"), "place": ("ns", "nt")}
    for sentence in sentences:
        for kind in ("person", "place"):
            question = "谁？"
            whole = any(
                p.flag in flags[kind] and len(p.word) >= 2 and p.word not in question
                for p in jieba.posseg.cut(sentence)
            )
            assert has_answer_type(sentence, kind, question) == whole, (sentence, kind)


def test_an_identifier_is_found_whole_as_the_pattern_finds_it() -> None:
    import random
    import re

    from generation.extractive import _whole_in

    rng = random.Random(3)
    alphabet = ["p12", ".", "1", "-", "a", "A", " ", "v1.5", "年", "_", "é"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        term = rng.choice(["p12.1", "v1.5", "1-a", "a", "12", "", "p12"])
        expected = re.search(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])", text) is not None
        assert _whole_in(term, text) == expected, (term, text)


def test_a_new_han_word_is_found_without_cutting_only_where_cutting_finds_one() -> None:
    # `_new_han_word` answers for `_novel` without cutting the text, when it is sure: it
    # must never say "new" where the tokens have no new word.
    import random

    import generation.extractive as extractive
    from core.text import iter_index_tokens

    texts = [
        "长江大桥由茅以升主持设计。",
        "长江大桥是什么？",
        "截至2015年，TiSpark的P12.1.2版本已在FCC A上加载。",
        "的了是在和",
        "蒂亚戈·蒙泰罗出生于葡萄牙里斯本，2005年加入本菲卡青年队。",
        "罗保铭，天津人，1969年5月参加工作。",
        "使用SSD硬盘，Logs are stored in Frankfurt。",
        "富士山の標高は何メートルですか？大阪と松本の間。",
        "서울의 인구는 천만 명입니다. 北京人口",
    ]
    rng = random.Random(2)
    said_new = 0
    for text in texts:
        words = sorted(set(iter_index_tokens(text)))
        for _ in range(60):
            matched = set(rng.sample(words, rng.randint(0, len(words))))
            cut = extractive._new_token(text, matched)
            if extractive._new_han_word(text, matched):
                said_new += 1
                assert cut, (text, matched)
    assert said_new > 50  # the shortcut is taken
    # Every token matched: nothing new, and the shortcut does not say otherwise.
    text = texts[0]
    assert not extractive._new_han_word(text, set(iter_index_tokens(text)))


def test_a_stem_is_found_among_the_runs_of_plain_english_as_tokenising_finds_it() -> None:
    # In plain English text a word stem is looked for among the word runs without
    # tokenising the text: the same answer as the tokens' stems give.
    import random

    import generation.extractive as extractive

    rng = random.Random(4)
    words = "check checks class classes gas bus nics p12 v1 max_connections utf 8 2015 is s ss"
    words += " data permits"
    seps = [" ", " ", ". ", ", ", "-", ".", "/", "_", "(", "'s "]
    stems = sorted({extractive._stem(w) for w in words.split()} | {*words.split(), "che", "permi"})
    checked = 0
    for _ in range(3000):
        picked = [rng.choice(words.split()) + rng.choice(seps) for _ in range(rng.randint(1, 8))]
        text = "".join(picked)
        text = text.title() if rng.random() < 0.2 else text
        lowered = text.lower()
        if not extractive._plain_english(text, lowered):
            continue
        tokens = extractive._token_stems(text)
        for stem in stems:
            if stem in lowered and extractive._RUN.fullmatch(stem):
                checked += 1
                assert extractive._run_stem_in(stem, lowered) == (stem in tokens), (stem, text)
    assert checked > 5000
    # Text in a language whose words are stemmed is cut as before.
    assert not extractive._plain_english("Wann starb Goethe in der Stadt?", "wann starb goethe")


def test_a_column_named_with_its_value_is_a_key_and_the_value_column_stays() -> None:
    """ "... in fiscal year 2010" names the Fiscal Year column and its value: a key, like
    the line item. The row's amount was cut, as if Fiscal Year were the column asked."""
    sheet = make_chunk(
        "| Line Item | Fiscal Year | Amount (US$, Millions) |\n|---|---|---|\n"
        "| Development Credits - Disbursements | 2010 | -9336 |\n"
        "| Development Credits - Disbursements | 2009 | -8915 |\n"
        "| Members' subscriptions and contributions | 2010 | 8730 |",
        kind="table",
        title="IDA Statement of Cash Flows FY2011",
    )
    ex = extract(
        "What were IDA development credit disbursements in fiscal year 2010?", make_hits(sheet)
    )
    assert "-9336" in ex.quotes[0].text and "8730" not in ex.quotes[0].text


def _table_hits(header: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> list[Hit]:
    """Hits of one Markdown table chunk with its header and rows as metadata."""
    lines = ["| " + " | ".join(r) + " |" for r in (header, ("---",) * len(header), *rows)]
    text = "\n".join(lines)
    return make_hits(make_chunk(text, kind="table", table_header=header, table_rows=rows))


def test_a_question_asking_for_several_rows_gets_every_row_it_picks_out() -> None:
    """ "Which teams belong to the Operations division?" is answered with its three teams
    as a table, not one of them; a question for one thing keeps one row."""
    header = ("Division", "Team", "Headcount")
    rows = (
        ("Operations", "Logistics", "14"),
        ("Operations", "Facilities", "6"),
        ("Technology", "Platform", "22"),
        ("Operations", "Procurement", "9"),
    )
    hits = _table_hits(header, rows)
    listed = extract("Which teams belong to the Operations division?", hits)
    shown = " ".join(q.text for q in listed.quotes)
    assert all(t in shown for t in ("Logistics", "Facilities", "Procurement")), shown
    assert "Platform" not in shown
    one = extract("What is the headcount of the Platform team?", hits)
    assert [q.text for q in one.quotes] == ["Division: Technology | Team: Platform | Headcount: 22"]


def test_each_ones_value_asked_in_chinese_gets_every_row() -> None:
    """ "各部门…分别是多少？" (each department's) was answered with one department's row, with
    no sign that the others were left out."""
    header = ("部门", "2025年预算上半年", "2025年预算下半年")
    rows = (("研发部", "1200", "1350"), ("市场部", "800", "650"), ("财务部", "90", "95"))
    hits = _table_hits(header, rows)
    listed = extract("各部门2025年上半年预算分别是多少？", hits)
    shown = " ".join(q.text for q in listed.quotes)
    assert all(d in shown for d in ("研发部", "市场部", "财务部")), shown
    one = extract("财务部2025年上半年预算是多少？", hits)
    assert one.quotes[0].text.startswith("部门: 财务部"), one


def test_a_comparison_of_two_named_rows_quotes_both() -> None:
    """ "比较研发部和市场部的执行率" quoted the 市场部 row alone: the rows the question names
    by their keys match what the best row matches besides its key."""
    header = ("部门", "2025年预算上半年", "实际支出", "执行率", "负责人")
    rows = (
        ("研发部", "1200", "2180.5", "85.5%", "王建国"),
        ("市场部", "800", "1320", "91.0%", "李晓燕"),
        ("人力资源部", "150", "298.4", "93.3%", "张敏"),
        ("财务部", "90", "160.2", "86.6%", "陈立"),
    )
    hits = _table_hits(header, rows)
    quotes = [q.text for q in extract("比较研发部和市场部的执行率", hits).quotes]
    assert quotes == ["| 部门 | 执行率 |\n|---|---|\n| 研发部 | 85.5% |\n| 市场部 | 91.0% |"], (
        quotes
    )


def test_a_table_of_contents_entry_is_never_the_answer() -> None:
    """ "2.1 Tenets of Zero Trust ........ 6" repeats a heading with its page: the body
    sentence answers (a QA pass saw such lines quoted from the NIST PDF)."""
    contents = make_chunk(
        "2 Zero Trust Basics............................ 4\n"
        "2.1 Tenets of Zero Trust ....................... 6\n"
        "第二章 零信任的原则……………… 12",
        ordinal=0,
    )
    body = make_chunk(
        "A zero trust architecture is designed and deployed with the following tenets. "
        "All data sources and computing services are considered resources.",
        ordinal=1,
    )
    ex = extract("What are the tenets of zero trust?", make_hits(contents, body))
    assert ex.quotes and all("...." not in q.text for q in ex.quotes), ex.quotes
    assert "tenets" in ex.quotes[0].text


def test_a_captions_label_alone_is_never_the_answer() -> None:
    """An HTML caption split into "Table 1." and its title: the label alone says nothing
    (a QA pass saw it quoted)."""
    hits = make_hits(
        make_chunk("Table 1.\nShipping fees per zone.\nZone A parcels ship for 4 euros.")
    )
    ex = extract("What does Table 1 show?", hits)
    assert ex.quotes and all(q.text != "Table 1." for q in ex.quotes), ex.quotes


def test_a_piece_of_the_breadcrumb_is_a_heading_and_does_not_lead() -> None:
    """(Session 47.) The chunk's breadcrumb "Política > 3. Límites de gasto" was cut at
    its numbering into two sentences; "Límites de gasto" was then no heading, and led an
    answer tied with the table's rows."""
    chunk = make_chunk(
        "Política de viajes > 3. Límites de gasto\nEl hotel se reembolsa hasta 110 € por noche.",
        section_path=("Política de viajes", "3. Límites de gasto"),
    )
    import generation.extractive as extractive

    pieces = candidates(chunk, 0)
    assert [c.text for c in pieces][:2] == ["Política de viajes > 3.", "Límites de gasto"]
    assert extractive._heading_like(pieces[1])
    ex = extract("¿Cuál es el límite de gasto de hotel?", make_hits(chunk), 1)
    assert ex.quotes[0].text.startswith("El hotel"), ex.quotes


def test_a_name_with_a_number_picks_its_row_over_a_sentence_without_it() -> None:
    """(Held-out pass, session 48.) "Grade 7" picks one row of a grade table: a sentence on
    "Grade 5 and above" shares more of the question's words but not the grade, and the
    answer's check refuses it."""
    rule = make_chunk(
        "2.1 Employees in Grade 5 and above who drive more than 8,000 business miles a year "
        "may choose either a company car or a monthly cash car allowance.",
        ordinal=1,
    )
    table = make_chunk(
        "| Grade | Annual car allowance (gross) | List price cap |\n|---|---|---|\n"
        "| Grade 5 | £4,200 | £32,000 |\n| Grade 7 | £6,900 | £45,000 |",
        kind="table",
        ordinal=2,
    )
    text, _ = extractive_answer(
        "I'm on Grade 7 and would rather take cash than a company car. How much is the car "
        "allowance per year before tax?",
        make_hits(rule, table),
    )
    assert text.startswith("Grade: Grade 7 | Annual car allowance (gross): £6,900")


def test_a_grade_code_picks_its_row() -> None:
    """(Held-out pass, session 48.) "Senior Manager (G6)": the G6 row leads, not G5's."""
    table = make_chunk(
        "| Grade / role | List price cap | CO2 limit |\n|---|---|---|\n"
        "| G5 Regional Manager | £32,000 | 50 g/km |\n| G6 Senior Manager | £40,000 | 50 g/km |",
        kind="table",
    )
    text, _ = extractive_answer(
        "I've just been promoted to Senior Manager (G6). What's the most expensive company "
        "car I can choose, going by list price?",
        make_hits(table),
    )
    assert text.startswith("Grade / role: G6 Senior Manager"), text
