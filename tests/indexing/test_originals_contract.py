"""The originals store (uploads' bytes in the metadata database), on SQLite and on a real
PostgreSQL migrated by Alembic: bytes round-trip in parts, a name is put once (a second put
only accepts it again), a version finds its name, a missing name fetches nothing and leaves
nothing behind, and a removal spares bytes accepted since the time it names."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from servers import postgres_url

import indexing.stores.sql_originals as sql_originals
from indexing.migrate import scratch_database
from indexing.protocols import OriginalStore
from indexing.stores.sql_metadata import SqlMetadataStore
from indexing.stores.sql_originals import SqlOriginals


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def originals(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OriginalStore]:
    if request.param == "sqlite":
        meta = SqlMetadataStore(f"sqlite:///{tmp_path / 'meta.db'}")
        yield SqlOriginals(meta.engine)
        meta.close()
        return
    with scratch_database(postgres_url()) as url:
        meta = SqlMetadataStore(url)
        yield SqlOriginals(meta.engine)
        meta.close()


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_bytes_round_trip_in_parts(
    originals: OriginalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_originals, "PART_BYTES", 1000)
    data = os.urandom(2500)  # three parts, the last short
    originals.put("ab12.pdf", _file(tmp_path / "ab12.pdf", data))
    into = tmp_path / "elsewhere" / "ab12.pdf"
    assert originals.fetch("ab12.pdf", into)
    assert into.read_bytes() == data
    exact = os.urandom(2000)  # a whole number of parts
    originals.put("cd34", _file(tmp_path / "cd34", exact))
    assert originals.fetch("cd34", tmp_path / "cd34.copy")
    assert (tmp_path / "cd34.copy").read_bytes() == exact


def test_a_name_is_put_once_and_found_by_its_version(
    originals: OriginalStore, tmp_path: Path
) -> None:
    assert originals.put("ef56.docx", _file(tmp_path / "one", b"first bytes"))
    assert not originals.put("ef56.docx", _file(tmp_path / "two", b"other bytes"))  # no-op
    assert originals.fetch("ef56.docx", tmp_path / "got")
    assert (tmp_path / "got").read_bytes() == b"first bytes"
    assert originals.find("ef56") == "ef56.docx"
    assert originals.find("ef5_") is None  # a version is a prefix, not a pattern
    assert originals.find("0000") is None


def test_a_missing_name_fetches_nothing_and_delete_removes(
    originals: OriginalStore, tmp_path: Path
) -> None:
    into = tmp_path / "out" / "nope.pdf"
    assert not originals.fetch("nope.pdf", into)
    assert not into.exists() and os.listdir(into.parent) == []  # no temporary file left
    originals.put("gh78.txt", _file(tmp_path / "gh78.txt", b"text"))
    assert originals.delete("gh78.txt")
    assert not originals.delete("gh78.txt")  # twice is harmless
    assert not originals.fetch("gh78.txt", into)
    assert originals.find("gh78") is None


def test_bytes_accepted_since_a_time_are_spared_by_a_removal_before_it(
    originals: OriginalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_originals, "PART_BYTES", 4)
    before = datetime.now(UTC) - timedelta(seconds=1)
    originals.put("ab12.md", _file(tmp_path / "a", b"three parts"))
    originals.put("ab12.txt", _file(tmp_path / "b", b"same version, other suffix"))
    originals.put("cd34.md", _file(tmp_path / "c", b"other"))
    assert originals.names(before) == []  # all accepted after `before`
    later = datetime.now(UTC) + timedelta(seconds=1)
    assert originals.names(later) == ["ab12.md", "ab12.txt", "cd34.md"]
    assert originals.names(later, prefix="ab12") == ["ab12.md", "ab12.txt"]
    assert originals.names(later, prefix="ab1_") == []  # a prefix, not a pattern
    assert not originals.delete("ab12.md", before)  # accepted since: kept, every part
    assert originals.fetch("ab12.md", tmp_path / "got")
    assert (tmp_path / "got").read_bytes() == b"three parts"
    assert originals.delete("ab12.md", later)
    assert not originals.fetch("ab12.md", tmp_path / "gone")
    # Accepted again (a new upload of the same bytes): spared by a removal of older ones.
    between = datetime.now(UTC)
    assert originals.names(between) == ["ab12.txt", "cd34.md"]
    assert not originals.put("cd34.md", _file(tmp_path / "d", b"other"))
    assert originals.names(between) == ["ab12.txt"]
    assert not originals.delete("cd34.md", between)
    assert originals.delete("ab12.txt", later) and originals.delete("cd34.md", later)
    assert originals.names(later) == []


def test_a_copy_of_held_bytes_is_no_new_acceptance(
    originals: OriginalStore, tmp_path: Path
) -> None:
    """`repair` copies what a host holds into the shared store: a name held already keeps
    its acceptance time, so a delete right after a repair still removes it."""
    originals.put("ef56.md", _file(tmp_path / "a", b"old upload"))
    after_upload = datetime.now(UTC) + timedelta(milliseconds=50)
    time.sleep(0.1)
    assert not originals.put("ef56.md", _file(tmp_path / "b", b"old upload"), accepted=False)
    assert originals.names(after_upload) == ["ef56.md"]  # still accepted before then
    assert originals.delete("ef56.md", after_upload)
    assert originals.put("ef56.md", _file(tmp_path / "c", b"old upload"), accepted=False)
    assert originals.fetch("ef56.md", tmp_path / "got")  # a name not held is stored
