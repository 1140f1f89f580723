"""Choose store backends from Settings (ports and adapters: config picks the adapter).

Embedded (default): SQLite metadata, FAISS, SQLite FTS5 keyword and SQLite graph, all under
data_dir. Production: PostgreSQL metadata (RAGLINE_METADATA_URL), Elasticsearch keyword
(RAGLINE_BACKENDS__KEYWORD=elasticsearch) and Neo4j graph (RAGLINE_BACKENDS__GRAPH=neo4j);
FAISS stays in-process over a shared directory (RAGLINE_BACKENDS__DENSE_DIR), or the
vectors go to Elasticsearch kNN (RAGLINE_BACKENDS__DENSE=elasticsearch) so no API host
holds an index file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError
from core.settings import Settings
from indexing.embedders import Embedder
from indexing.protocols import DenseIndex, DerivedStore, GraphStore, KeywordIndex, MetadataStore
from indexing.stores.sql_metadata import SqlMetadataStore


@dataclass
class Stores:
    metadata: MetadataStore
    dense: DenseIndex
    keyword: KeywordIndex
    graph: GraphStore

    @property
    def derived(self) -> dict[str, DerivedStore]:
        return {"dense": self.dense, "keyword": self.keyword, "graph": self.graph}

    def close(self) -> None:
        for store in (self.dense, self.keyword, self.graph, self.metadata):
            store.close()


def _keyword(settings: Settings) -> KeywordIndex:
    b = settings.backends
    if b.keyword == "elasticsearch":
        # Imported here so an embedded deployment never loads server clients (and vice versa).
        from indexing.stores.elastic_keyword import ElasticKeywordIndex

        return ElasticKeywordIndex(b.es_url, b.es_index, english_analysis=b.english_analysis)
    from indexing.stores.sqlite_keyword import SqliteKeywordIndex

    return SqliteKeywordIndex(
        settings.sqlite_path,
        english_analysis=b.english_analysis,
        postings_budget=b.keyword_postings_budget,
    )


def _graph(settings: Settings) -> GraphStore:
    b = settings.backends
    if b.graph == "neo4j":
        from indexing.stores.neo4j_graph import Neo4jGraphStore

        return Neo4jGraphStore(
            b.neo4j_url,
            b.neo4j_user,
            b.neo4j_password,
            namespace=b.neo4j_namespace,
            mentions_budget=b.graph_mentions_budget,
        )
    from indexing.stores.sqlite_graph import SqliteGraphStore

    return SqliteGraphStore(settings.sqlite_path, mentions_budget=b.graph_mentions_budget)


def _dense(settings: Settings, embedder: Embedder) -> DenseIndex:
    b = settings.backends
    if b.dense == "elasticsearch":
        from indexing.stores.elastic_dense import ElasticDenseIndex

        return ElasticDenseIndex(
            b.es_url,
            b.es_dense_index,
            embedder.dim,
            embedder.model,
            quantisation=b.es_dense_quantisation,
            num_candidates=b.es_dense_num_candidates,
        )
    from indexing.stores.faiss_dense import FaissDenseIndex

    dense_dir = Path(b.dense_dir) if b.dense_dir else settings.data_dir / "dense"
    return FaissDenseIndex(
        dense_dir,
        embedder.dim,
        embedder.model,
        settings.model_threads,
        mmap=b.dense_mmap,
        serve_damaged=b.dense_damaged == "serve",
        kind=b.dense_index,
        approx_min=b.dense_approx_min,
        nprobe=b.dense_nprobe,
    )


def drop_elastic_dense(settings: Settings) -> None:
    """Delete the Elasticsearch vector index (before `repair --rebuild dense`: an index
    built for another embedder refuses to open). The vectors' truth is the metadata store."""
    import httpx

    b = settings.backends
    resp = httpx.delete(f"{b.es_url.rstrip('/')}/{b.es_dense_index}", timeout=60)
    if resp.status_code >= 400 and resp.status_code != 404:
        raise ConfigError(f"could not delete {b.es_dense_index}: {resp.status_code} {resp.text}")


def check_profile(settings: Settings) -> None:
    """The production profile never falls back to embedded storage silently: a worker and
    an API process each writing their own SQLite file would diverge without any error."""
    if settings.profile != "production":
        return
    if not settings.metadata_url or settings.metadata_url.startswith("sqlite"):
        raise ConfigError("RAGLINE_PROFILE=production needs RAGLINE_METADATA_URL (PostgreSQL)")
    embedded = [
        f"RAGLINE_BACKENDS__{kind.upper()}"
        for kind, value in (
            ("keyword", settings.backends.keyword),
            ("graph", settings.backends.graph),
        )
        if value == "sqlite"
    ]
    if embedded:
        raise ConfigError(
            f"RAGLINE_PROFILE=production with embedded backends: set {', '.join(embedded)}"
        )


def open_stores(settings: Settings, embedder: Embedder) -> Stores:
    check_profile(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    opened: list[DerivedStore | MetadataStore] = []
    try:
        metadata = SqlMetadataStore(settings.resolved_metadata_url)
        opened.append(metadata)
        dense = _dense(settings, embedder)
        opened.append(dense)
        keyword = _keyword(settings)
        opened.append(keyword)
        graph = _graph(settings)
    except BaseException:
        for store in reversed(opened):  # a server that is down must not leak the others
            store.close()
        raise
    return Stores(metadata=metadata, dense=dense, keyword=keyword, graph=graph)
