"""The API's error shape for what the application service refuses."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from core.errors import InvalidRequest
from ragline.api.errors import install_error_handlers


def test_an_invalid_request_from_the_service_is_a_422_in_the_error_shape() -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/boom")
    async def boom() -> None:
        raise InvalidRequest("question is empty")

    r = TestClient(app).get("/boom")
    assert r.status_code == 422
    assert r.json()["error"]["message"] == "question is empty"
