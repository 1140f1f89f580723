"""Keyword index on SQLite FTS5, in the same database file as the metadata and graph tables.

Text is tokenised in Python (core.text.keyword_tokens: jieba for Chinese, identifiers kept
whole) and stored space-joined, so FTS5's tokenizer only splits on spaces; `tokenchars`
keeps `p12.1.2` or `max_connections` one token on both the index and the query side.

ACL and doc_type are FTS5 columns of opaque tokens, so those filters run inside the MATCH.
The remaining filters (doc_ids, department, dates) sit in `kw_chunks`, joined with
CROSS JOIN so SQLite runs the text match first (ENGINES.md: the planner otherwise starts
from the side table and a filtered query goes from 0.5 ms to 50-200 ms).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from core.errors import StoreError
from core.text import KEYWORD_ANALYSIS_VERSION, keyword_query_terms, keyword_tokens
from core.types import Chunk, QueryFilter, ScoredId
from indexing.protocols import IndexedChunk
from indexing.stores.budget import rarest_within
from indexing.stores.sqlite_conn import RowCount, open_sqlite

log = logging.getLogger("ragline.keyword")

PUBLIC = "__public__"  # the acl token of chunks without ACL tags

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kw_chunks (
    id INTEGER PRIMARY KEY,            -- = kw_fts.rowid
    content_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    department TEXT NOT NULL DEFAULT '',
    modified TEXT                      -- ISO date; NULL = unknown (fails any date filter)
);
CREATE INDEX IF NOT EXISTS kw_chunks_doc ON kw_chunks(doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS kw_fts USING fts5(
    text, title, section, acl, doc_type,
    tokenize = "unicode61 tokenchars '._-/:'"
);
CREATE TABLE IF NOT EXISTS kw_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


# From this many chunks on, a query drops its terms held by more than this share of them,
# and keeps its rarest terms only up to a budget of postings (chunks holding them, summed).
_PRUNE_FROM = 50_000
_COMMON_SHARE = 0.1
POSTINGS_BUDGET = 60_000
# Term statistics are remembered as long as the chunk count they go with (`RowCount`: its
# TTL, or until this store writes): a query asks for its terms' frequencies twice (the
# pipeline's rarity signal, then the common-term cut here), and popular terms come back
# query after query.
_DF_CACHE_MAX = 100_000


class _Row(NamedTuple):
    side: tuple[str, str, str, str | None]  # kw_chunks: content_id, doc_id, department, modified
    fts: tuple[str, str, str, str, str]  # kw_fts: text, title, section, acl, doc_type


def acl_token(tag: str) -> str:
    """A tag as one safe FTS5 token (tags may hold spaces, colons, any script)."""
    return "t" + hashlib.sha1(tag.encode("utf-8")).hexdigest()[:12]


def type_token(doc_type: str) -> str:
    return "d" + hashlib.sha1(doc_type.encode("utf-8")).hexdigest()[:12]


def fts_token(token: str) -> str:
    """A token as FTS5's unicode61 tokenizer stores it: lower case, diacritics removed."""
    kept = "".join(
        c for c in unicodedata.normalize("NFD", token.lower()) if not unicodedata.combining(c)
    )
    return unicodedata.normalize("NFC", kept)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _any_of(column: str, tokens: Sequence[str]) -> str:
    return f"{column} : ({' OR '.join(_quote(t) for t in sorted(tokens))})"


