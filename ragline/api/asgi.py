"""The API as an import string for multi-process serving:
`uvicorn --factory ragline.api.asgi:app_from_env` (what `ragline serve --workers N` runs).

Every worker process builds its own app from the environment (RAGLINE_* variables and
ragline.toml), so the settings a parent process resolved travel as environment variables.
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from core.settings import load_settings
from ragline.api.app import create_app
from ragline.worker import DEFAULT_QUEUE

QUEUE_ENV = "RAGLINE_SERVE_QUEUE"  # set by `ragline serve --queue`; the Celery queue name


def app_from_env() -> FastAPI:
    return create_app(load_settings(), queue=os.environ.get(QUEUE_ENV, DEFAULT_QUEUE))
