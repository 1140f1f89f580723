"""Alert rules and their evaluation.

A rule reads one number (per store, for the outbox and divergence rules) and fires when it
is above the rule's threshold. `AlertEvaluator` is pure: it reads an `AlertSource` and
returns what fires, with no clock, logging or I/O of its own, so the same rules run from
the API's scheduler (monitoring/alert_scheduler.py) and from `ragline alerts check`.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from core.errors import ConfigError
from indexing.protocols import OutboxEntry, QueryLogRecord

DEFAULT_RULES = Path(__file__).with_name("alert_rules.toml")
KINDS = frozenset(
    {
        "outbox_backlog",
        "outbox_failures",
        "failed_jobs",
        "not_covered_ratio",
        "removed_citations",
        "store_divergence",
        "metric",
    }
)
SEVERITIES = frozenset({"info", "warning", "critical"})


@dataclass(frozen=True, slots=True)
class AlertRule:
    name: str
    kind: str
    threshold: float  # fires when the value is strictly greater
    severity: str = "warning"
    window_s: float = 3600.0  # look-back of the windowed kinds
    min_attempts: int = 3  # outbox_failures: entries tried at least this often
    min_queries: int = 1  # not_covered_ratio: no verdict on fewer answers than this
    metric: str = ""  # metric: a sample name from the Prometheus registry
    labels: tuple[tuple[str, str], ...] = ()  # metric: only samples with these labels
    description: str = ""
    enabled: bool = True

    @property
    def needs_derived_stores(self) -> bool:
        """Reading it opens every derived store (the heavier checks)."""
        return self.enabled and self.kind == "store_divergence"


@dataclass(frozen=True, slots=True)
class Alert:
    name: str  # the rule's name
    severity: str
    value: float | None  # None: the rule could not read its number
    threshold: float
    message: str
    subject: str = ""  # what it is about when one rule fires per store

    @property
    def key(self) -> tuple[str, str]:
        return (self.name, self.subject)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "subject": self.subject,
            "severity": self.severity,
            "value": self.value,
            "threshold": self.threshold,
            "message": self.message,
        }


class AlertSource(Protocol):
    """The numbers rules read: the metadata store's outbox, jobs and query log, the
    derived stores, and the metrics registry. Times are naive UTC, like the store's."""

    def outbox_pending(self) -> Mapping[str, Sequence[OutboxEntry]]:
        """Not yet applied outbox entries, per derived store."""
        ...

    def failed_jobs(self, since: datetime) -> int: ...

    def queries(self, since: datetime) -> Sequence[QueryLogRecord]: ...

    def divergence(self) -> Mapping[str, int]:
        """Per derived store: content_ids missing plus extra compared with the truth."""
        ...

    def metric(self, name: str, labels: Mapping[str, str]) -> float | None:
        """Sum of the registry's samples called `name` with these labels; None if no
        metric of that name is registered."""
        ...


def _parse_rule(raw: dict[str, Any], where: str) -> AlertRule:
    known = {f.name for f in fields(AlertRule)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}")
    missing = [k for k in ("name", "kind", "threshold") if k not in raw]
    if missing:
        raise ConfigError(f"{where}: missing {missing}")
    labels = raw.get("labels", {})
    if not isinstance(labels, dict):
        raise ConfigError(f"{where}: labels must be a table")
    pairs = tuple(sorted((str(k), str(v)) for k, v in labels.items()))
    rule = AlertRule(**{**raw, "labels": pairs})
    if rule.kind not in KINDS:
        raise ConfigError(f"{where}: kind {rule.kind!r} is not one of {sorted(KINDS)}")
    if rule.severity not in SEVERITIES:
        raise ConfigError(f"{where}: severity {rule.severity!r} is not one of {sorted(SEVERITIES)}")
    if rule.kind == "metric" and not rule.metric:
        raise ConfigError(f"{where}: a metric rule needs `metric`")
    return rule


def load_rules(path: Path | None = None) -> list[AlertRule]:
    """Rules from a TOML file of `[[rule]]` tables; None = the packaged defaults."""
    path = path or DEFAULT_RULES
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"alert rules {path}: {exc}") from exc
    rules = [_parse_rule(r, f"{path} rule {i}") for i, r in enumerate(data.get("rule", []), 1)]
    names = [r.name for r in rules]
    if len(names) != len(set(names)):
        raise ConfigError(f"{path}: rule names must be unique")
    return rules


