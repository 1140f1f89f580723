"""Fixtures for the store contract tests.

Each protocol has a registry of backend builders; the `*_store` factory fixtures are
parametrized over it, so every contract test runs against every backend. Adding a backend
(Elasticsearch, Neo4j, a FAISS service) is one line in its registry; the builder of a
server backend should `pytest.skip(...)` when its server cannot be reached.

A factory opens the store at a location fixed for the test, so calling it again after
`close()` reopens the same data (the persistence tests rely on this).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from servers import elastic_dense, elastic_keyword, neo4j_graph, server_params
from store_cases import DIM, MODEL, corpus

from indexing.protocols import DenseIndex, DerivedStore, GraphStore, KeywordIndex
from indexing.stores.faiss_dense import FaissDenseIndex
from indexing.stores.sqlite_graph import SqliteGraphStore
from indexing.stores.sqlite_keyword import SqliteKeywordIndex

__all__ = ["corpus"]  # the fixture, re-exported so every test module gets it

S = TypeVar("S")

DenseBuilder = Callable[[Path, int, str], DenseIndex]
KeywordBuilder = Callable[[Path], KeywordIndex]
GraphBuilder = Callable[[Path], GraphStore]

DENSE_BACKENDS: dict[str, DenseBuilder] = {
    "faiss": lambda root, dim, model: FaissDenseIndex(root / "dense", dim=dim, model=model),
    "faiss-hnsw": lambda root, dim, model: FaissDenseIndex(
        root / "dense", dim=dim, model=model, kind="hnsw"
    ),
    "faiss-ivf": lambda root, dim, model: FaissDenseIndex(
        root / "dense", dim=dim, model=model, kind="ivf"
    ),
    "faiss-mmap": lambda root, dim, model: FaissDenseIndex(
        root / "dense", dim=dim, model=model, mmap=True
    ),
    "elasticsearch-knn": elastic_dense,
}
KEYWORD_BACKENDS: dict[str, KeywordBuilder] = {
    "sqlite-fts5": lambda root: SqliteKeywordIndex(root / "ragline.db"),
    "elasticsearch": elastic_keyword,
}
GRAPH_BACKENDS: dict[str, GraphBuilder] = {
    "sqlite": lambda root: SqliteGraphStore(root / "ragline.db"),
    "neo4j": neo4j_graph,
}


class _Opened:
    """Every store a test opened, closed at teardown (a second close must be harmless)."""

    def __init__(self) -> None:
        self.stores: list[DerivedStore] = []

    def add(self, store: S) -> S:
        assert isinstance(store, DerivedStore)
        self.stores.append(store)
        return store

    def close_all(self) -> None:
        for store in reversed(self.stores):
            with contextlib.suppress(Exception):  # already closed by the test
                store.close()


@pytest.fixture(params=server_params(DENSE_BACKENDS))
def dense_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[..., DenseIndex]]:
    """`dense_store(dim=DIM, model=MODEL)` opens (or reopens) the backend under test."""
    build, opened = DENSE_BACKENDS[request.param], _Opened()

    def open_dense(dim: int = DIM, model: str = MODEL) -> DenseIndex:
        return opened.add(build(tmp_path, dim, model))

    yield open_dense
    opened.close_all()
    if opened.stores:
        _drop(opened.stores[0])


def _drop(store: object) -> None:
    """Server backends keep data outside tmp_path: remove this test's index / namespace."""
    drop = getattr(store, "drop", None)
    if drop is not None:
        drop()


@pytest.fixture(params=server_params(KEYWORD_BACKENDS))
def keyword_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], KeywordIndex]]:
    build, opened = KEYWORD_BACKENDS[request.param], _Opened()
    yield lambda: opened.add(build(tmp_path))
    opened.close_all()
    if opened.stores:
        store = build(tmp_path)
        _drop(store)
        store.close()


@pytest.fixture(params=server_params(GRAPH_BACKENDS))
def graph_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], GraphStore]]:
    build, opened = GRAPH_BACKENDS[request.param], _Opened()
    yield lambda: opened.add(build(tmp_path))
    opened.close_all()
    if opened.stores:
        store = build(tmp_path)
        _drop(store)
        store.close()
