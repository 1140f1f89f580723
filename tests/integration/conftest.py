"""Fixtures for the fault tests: the production stores on the real servers (a scratch
PostgreSQL database, an Elasticsearch alias and a Neo4j namespace of the test's own), with
Elasticsearch and Neo4j reached through TCP proxies a test can switch off."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

# The server builders live with the contract tests; share them rather than copy them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "indexing"))

from servers import neo4j_auth, postgres_url, scoped_name, server_url
from tcp_proxy import TcpProxy

from indexing.embedders import UseEmbedder
from indexing.migrate import scratch_database
from indexing.protocols import DerivedStore
from indexing.stores.elastic_keyword import ElasticKeywordIndex
from indexing.stores.faiss_dense import FaissDenseIndex
from indexing.stores.neo4j_graph import Neo4jGraphStore
from indexing.stores.sql_metadata import SqlMetadataStore

# The vectors staged by the tests have the default embedder's shape, so a `ragline sync`
# subprocess (which opens FAISS with that embedder's model and dim) accepts them.
DIM = UseEmbedder.dim
MODEL = UseEmbedder.model


@dataclass
class Production:
    root: Path
    meta: SqlMetadataStore
    es: ElasticKeywordIndex
    neo: Neo4jGraphStore
    dense: FaissDenseIndex
    proxies: dict[str, TcpProxy]
    env: dict[str, str] = field(default_factory=dict)  # for `ragline` subprocesses

    @property
    def stores(self) -> dict[str, DerivedStore]:
        return {"dense": self.dense, "keyword": self.es, "graph": self.neo}

    def reopen_dense(self) -> FaissDenseIndex:
        """What another process flushed becomes visible to a fresh instance."""
        self.dense = FaissDenseIndex(self.root / "dense", DIM, MODEL)
        return self.dense


def _proxy(url: str) -> TcpProxy:
    parts = urlsplit(url)
    return TcpProxy(parts.hostname or "127.0.0.1", parts.port or 80)


@pytest.fixture
def production(tmp_path: Path) -> Iterator[Production]:
    es_url = server_url("RAGLINE_TEST_ES_URL")
    neo_url = server_url("RAGLINE_TEST_NEO4J_URL")
    user, password = neo4j_auth()
    alias, ns = scoped_name(tmp_path, "ragline-fault-"), scoped_name(tmp_path, "f")
    proxies = {"keyword": _proxy(es_url), "graph": _proxy(neo_url)}
    with scratch_database(postgres_url()) as pg:
        meta = SqlMetadataStore(pg)
        es = ElasticKeywordIndex(f"http://127.0.0.1:{proxies['keyword'].port}", alias, timeout_s=5)
        neo = Neo4jGraphStore(
            f"bolt://127.0.0.1:{proxies['graph'].port}", user, password, namespace=ns, timeout_s=2
        )
        dense = FaissDenseIndex(tmp_path / "dense", DIM, MODEL)
        env = {
            "RAGLINE_PROFILE": "production",
            "RAGLINE_DATA_DIR": str(tmp_path / "data"),
            "RAGLINE_METADATA_URL": pg,
            "RAGLINE_BACKENDS__DENSE_DIR": str(tmp_path / "dense"),
            "RAGLINE_BACKENDS__KEYWORD": "elasticsearch",
            "RAGLINE_BACKENDS__ES_URL": es_url,
            "RAGLINE_BACKENDS__ES_INDEX": alias,
            "RAGLINE_BACKENDS__GRAPH": "neo4j",
            "RAGLINE_BACKENDS__NEO4J_URL": neo_url,
            "RAGLINE_BACKENDS__NEO4J_USER": user,
            "RAGLINE_BACKENDS__NEO4J_PASSWORD": password,
            "RAGLINE_BACKENDS__NEO4J_NAMESPACE": ns,
        }
        prod = Production(tmp_path, meta, es, neo, dense, proxies, env)
        try:
            yield prod
        finally:
            for proxy in proxies.values():
                proxy.down()
            # Clean up through direct connections: the proxies may be down.
            direct_es = ElasticKeywordIndex(es_url, alias)
            direct_es.drop()
            direct_es.close()
            direct_neo = Neo4jGraphStore(neo_url, user, password, namespace=ns)
            direct_neo.drop()
            direct_neo.close()
            for store in (es, neo, prod.dense):
                store.close()
            meta.close()
