"""The SQLite keyword index remembers which analysis built it: queries are analysed the
same way until the index is emptied and rebuilt with the configured one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
