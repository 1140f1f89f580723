"""The SQLite keyword index remembers which analysis built it: queries are analysed the
same way until the index is emptied and rebuilt with the configured one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from store_cases import DIM, make_chunk, unit

from core.types import QueryFilter
from indexing.protocols import IndexedChunk
from indexing.stores.sqlite_keyword import SqliteKeywordIndex


def test_index_keeps_the_analysis_it_was_built_with(tmp_path: Path) -> None:
    path = tmp_path / "kw.db"
    chunk = make_chunk("a", "The nightly backups are run by the storage team.")
    item = IndexedChunk(chunk, unit(np.ones(DIM)))
    built = SqliteKeywordIndex(path, english_analysis=False)
    built.upsert([item])
    built.close()
    # Settings now say "analyse English", but the index holds plain tokens: a stemmed query
    # ("backup") would miss "backups", so the index keeps querying with plain tokens.
    reopened = SqliteKeywordIndex(path, english_analysis=True)
    assert [s.content_id for s in reopened.search("backups", 3, QueryFilter())] == [
        chunk.content_id
    ]
    assert reopened.search("backup", 3, QueryFilter()) == []
    # A rebuild empties it and loads it again: now with the configured analysis.
    reopened.delete(sorted(reopened.content_ids()))
    reopened.upsert([item])
    assert [s.content_id for s in reopened.search("backup", 3, QueryFilter())] == [chunk.content_id]
    reopened.close()
    again = SqliteKeywordIndex(path, english_analysis=True)
    assert again.search("backup", 3, QueryFilter())
    again.close()


def test_term_statistics_reuse_the_chunk_count_until_a_write(tmp_path: Path) -> None:
    """count(*) scans the table (tens of ms at 1M chunks, on the query path): term
    statistics count the chunks once and reuse the number until this index writes again
    (another process's writes show within `_COUNT_TTL_S`). Ranking from the top: the
    fast path (no side-table filter) and the filtered one agree."""
    index = SqliteKeywordIndex(tmp_path / "kw.db")
    items = [
        IndexedChunk(make_chunk(f"c{i}", f"backup job {i} of the storage team"), unit(np.ones(DIM)))
        for i in range(3)
    ]
    index.upsert(items[:2])
    counts: list[str] = []
    index._conn.set_trace_callback(lambda sql: counts.append(sql) if "count(*)" in sql else None)
    assert index.document_frequencies(["backup"])[0] == 2
    assert index.document_frequencies(["storage"])[0] == 2
    assert len(counts) == 1
    index.upsert(items[2:])
    assert index.document_frequencies(["backup"]) == (3, {"backup": 3})
    assert len(counts) == 2
    fast = index.search("storage backup job 2", 3, QueryFilter())
    dated = index.search("storage backup job 2", 3, QueryFilter(departments=frozenset({""})))
    assert [h.content_id for h in fast] == [h.content_id for h in dated]
    assert fast[0].content_id == items[2].chunk.content_id
    index.close()


def test_a_large_index_drops_the_terms_most_chunks_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From `_PRUNE_FROM` chunks on, a query leaves out terms that more than a tenth of
    the chunks hold (BM25 would score every one of them for little): chunks matching
    only such a term are no longer candidates. A query of common terms alone keeps
    them, and a smaller index keeps every term."""
    import indexing.stores.sqlite_keyword as kw

    index = SqliteKeywordIndex(tmp_path / "kw.db")
    items = [
        IndexedChunk(make_chunk(f"c{i}", f"storage report {i} of the year"), unit(np.ones(DIM)))
        for i in range(20)
    ]
    rare = IndexedChunk(make_chunk("r", "the zanzibar storage report"), unit(np.ones(DIM)))
    index.upsert([*items, rare])
    everything = {h.content_id for h in index.search("zanzibar storage", 50, QueryFilter())}
    assert len(everything) == 21  # below the size: every term kept
    monkeypatch.setattr(kw, "_PRUNE_FROM", 10)
    pruned = [h.content_id for h in index.search("zanzibar storage", 50, QueryFilter())]
    assert pruned == [rare.chunk.content_id]
    assert len(index.search("storage report", 50, QueryFilter())) == 21  # all common
    index.close()


def test_a_large_index_keeps_its_rarest_terms_within_the_postings_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From `_PRUNE_FROM` chunks on, terms are kept rarest first while the chunks holding
    them sum to at most the budget: the rarest term always stays, however common."""
    import indexing.stores.sqlite_keyword as kw

    monkeypatch.setattr(kw, "_PRUNE_FROM", 10)
    index = SqliteKeywordIndex(tmp_path / "kw.db", postings_budget=4)
    # "archive" in 3 chunks, "ledger" in 2, "quartz" in 1, "north" in 4, "filler" in 40.
    texts = ["archive ledger", "archive ledger", "archive north", "quartz north"]
    texts += ["north", "north"] + [f"filler {i}" for i in range(40)]
    items = [IndexedChunk(make_chunk(f"c{i}", t), unit(np.ones(DIM))) for i, t in enumerate(texts)]
    index.upsert(items)
    key = {item.chunk.content_id: f"c{i}" for i, item in enumerate(items)}

    def found(query: str) -> set[str]:
        return {key[h.content_id] for h in index.search(query, 50, QueryFilter())}

    # quartz (1) + ledger (2) fit in 4; archive (3) and north (4) do not.
    assert found("north archive ledger quartz") == {"c0", "c1", "c3"}
    tight = SqliteKeywordIndex(tmp_path / "kw.db", postings_budget=2)
    # The rarest term alone past the budget still searches.
    assert {key[h.content_id] for h in tight.search("north archive", 50, QueryFilter())} == {
        "c0",
        "c1",
        "c2",
    }
    wide = SqliteKeywordIndex(tmp_path / "kw.db", postings_budget=100)
    assert len(wide.search("north archive ledger quartz", 50, QueryFilter())) == 6
    for other in (tight, wide):
        other.close()
    index.close()


def test_term_frequencies_are_looked_up_once_until_a_write(tmp_path: Path) -> None:
    """A query's terms are counted twice on the query path (the rarity signal, then the
    common-term cut); the second time, and for terms asked again, no fts5vocab lookup runs
    until this index writes (a title change included: titles are indexed)."""
    index = SqliteKeywordIndex(tmp_path / "kw.db")
    items = [
        IndexedChunk(make_chunk(f"c{i}", f"ledger entry {i} of the audit"), unit(np.ones(DIM)))
        for i in range(3)
    ]
    index.upsert(items[:2])
    lookups: list[str] = []
    index._conn.set_trace_callback(lambda sql: lookups.append(sql) if "kw_vocab" in sql else None)
    assert index.document_frequencies(["ledger", "zebra"]) == (2, {"ledger": 2, "zebra": 0})
    assert index.document_frequencies(["ledger", "zebra"]) == (2, {"ledger": 2, "zebra": 0})
    assert index.document_frequencies(["audit"]) == (2, {"audit": 2})
    assert len(lookups) == 2  # "audit" was new; "ledger" and "zebra" (absent) remembered
    index.upsert(items[2:])
    assert index.document_frequencies(["ledger"]) == (3, {"ledger": 3})
    assert len(lookups) == 3
    renamed = replace(items[0].chunk, title="zebra handbook")
    index.update_metadata([renamed])
    assert index.document_frequencies(["zebra"]) == (3, {"zebra": 1})
    index.close()


def test_an_index_of_an_older_analysis_version_says_so_until_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Analysis version 2 cut languages other than English and Chinese: an index built
    before it warns that such text matches only after a rebuild, and a rebuild stamps it."""
    import sqlite3

    path = tmp_path / "kw.db"
    item = IndexedChunk(make_chunk("a", "Население Новосибирска растёт."), unit(np.ones(DIM)))
    built = SqliteKeywordIndex(path)
    built.upsert([item])
    built.close()
    with sqlite3.connect(path) as db:  # as an index written before version 2 looks
        db.execute("DELETE FROM kw_meta WHERE key = 'analysis_version'")
    with caplog.at_level("WARNING", logger="ragline.keyword"):
        old = SqliteKeywordIndex(path)
    assert "analysis version 1" in caplog.text and "--rebuild keyword" in caplog.text
    old.delete(sorted(old.content_ids()))
    old.upsert([item])
    old.close()
    caplog.clear()
    with caplog.at_level("WARNING", logger="ragline.keyword"):
        rebuilt = SqliteKeywordIndex(path)
    assert "analysis version" not in caplog.text
    # The genitive finds the passage by the stem both forms share.
    assert rebuilt.search("Новосибирск", 3, QueryFilter())
    rebuilt.close()
