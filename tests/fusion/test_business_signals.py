"""Trust, timeliness, the rerank formula, route budgets and fallbacks in the pipeline."""

import asyncio
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date, timedelta

import pytest

from core.settings import FusionSettings, TrustRule
from core.text import query_terms
from core.types import Chunk, Hit, Principal, QueryFilter, ScoredId
from fusion.pipeline import SearchPipeline
from fusion.rerank import (
    BUILD_AT_SIGHT,
    SignalReranker,
    coverage,
    lead_text,
    rare_term_coverage,
    rarity_weights,
    searchable_text,
)
from fusion.trust import TrustPolicy, decay
from routing.instruction import TaskContext
from routing.intent import Intent
from routing.router import Router
from routing.synonyms import SynonymDictionary

TODAY = date(2026, 6, 1)
POOL = ThreadPoolExecutor(4)


def _chunk(cid: str, text: str, **kw: object) -> Chunk:
    base = Chunk(
        content_id=cid,
        doc_id=f"doc-{cid}",
        version="v1",
        ordinal=0,
        kind="text",
        text=text,
        page_start=1,
        page_end=1,
        line_start=1,
        line_end=1,
        source=f"file:///srv/docs/{cid}.md",
        title=cid,
        doc_type="markdown",
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_decay_half_life() -> None:
    assert decay(TODAY, TODAY, 180) == 1.0
    assert abs(decay(TODAY - timedelta(days=180), TODAY, 180) - 0.5) < 1e-9
    assert abs(decay(TODAY - timedelta(days=360), TODAY, 180) - 0.25) < 1e-9
    assert decay(None, TODAY, 180) == 0.5
    assert decay(TODAY + timedelta(days=30), TODAY, 180) == 1.0


def test_trust_rules_classes_and_upload_field() -> None:
    fusion = FusionSettings(
        trust_rules=[
            TrustRule(glob="*/news/*", source_class="news"),
            TrustRule(glob="*/laws/*", source_class="statute"),
            TrustRule(glob="*/vendor/*", source_class="external_standard", trust=0.6),
        ]
    )
    policy = TrustPolicy(fusion)
    news = policy.standing(_chunk("a", "x", source="file:///srv/news/a.html"))
    assert (news.source_class, news.trust, news.decays) == ("news", 0.3, True)
    law = policy.standing(_chunk("b", "x", source="file:///srv/laws/b.md"))
    assert (law.source_class, law.trust, law.decays) == ("statute", 1.0, False)
    assert policy.standing(_chunk("c", "x", source="file:///srv/vendor/c.pdf")).trust == 0.6
    upload = policy.standing(_chunk("d", "x", source="upload://k", source_trust=0.4))
    assert (upload.source_class, upload.trust) == ("default", 0.4)
    old = _chunk("e", "x", modified=TODAY - timedelta(days=3650), source="file:///srv/laws/e")
    assert policy.timeliness(old, law.decays, TODAY) == 1.0  # statutes do not decay


def _hits(*chunks: Chunk) -> list[Hit]:
    return [Hit(c, 1.0) for c in chunks]


def test_rerank_formula_prefers_newer_and_trusted_when_relevance_ties() -> None:
    text = "The maximum session timeout is 30 minutes."
    old = _chunk("old", text, modified=TODAY - timedelta(days=720))
    new = _chunk("new", text, modified=TODAY - timedelta(days=10))
    reranker = SignalReranker(today=TODAY)
    ranked = reranker.rerank("maximum session timeout", _hits(old, new), 1.0)
    assert [h.chunk.content_id for h in ranked] == ["new", "old"]
    s = ranked[0].signals
    f = reranker.fusion
    expected = s["relevance"] * (
        f.base
        + f.timeliness_weight * s["timeliness"]
        + f.trust_weight * s["trust"]
        + f.coverage_weight * s["coverage"]
    )
    assert abs(ranked[0].score - expected) < 1e-9
    # Switched off, age cannot reorder: equal scores, ties broken by content_id.
    off = SignalReranker(today=TODAY, fusion=FusionSettings(use_timeliness=False))
    ranked = off.rerank("maximum session timeout", _hits(old, new), 1.0)
    assert ranked[0].score == ranked[1].score
    # Trust: a news copy of the same text ranks under the SOP.
    fusion = FusionSettings(trust_rules=[TrustRule(glob="*/news/*", source_class="news")])
    sop = _chunk("sop", text, modified=TODAY)
    news = _chunk("blog", text, modified=TODAY, source="file:///srv/news/blog.html")
    ranked = SignalReranker(today=TODAY, fusion=fusion).rerank(
        "session timeout", _hits(news, sop), 1.0
    )
    assert [h.chunk.content_id for h in ranked] == ["sop", "blog"]
    assert ranked[1].source_class == "news" and ranked[1].signals["trust"] == 0.3


def test_versions_of_unequal_length_are_ordered_at_the_similarity_bound() -> None:
    """Near-identical passages of two documents: the newer goes first even when the older
    one was fused far higher, once their word sets overlap by at least
    `version_similarity` (0.7), measured exactly also when their sizes differ."""
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
    ]
    extra = ["kilo", "lima", "mike", "november", "oscar"]
    older = _chunk("older", " ".join(words), title="policy", modified=TODAY - timedelta(days=30))

    def ranked(newer_words: list[str]) -> list[str]:
        newer = _chunk(
            "newer", " ".join(newer_words), title="policy", modified=TODAY - timedelta(days=20)
        )
        hits = [Hit(older, 1.0), Hit(newer, 0.2)]
        return [h.chunk.content_id for h in SignalReranker(today=TODAY).rerank("zulu", hits, 1.0)]

    # The title is a word of both: 11 shared of 15 (0.73), then 11 of 16 (0.69).
    assert ranked(words + extra[:4]) == ["newer", "older"]
    assert ranked(words + extra) == ["older", "newer"]


