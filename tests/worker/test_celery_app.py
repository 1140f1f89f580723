"""The Celery app's delivery settings and schedule (no broker connection needed)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.settings import Settings, WorkerSettings
from ragline.worker.celery_app import create_celery
from ragline.worker.tasks import TASKS


def _settings(tmp_path: Path, **worker: object) -> Settings:
    return Settings(
        data_dir=tmp_path,
        worker=WorkerSettings(broker_url="redis://127.0.0.1:1/0", **worker),  # type: ignore[arg-type]
    )


def test_every_task_is_registered_late_acked_and_requeued_on_worker_loss(tmp_path: Path) -> None:
    app = create_celery(_settings(tmp_path, max_retries=4), queue="q1", visibility_timeout_s=99)
    for name in TASKS:
        task = app.tasks[f"ragline.{name}"]
        assert task.acks_late is True, name
        assert task.reject_on_worker_lost is True, name
        assert task.max_retries == 4, name
    assert app.conf.task_default_queue == "q1"
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.broker_transport_options["visibility_timeout"] == 99
    assert not app.conf.beat_schedule  # no folders, no periodic sync


def test_sync_folders_get_a_periodic_task(tmp_path: Path) -> None:
    app = create_celery(
        _settings(tmp_path, sync_folders=[str(tmp_path)], sync_interval_s=42), queue="q2"
    )
    entry = app.conf.beat_schedule["sync-folders"]
    assert entry["task"] == "ragline.sync_folders" and entry["task"] in app.tasks
    assert entry["schedule"] == timedelta(seconds=42)
    assert entry["options"] == {"queue": "q2"}


def test_no_broker_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="BROKER_URL"):
        create_celery(Settings(data_dir=tmp_path))
