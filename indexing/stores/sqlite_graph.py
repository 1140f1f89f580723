"""Graph store on plain SQLite tables, in the same database file as the other embedded stores.

Nodes and edges:
  document --HAS_VERSION--> version --HAS_CHUNK--> chunk --MENTIONS--> entity
  chunk --NEXT--> chunk (ordinal + 1 within a version)
HAS_VERSION / HAS_CHUNK are the (doc_id, version) keys of `g_version` / `g_chunk`; NEXT is
the view `g_next` over the `(doc_id, version, ordinal)` index rather than a stored edge, so
chunks may arrive in any order and a replaced chunk never leaves a dangling edge. `g_edges`
lists every edge for inspection or export to a graph database.

Search is two indexed joins (ENGINES.md: 2.5 ms p50 at 50k chunks / 200k MENTIONS): chunks
that mention a query entity (hop 1), then the neighbours of the best of them through NEXT
or a shared, reasonably rare entity (hop 2, down-weighted).
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import StoreError
from core.types import Chunk, QueryFilter, ScoredId
from indexing.entities import extract_entities, normalize_entity
from indexing.protocols import IndexedChunk
from indexing.stores.budget import rarest_within
from indexing.stores.sqlite_conn import RowCount, open_sqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS g_document (doc_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS g_version (
    doc_id TEXT NOT NULL, version TEXT NOT NULL, PRIMARY KEY (doc_id, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS g_chunk (
    id INTEGER PRIMARY KEY,
    content_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    version TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    public INTEGER NOT NULL,           -- 1 when the chunk has no ACL tags
    doc_type TEXT NOT NULL,
    department TEXT NOT NULL,
    modified TEXT,                     -- ISO date; NULL fails any date filter
    mentions INTEGER                   -- g_mentions rows written; NULL: not counted (older)
);
CREATE INDEX IF NOT EXISTS g_chunk_seq ON g_chunk(doc_id, version, ordinal);
CREATE TABLE IF NOT EXISTS g_chunk_acl (
    chunk_id INTEGER NOT NULL, token TEXT NOT NULL, PRIMARY KEY (chunk_id, token)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS g_entity (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    df INTEGER NOT NULL DEFAULT 0      -- chunks mentioning it: rarity for scoring
);
CREATE TABLE IF NOT EXISTS g_mentions (
    entity_id INTEGER NOT NULL, chunk_id INTEGER NOT NULL, pos INTEGER NOT NULL,
    PRIMARY KEY (entity_id, chunk_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS g_mentions_chunk ON g_mentions(chunk_id, entity_id);
CREATE VIEW IF NOT EXISTS g_next (src, dst) AS
    SELECT a.id, b.id FROM g_chunk a JOIN g_chunk b
    ON b.doc_id = a.doc_id AND b.version = a.version AND b.ordinal = a.ordinal + 1;
CREATE VIEW IF NOT EXISTS g_edges (src, rel, dst) AS
    SELECT 'document:' || doc_id, 'HAS_VERSION', 'version:' || doc_id || '/' || version
      FROM g_version
    UNION ALL SELECT 'version:' || doc_id || '/' || version, 'HAS_CHUNK', 'chunk:' || content_id
      FROM g_chunk
    UNION ALL SELECT 'chunk:' || c.content_id, 'MENTIONS', 'entity:' || e.name
      FROM g_mentions m JOIN g_chunk c ON c.id = m.chunk_id JOIN g_entity e ON e.id = m.entity_id
    UNION ALL SELECT 'chunk:' || a.content_id, 'NEXT', 'chunk:' || b.content_id
      FROM g_next n JOIN g_chunk a ON a.id = n.src JOIN g_chunk b ON b.id = n.dst;
"""

