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
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from core.errors import ConfigError
from indexing.protocols import OutboxEntry, QueryLogRecord
from monitoring.latency_window import quantile

DEFAULT_RULES = Path(__file__).with_name("alert_rules.toml")
KINDS = frozenset(
    {
        "outbox_backlog",
        "outbox_failures",
        "failed_jobs",
        "stalled_jobs",
        "not_covered_ratio",
        "removed_citations",
        "store_divergence",
        "metric",
        # The four golden signals; each may carry an automatic action.
        "retrieval_latency",
        "hit_rate",
        "citation_completeness",
        "index_freshness",
    }
)
# Automatic actions a rule may name (ragline/alert_actions.py implements them).
ACTIONS = frozenset({"", "degrade_routing", "reindex_misses", "pause_llm", "incremental_sync"})
SEVERITIES = frozenset({"info", "warning", "critical"})


@dataclass(frozen=True, slots=True)
class AlertRule:
    name: str
    kind: str
    threshold: float  # fires when the value is strictly greater (strictly less if `below`)
    severity: str = "warning"
    below: bool = False  # hit rate and citation completeness fire when they drop under
    quantile: float = 0.95  # retrieval_latency: which quantile of the window
    action: str = ""  # an automatic action while it fires, reversed when it recovers
    fix: str = ""  # path (under monitoring.public_url) of the endpoint that fixes it
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
    action: str = ""  # the rule's automatic action, if any
    fix: str = ""  # the rule's fix endpoint path, if any
    # What the action needs to know (e.g. the content_ids behind missed questions).
    detail: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

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
            "action": self.action,
            "fix": self.fix,
        }


class AlertSource(Protocol):
    """The numbers rules read: the metadata store's outbox, jobs and query log, the
    derived stores, and the metrics registry. Times are naive UTC, like the store's."""

    def outbox_pending(self) -> Mapping[str, Sequence[OutboxEntry]]:
        """Not yet applied outbox entries, per derived store."""
        ...

    def failed_jobs(self, since: datetime) -> int: ...

    def stalled_jobs(self, before: datetime) -> int:
        """Unfinished jobs (queued, parsing, indexing) last updated before then."""
        ...

    def queries(self, since: datetime) -> Sequence[QueryLogRecord]: ...

    def divergence(self) -> Mapping[str, int]:
        """Per derived store: content_ids missing plus extra compared with the truth."""
        ...

    def metric(self, name: str, labels: Mapping[str, str]) -> float | None:
        """Sum of the registry's samples called `name` with these labels; None if no
        metric of that name is registered."""
        ...

    def retrieval_ms(self, since: datetime) -> Sequence[float]:
        """Retrieval latencies (route to rerank, ms) of the searches since then."""
        ...

    def oldest_unsearchable(self) -> datetime | None:
        """Staging time of the oldest version not yet searchable; None if none waits."""
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
    if rule.action not in ACTIONS:
        raise ConfigError(f"{where}: action {rule.action!r} is not one of {sorted(ACTIONS)}")
    if not 0 < rule.quantile <= 1:
        raise ConfigError(f"{where}: quantile must be in (0, 1]")
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

        def fire(
            value: float, message: str, subject: str = "", detail: Mapping[str, Any] | None = None
        ) -> list[Alert]:
            breached = value < rule.threshold if rule.below else value > rule.threshold
            if breached:
                return [
                    Alert(
                        rule.name,
                        rule.severity,
                        value,
                        rule.threshold,
                        message,
                        subject,
                        rule.action,
                        rule.fix,
                        detail or {},
                    )
                ]
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
            case "stalled_jobs":
                n = source.stalled_jobs(since)
                return fire(n, f"{n} unfinished jobs have not moved for {window} or more")
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
                    for a in fire(
                        n, f"the {store} store differs from the truth by {n} chunks", store
                    )
                ]
            case "metric":
                value = source.metric(rule.metric, dict(rule.labels))
                if value is None:
                    raise LookupError(f"no metric {rule.metric!r} is registered")
                if math.isnan(value):
                    return []
                return fire(value, f"{rule.metric}{dict(rule.labels) or ''} = {value:g}")
            case "retrieval_latency":
                samples = list(source.retrieval_ms(since))
                if len(samples) < max(rule.min_queries, 1):
                    return []
                value = quantile(samples, rule.quantile)
                return fire(
                    value,
                    f"retrieval latency P{rule.quantile * 100:g} is {value:.0f} ms over the "
                    f"last {window} ({len(samples)} searches; threshold {rule.threshold:g} ms)",
                )
            case "hit_rate":
                logged = once(f"queries:{rule.window_s}", lambda: source.queries(since))
                known = [q for q in logged if "covered" in q.payload]
                if len(known) < max(rule.min_queries, 1):
                    return []
                misses = [q for q in known if not q.payload["covered"]]
                rate = 1 - len(misses) / len(known)
                # The passage each missed question ranked first: its document is the one
                # that came closest and still did not cover it.
                behind = list(
                    dict.fromkeys(c for q in misses for c in (q.payload.get("hits") or [])[:1])
                )
                return fire(
                    rate,
                    f"hit rate {rate:.0%} over the last {window}: {len(misses)} of {len(known)} "
                    f"answers not covered (threshold {rule.threshold:.0%})",
                    detail={"content_ids": behind, "missed_traces": [q.trace_id for q in misses]},
                )
            case "citation_completeness":
                logged = once(f"queries:{rule.window_s}", lambda: source.queries(since))
                llm = [
                    q
                    for q in logged
                    if q.payload.get("mode") == "llm" and q.payload.get("sentences")
                ]
                if len(llm) < max(rule.min_queries, 1):
                    return []
                total = sum(int(q.payload["sentences"]) for q in llm)
                verified = sum(int(q.payload.get("verified_sentences", 0)) for q in llm)
                share = verified / total
                return fire(
                    share,
                    f"citation completeness {share:.0%}: {verified} of {total} sentences of "
                    f"{len(llm)} LLM answers in the last {window} carry a verified label "
                    f"(threshold {rule.threshold:.0%})",
                )
            case "index_freshness":
                oldest = source.oldest_unsearchable()
                lag = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
                return fire(
                    lag,
                    f"index freshness: an upload staged {lag:.0f} s ago is not searchable yet "
                    f"(threshold {rule.threshold:g} s)",
                )
        raise ConfigError(f"unknown rule kind {rule.kind!r}")
