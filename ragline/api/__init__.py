"""The HTTP API agents call (FastAPI). Build it with `create_app(settings)`."""

from ragline.api.app import create_app

__all__ = ["create_app"]
