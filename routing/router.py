"""Rule-based router: task type x user role x query intent -> Route (rules in TOML)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.types import Principal, Route, SourceSpec
from routing.intent import Intent, detect_intent

DEFAULT_RULES = Path(__file__).with_name("rules.toml")
KNOWN_SOURCES = frozenset({"keyword", "dense", "graph"})


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    match: dict[str, frozenset[str]]
    strategy: str
    sources: tuple[SourceSpec, ...]

    def fits(self, task: str, roles: frozenset[str], intent: str) -> bool:
        want_task = self.match.get("task")
        want_role = self.match.get("role")
        want_intent = self.match.get("intent")
        return (
            (not want_task or task in want_task)
            and (not want_role or bool(roles & want_role))
            and (not want_intent or intent in want_intent)
        )


def _as_set(value: Any) -> frozenset[str]:
    return frozenset([value] if isinstance(value, str) else value)


def _parse_rule(raw: dict[str, Any], where: str) -> Rule:
    try:
        sources = tuple(
            SourceSpec(s["name"], float(s["weight"]), float(s["timeout_s"]), int(s["top_k"]))
            for s in raw["sources"]
        )
        rule = Rule(
            name=raw["name"],
            match={k: _as_set(v) for k, v in raw.get("match", {}).items()},
            strategy=raw["strategy"],
            sources=sources,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: malformed rule {raw.get('name', '?')!r}: {exc}") from exc
    unknown = {s.name for s in sources} - KNOWN_SOURCES
    if unknown:
        raise ConfigError(f"{where}: rule {rule.name!r} names unknown sources {sorted(unknown)}")
    return rule


class Router:
    def __init__(self, rules_path: Path | None = None) -> None:
        path = rules_path or DEFAULT_RULES
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(
                f"routing rules {path}: {exc} (RAGLINE_RETRIEVAL__ROUTING_RULES)"
            ) from exc
        defaults = data.get("defaults", {})
        self._rrf_k = float(defaults.get("rrf_k", 60.0))
        self._top_k = int(defaults.get("top_k", 8))
        self._min_coverage = float(defaults.get("min_coverage", 0.5))
        self.rules = tuple(_parse_rule(r, str(path)) for r in data.get("rule", []))
        if not self.rules:
            raise ConfigError(f"routing rules {path}: no [[rule]] entries")

    def decide(
        self,
        question: str,
        principal: Principal,
        task: str = "qa",
        intent: Intent | None = None,
        available: frozenset[str] = KNOWN_SOURCES,
    ) -> tuple[Route, Intent]:
        """Pick the first fitting rule; sources whose store is not configured are dropped."""
        intent = intent or detect_intent(question)
        for rule in self.rules:
            if rule.fits(task, principal.roles, intent.name):
                sources = tuple(s for s in rule.sources if s.name in available)
                if not sources:
                    continue
                route = Route(
                    strategy=rule.strategy,
                    sources=sources,
                    rule=rule.name,
                    rrf_k=self._rrf_k,
                    top_k=self._top_k,
                    min_coverage=self._min_coverage,
                    intent=intent.name,
                )
                return route, intent
        raise ConfigError("no routing rule fits this request; add a rule without `match`")
