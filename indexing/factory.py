"""Choose store backends from Settings (ports and adapters: config picks the adapter)."""

from __future__ import annotations

from dataclasses import dataclass

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


def open_stores(settings: Settings, embedder: Embedder) -> Stores:
    # Imported here so a production deployment never loads the embedded engines.
    from indexing.stores.faiss_dense import FaissDenseIndex
    from indexing.stores.sqlite_graph import SqliteGraphStore
    from indexing.stores.sqlite_keyword import SqliteKeywordIndex

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    metadata = SqlMetadataStore(settings.resolved_metadata_url)
    db = settings.sqlite_path
    return Stores(
        metadata=metadata,
        dense=FaissDenseIndex(
            settings.data_dir / "dense", embedder.dim, embedder.model, settings.model_threads
        ),
        keyword=SqliteKeywordIndex(db),
        graph=SqliteGraphStore(db),
    )
