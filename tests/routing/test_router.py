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
    assert route.strategy == "keyword"
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
