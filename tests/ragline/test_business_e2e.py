"""Filters, trust, timeliness, superseded versions, synonyms, conflicts and knowledge gaps
through the whole application, on both profiles: embedded (SQLite, FTS5, FAISS) and
production (PostgreSQL, Elasticsearch, Neo4j on the local servers)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from core.settings import BackendSettings, FusionSettings, Settings, TrustRule
from core.types import Principal
from ragline.app import Ragline
from routing.instruction import TaskContext

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "indexing"))
from servers import neo4j_auth, postgres_url, scoped_name, server_url

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "conflicts"
OPERATOR = Principal("ops", roles=frozenset({"legal"}))


def _production(tmp: Path) -> Iterator[Settings]:
    from indexing.migrate import scratch_database

    es_url = server_url("RAGLINE_TEST_ES_URL")
    neo_url = server_url("RAGLINE_TEST_NEO4J_URL")
    user, password = neo4j_auth()
    with scratch_database(postgres_url()) as pg:
        yield Settings(
            profile="production",
            data_dir=tmp / "data",
            metadata_url=pg,
            backends=BackendSettings(
                keyword="elasticsearch",
                graph="neo4j",
                es_url=es_url,
                es_index=scoped_name(tmp, "ragline-biz-"),
                neo4j_url=neo_url,
                neo4j_user=user,
                neo4j_password=password,
                neo4j_namespace=scoped_name(tmp, "biz"),
            ),
            fusion=FUSION,
        )


FUSION = FusionSettings(
    trust_rules=[TrustRule(glob="*/news/*", source_class="news")],
)


@pytest.fixture(
    scope="module", params=["embedded", pytest.param("production", marks=pytest.mark.integration)]
)
def rag(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Ragline]:
    tmp = tmp_path_factory.mktemp(f"biz-{request.param}")
    docs = tmp / "docs"
    (docs / "legal").mkdir(parents=True)
    (docs / "news").mkdir()
    for f in FIXTURES.glob("pipl-*.md"):
        shutil.copy(f, docs / "legal" / f.name)
    for f in FIXTURES.glob("tidb-*.md"):
        shutil.copy(f, docs / f.name)
    # The same operating limit stated by an SOP and by a news item (less trusted).
    fact = "The Zentrox gateway session timeout is 45 minutes for operators.\n"
    (docs / "zentrox-sop.md").write_text("# Zentrox SOP\n\n" + fact, encoding="utf-8")
    (docs / "news" / "zentrox-news.md").write_text("# Zentrox news\n\n" + fact, encoding="utf-8")
    if request.param == "production":
        gen = _production(tmp)
        settings = next(gen)
    else:
        gen = None
        settings = Settings(data_dir=tmp / "data", fusion=FUSION)
    app = Ragline(settings)
    outcomes, report = app.ingest([docs])
    assert not report.errors and all(o.status == "indexed" for o in outcomes), outcomes
    app.docs_root = docs  # type: ignore[attr-defined]
    yield app
    for store in (app.stores.keyword, app.stores.graph):
        drop = getattr(store, "drop", None)
        if request.param == "production" and drop is not None:
            drop()
    app.close()
    if gen is not None:
        gen.close()


def test_effective_dates_from_text(rag: Ragline) -> None:
    dates = {Path(d.source).name: d.modified for d in rag.stores.metadata.documents()}
    assert dates["pipl-2021.md"] == date(2021, 11, 1)
    assert dates["pipl-revised-edited.md"] == date(2025, 1, 1)


def test_conflicting_versions_are_reported_newer_preferred(rag: Ragline) -> None:
    answer = rag.ask("处理不满多少周岁未成年人个人信息应当取得父母同意？", OPERATOR)
    assert answer.covered, answer.text
    assert answer.conflicts, answer.text
    c = answer.conflicts[0]
    values = {v["value"] for v in c["values"]}
    assert values == {"十四周岁", "十六周岁"}, c
    newer = next(v for v in c["values"] if v["value"] == "十六周岁")
    assert c["preferred"] == newer["label"] and c["reason"].startswith("newer")
    # The answer says so and cites both sides.
    assert "不一致" in answer.text
    cited = {x.content_id for x in answer.citations}
    assert {v["content_id"] for v in c["values"]} <= cited
    assert all(v["label"] in answer.text for v in c["values"])


def test_table_field_conflict(rag: Ragline) -> None:
    answer = rag.ask("TiKV 生产环境内存要求是多少？", OPERATOR)
    assert answer.conflicts, answer.text
    fields = [c for c in answer.conflicts if "tikv" in c["subject"]]
    assert fields and {v["value"] for v in fields[0]["values"]} == {"64gb", "96gb"}


def test_newer_version_ranks_first(rag: Ragline) -> None:
    result = rag.search("处理未成年人个人信息 应当取得父母或者其他监护人的同意", OPERATOR)
    # Both copies match alike; only the date differs: the newer comes first.
    top = [Path(h.chunk.source).name for h in result.hits[:2]]
    assert top == ["pipl-revised-edited.md", "pipl-2021.md"]
    assert result.hits[0].signals["timeliness"] > result.hits[1].signals["timeliness"]


def test_trusted_source_ranks_over_news(rag: Ragline) -> None:
    result = rag.search("Zentrox gateway session timeout", OPERATOR)
    names = [Path(h.chunk.source).name for h in result.hits[:2]]
    assert names == ["zentrox-sop.md", "zentrox-news.md"]
    assert result.hits[1].source_class == "news" and result.hits[1].signals["trust"] == 0.3


def test_filters_apply_in_every_store(rag: Ragline) -> None:
    ctx = TaskContext(task="analysis", date_from=date(2024, 1, 1))
    result = rag.search("个人信息处理者 未成年人", OPERATOR, context=ctx)
    names = {Path(h.chunk.source).name for h in result.hits}
    assert "pipl-2021.md" not in names and "pipl-revised-edited.md" in names
    assert {s.name for s in result.route.sources} == {"keyword", "dense", "graph"}
    assert result.route.filters == {"date_range": ["2024-01-01", None]}
    ctx = TaskContext(doc_types=("pdf",))
    assert rag.search("个人信息处理者", OPERATOR, context=ctx).hits == []


def test_superseded_version_never_ranks(rag: Ragline) -> None:
    docs: Path = rag.docs_root  # type: ignore[attr-defined]
    sop = docs / "zentrox-sop.md"
    old = sop.read_text(encoding="utf-8")
    sop.write_text(old.replace("45 minutes", "20 minutes"), encoding="utf-8")
    try:
        rag.ingest([sop])
        result = rag.search("Zentrox gateway session timeout minutes", OPERATOR)
        texts = [h.chunk.text for h in result.hits if h.chunk.source.endswith("zentrox-sop.md")]
        assert texts and all("20 minutes" in t for t in texts)
    finally:
        sop.write_text(old, encoding="utf-8")
        rag.ingest([sop])


def test_knowledge_gap_recorded_and_closed_by_ingest(rag: Ragline) -> None:
    q = "What is the Quarvian reactor cooling budget?"
    for who in (Principal("a", roles=frozenset({"ops"})), Principal("b", roles=frozenset({"hr"}))):
        assert not rag.ask(q, who).covered
    rag.ask("quarvian reactor cooling budget, what is it?", Principal("c"))
    gap = next(g for g in rag.stores.metadata.gaps(status="open") if "quarvian" in g.normalised)
    assert gap.count == 3 and set(gap.roles) == {"ops", "hr"}
    assert gap.first_at <= gap.last_at and gap.reason == "not covered"
    docs: Path = rag.docs_root  # type: ignore[attr-defined]
    new = docs / "quarvian.md"
    new.write_text(
        "# Quarvian reactor\n\nThe Quarvian reactor cooling budget is 12 megawatts per year.\n",
        encoding="utf-8",
    )
    try:
        rag.ingest([new])
        closed = {g.key: g for g in rag.stores.metadata.gaps(status="closed")}
        assert gap.key in closed and closed[gap.key].closed_by
        assert rag.ask(q, Principal("a")).covered
    finally:
        new.unlink()
        rag.ingest([docs])


def test_synonyms_expand_retrieval(rag: Ragline) -> None:
    result = rag.search("生产环境 TiKV 需要多少 RAM", OPERATOR)
    assert result.route.synonyms_applied.get("RAM") == ["内存", "memory"]
    assert result.hits and "tidb-production-hw" in Path(result.hits[0].chunk.source).name
