"""Rule-based router: task type x user role x query intent (x language) -> Route.

Rules live in TOML (routing/rules.toml by default); the first rule whose `match` fits wins.
Cheap by design: intent is a handful of regular expressions (well under 1 ms).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.text import has_han
from core.types import Principal, Route, SourceSpec
from routing.intent import Intent, detect_intent

DEFAULT_RULES = Path(__file__).with_name("rules.toml")
KNOWN_SOURCES = frozenset({"keyword", "dense", "graph"})
# Tasks Ragline itself sends: a plain question, and the agent loop's searches. Both route
# by the question's intent unless a rule names them.
OWN_TASKS = frozenset({"qa", "agent"})
MATCH_KEYS = frozenset({"task", "role", "intent", "language"})


def detect_language(text: str) -> str:
    """ "zh" when the text has Han characters, else "en" (the two analysed languages)."""
    return "zh" if has_han(text) else "en"


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    match: dict[str, frozenset[str]]
    strategy: str
    sources: tuple[SourceSpec, ...]
    budget_ms: float | None = None
    boost_fields: tuple[str, ...] = ()
    query_terms: tuple[str, ...] = ()

    def fits(self, task: str, roles: frozenset[str], intent: str, language: str = "") -> bool:
        want_task = self.match.get("task")
        want_role = self.match.get("role")
        want_intent = self.match.get("intent")
        want_language = self.match.get("language")
        return (
            (not want_task or task in want_task)
            and (not want_role or bool(roles & want_role))
            and (not want_intent or intent in want_intent)
            and (not want_language or language in want_language)
        )


def _as_set(value: Any) -> frozenset[str]:
    return frozenset([value] if isinstance(value, str) else value)


def _timeout_s(source: dict[str, Any], budget_ms: float | None) -> float:
    if "timeout_ms" in source:
        seconds = float(source["timeout_ms"]) / 1000
    else:
        seconds = float(source["timeout_s"])
    if budget_ms is not None:
        seconds = min(seconds, budget_ms / 1000)
    if seconds <= 0:
        raise ValueError("timeouts must be positive")
    return seconds


def _parse_rule(raw: dict[str, Any], where: str) -> Rule:
    try:
        budget = float(raw["budget_ms"]) if "budget_ms" in raw else None
        sources = tuple(
            SourceSpec(s["name"], float(s["weight"]), _timeout_s(s, budget), int(s["top_k"]))
            for s in raw["sources"]
        )
        match = {k: _as_set(v) for k, v in raw.get("match", {}).items()}
        rule = Rule(
            name=raw["name"],
            match=match,
            strategy=raw["strategy"],
            sources=sources,
            budget_ms=budget,
            boost_fields=tuple(raw.get("boost_fields", ())),
            query_terms=tuple(raw.get("query_terms", ())),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: malformed rule {raw.get('name', '?')!r}: {exc}") from exc
    unknown = {s.name for s in sources} - KNOWN_SOURCES
    if unknown:
        raise ConfigError(f"{where}: rule {rule.name!r} names unknown sources {sorted(unknown)}")
    bad_keys = set(match) - MATCH_KEYS
    if bad_keys:
        raise ConfigError(
            f"{where}: rule {rule.name!r} matches on unknown keys {sorted(bad_keys)} "
            f"(known: {sorted(MATCH_KEYS)})"
        )
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
        named = (t for r in self.rules for t in r.match.get("task", ()))
        self._tasks = OWN_TASKS | frozenset(named)

    @property
    def tasks(self) -> frozenset[str]:
        """Task types some rule names, and Ragline's own (`OWN_TASKS`); others still route,
        by intent."""
        return self._tasks

    def rule(self, name: str) -> Rule:
        return next(r for r in self.rules if r.name == name)

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
        language = detect_language(question)
        for rule in self.rules:
            if rule.fits(task, principal.roles, intent.name, language):
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
                    task=task,
                    language=language,
                    budget_ms=rule.budget_ms,
                )
                return route, intent
        raise ConfigError("no routing rule fits this request; add a rule without `match`")
