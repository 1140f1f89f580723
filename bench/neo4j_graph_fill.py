"""Fill a Neo4j namespace with the first N scale-corpus chunks, graph only (for
`bench/neo4j_graph_ab.py`):

    python bench/neo4j_graph_fill.py NAMESPACE N
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from core.settings import Settings
from indexing.protocols import IndexedChunk
from indexing.stores.neo4j_graph import Neo4jGraphStore
from ragline.bench.scale import _chunks_of
from ragline.bench.scale_corpus import DOC_CHUNKS, default_corpus


def main() -> None:
    ns, n = sys.argv[1], int(sys.argv[2])
    b = Settings().backends
    graph = Neo4jGraphStore(b.neo4j_url, b.neo4j_user, b.neo4j_password, namespace=ns)
    corpus = default_corpus(Path("../shared/data"))
    vector = np.zeros(4, dtype=np.float32)  # the graph keeps no vectors
    t0, batch = time.time(), []
    for doc in range(n // DOC_CHUNKS):
        batch += [IndexedChunk(c, vector) for c in _chunks_of(corpus, doc, n)[1]]
        if len(batch) >= 2000:
            graph.upsert(batch)
            batch = []
            print(f"{(doc + 1) * DOC_CHUNKS:,} chunks, {time.time() - t0:.0f} s", flush=True)
    if batch:
        graph.upsert(batch)
    print(f"done in {time.time() - t0:.0f} s")
    graph.close()


if __name__ == "__main__":
    main()