class SqliteKeywordIndex:
    """BM25 over text, title and section path; weights are FTS5 bm25() column weights."""

    name = "keyword"

    def __init__(
        self,
        path: Path | str,
        *,
        text_weight: float = 1.0,
        title_weight: float = 2.0,
        section_weight: float = 1.5,
        busy_timeout_s: float = 30.0,
        english_analysis: bool = True,
        postings_budget: int = POSTINGS_BUDGET,
    ) -> None:
        self._budget = postings_budget
        self._lock = threading.Lock()
        self._chunks = RowCount("kw_chunks")  # for term statistics, on every query
        self._df: dict[str, int] = {}  # fts token -> chunks holding it (0 = none)
        self._df_stamp: float | None = None  # the chunk count `_df` goes with
        self._conn = open_sqlite(path, _SCHEMA, busy_timeout_s)
        # Term statistics (document frequency per token), per connection: nothing is stored.
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kw_vocab USING fts5vocab(main, kw_fts, 'row')"
        )
        self._configured = english_analysis
        self._stale = False  # built by an older analysis version
        self._english = self._analysis_in_use(english_analysis)
        # acl and doc_type get weight 0: they are filters and must not move the score.
        self._weights = f"{text_weight}, {title_weight}, {section_weight}, 0.0, 0.0"

    def _analysis_in_use(self, configured: bool) -> bool:
        """Queries must be analysed like the index was: an index built with the other
        setting keeps its own (with a warning) until it is emptied and rebuilt
        (`ragline repair --rebuild keyword`)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT value FROM kw_meta WHERE key = 'english_analysis'"
            ).fetchone()
            empty = self._conn.execute("SELECT 1 FROM kw_chunks LIMIT 1").fetchone() is None
            if row is None or empty:
                self._store_analysis_locked(configured)
                return configured
            version = self._conn.execute(
                "SELECT value FROM kw_meta WHERE key = 'analysis_version'"
            ).fetchone()
        self._stale = version is None or version[0] != KEYWORD_ANALYSIS_VERSION
        if self._stale:
            # Version 2 cut languages other than English and Chinese (core.lang); version 3
            # reads "per" as English too (tables with "price per seat" were cut as Italian);
            # version 4 cuts traditional Chinese as simplified; version 5 tells Polish and
            # Swedish apart and stems them. Other text keeps its
            # tokens, so only such text needs the rebuild.
            log.warning(
                "keyword index was built by analysis version %s (now %s): text in languages "
                "other than English and Chinese, English text read as another language "
                "before, and traditional Chinese match only after "
                "`ragline repair --rebuild keyword`",
                version[0] if version else "1",
                KEYWORD_ANALYSIS_VERSION,
            )
        built = row[0] == "1"
        if built != configured:
            log.warning(
                "keyword index was built with english_analysis=%s, settings say %s; keeping "
                "%s until `ragline repair --rebuild keyword`",
                built,
                configured,
                built,
            )
        return built

    def _store_analysis_locked(self, english: bool) -> None:
        self._conn.executemany(
            "INSERT OR REPLACE INTO kw_meta (key, value) VALUES (?, ?)",
            [
                ("english_analysis", "1" if english else "0"),
                ("analysis_version", KEYWORD_ANALYSIS_VERSION),
            ],
        )

    # ---- writes ------------------------------------------------------------------------

    def _delete_locked(self, content_ids: Sequence[str]) -> None:
        rows = self._conn.execute(
            "SELECT id FROM kw_chunks WHERE content_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(content_ids)),),
        ).fetchall()
        self._conn.executemany("DELETE FROM kw_fts WHERE rowid = ?", rows)
        self._conn.executemany("DELETE FROM kw_chunks WHERE id = ?", rows)

    def _drop_leftovers_locked(self) -> None:
        """Drop the text rows past the highest chunk id, before inserting: SQLite gives a
        new `kw_chunks` row that highest id plus one, and a text row a lost chunk row left
        there (a crash between the tables, a write from outside) made that insert fail,
        and with it every later write and `repair`. Such rows are leftovers by definition
        (no chunk row has their id); one range delete, a few microseconds when none.
        Emptying the store (`repair --rebuild keyword`) drops every leftover this way."""
        self._conn.execute(
            "DELETE FROM kw_fts WHERE rowid > (SELECT coalesce(max(id), 0) FROM kw_chunks)"
        )

    @staticmethod
    def _meta_row(chunk: Chunk, english: bool = True) -> tuple[str, str | None, str, str, str]:
        """department, modified, title tokens, acl tokens, doc_type token."""
        acl = " ".join(sorted(acl_token(t) for t in chunk.acl_tags)) if chunk.acl_tags else PUBLIC
        return (
            chunk.department,
            chunk.modified.isoformat() if chunk.modified else None,
            " ".join(keyword_tokens(chunk.title, english)),
            acl,
            type_token(chunk.doc_type),
        )

    @staticmethod
    def _row(chunk: Chunk, english: bool = True) -> _Row:
        """Everything to insert for a chunk, tokenised before any lock or transaction is
        taken: jieba is the slow part, and the database's write lock is shared with the
        metadata store."""
        acl = " ".join(sorted(acl_token(t) for t in chunk.acl_tags)) if chunk.acl_tags else PUBLIC
        return _Row(
            side=(
                chunk.content_id,
                chunk.doc_id,
                chunk.department,
                chunk.modified.isoformat() if chunk.modified else None,
            ),
            fts=(
                " ".join(keyword_tokens(chunk.text, english)),
                " ".join(keyword_tokens(chunk.title, english)),
                " ".join(keyword_tokens(" ".join(chunk.section_path), english)),
                acl,
                type_token(chunk.doc_type),
            ),
        )

    def _write(self, delete: Sequence[str], insert: Sequence[_Row]) -> None:
        with self._lock:
            self._chunks.reset()  # the term frequencies go with it
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._delete_locked(delete)
                self._drop_leftovers_locked()
                for row in insert:
                    cur = self._conn.execute(
                        "INSERT INTO kw_chunks (content_id, doc_id, department, modified)"
                        " VALUES (?,?,?,?)",
                        row.side,
                    )
                    self._conn.execute(
                        "INSERT INTO kw_fts (rowid, text, title, section, acl, doc_type)"
                        " VALUES (?,?,?,?,?,?)",
                        (cur.lastrowid, *row.fts),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        latest = {item.chunk.content_id: item.chunk for item in items}
        if latest:
            rows = [self._row(chunk, self._english) for chunk in latest.values()]
            # Delete-then-insert in one transaction: applying the same items twice is a no-op.
            self._write(list(latest), rows)

    def delete(self, content_ids: Sequence[str]) -> None:
        if content_ids:
            self._write(content_ids, [])
        if self._english != self._configured or self._stale:
            with self._lock:  # emptied (a rebuild): the configured analysis applies now
                if self._conn.execute("SELECT 1 FROM kw_chunks LIMIT 1").fetchone() is None:
                    self._store_analysis_locked(self._configured)
                    self._english = self._configured
                    self._stale = False

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        # Only the document-level columns: the text (the slow part to tokenise) stays.
        latest = {c.content_id: self._meta_row(c, self._english) for c in chunks}
        if not latest:
            return
        with self._lock:
            self._chunks.reset()  # titles are indexed: their terms' frequencies move
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                for cid, (department, modified, title, acl, doc_type) in latest.items():
                    found = self._conn.execute(
                        "SELECT id FROM kw_chunks WHERE content_id = ?", (cid,)
                    ).fetchone()
                    if found is None:
                        continue
                    self._conn.execute(
                        "UPDATE kw_chunks SET department = ?, modified = ? WHERE id = ?",
                        (department, modified, found[0]),
                    )
                    self._conn.execute(
                        "UPDATE kw_fts SET title = ?, acl = ?, doc_type = ? WHERE rowid = ?",
                        (title, acl, doc_type, found[0]),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    # ---- reads -------------------------------------------------------------------------

    def content_ids(self) -> set[str]:
        """The chunks search can find: those with both their rows. A chunk whose text row
        is lost is never matched, so `check` reports it missing and `repair` writes it
        again (as `held_metadata`, which joins the same way)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT k.content_id FROM kw_fts f CROSS JOIN kw_chunks k ON k.id = f.rowid"
            )
            return {r[0] for r in rows}

    def metadata_signature(self, chunk: Chunk) -> str:
        return json.dumps(list(self._meta_row(chunk, self._english)), ensure_ascii=False)

    def held_metadata(self) -> dict[str, str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT k.content_id, k.department, k.modified, f.title, f.acl, f.doc_type"
                " FROM kw_chunks k JOIN kw_fts f ON f.rowid = k.id"
            ).fetchall()
        return {r[0]: json.dumps(list(r[1:]), ensure_ascii=False) for r in rows}

    def search(self, query: str, k: int, where: QueryFilter) -> list[ScoredId]:
        terms = keyword_query_terms(query, self._english)
        if not terms or k <= 0:
            return []
        terms = self._selective(terms)
        match = "{text title section} : (" + " OR ".join(_quote(t) for t in terms) + ")"
        if where.access_tokens is not None:
            tokens = [PUBLIC, *(acl_token(t) for t in where.access_tokens)]
            match += " AND " + _any_of("acl", tokens)
        if where.doc_types:
            match += " AND " + _any_of("doc_type", [type_token(t) for t in where.doc_types])
        params: list[object] = [match]
        if not (where.doc_ids or where.departments or where.modified_from or where.modified_to):
            # Nothing to check in the side table: rank inside FTS5 first and join only the
            # top k, not every match (1.45x faster at 580k chunks, bench/RESULTS.md).
            # Equal scores keep the insertion order (rowid) at the cut.
            sql = [
                "SELECT c.content_id, f.s FROM",
                f"(SELECT rowid, bm25(kw_fts, {self._weights}) AS s FROM kw_fts",
                "WHERE kw_fts MATCH ? ORDER BY s, rowid LIMIT ?) f",
                "JOIN kw_chunks c ON c.id = f.rowid ORDER BY f.s, c.content_id",
            ]
            return self._run(sql, [match, k])
        sql = [
            f"SELECT c.content_id, bm25(kw_fts, {self._weights}) AS s",
            "FROM kw_fts CROSS JOIN kw_chunks c ON c.id = kw_fts.rowid",
            "WHERE kw_fts MATCH ?",
        ]
        if where.doc_ids:
            sql.append("AND c.doc_id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(where.doc_ids)))
        if where.departments:
            sql.append("AND c.department IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(where.departments)))
        if where.modified_from:
            sql.append("AND c.modified >= ?")
            params.append(where.modified_from.isoformat())
        if where.modified_to:
            sql.append("AND c.modified <= ?")
            params.append(where.modified_to.isoformat())
        sql.append("ORDER BY s, c.content_id LIMIT ?")
        params.append(k)
        return self._run(sql, params)

    def _run(self, sql: list[str], params: list[object]) -> list[ScoredId]:
        try:
            with self._lock:
                rows = self._conn.execute(" ".join(sql), params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"keyword search failed: {exc}") from exc
        # bm25() is lower-is-better; ScoredId is higher-is-better.
        return [ScoredId(cid, -float(s)) for cid, s in rows]

    def _selective(self, terms: list[str]) -> list[str]:
        """The query's terms a large index can afford to score. FTS5 computes BM25 for
        every chunk matching any term (about 1 ms per thousand at 1M chunks), so from
        `_PRUNE_FROM` chunks on a query drops the terms most chunks hold: first those in
        more than `_COMMON_SHARE` of them (one term in a fifth of a million chunks, "年",
        made a query 5-10x slower while its idf (< 2.3) barely moves the ranking), then,
        most common first, those past the postings budget; the rarest term always stays.
        The ranking is BM25 over the kept terms (bench/RESULTS.md: at 1M chunks keyword
        p95 112 -> 67 ms, the planted chunk's recall unchanged)."""
        if len(terms) < 2:
            return terms
        try:
            with self._lock:  # a small index needs no term statistics at all
                if self._chunks.get(self._conn) < _PRUNE_FROM:
                    return terms
            n, df = self._token_frequencies(terms)
        except sqlite3.Error:
            return terms
        held = {t: df.get(t, 0) for t in terms}
        telling = [t for t in terms if held[t] <= _COMMON_SHARE * n] or terms
        kept = rarest_within({t: held[t] for t in telling}, self._budget)
        return [t for t in terms if t in kept]

    def _token_frequencies(self, tokens: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(chunks held, {token: chunks holding it}) for analysed tokens."""
        wanted = {fts_token(t): t for t in tokens}
        with self._lock:
            n = self._chunks.get(self._conn)
            if self._df_stamp != self._chunks.stamp or len(self._df) > _DF_CACHE_MAX:
                self._df.clear()
                self._df_stamp = self._chunks.stamp
            missing = [w for w in wanted if w not in self._df]
            if missing:
                rows = self._conn.execute(
                    "SELECT term, doc FROM temp.kw_vocab"
                    " WHERE term IN (SELECT value FROM json_each(?))",
                    (json.dumps(sorted(missing), ensure_ascii=False),),
                ).fetchall()
                found = {term: int(doc) for term, doc in rows}
                self._df.update((w, found.get(w, 0)) for w in missing)
            held = {w: self._df[w] for w in wanted}
        return n, {wanted[w]: df for w, df in held.items() if df > 0}

    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        tokens = {t: [fts_token(x) for x in keyword_query_terms(t, self._english)] for t in terms}
        wanted = sorted({x for xs in tokens.values() for x in xs})
        try:
            n, held = self._token_frequencies(wanted)
        except sqlite3.Error as exc:
            raise StoreError(f"keyword term statistics failed: {exc}") from exc
        return n, {t: min(held.get(x, 0) for x in xs) for t, xs in tokens.items() if xs}

    def flush(self) -> None:
        """Every write is committed already (WAL)."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()
