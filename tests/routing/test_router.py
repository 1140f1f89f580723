from pathlib import Path

import pytest

from core.errors import ConfigError
from core.types import Principal
from routing.intent import detect_intent
from routing.router import Router


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("Which version, P12.1.2 or later, must be installed?", "lookup"),
        ("个人信息保护法第十三条规定了什么", "lookup"),
        ("TiDB 和 MySQL 的区别是什么", "relation"),
        ("How many permit checks did Kentucky record?", "numeric"),
        ("肯塔基州有多少次许可检查", "numeric"),
        ("什么是零信任架构", "definition"),
        ("鸭子吃什么", "general"),
    ],
)
def test_intent(question: str, intent: str) -> None:
    assert detect_intent(question).name == intent


def test_default_rules_route_by_intent() -> None:
    router = Router()
    route, _ = router.decide("What does ERR-1042 mean?", Principal())
    assert route.rule == "identifier-lookup"
    assert {s.name for s in route.sources} >= {"keyword", "graph"}
    route, _ = router.decide("鸭子吃什么", Principal())
    assert route.rule == "default-hybrid"
    weights = {s.name: s.weight for s in route.sources}
    assert weights["keyword"] > weights["dense"]


def test_task_rule_and_unavailable_sources() -> None:
    router = Router()
    route, _ = router.decide("鸭子吃什么", Principal(), task="lookup")
    assert route.strategy == "keyword-fields"
    assert "dense" not in {s.name for s in route.sources}
    route, _ = router.decide(
        "What does ERR-1042 mean?", Principal(), available=frozenset({"keyword"})
    )
    assert [s.name for s in route.sources] == ["keyword"]


def test_role_rule(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        """
[[rule]]
name = "auditors-graph"
match = { role = ["auditor"] }
strategy = "graph"
sources = [{ name = "graph", weight = 1.0, timeout_s = 1.0, top_k = 5 }]

[[rule]]
name = "fallback"
strategy = "keyword"
sources = [{ name = "keyword", weight = 1.0, timeout_s = 1.0, top_k = 5 }]
""",
        encoding="utf-8",
    )
    router = Router(rules)
    assert router.decide("x", Principal(roles=frozenset({"auditor"})))[0].rule == "auditors-graph"
    assert router.decide("x", Principal())[0].rule == "fallback"


def test_bad_rules_fail_clearly(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nname="x"\nstrategy="s"\nsources=[{name="nosuch", weight=1, '
        "timeout_s=1, top_k=1}]\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="unknown sources"):
        Router(rules)
    with pytest.raises(ConfigError, match="ROUTING_RULES"):
        Router(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("task", "rule", "budget_ms", "has_dense", "has_graph"),
    [
        ("compliance_review", "compliance-review", 300, False, True),
        ("troubleshooting", "troubleshooting", 800, True, False),
        ("lookup", "exact-lookup", 500, False, True),
        ("analysis", "analysis", 1200, True, True),
        ("qa", "default-hybrid", 2000, True, False),
    ],
)
def test_default_task_rules(
    task: str, rule: str, budget_ms: int, has_dense: bool, has_graph: bool
) -> None:
    route, _ = Router().decide("鸭子吃什么", Principal(), task=task)
    names = {s.name for s in route.sources}
    assert route.rule == rule and route.task == task
    assert route.budget_ms == budget_ms
    assert ("dense" in names) is has_dense and ("graph" in names) is has_graph
    assert all(s.timeout_ms <= budget_ms for s in route.sources)


def test_role_variants_refine_task_rules() -> None:
    router = Router()
    sales = Principal(roles=frozenset({"sales"}))
    engineer = Principal(roles=frozenset({"engineer"}))
    assert router.decide("X1 多少钱", sales)[0].rule == "sales-price-lookup"
    assert "价格" in router.rule("sales-price-lookup").query_terms
    assert router.decide("风扇转速", engineer, task="troubleshooting")[0].rule == (
        "engineer-parameters"
    )
    # A role variant does not capture tasks it was not written for.
    assert router.decide("风扇转速", engineer, task="compliance_review")[0].rule == (
        "compliance-review"
    )


def test_language_match_and_timeout_ms(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        """
[[rule]]
name = "english"
match = { language = "en" }
strategy = "dense-heavy"
budget_ms = 250
sources = [{ name = "dense", weight = 1.0, timeout_ms = 900, top_k = 5 },
           { name = "keyword", weight = 0.5, timeout_s = 0.1, top_k = 5 }]

[[rule]]
name = "other"
strategy = "keyword"
sources = [{ name = "keyword", weight = 1.0, timeout_ms = 700, top_k = 5 }]
""",
        encoding="utf-8",
    )
    router = Router(rules)
    route, _ = router.decide("What is a policy engine?", Principal())
    assert route.rule == "english" and route.language == "en"
    # The budget caps the per-source timeout; a smaller one stays.
    assert {s.name: s.timeout_ms for s in route.sources} == {"dense": 250, "keyword": 100}
    route, _ = router.decide("什么是策略引擎", Principal())
    assert route.rule == "other" and route.language == "zh"
    assert route.sources[0].timeout_ms == 700


def test_unknown_match_key_fails(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nname="x"\nstrategy="s"\nmatch={tsk="qa"}\n'
        'sources=[{name="keyword", weight=1, timeout_ms=1, top_k=1}]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="unknown keys"):
        Router(rules)


def test_intent_is_cheap() -> None:
    import time

    questions = ["What does ERR-1042 mean?", "个人信息保护法第十三条规定了什么"] * 500
    start = time.perf_counter()
    for q in questions:
        detect_intent(q)
    assert (time.perf_counter() - start) / len(questions) < 0.001
