"""Wiring of the alert rules: from Settings to an evaluator, a source, the automatic
actions and the scheduler the API runs (monitoring/ holds the parts; this is where
settings pick them)."""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from indexing.protocols import MetadataStore
from monitoring.alert_scheduler import AlertAction, AlertScheduler
from monitoring.alert_source import StoreAlertSource
from monitoring.alerts import AlertEvaluator, load_rules
from monitoring.metrics import Metrics
from monitoring.notify import Notifier
from ragline.alert_actions import IncrementalSync, ReindexMisses, Submit, SwitchAction
from ragline.app import Ragline

# The outbox's store names (the keys of indexing.factory.Stores.derived), for reading the
# outbox without opening the derived stores themselves.
DERIVED_STORE_NAMES = ("dense", "keyword", "graph")
# The role (MetadataStore.claim) of the serving process that records alert events, sends
# the webhooks and opens the jobs alerts ask for; the others evaluate and flip their own
# switches.
ALERTS_ROLE = "alerts"
# The alert audit log read at start to take up where the deployment left off.
_RESUME_EVENTS = 5000


def alert_evaluator(settings: Settings) -> AlertEvaluator:
    path = settings.monitoring.alert_rules
    return AlertEvaluator(load_rules(Path(path) if path else None))


def rag_alert_source(rag: Ragline) -> StoreAlertSource:
    derived = rag.stores.derived
    return StoreAlertSource(
        rag.stores.metadata,
        list(derived),
        derived=derived,
        registry=rag.metrics.registry,
        latencies=rag.latencies,
    )


def metadata_alert_source(metadata: MetadataStore) -> StoreAlertSource:
    """For a one-off check outside the API: no derived stores, an empty registry (so a
    `metric` rule reads 0 here; it is meant for the serving process)."""
    return StoreAlertSource(metadata, DERIVED_STORE_NAMES, registry=Metrics().registry)


def alert_actions(settings: Settings, rag: Ragline, submit: Submit) -> dict[str, AlertAction]:
    fast = settings.monitoring.fast_path
    fast_name = "keyword-only" if fast == "keyword" else "vector-only"
    actions: list[AlertAction] = [
        SwitchAction(
            "degrade_routing",
            rag.fast_path,
            f"routing degraded to the fast path ({fast_name})",
            "routing restored",
        ),
        SwitchAction(
            "pause_llm",
            rag.llm_paused,
            "LLM generation paused: answers are extractive"
            + ("" if rag.llm is not None else " (no LLM is configured here anyway)"),
            "LLM generation resumed",
        ),
        ReindexMisses(rag.stores.metadata, submit),
        IncrementalSync(rag.stores.metadata, submit),
    ]
    return {a.name: a for a in actions}


def notifier(settings: Settings) -> Notifier:
    cfg = settings.monitoring
    hooks = [(cfg.webhook_url, "generic")] if cfg.webhook_url else []
    hooks += [(w.url, w.format) for w in cfg.webhooks]
    return Notifier(
        hooks, public_url=cfg.public_url, timeout_s=cfg.webhook_timeout_s, dedupe_s=cfg.dedupe_s
    )


def start_alert_scheduler(
    settings: Settings, rag: Ragline, submit: Submit | None = None
) -> AlertScheduler | None:
    """The API's scheduler, started; None when `monitoring.interval_s` is 0. Without a
    task runner (`submit`) the job-opening actions fail and say so in the audit log."""
    cfg = settings.monitoring
    if cfg.interval_s <= 0:
        return None

    def no_runner(task: str, job_id: str, **_: object) -> None:
        raise RuntimeError(f"no task runner to run {task!r} here")

    scheduler = AlertScheduler(
        alert_evaluator(settings),
        rag_alert_source(rag),
        interval_s=cfg.interval_s,
        metrics=rag.metrics,
        notifier=notifier(settings),
        actions=alert_actions(settings, rag, submit or no_runner),
        record=rag.stores.metadata.record_alert_event,
        leader=lambda: rag.stores.metadata.claim(ALERTS_ROLE),
        history=lambda: rag.stores.metadata.alert_events(limit=_RESUME_EVENTS),
    )
    scheduler.start()
    return scheduler
