"""SQLite keyword index behaviour beyond the KeywordIndex contract: its two tables (the side
table `kw_chunks` and the text table `kw_fts`, joined on id = rowid) out of step."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from store_cases import DIM, make_chunk, unit

from core.types import Chunk, QueryFilter
from indexing.protocols import IndexedChunk
from indexing.stores.sqlite_keyword import SqliteKeywordIndex

EVERYONE = QueryFilter(access_tokens=None)


def _items(*chunks: Chunk) -> list[IndexedChunk]:
    return [IndexedChunk(c, unit(np.ones(DIM))) for c in chunks]


def _damage(path: Path, sql: str) -> None:
    """A write from outside the store (a crash between the two tables, an operator)."""
    with sqlite3.connect(path) as db:
        db.execute(sql)


def _rows(path: Path) -> tuple[int, int]:
    with sqlite3.connect(path) as db:
        side = db.execute("SELECT count(*) FROM kw_chunks").fetchone()[0]
        text = db.execute("SELECT count(*) FROM kw_fts").fetchone()[0]
    return side, text


def _found(store: SqliteKeywordIndex, query: str) -> set[str]:
    return {h.content_id for h in store.search(query, 10, EVERYONE)}


def test_a_text_row_left_by_the_newest_lost_chunk_gives_way_to_the_next_write(
    tmp_path: Path,
) -> None:
    """SQLite gives the next `kw_chunks` row the highest id plus one: the id of a lost
    newest row, whose `kw_fts` row may still be there. Inserting over it failed
    (IntegrityError) on every later write, repair and ingestion alike; the leftover text
    row is dropped instead, so the new chunk never inherits the lost one's text."""
    path = tmp_path / "kw.db"
    store = SqliteKeywordIndex(path)
    a = make_chunk("a", "Cormorants dive for fish.")
    b = make_chunk("b", "Albatross glide over the ocean.")
    c = make_chunk("c", "Petrels nest on cliffs.")
    store.upsert(_items(a, b))
    _damage(path, "DELETE FROM kw_chunks WHERE id = (SELECT max(id) FROM kw_chunks)")
    assert store.content_ids() == {a.content_id}
    store.upsert(_items(c))  # a later ingestion takes the lost row's id
    assert _found(store, "albatross") == set()
    store.upsert(_items(b))  # repair
    assert _found(store, "albatross") == {b.content_id}
    assert _found(store, "petrels") == {c.content_id}
    assert store.content_ids() == {a.content_id, b.content_id, c.content_id}
    assert _rows(path) == (3, 3)
    store.close()


def test_a_chunk_whose_text_row_is_lost_is_not_held(tmp_path: Path) -> None:
    """Search starts from `kw_fts`: a chunk without its text row is never found, so it is
    not held (`check` reports it missing and `repair` writes it again)."""
    path = tmp_path / "kw.db"
    store = SqliteKeywordIndex(path)
    a = make_chunk("a", "The falcon key is 9981.")
    b = make_chunk("b", "Herons wade in shallow water.")
    store.upsert(_items(a, b))
    _damage(
        path,
        f"DELETE FROM kw_fts WHERE rowid = "
        f"(SELECT id FROM kw_chunks WHERE content_id = '{a.content_id}')",
    )
    assert _found(store, "falcon") == set()
    assert store.content_ids() == {b.content_id}
    assert set(store.held_metadata()) == store.content_ids()
    store.upsert(_items(a))
    assert _found(store, "falcon") == {a.content_id}
    assert store.content_ids() == {a.content_id, b.content_id}
    assert _rows(path) == (2, 2)
    store.close()


def test_emptying_the_index_drops_every_leftover_text_row(tmp_path: Path) -> None:
    """A text row whose side row is lost below the newest id takes no id anyone needs and
    no `check` sees it (it has no content id); emptying the store (`ragline repair
    --rebuild keyword`) removes it with the rest."""
    path = tmp_path / "kw.db"
    store = SqliteKeywordIndex(path)
    chunks = [make_chunk(k, f"Seabird {k} colony count.") for k in ("a", "b", "c")]
    store.upsert(_items(*chunks))
    _damage(path, "DELETE FROM kw_chunks WHERE id = (SELECT min(id) FROM kw_chunks)")
    assert _rows(path) == (2, 3)
    store.delete(sorted(store.content_ids()))
    assert _rows(path) == (0, 0)
    store.upsert(_items(*chunks))
    assert _found(store, "colony") == {c.content_id for c in chunks}
    store.close()
