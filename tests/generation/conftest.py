"""Fixtures for the generation tests: a live fake LLM server and a route."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from fake_llm_server import FakeLLMServer, handler_for

from core.settings import Settings
from core.types import Route, SourceSpec
from generation.similarity import Similarity
from indexing.embedders import MemoisedSimilarity, make_embedder


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    fake = FakeLLMServer()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(fake))
    server.daemon_threads = True  # a sleeping handler must not block shutdown
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def route() -> Route:
    return Route(
        strategy="hybrid",
        sources=(SourceSpec("keyword", 1.0, 1.0, 8),),
        rule="test",
    )


@pytest.fixture(scope="session")
def meaning() -> Similarity:
    """The default embedder's similarity, as the answer step uses it."""
    return MemoisedSimilarity(make_embedder(Settings().embedder), 1024)
