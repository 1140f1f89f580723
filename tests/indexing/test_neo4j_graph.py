"""Neo4j specifics beyond the GraphStore contract: the version chain (SUPERSEDES), sections
and the version history of a clause, and namespaces that do not see each other."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from servers import neo4j_graph
from store_cases import DIM, make_chunk, unit

from core.types import Chunk, QueryFilter
from indexing.protocols import IndexedChunk
from indexing.stores.neo4j_graph import Neo4jGraphStore

pytestmark = pytest.mark.integration
ALL = QueryFilter(access_tokens=None)


@pytest.fixture
def neo(tmp_path: Path) -> Iterator[Neo4jGraphStore]:
    store = neo4j_graph(tmp_path)
    yield store
    store.drop()
    store.close()


def item(chunk: Chunk) -> IndexedChunk:
    return IndexedChunk(chunk, unit(np.ones(DIM)))


def versioned(version: str, text: str, ordinal: int = 0, section: str = "第5条") -> Chunk:
    chunk = make_chunk("contract", text, ordinal=ordinal, section=("合同", section))
    return replace(chunk, version=version, content_id=f"{version}{ordinal}".ljust(32, "0"))


def test_superseded_version_stays_as_history_outside_search(neo: Neo4jGraphStore) -> None:
    v1 = [versioned("a", "付款期限为30天 ERR-1"), versioned("a", "违约金 1%", 1, "第6条")]
    v2 = [versioned("b", "付款期限为60天 ERR-1"), versioned("b", "违约金 2%", 1, "第6条")]
    neo.upsert([item(c) for c in v1])
    neo.upsert([item(c) for c in v2])  # the new version arrives, then the old one goes
    neo.delete([c.content_id for c in v1])
    assert neo.content_ids() == {c.content_id for c in v2}
    hits = [h.content_id for h in neo.search(["ERR-1"], 5, ALL)]
    assert hits == [v2[0].content_id, v2[1].content_id]  # direct, then its NEXT
    doc = v1[0].doc_id
    assert neo.version_chain(doc) == ["b", "a"]
    history = neo.clause_history(doc, "第5条")
    assert history == [("a", ["付款期限为30天 ERR-1"]), ("b", ["付款期限为60天 ERR-1"])]
    rels = neo._read(
        "MATCH (:Version {uid: $ns + '|' + $doc + '|b'})-[r:SUPERSEDES]->(o) RETURN o.version AS v",
        doc=doc,
    )
    assert rels == [{"v": "a"}]
    neo.delete([c.content_id for c in v2])  # the document is deleted: history goes too
    assert neo.clause_history(doc, "第5条") == [] and neo.version_chain(doc) == []
    left = neo._read("MATCH (n {ns: $ns}) RETURN count(n) AS n")
    assert left == [{"n": 0}]


def test_namespaces_are_isolated(neo: Neo4jGraphStore, tmp_path: Path) -> None:
    other = neo4j_graph(tmp_path / "other")
    try:
        neo.upsert([item(make_chunk("x", "ERR-4242 here"))])
        assert other.content_ids() == set() and other.search(["ERR-4242"], 5, ALL) == []
        assert len(neo.search(["ERR-4242"], 5, ALL)) == 1
    finally:
        other.drop()
        other.close()


def test_a_large_graph_searches_its_rarest_entities_within_the_mentions_budget(
    tmp_path: Path,
) -> None:
    """As the SQLite graph: from `budget_from` chunks on, the query's rarest entities
    while the chunks mentioning them sum to at most the budget; the rarest always stays."""
    ents = [("kafka",), ("raft",), ("raft",), *[("etcd",)] * 4]
    made = [
        make_chunk(f"e{i}", f"entity chunk {i}", doc=f"d{i}", entities=e)
        for i, e in enumerate(ents)
    ]
    store = neo4j_graph(tmp_path, mentions_budget=3, budget_from=5)
    unbounded = neo4j_graph(tmp_path, mentions_budget=3)  # the same namespace
    try:
        store.upsert([item(c) for c in made])

        def found(graph: Neo4jGraphStore, names: list[str]) -> set[str]:
            return {h.content_id for h in graph.search(names, 20, ALL)}

        ids = [c.content_id for c in made]
        assert found(unbounded, ["kafka", "raft", "etcd"]) == set(ids)  # 7 < 50k chunks
        assert found(store, ["kafka", "raft", "etcd"]) == set(ids[:3])  # 1 + 2 fit in 3
        assert found(store, ["etcd"]) == set(ids[3:])  # the rarest alone, past the budget
    finally:
        store.drop()
        store.close()
        unbounded.close()


def test_the_filter_admits_the_best_candidates_batch_by_batch(
    neo: Neo4jGraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Candidates go through the filter best first, a batch at a time, until k are in: the
    five best here are hidden from the caller, so the one it may see is found in the
    second batch."""
    import indexing.stores.neo4j_graph as ng

    monkeypatch.setattr(ng, "_ADMIT_BATCH", 1)  # batches of max(4k, 1) = 4 for k = 1
    hidden = [
        make_chunk(f"h{i}", "", doc=f"h{i}", tags=frozenset({"hr"}), entities=("kafka", "raft"))
        for i in range(5)
    ]
    seen = make_chunk("open", "", doc="open", entities=("kafka",))
    neo.upsert([item(c) for c in [*hidden, seen]])
    best = neo.search(["kafka", "raft"], 1, ALL)
    assert len(best) == 1 and best[0].content_id != seen.content_id
    nobody = QueryFilter(access_tokens=frozenset())
    assert [h.content_id for h in neo.search(["kafka", "raft"], 1, nobody)] == [seen.content_id]
