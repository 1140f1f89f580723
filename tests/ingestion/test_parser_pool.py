"""The parse worker pool starts workers before they are needed: ahead of a batch, and a
worker's successor while it serves its last files."""

from pathlib import Path

import pytest

import ingestion.parse as parse
from ingestion.parse import ParserPool, parse_file

MB = 2**20


def _text_files(folder: Path, count: int, lines: int = 1) -> list[Path]:
    files = []
    for i in range(count):
        f = folder / f"f{i}.txt"
        f.write_text(f"file {i}\n" * lines)
        files.append(f)
    return files


def _parse(f: Path, pool: ParserPool) -> bool:
    return bool(parse_file(f, max_bytes=MB, timeout_s=60, pool=pool).blocks)


def test_warm_starts_ready_workers(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nText.\n")
    with ParserPool() as pool:
        pool.warm(2, wait=True)
        assert len(pool.idle) == 2 and all(w.ready for w in pool.idle)
        pool.warm(2)  # enough idle already: none started
        assert len(pool.idle) == 2
        assert parse_file(doc, max_bytes=MB, timeout_s=60, pool=pool).blocks[0].text == "A"
        assert len(pool.idle) == 2  # the one used went back


def test_successor_starts_before_the_worker_retires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parse, "_RECYCLE_AFTER", 4)
    monkeypatch.setattr(parse, "_SUCCESSOR_LEAD", 2)
    files = _text_files(tmp_path, 6)
    with ParserPool() as pool:
        for i, f in enumerate(files[:4]):
            assert _parse(f, pool)
            if i == 1:  # two uses left: its successor is starting, the worker still serves
                assert [w.uses for w in pool.idle] == [0, 2]
        first = pool.idle[-1]
        successor = first.successor
        assert successor is not None and first.uses == 4
        # Due, but its successor may still be importing: it serves on until that one is up.
        successor.wait_ready()
        assert _parse(files[4], pool)
        assert first not in pool.idle and pool.idle == [successor]  # retired
        assert _parse(files[5], pool)
        assert successor.uses == 1
        first.proc.wait(10)  # stopped in the background
        assert first.proc.returncode is not None


def test_a_worker_whose_memory_grew_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker is replaced by how much its peak memory grew, not only by files parsed
    (the growth limit set below zero after the first file: the next one counts as grown)."""
    files = _text_files(tmp_path, 3)
    with ParserPool() as pool:
        assert _parse(files[0], pool)
        (first,) = pool.idle
        assert first.successor is None and first.first_rss_mb > 0
        monkeypatch.setattr(parse, "_RECYCLE_GROWTH_MB", -1.0)
        assert _parse(files[1], pool)
        successor = first.successor
        assert successor is not None  # started on the growth, not on a file count
        successor.wait_ready()
        assert _parse(files[2], pool)
        assert first not in pool.idle
        first.proc.wait(10)
        assert first.proc.returncode is not None


def test_a_worker_is_kept_while_its_memory_stays_put(tmp_path: Path) -> None:
    files = _text_files(tmp_path, 30, lines=50)
    with ParserPool() as pool:
        for f in files:
            assert _parse(f, pool)
        (worker,) = pool.idle
        assert worker.uses == 30 and worker.successor is None
