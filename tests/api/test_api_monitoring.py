"""The API's lifespan runs the alert scheduler: its gauge shows on /metrics."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi.testclient import TestClient

from core.settings import MonitoringSettings
from ragline.api import create_app
from tests.api.conftest import api_settings


def _alert_lines(client: TestClient) -> list[str]:
    text = client.get("/metrics").text
    return [line for line in text.splitlines() if line.startswith("ragline_alerts_firing{")]


def test_scheduler_runs_in_the_api(tmp_path: Path) -> None:
    settings = api_settings(tmp_path).model_copy(
        update={"monitoring": MonitoringSettings(interval_s=0.2)}
    )
    with TestClient(create_app(settings)) as client:
        deadline = time.monotonic() + 10
        while not _alert_lines(client) and time.monotonic() < deadline:
            time.sleep(0.05)
        lines = _alert_lines(client)
    # One sample per enabled packaged rule, none firing on an empty store.
    assert 'ragline_alerts_firing{alert="outbox_failures",severity="critical"} 0.0' in lines
    assert len(lines) == 10  # seven operational rules + the four golden signals - 1 off


def test_no_scheduler_when_interval_is_zero(tmp_path: Path) -> None:
    settings = api_settings(tmp_path).model_copy(
        update={"monitoring": MonitoringSettings(interval_s=0)}
    )
    with TestClient(create_app(settings)) as client:
        time.sleep(0.3)
        assert _alert_lines(client) == []