def _span(seconds: float) -> str:
    if seconds % 3600 == 0:
        return f"{seconds / 3600:g}h"
    if seconds % 60 == 0:
        return f"{seconds / 60:g}min"
    return f"{seconds:g}s"


class AlertEvaluator:
    def __init__(self, rules: Sequence[AlertRule]) -> None:
        self.rules = [r for r in rules if r.enabled]

    @property
    def needs_derived_stores(self) -> bool:
        return any(r.needs_derived_stores for r in self.rules)

    def evaluate(self, source: AlertSource, now: datetime) -> list[Alert]:
        """Every alert that fires now. A rule that cannot read its number fires too
        (value None): monitoring that goes quiet when the store is down would hide the
        worst outage of all."""
        memo: dict[str, Any] = {}  # one read of the outbox per evaluation, however many rules

        def once(key: str, read: Callable[[], Any]) -> Any:
            if key not in memo:
                memo[key] = read()
            return memo[key]

        out: list[Alert] = []
        for rule in self.rules:
            try:
                out.extend(self._rule(rule, source, now, once))
            except Exception as exc:
                out.append(
                    Alert(
                        rule.name,
                        rule.severity,
                        None,
                        rule.threshold,
                        f"{rule.name}: cannot evaluate ({type(exc).__name__}: {exc})"[:500],
                    )
                )
        return out

    def _rule(
        self,
        rule: AlertRule,
        source: AlertSource,
        now: datetime,
        once: Callable[[str, Callable[[], Any]], Any],
    ) -> list[Alert]:
        since = now - timedelta(seconds=rule.window_s)
        window = _span(rule.window_s)

        def fire(value: float, message: str, subject: str = "") -> list[Alert]:
            if value > rule.threshold:
                return [Alert(rule.name, rule.severity, value, rule.threshold, message, subject)]
            return []

        match rule.kind:
            case "outbox_backlog":
                pending = once("outbox", source.outbox_pending)
                return [
                    a
                    for store, entries in sorted(pending.items())
                    for a in fire(
                        len(entries),
                        f"{len(entries)} outbox entries pending for the {store} store "
                        f"(threshold {rule.threshold:g})",
                        store,
                    )
                ]
            case "outbox_failures":
                pending = once("outbox", source.outbox_pending)
                out: list[Alert] = []
                for store, entries in sorted(pending.items()):
                    failing = [e for e in entries if e.attempts >= rule.min_attempts]
                    last = failing[-1].last_error[:200] if failing else ""
                    out += fire(
                        len(failing),
                        f"{len(failing)} outbox entries for the {store} store failed "
                        f"{rule.min_attempts}+ times; last error: {last}",
                        store,
                    )
                return out
            case "failed_jobs":
                n = source.failed_jobs(since)
                return fire(n, f"{n} jobs failed in the last {window}")
            case "not_covered_ratio":
                logged = once(f"queries:{rule.window_s}", lambda: source.queries(since))
                known = [q for q in logged if "covered" in q.payload]
                if len(known) < max(rule.min_queries, 1):
                    return []
                missed = sum(1 for q in known if not q.payload["covered"])
                ratio = missed / len(known)
                return fire(
                    ratio,
                    f"{ratio:.0%} of {len(known)} answers in the last {window} were not "
                    f"covered by the documents (threshold {rule.threshold:.0%})",
                )
            case "removed_citations":
                logged = once(f"queries:{rule.window_s}", lambda: source.queries(since))
                n = sum(len(q.payload.get("removed_labels") or ()) for q in logged)
                return fire(n, f"{n} unverifiable LLM citations removed in the last {window}")
            case "store_divergence":
                return [
                    a
                    for store, n in sorted(source.divergence().items())
                    for a in fire(n, f"the {store} store differs from the truth by {n} chunks",
                                  store)
                ]
            case "metric":
                value = source.metric(rule.metric, dict(rule.labels))
                if value is None:
                    raise LookupError(f"no metric {rule.metric!r} is registered")
                if math.isnan(value):
                    return []
                return fire(value, f"{rule.metric}{dict(rule.labels) or ''} = {value:g}")
        raise ConfigError(f"unknown rule kind {rule.kind!r}")
