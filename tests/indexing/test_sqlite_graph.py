"""SQLite graph store behaviour beyond the GraphStore contract."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from store_cases import DIM, make_chunk, unit

from core.types import QueryFilter
from indexing.protocols import IndexedChunk
from indexing.stores.sqlite_graph import SqliteGraphStore


def test_graph_search_reuses_the_chunk_count_until_a_write(tmp_path: Path) -> None:
    """The SQLite graph store weighs entities by an idf over the chunks held; counting
    them scanned the table on every search (20 ms at 1M chunks). The count is reused
    until this store writes again."""
    graph = SqliteGraphStore(tmp_path / "g.db")
    make = [make_chunk(f"g{i}", f"Raft item {i}", entities=("raft", f"item{i}")) for i in range(3)]
    graph.upsert([IndexedChunk(c, unit(np.ones(DIM))) for c in make[:2]])
    counts: list[str] = []
    graph._conn.set_trace_callback(
        lambda sql: counts.append(sql) if "count(*)" in sql.lower() else None
    )
    first = graph.search(["raft"], 5, QueryFilter())
    assert {h.content_id for h in first} == {c.content_id for c in make[:2]}
    graph.search(["item1"], 5, QueryFilter())
    assert len(counts) == 1
    graph.upsert([IndexedChunk(make[2], unit(np.ones(DIM)))])
    assert len(graph.search(["raft"], 5, QueryFilter())) == 3
    assert len(counts) == 2
    graph.close()


def test_a_large_graph_searches_its_rarest_entities_within_the_mentions_budget(
    tmp_path: Path,
) -> None:
    """From `budget_from` chunks on, a search keeps the query's rarest entities while the
    chunks mentioning them sum to at most the budget; the rarest always stays. Below
    that size every entity searches."""
    # "kafka" in 1 chunk, "raft" in 2, "etcd" in 4 (chunks 3-6), with no neighbours
    # linking them (one document per chunk).
    ents = [("kafka",), ("raft",), ("raft",), *[("etcd",)] * 4]
    made = [
        make_chunk(f"e{i}", f"entity chunk {i}", doc=f"d{i}", entities=e)
        for i, e in enumerate(ents)
    ]
    graph = SqliteGraphStore(tmp_path / "g.db", mentions_budget=3)
    graph.upsert([IndexedChunk(c, unit(np.ones(DIM))) for c in made])
    budgeted = SqliteGraphStore(tmp_path / "g.db", mentions_budget=3, budget_from=5)

    def found(store: SqliteGraphStore, names: list[str]) -> set[str]:
        return {h.content_id for h in store.search(names, 20, QueryFilter())}

    ids = [c.content_id for c in made]
    assert found(graph, ["kafka", "raft", "etcd"]) == set(ids)  # a small graph: all
    assert found(budgeted, ["kafka", "raft", "etcd"]) == set(ids[:3])  # 1 + 2 fit in 3
    assert found(budgeted, ["etcd"]) == set(ids[3:])  # the rarest alone, past the budget
    budgeted.close()
    graph.close()
