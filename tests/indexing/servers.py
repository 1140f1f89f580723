"""Builders of the server backends for the contract and fault tests.

The servers are the ones `deploy/local/services up` starts; `eval "$(deploy/local/env.sh)"`
exports their URLs. A builder skips its test, with the reason, when the URL is unset or the
server does not answer; every other failure is a test failure. Each test gets its own
Elasticsearch alias / Neo4j namespace / PostgreSQL database, derived from its tmp_path so
reopening in the same test finds the same data, and dropped at teardown.
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from indexing.stores.elastic_dense import ElasticDenseIndex
from indexing.stores.elastic_keyword import ElasticKeywordIndex
from indexing.stores.neo4j_graph import Neo4jGraphStore

SERVER_BACKENDS = frozenset({"elasticsearch", "elasticsearch-knn", "neo4j", "postgres"})


def server_params(registry: Mapping[str, Any]) -> list[Any]:
    """Fixture params: server backends carry the `integration` mark."""
    return [
        pytest.param(name, marks=pytest.mark.integration) if name in SERVER_BACKENDS else name
        for name in sorted(registry)
    ]


@lru_cache(maxsize=8)
def _reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), 2):
            return True
    except OSError:
        return False


def server_url(var: str) -> str:
    """The URL in `var`, or skip: unset, or nothing listening there."""
    url = os.environ.get(var, "")
    if not url:
        pytest.skip(f'{var} is not set: run `eval "$(deploy/local/env.sh)"`')
    if not _reachable(url):
        pytest.skip(f"server at {var}={url} is unreachable: `deploy/local/services up`")
    return url


def scoped_name(root: Path, prefix: str) -> str:
    return prefix + hashlib.sha1(str(root).encode()).hexdigest()[:12]


def elastic_keyword(root: Path) -> ElasticKeywordIndex:
    url = server_url("RAGLINE_TEST_ES_URL")
    return ElasticKeywordIndex(url, scoped_name(root, "ragline-test-"))


def elastic_dense(root: Path, dim: int, model: str) -> ElasticDenseIndex:
    url = server_url("RAGLINE_TEST_ES_URL")
    return ElasticDenseIndex(url, scoped_name(root, "ragline-test-vec-"), dim, model)


def neo4j_auth() -> tuple[str, str]:
    return (
        os.environ.get("RAGLINE_TEST_NEO4J_USER", "neo4j"),
        os.environ.get("RAGLINE_TEST_NEO4J_PASSWORD", ""),
    )


def neo4j_graph(root: Path, **options: Any) -> Neo4jGraphStore:
    user, password = neo4j_auth()
    url = server_url("RAGLINE_TEST_NEO4J_URL")
    return Neo4jGraphStore(url, user, password, namespace=scoped_name(root, "t"), **options)


def postgres_url() -> str:
    return server_url("RAGLINE_TEST_PG_URL")


Builder = Callable[[Path], Any]
