"""Wiring of the alert rules: from Settings to an evaluator, a source and the scheduler
the API runs (monitoring/ holds the parts; this is where settings pick them)."""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from indexing.protocols import MetadataStore
from monitoring.alert_scheduler import AlertScheduler
from monitoring.alert_source import StoreAlertSource
from monitoring.alerts import AlertEvaluator, load_rules
from monitoring.metrics import Metrics
from ragline.app import Ragline

# The outbox's store names (the keys of indexing.factory.Stores.derived), for reading the
# outbox without opening the derived stores themselves.
DERIVED_STORE_NAMES = ("dense", "keyword", "graph")


def alert_evaluator(settings: Settings) -> AlertEvaluator:
    path = settings.monitoring.alert_rules
    return AlertEvaluator(load_rules(Path(path) if path else None))


def rag_alert_source(rag: Ragline) -> StoreAlertSource:
    derived = rag.stores.derived
    return StoreAlertSource(
        rag.stores.metadata, list(derived), derived=derived, registry=rag.metrics.registry
    )


def metadata_alert_source(metadata: MetadataStore) -> StoreAlertSource:
    """For a one-off check outside the API: no derived stores, an empty registry (so a
    `metric` rule reads 0 here; it is meant for the serving process)."""
    return StoreAlertSource(metadata, DERIVED_STORE_NAMES, registry=Metrics().registry)


def start_alert_scheduler(settings: Settings, rag: Ragline) -> AlertScheduler | None:
    """The API's scheduler, started; None when `monitoring.interval_s` is 0."""
    cfg = settings.monitoring
    if cfg.interval_s <= 0:
        return None
    scheduler = AlertScheduler(
        alert_evaluator(settings),
        rag_alert_source(rag),
        interval_s=cfg.interval_s,
        metrics=rag.metrics,
        webhook_url=cfg.webhook_url,
        webhook_timeout_s=cfg.webhook_timeout_s,
    )
    scheduler.start()
    return scheduler
