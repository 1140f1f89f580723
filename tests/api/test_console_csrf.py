"""The console's CSRF tokens hold across the processes of a deployment (`serve --workers
N`: each process builds its own app), and a browser write is checked against the key that
authentication will use, however the header is spelled."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from ragline.api import create_app
from tests.api.conftest import api_settings

ORIGIN = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}


def test_a_token_from_one_process_is_good_at_another(tmp_path: Path) -> None:
    settings = api_settings(tmp_path / "data")
    with (
        TestClient(create_app(settings)) as first,
        TestClient(create_app(settings)) as second,
    ):
        token = first.get("/v1/web/csrf", headers={"X-API-Key": "alice-key"}).json()["token"]
        again = second.get("/v1/web/csrf", headers={"X-API-Key": "alice-key"}).json()["token"]
        assert token == again
        headers = {**ORIGIN, "X-API-Key": "alice-key", "X-CSRF-Token": token}
        r = second.post("/v1/ask", json={"question": "What is the budget?"}, headers=headers)
        assert r.status_code == 200, r.text


def test_a_browser_write_by_a_lowercase_bearer_needs_the_token(tmp_path: Path) -> None:
    with TestClient(create_app(api_settings(tmp_path / "data"))) as client:
        for auth in (
            {"Authorization": "bearer alice-key"},
            {"Authorization": "Bearer alice-key", "X-API-Key": "junk"},
        ):
            r = client.post("/v1/ops/sync", json={}, headers={**ORIGIN, **auth})
            assert r.status_code == 403, (auth, r.text)
            assert "CSRF" in r.json()["error"]["message"]