def test_relevance_still_dominates_age() -> None:
    """Decay reorders near-ties; it does not bury the passage that answers the question."""
    answer = _chunk(
        "ans", "The maximum session timeout is 30 minutes.", modified=TODAY - timedelta(days=400)
    )
    other = _chunk("oth", "Lunch menus are published weekly.", modified=TODAY)
    ranked = SignalReranker(today=TODAY).rerank(
        "maximum session timeout", _hits(other, answer), 1.0
    )
    assert ranked[0].chunk.content_id == "ans"


class _Stores:
    def __init__(self, chunks: Sequence[Chunk], delay_s: float = 0.0) -> None:
        self.chunks = {c.content_id: c for c in chunks}
        self.delay_s = delay_s
        self.seen: list[tuple[str, str, QueryFilter]] = []

    def factory(self, name: str):  # type: ignore[no-untyped-def]
        def make(query: str, where: QueryFilter, intent: Intent):  # type: ignore[no-untyped-def]
            self.seen.append((name, query, where))

            def run(k: int) -> list[ScoredId]:
                if name == "dense" and self.delay_s:
                    time.sleep(self.delay_s)
                return [ScoredId(c, 1.0) for c, ch in self.chunks.items() if where.admits(ch)][:k]

            return run

        return make

    def serving(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return {i: self.chunks[i] for i in ids if i in self.chunks}


def _pipeline(stores: _Stores, synonyms: SynonymDictionary | None = None) -> SearchPipeline:
    return SearchPipeline(
        Router(),
        {n: stores.factory(n) for n in ("keyword", "dense", "graph")},
        stores.serving,
        SignalReranker(today=TODAY),
        POOL,  # the app's own pool: asyncio.run must not wait on it
        synonyms=synonyms,
    )


def test_route_object_filters_and_synonyms_reach_every_source() -> None:
    stores = _Stores(
        [
            _chunk("a", "服务器温度过高时风扇全速运转", department="it", modified=TODAY),
            _chunk("b", "财务报销流程", department="finance", modified=TODAY),
        ]
    )
    ctx = TaskContext(task="troubleshooting", departments=("it",), entities=("风扇",))
    result = asyncio.run(
        _pipeline(stores, SynonymDictionary()).search("服务器过热", Principal(), context=ctx)
    )
    route = result.route
    assert route.rule == "troubleshooting" and route.budget_ms == 800
    assert route.filters == {"department": ["it"]}
    assert route.synonyms_applied == {"过热": ["温度过高", "发热异常", "散热不良"]}
    assert "温度过高" in route.query and "风扇" in route.query
    assert [h.chunk.content_id for h in result.hits] == ["a"]
    # Every source got the narrowed filter and the expanded query.
    assert {name for name, _, _ in stores.seen} == {"keyword", "dense"}
    assert all(w.departments == {"it"} and "温度过高" in q for _, q, w in stores.seen)
    # The synonym counts for coverage: the question is judged covered.
    assert result.covered


def test_budget_is_enforced_and_fallback_reported() -> None:
    stores = _Stores([_chunk("a", "第十三条 个人信息处理者", modified=TODAY)], delay_s=0.2)
    result = asyncio.run(_pipeline(stores).search("个人信息处理者", Principal()))
    assert result.route.rule == "default-hybrid"
    assert result.route.fallback == ""  # a slowish source within its budget still answers
    stores.delay_s = 3.0
    pipe = _pipeline(stores)
    start = time.perf_counter()
    result = asyncio.run(pipe.search("个人信息处理者", Principal(), task="troubleshooting"))
    assert time.perf_counter() - start < 1.5  # 800 ms budget, not the source's 3 s
    assert result.route.fallback == "dense: timeout after 800 ms; answered from keyword"
    assert any(w.startswith("dense: timeout") for w in result.warnings)
    assert [h.chunk.content_id for h in result.hits] == ["a"]


def test_the_same_short_sentence_about_two_subjects_is_no_conflict() -> None:
    from fusion.conflicts import ConflictDetector
    from fusion.trust import TrustPolicy

    def hit(cid: str, title: str, text: str) -> Hit:
        return Hit(chunk=_chunk(cid, text, title=title), score=1.0)

    detector = ConflictDetector(TrustPolicy(FusionSettings()))
    fishes = [
        hit("a", "蓝线裸顶鲷", "蓝线裸顶鲷是鱼。体长可达80公分。"),
        hit("b", "金带齿颌鲷", "金带齿颌鲷是鱼。体长可达70公分。"),
    ]
    assert detector.detect("蓝线裸顶鲷的体长约是多少公分？", fishes) == []
    versions = [
        hit("a", "个人信息保护法", "个人信息保护法。处理者应当在十五日内答复。"),
        hit("b", "个人信息保护法（草案）", "个人信息保护法。处理者应当在三十日内答复。"),
    ]
    assert detector.detect("处理者应当在多少日内答复？", versions)


def test_a_conflict_between_traditional_and_simplified_copies_is_found() -> None:
    """The same rule stated in a simplified policy and its traditional copy with another
    number: the question's words were looked for in the traditional sentence as written
    (密碼 is not 密码), so the disagreement went unflagged."""
    from fusion.conflicts import ConflictDetector
    from fusion.trust import TrustPolicy

    def hit(cid: str, text: str) -> Hit:
        return Hit(chunk=_chunk(cid, text, title="信息安全管理规范"), score=1.0)

    detector = ConflictDetector(TrustPolicy(FusionSettings()))
    copies = [
        hit("a", "密码每90天必须更换一次，不得与最近5次使用过的密码相同。"),
        hit("b", "密碼每60天必須更換一次，不得與最近5次使用過的密碼相同。"),
    ]
    found = detector.detect("密码更换周期是几天？", copies)
    assert len(found) == 1 and len(found[0]["values"]) == 2, found


def test_one_clause_reworded_in_two_versions_is_a_conflict() -> None:
    """第六条 of a policy and of its old backup copy give 15个工作日 and 30天; the new one
    also names the OA system, so the masked sentences were too unlike (0.59) to be the same
    statement. The same numbered clause of same-titled documents is compared more loosely;
    two different clauses are still no conflict."""
    from fusion.conflicts import ConflictDetector
    from fusion.trust import TrustPolicy

    def hit(cid: str, text: str) -> Hit:
        return Hit(chunk=_chunk(cid, text, title="差旅费报销管理办法"), score=1.0)

    detector = ConflictDetector(TrustPolicy(FusionSettings()))
    new = (
        "第六条 员工应在出差结束后15个工作日内通过OA系统（流程编号FIN-EXP-02）提交报销单，"
        "逾期未提交的，财务部不予受理。"
    )
    old = "第六条 员工应在出差结束后30天内提交报销单，逾期未提交的，财务部不予受理。"
    found = detector.detect("出差结束后多久内提交报销单？", [hit("a", new), hit("b", old)])
    assert len(found) == 1, found
    other = "第五条 员工出差结束后5天内归还借款，逾期未还的，从工资中扣除。"
    assert detector.detect("出差结束后多久内提交报销单？", [hit("a", new), hit("c", other)]) == []


def test_rare_terms_put_the_passage_naming_the_subject_first() -> None:
    # Both passages say "别名"; only one names the plant asked about. The other leads on
    # fused rank, and without corpus statistics nothing says "蓍" matters more.
    other = _chunk("other", "威立雅运输集团的别名来自希腊神话中风神的别名。", modified=TODAY)
    answer = _chunk("ans", "蓍，别名欧蓍、千叶蓍，是菊科蓍属的多年生草本植物。", modified=TODAY)
    question = "蓍的别名是什么？"

    def ranked(rarity: dict[str, float] | None) -> list[str]:
        hits = [Hit(other, 1.0, {}), Hit(answer, 0.8, {})]
        out = SignalReranker(today=TODAY).rerank(question, hits, 1.0, rarity=rarity)
        return [h.chunk.content_id for h in out]

    assert ranked(None) == ["other", "ans"]
    rarity = rarity_weights(4000, {"蓍": 2, "别名": 60})
    assert rarity["蓍"] > 5 * rarity["别名"]  # idf cubed: the subject dominates
    assert ranked(rarity) == ["ans", "other"]
    assert rare_term_coverage(rarity, "没有这两个词") == 0.0
    assert rare_term_coverage(rarity, "蓍 别名") == 1.0


def test_the_passage_that_opens_with_the_subject_leads() -> None:
    # Both passages name 罗保铭 and say where someone studied; one is a colleague's
    # biography that mentions him in passing (and leads on fused rank), the other opens
    # with him. Only the opening words tell them apart.
    other = _chunk(
        "other", "郑国光，江苏涟水人，本科毕业于南京气象学院，曾与罗保铭共事。", modified=TODAY
    )
    answer = _chunk("ans", "罗保铭，天津人，南开大学明清史专业毕业。", modified=TODAY)
    question = "罗保铭本科毕业于哪所大学？"
    rarity = rarity_weights(4000, {"罗保铭": 2, "本科": 300, "毕业": 400, "大学": 900})

    def ranked(on: bool) -> list[str]:
        hits = [Hit(other, 1.0, {}), Hit(answer, 0.85, {})]
        fusion = FusionSettings(use_lead_terms=on)
        out = SignalReranker(today=TODAY, fusion=fusion).rerank(question, hits, 1.0, rarity=rarity)
        return [h.chunk.content_id for h in out]

    assert ranked(False) == ["other", "ans"]
    assert ranked(True) == ["ans", "other"]


def test_lead_text_is_the_opening_clause() -> None:
    # A passage that opens with a clause break has no lead: its subject was left out.
    assert lead_text(_chunk("a", "，是冷湖行政区下辖的一个镇，因境内呼通诺尔湖而得名。")) == ""
    assert lead_text(_chunk("a2", "冷湖行政区，是青海省下辖的一个县级行政区。")) == "冷湖行政区"
    assert (
        lead_text(_chunk("b", "塞内加尔国徽（）由一个侧面靠著棕榈枝条的盾组成。")) == "塞内加尔国徽"
    )
    # Han: at most 20 characters; Latin: about 30, cut at a word.
    assert len(lead_text(_chunk("c", "一" * 50))) == 20
    assert lead_text(
        _chunk("d", "Tower Bridge is a combined bascule and suspension bridge in London")
    ) == ("tower bridge is a combined")
    # The title and headings are not the lead (they are in the searchable text already).
    assert (
        lead_text(_chunk("e", "Body text.", title="Guide", section_path=("Setup",))) == "body text"
    )


def test_term_statistics_are_fetched_beside_retrieval_and_never_block_it() -> None:
    stores = _Stores([_chunk("a", "第十三条 个人信息处理者", modified=TODAY)])
    asked: list[Sequence[str]] = []

    def frequencies(terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        asked.append(terms)
        return 100, {t: 3 for t in terms}

    def failing(terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        raise RuntimeError("keyword store down")

    def slow(terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        time.sleep(1.0)
        return 100, {t: 3 for t in terms}

    def run(freq):  # type: ignore[no-untyped-def]
        pipe = SearchPipeline(
            Router(),
            {n: stores.factory(n) for n in ("keyword", "dense", "graph")},
            stores.serving,
            SignalReranker(today=TODAY),
            POOL,
            frequencies=freq,
        )
        return asyncio.run(pipe.search("个人信息处理者", Principal()))

    hit = run(frequencies).hits[0]
    assert asked and hit.signals["rare_terms"] == 1.0
    for freq in (failing, None):
        result = run(freq)
        assert [h.chunk.content_id for h in result.hits] == ["a"]
        assert "rare_terms" not in result.hits[0].signals
    start = time.perf_counter()
    result = run(slow)
    assert time.perf_counter() - start < 0.8  # the rerank does not wait for slow statistics
    assert "rare_terms" not in result.hits[0].signals


def test_a_passage_scores_the_same_the_first_time_and_once_seen() -> None:
    # Seen for the first times, a passage's grams are looked up; once it has come back
    # BUILD_AT_SIGHT times, read from its memoised words (a question of words alone). The
    # signals must not differ.
    texts = [
        "The enterprise's metadata uses data; data-driven plans use the data plane.",
        "截至2015年，TiDB 在使用SSD时的延迟为 2 ms。",
        "Das Unternehmen nutzt Daten für seine Pläne.",
    ]
    reranker = SignalReranker(today=TODAY)
    for question in ("What data does the enterprise's plan use?", "2015年TiDB使用什么SSD？"):
        runs = []
        for _ in range(BUILD_AT_SIGHT + 1):
            hits = _hits(*(_chunk(f"c{i}", t) for i, t in enumerate(texts)))
            runs.append(
                {h.chunk.content_id: dict(h.signals) for h in reranker.rerank(question, hits, 1.0)}
            )
        assert all(run == runs[0] for run in runs), question
    assert (
        SignalReranker(today=TODAY)
        .rerank("data plane", _hits(_chunk("x", texts[0])), 1.0)[0]
        .signals["bigrams"]
        == 1.0
    )


def test_han_terms_looked_up_through_the_held_bigrams_match_a_plain_search() -> None:
    # A Han term is searched for only when all its bigrams were found in the passage: its
    # bigrams apart ("数据" and "据库" in different places) must not count as the term.
    texts = [
        "数据和据库不是一回事，大数据也不是。",
        "本系统的数据库在2015年升级。",
        "分布式数据库TiDB支持 SQL 查询。",
        "Database upgrades, 数据 only.",
    ]
    question = "分布式数据库在哪一年升级？"
    hits = SignalReranker(today=TODAY).rerank(
        question, _hits(*(_chunk(f"c{i}", t) for i, t in enumerate(texts))), 1.0
    )
    terms = query_terms(question)
    assert any(len(t) > 2 for t in terms)  # a term longer than one bigram is among them
    for hit in hits:
        expected = coverage(terms, searchable_text(hit.chunk))
        assert hit.signals["coverage"] == pytest.approx(expected), hit.chunk.text
    by_id = {h.chunk.content_id: h.signals["coverage"] for h in hits}
    assert by_id["c0"] < by_id["c1"] < by_id["c2"]


def test_a_statement_is_the_best_matching_sentence_that_states_a_value() -> None:
    """A sentence without a digit (or a Chinese numeral) states no value, so it is passed
    over even when it matches more of the question: the claim is the best-matching
    sentence that has one, and a later, weaker one still counts."""
    from fusion.conflicts import ConflictDetector
    from fusion.trust import TrustPolicy

    def hit(cid: str, title: str, text: str) -> Hit:
        return Hit(chunk=_chunk(cid, text, title=title), score=1.0)

    detector = ConflictDetector(TrustPolicy(FusionSettings()))
    versions = [
        hit(
            "a",
            "个人信息保护法",
            "处理者应当及时答复个人的申请，并说明答复的理由。处理者应当在十五日内答复。",
        ),
        hit("b", "个人信息保护法（草案）", "处理者应当在３０日内答复。"),
    ]
    (conflict,) = detector.detect("处理者应当在多少日内答复个人的申请？", versions)
    assert {v["value"] for v in conflict["values"]} == {"十五日", "３０日"}
    assert {v["text"] for v in conflict["values"]} == {
        "处理者应当在十五日内答复。",
        "处理者应当在３０日内答复。",
    }