# {acl} is the ACL condition on the seed chunks: hop 2 never starts from a chunk the
# principal cannot see, so a neighbour's score reveals nothing about hidden chunks.
_SEARCH = """
WITH q(eid, w) AS (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(:q)
),
direct(chunk, eid, w) AS MATERIALIZED (
    SELECT m.chunk_id, q.eid, q.w FROM q
    JOIN g_mentions m ON m.entity_id = q.eid
    JOIN g_chunk c ON c.id = m.chunk_id
    WHERE {acl}
),
seed(chunk) AS MATERIALIZED (
    SELECT chunk FROM direct GROUP BY chunk ORDER BY SUM(w) DESC, chunk LIMIT :seeds
),
via_next(chunk, eid, w) AS (
    SELECT n.id, d.eid, d.w FROM seed
    JOIN direct d ON d.chunk = seed.chunk
    JOIN g_chunk s ON s.id = seed.chunk
    JOIN g_chunk n ON n.doc_id = s.doc_id AND n.version = s.version
        AND n.ordinal IN (s.ordinal - 1, s.ordinal + 1)
),
bridge(entity, chunk) AS (
    SELECT m.entity_id, m.chunk_id FROM seed
    JOIN g_mentions m ON m.chunk_id = seed.chunk
    JOIN g_entity e ON e.id = m.entity_id
    WHERE e.df BETWEEN 2 AND :bridge_df AND m.entity_id NOT IN (SELECT eid FROM q)
),
via_entity(chunk, eid, w) AS (
    SELECT m.chunk_id, d.eid, d.w FROM bridge b
    JOIN direct d ON d.chunk = b.chunk
    JOIN g_mentions m ON m.entity_id = b.entity
    WHERE m.chunk_id <> b.chunk
),
reach(chunk, eid, s) AS (
    SELECT chunk, eid, w FROM direct
    UNION ALL SELECT chunk, eid, w * :hop2 FROM via_next
    UNION ALL SELECT chunk, eid, w * :hop2 FROM via_entity
),
best(chunk, s) AS (SELECT chunk, MAX(s) FROM reach GROUP BY chunk, eid)
SELECT c.content_id, SUM(best.s) AS score
FROM best JOIN g_chunk c ON c.id = best.chunk
WHERE {filters}
GROUP BY c.id
ORDER BY score DESC, c.content_id
LIMIT :k
"""


# From this many chunks on, a search keeps its rarest entities while the chunks mentioning
# them sum to at most the budget (the rarest always stays): hop 1 reads every mention of
# every query entity, and one entity in 14k chunks made a 1M-chunk search 5x slower.
BUDGET_FROM = 50_000
MENTIONS_BUDGET = 5_000


def _acl_sql(where: QueryFilter, alias: str) -> str:
    if where.access_tokens is None:
        return "1"
    return (
        f"({alias}.public = 1 OR EXISTS (SELECT 1 FROM g_chunk_acl a WHERE a.chunk_id = "
        f"{alias}.id AND a.token IN (SELECT value FROM json_each(:tokens))))"
    )


def _filter_sql(where: QueryFilter, params: dict[str, Any]) -> str:
    """`where` as SQL on alias `c` (the reference semantics are QueryFilter.admits)."""
    parts = [_acl_sql(where, "c")]
    params["tokens"] = json.dumps(sorted(where.access_tokens or ()))
    for column, values in (
        ("doc_type", where.doc_types),
        ("doc_id", where.doc_ids),
        ("department", where.departments),
    ):
        if values:
            parts.append(f"c.{column} IN (SELECT value FROM json_each(:{column}s))")
            params[f"{column}s"] = json.dumps(sorted(values))
    if where.modified_from:
        parts.append("c.modified >= :modified_from")
        params["modified_from"] = where.modified_from.isoformat()
    if where.modified_to:
        parts.append("c.modified <= :modified_to")
        params["modified_to"] = where.modified_to.isoformat()
    return " AND ".join(parts)


def _count_mentions(conn: sqlite3.Connection) -> None:
    """Give a file written before chunks counted their mentions the column (NULL for the
    chunks already there): `content_ids` tells a chunk that lost mentions by it. Two
    processes opening the file together may both try; the second finds it there."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(g_chunk)")}
    if "mentions" in columns:
        return
    try:
        conn.execute("ALTER TABLE g_chunk ADD COLUMN mentions INTEGER")
    except sqlite3.OperationalError as exc:
        if "duplicate column" not in str(exc):
            raise


def chunk_entities(chunk: Chunk) -> list[str]:
    """The chunk's own entities when the pipeline supplied them, else extracted ones."""
    if chunk.entities:
        names = (normalize_entity(e) for e in chunk.entities)
        return list(dict.fromkeys(n for n in names if n))
    return extract_entities(chunk.text)


