"""SQLite graph store behaviour beyond the GraphStore contract."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from store_cases import DIM, make_chunk, unit

from core.types import Chunk, QueryFilter
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


def _damage(path: Path, sql: str) -> None:
    """A write from outside the store (a crash between its tables, an operator)."""
    with sqlite3.connect(path) as db:
        db.execute(sql)


def _items(*chunks: Chunk) -> list[IndexedChunk]:
    return [IndexedChunk(c, unit(np.ones(DIM))) for c in chunks]


def _consistent(path: Path) -> None:
    """No mention or ACL row without its chunk, and every entity's df is its mentions."""
    with sqlite3.connect(path) as db:
        for table in ("g_mentions", "g_chunk_acl"):
            assert not db.execute(
                f"SELECT 1 FROM {table} WHERE chunk_id NOT IN (SELECT id FROM g_chunk)"
            ).fetchall(), table
        assert not db.execute(
            "SELECT e.name FROM g_entity e WHERE e.df <>"
            " (SELECT count(*) FROM g_mentions m WHERE m.entity_id = e.id)"
        ).fetchall()


def test_rows_left_by_the_newest_lost_chunk_give_way_to_the_next_write(tmp_path: Path) -> None:
    """SQLite gives the next `g_chunk` row the highest id plus one: the id of a lost
    newest row, whose mentions and ACL tokens may still be there. Inserting over them
    failed (UNIQUE constraint) on every later write, repair and ingestion alike, or,
    without a clash, handed the new chunk the lost one's entities and tags."""
    path = tmp_path / "g.db"
    graph = SqliteGraphStore(path)
    a = make_chunk("a", "Kafka brokers", entities=("kafka",))
    b = make_chunk("b", "Raft and Kafka", entities=("raft", "kafka"), tags=frozenset({"hr"}))
    c = make_chunk("c", "Etcd and Kafka", entities=("etcd", "kafka"), tags=frozenset({"hr"}))
    graph.upsert(_items(a, b))
    _damage(path, "DELETE FROM g_chunk WHERE id = (SELECT max(id) FROM g_chunk)")
    assert graph.content_ids() == {a.content_id}
    graph.upsert(_items(c))  # a later ingestion takes the lost row's id
    assert graph.entities_of(c.content_id) == ["etcd", "kafka"]
    everyone = QueryFilter(access_tokens=None)
    assert graph.search(["raft"], 5, everyone) == []
    graph.upsert(_items(b))  # repair
    assert graph.search(["raft"], 5, everyone)[0].content_id == b.content_id
    assert graph.content_ids() == {a.content_id, b.content_id, c.content_id}
    assert graph.held_metadata()[c.content_id] == graph.metadata_signature(c)
    _consistent(path)
    graph.close()


def test_a_chunk_that_lost_mentions_is_not_held(tmp_path: Path) -> None:
    """A chunk is written with its mentions counted (and numbered from 0, which is all a
    store written before the count was kept can go by): one whose mentions are fewer is
    not found by its entities, so it is not held (`check` reports it missing and
    `repair` writes it again). A chunk that mentions nothing is held as it is."""
    path = tmp_path / "g.db"
    graph = SqliteGraphStore(path)
    made = {
        "all": make_chunk("all", "x", entities=("kafka", "raft")),
        "some": make_chunk("some", "x", entities=("etcd", "zookeeper", "consul")),
        "legacy": make_chunk("legacy", "x", entities=("redis", "memcached")),
        "none": make_chunk("none", "x", entities=("",)),
    }
    graph.upsert(_items(*made.values()))
    assert graph.content_ids() == {c.content_id for c in made.values()}

    def lose(key: str, condition: str) -> None:
        _damage(
            path,
            "DELETE FROM g_mentions WHERE chunk_id = (SELECT id FROM g_chunk WHERE "
            f"content_id = '{made[key].content_id}') AND {condition}",
        )

    lose("all", "1")
    lose("some", "pos = 2")
    legacy = made["legacy"].content_id
    _damage(path, f"UPDATE g_chunk SET mentions = NULL WHERE content_id = '{legacy}'")
    assert legacy in graph.content_ids()  # numbered 0..n-1: whole
    lose("legacy", "pos = 0")
    held = graph.content_ids()
    assert held == {made["none"].content_id}
    graph.upsert(_items(*(made[k] for k in ("all", "some", "legacy"))))
    assert graph.content_ids() == {c.content_id for c in made.values()}
    assert graph.entities_of(made["some"].content_id) == ["etcd", "zookeeper", "consul"]
    graph.close()


def test_emptying_the_graph_drops_every_leftover_row(tmp_path: Path) -> None:
    """Mentions and tags whose chunk row is lost below the newest id take no id anyone
    needs and no `check` sees them (they have no content id); emptying the store
    (`ragline repair --rebuild graph`) removes them with the rest."""
    path = tmp_path / "g.db"
    graph = SqliteGraphStore(path)
    made = [
        make_chunk(k, "x", entities=(k, "shared"), tags=frozenset({"hr"})) for k in ("a", "b", "c")
    ]
    graph.upsert(_items(*made))
    _damage(path, "DELETE FROM g_chunk WHERE id = (SELECT min(id) FROM g_chunk)")
    graph.delete(sorted(graph.content_ids()))
    with sqlite3.connect(path) as db:
        for table in ("g_mentions", "g_chunk_acl", "g_entity", "g_version", "g_document"):
            assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    graph.upsert(_items(*made))
    _consistent(path)
    graph.close()


def test_a_graph_written_before_mentions_were_counted_opens_and_counts_from_then_on(
    tmp_path: Path,
) -> None:
    """An existing file gets the column on open (NULL for the chunks already there)."""
    path = tmp_path / "g.db"
    legacy = SqliteGraphStore(path)
    old = make_chunk("old", "x", entities=("kafka",))
    legacy.upsert(_items(old))
    legacy.close()
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE g_chunk DROP COLUMN mentions")
    graph = SqliteGraphStore(path)
    again = SqliteGraphStore(path)  # a second process opening it: no error
    new = make_chunk("new", "x", entities=("raft", "kafka"))
    graph.upsert(_items(new))
    assert graph.content_ids() == {old.content_id, new.content_id}
    with sqlite3.connect(path) as db:
        counts = dict(db.execute("SELECT content_id, mentions FROM g_chunk").fetchall())
    assert counts == {old.content_id: None, new.content_id: 2}
    again.close()
    graph.close()