class SqliteGraphStore:
    """Entity graph over chunks. `hop2_weight` scales entities reached through a neighbour;
    `bridge_df` caps how common a shared entity may be to link two chunks (hub entities
    would connect everything); `seeds` caps how many hop-1 chunks are expanded."""

    name = "graph"

    def __init__(
        self,
        path: Path | str,
        *,
        hop2_weight: float = 0.5,
        bridge_df: int = 50,
        seeds: int = 50,
        busy_timeout_s: float = 30.0,
        mentions_budget: int = MENTIONS_BUDGET,
        budget_from: int = BUDGET_FROM,
    ) -> None:
        self._budget, self._budget_from = mentions_budget, budget_from
        self._hop2 = hop2_weight
        self._bridge_df = bridge_df
        self._seeds = seeds
        self._lock = threading.Lock()
        self._chunks = RowCount("g_chunk")  # for the entities' idf, on every search
        self._conn = open_sqlite(path, _SCHEMA, busy_timeout_s)
        _count_mentions(self._conn)

    # ---- writes ------------------------------------------------------------------------

    def _delete_locked(self, content_ids: Sequence[str]) -> None:
        rows = self._conn.execute(
            "SELECT id, doc_id, version FROM g_chunk"
            " WHERE content_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(content_ids)),),
        ).fetchall()
        if not rows:
            return
        ids = [(r[0],) for r in rows]
        self._unmention_locked(
            "chunk_id IN (SELECT value FROM json_each(?))", (json.dumps([r[0] for r in rows]),)
        )
        self._conn.executemany("DELETE FROM g_chunk_acl WHERE chunk_id = ?", ids)
        self._conn.executemany("DELETE FROM g_chunk WHERE id = ?", ids)
        # Versions and documents left without chunks go too.
        versions = {(r[1], r[2]) for r in rows}
        self._conn.executemany(
            "DELETE FROM g_version WHERE doc_id = ?1 AND version = ?2 AND NOT EXISTS"
            " (SELECT 1 FROM g_chunk WHERE doc_id = ?1 AND version = ?2)",
            sorted(versions),
        )
        self._conn.executemany(
            "DELETE FROM g_document WHERE doc_id = ?1 AND NOT EXISTS"
            " (SELECT 1 FROM g_version WHERE doc_id = ?1)",
            sorted({(d,) for d, _ in versions}),
        )

    def _unmention_locked(self, where: str, params: tuple[object, ...]) -> None:
        """Drop the mentions `where` selects, counted off their entities' df (an entity
        no chunk mentions any more goes)."""
        mentioned = self._conn.execute(
            f"SELECT entity_id FROM g_mentions WHERE {where}", params
        ).fetchall()
        if not mentioned:
            return
        self._conn.executemany("UPDATE g_entity SET df = df - 1 WHERE id = ?", mentioned)
        self._conn.executemany("DELETE FROM g_entity WHERE id = ? AND df <= 0", mentioned)
        self._conn.execute(f"DELETE FROM g_mentions WHERE {where}", params)

    def _drop_leftovers_locked(self) -> None:
        """Drop the mentions and ACL tokens past the highest chunk id, before inserting:
        SQLite gives a new `g_chunk` row that highest id plus one, and rows a lost chunk
        row left there (a crash between the tables, a write from outside) made that
        insert fail (UNIQUE), and with it every later write and `repair`, or handed the
        new chunk the lost one's entities and tags. Such rows are leftovers by definition
        (no chunk has their id); a few indexed range reads when there are none. An empty
        store (`repair --rebuild graph`) drops every row of the other tables, including
        leftovers of lost rows below the highest id and entities' df counts gone astray."""
        top = self._conn.execute("SELECT coalesce(max(id), 0) FROM g_chunk").fetchone()[0]
        if top == 0:
            for table in ("g_mentions", "g_chunk_acl", "g_entity", "g_version", "g_document"):
                self._conn.execute(f"DELETE FROM {table}")
            return
        self._unmention_locked("chunk_id > ?", (top,))
        self._conn.execute("DELETE FROM g_chunk_acl WHERE chunk_id > ?", (top,))

    def _insert_locked(self, chunk: Chunk, entities: list[str]) -> None:
        db = self._conn
        db.execute("INSERT OR IGNORE INTO g_document (doc_id) VALUES (?)", (chunk.doc_id,))
        db.execute(
            "INSERT OR IGNORE INTO g_version (doc_id, version) VALUES (?, ?)",
            (chunk.doc_id, chunk.version),
        )
        cur = db.execute(
            "INSERT INTO g_chunk (content_id, doc_id, version, ordinal, public, doc_type,"
            " department, modified, mentions) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                chunk.content_id,
                chunk.doc_id,
                chunk.version,
                chunk.ordinal,
                0 if chunk.acl_tags else 1,
                chunk.doc_type,
                chunk.department,
                chunk.modified.isoformat() if chunk.modified else None,
                len(entities),
            ),
        )
        cid = cur.lastrowid
        db.executemany(
            "INSERT INTO g_chunk_acl (chunk_id, token) VALUES (?, ?)",
            [(cid, tag) for tag in sorted(chunk.acl_tags)],
        )
        for pos, name in enumerate(entities):
            db.execute(
                "INSERT INTO g_entity (name, df) VALUES (?, 1)"
                " ON CONFLICT(name) DO UPDATE SET df = df + 1",
                (name,),
            )
            db.execute(
                "INSERT INTO g_mentions (entity_id, chunk_id, pos)"
                " SELECT id, ?, ? FROM g_entity WHERE name = ?",
                (cid, pos, name),
            )

    def _write(self, delete: Sequence[str], insert: Sequence[Chunk]) -> None:
        # Extraction runs before the write lock is taken (it is shared with the metadata
        # store); the lock is held for SQL only.
        entities = [chunk_entities(chunk) for chunk in insert]
        with self._lock:
            self._chunks.reset()
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._delete_locked(delete)
                self._drop_leftovers_locked()
                for chunk, names in zip(insert, entities, strict=True):
                    self._insert_locked(chunk, names)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        latest = {item.chunk.content_id: item.chunk for item in items}
        if latest:
            # Drop the chunk's node and edges, then re-insert: idempotent by content_id.
            self._write(list(latest), list(latest.values()))

    def delete(self, content_ids: Sequence[str]) -> None:
        if content_ids:
            self._write(content_ids, [])

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        latest = {c.content_id: c for c in chunks}
        if not latest:
            return
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                for chunk in latest.values():
                    found = self._conn.execute(
                        "UPDATE g_chunk SET public = ?, doc_type = ?, department = ?,"
                        " modified = ? WHERE content_id = ? RETURNING id",
                        (
                            0 if chunk.acl_tags else 1,
                            chunk.doc_type,
                            chunk.department,
                            chunk.modified.isoformat() if chunk.modified else None,
                            chunk.content_id,
                        ),
                    ).fetchone()
                    if found is None:
                        continue
                    self._conn.execute("DELETE FROM g_chunk_acl WHERE chunk_id = ?", found)
                    self._conn.executemany(
                        "INSERT INTO g_chunk_acl (chunk_id, token) VALUES (?, ?)",
                        [(found[0], tag) for tag in sorted(chunk.acl_tags)],
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    # ---- reads -------------------------------------------------------------------------

    def content_ids(self) -> set[str]:
        """The chunks held whole: a chunk that lost mentions is not found by those
        entities, so `check` reports it missing and `repair` writes it again. Told by the
        count written with it, or for a chunk written before that count was kept, by its
        mentions' positions (numbered from 0 without a gap when written)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT c.content_id FROM g_chunk c WHERE coalesce(c.mentions,"
                " (SELECT max(m.pos) + 1 FROM g_mentions m WHERE m.chunk_id = c.id), 0)"
                " = (SELECT count(*) FROM g_mentions m WHERE m.chunk_id = c.id)"
            )
            return {r[0] for r in rows}

    @staticmethod
    def _signature(
        public: int, doc_type: str, department: str, modified: str | None, acl: list[str]
    ) -> str:
        return json.dumps([public, doc_type, department, modified, sorted(acl)])

    def metadata_signature(self, chunk: Chunk) -> str:
        return self._signature(
            0 if chunk.acl_tags else 1,
            chunk.doc_type,
            chunk.department,
            chunk.modified.isoformat() if chunk.modified else None,
            list(chunk.acl_tags),
        )

    def held_metadata(self) -> dict[str, str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, content_id, public, doc_type, department, modified FROM g_chunk"
            ).fetchall()
            acl: dict[int, list[str]] = {}
            for chunk_id, token in self._conn.execute("SELECT chunk_id, token FROM g_chunk_acl"):
                acl.setdefault(chunk_id, []).append(token)
        return {r[1]: self._signature(r[2], r[3], r[4], r[5], acl.get(r[0], [])) for r in rows}

    def entities_of(self, content_id: str) -> list[str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT e.name FROM g_chunk c JOIN g_mentions m ON m.chunk_id = c.id"
                " JOIN g_entity e ON e.id = m.entity_id WHERE c.content_id = ? ORDER BY m.pos",
                (content_id,),
            ).fetchall()
        return [r[0] for r in rows]

    def search(self, entities: Sequence[str], k: int, where: QueryFilter) -> list[ScoredId]:
        names = list(dict.fromkeys(n for n in map(normalize_entity, entities) if n))
        if not names or k <= 0:
            return []
        try:
            with self._lock:
                found = self._conn.execute(
                    "SELECT id, df FROM g_entity"
                    " WHERE name IN (SELECT value FROM json_each(?)) AND df > 0",
                    (json.dumps(names),),
                ).fetchall()
                if not found:
                    return []
                total = self._chunks.get(self._conn)
                if total >= self._budget_from:
                    kept = rarest_within(dict(found), self._budget)
                    found = [(eid, df) for eid, df in found if eid in kept]
                # idf-like rarity: an entity few chunks mention says more about a chunk.
                query = [[eid, math.log(1.0 + total / df)] for eid, df in found]
                params: dict[str, Any] = {
                    "q": json.dumps(query),
                    "seeds": self._seeds,
                    "bridge_df": self._bridge_df,
                    "hop2": self._hop2,
                    "k": k,
                }
                sql = _SEARCH.format(acl=_acl_sql(where, "c"), filters=_filter_sql(where, params))
                rows = self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"graph search failed: {exc}") from exc
        return [ScoredId(cid, float(score)) for cid, score in rows]

    def flush(self) -> None:
        """Every write is committed already (WAL)."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()
