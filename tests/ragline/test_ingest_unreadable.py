"""A folder or file ingest cannot read, and file names that are not UTF-8: reported with
their reason, never mistaken for deleted files, and the rest of the batch is made
searchable (FINDINGS B7, B8). Tests run as root, where chmod 000 has no effect:
unreadability is simulated where the file system would answer EACCES."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.ids import doc_id_for, source_uri
from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline
from ragline.ingest import NotRegularFile, special_kind, walk

OPERATOR = Principal("ops", superuser=True)


def _lock(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make `folder` behave as mode 000 for a process without DAC override: it cannot
    be listed, and nothing under it can be looked at (it can itself be stat'ed)."""
    real_scandir, real_stat = os.scandir, os.stat

    def under(path: Any, depth: int) -> bool:
        if isinstance(path, int):  # a file descriptor
            return False
        p = Path(os.fsdecode(path))
        return folder in (p, *p.parents)[depth:]

    def denied(path: Any) -> OSError:
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))

    def scandir(path: Any = ".") -> Any:
        if under(path, 0):
            raise denied(path)
        return real_scandir(path)

    def stat(path: Any, *args: Any, **kw: Any) -> os.stat_result:
        if under(path, 1):
            raise denied(path)
        return real_stat(path, *args, **kw)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "stat", stat)


@pytest.fixture
def rag(tmp_path: Path) -> Iterator[Ragline]:
    app = Ragline(Settings(data_dir=tmp_path / "data"))
    yield app
    app.close()


def _texts(rag: Ragline, query: str) -> str:
    return " ".join(h.chunk.text for h in rag.search(query, OPERATOR).hits)


def test_walk_reports_a_folder_it_cannot_list_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "in.md").write_text("in")
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "z.md").write_text("z")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.md").write_text("h")
    (tmp_path / "b.xyz").write_text("b")
    _lock(monkeypatch, tmp_path / "locked")
    errors: list[tuple[Path, OSError]] = []
    found = list(walk([tmp_path], [".md"], lambda p, e: errors.append((p, e))))
    assert found == [
        (tmp_path / "a.md", True),
        (tmp_path / "b.xyz", False),
        (tmp_path / "z" / "z.md", True),
    ]
    assert [(p, type(e)) for p, e in errors] == [(tmp_path / "locked", PermissionError)]
    with pytest.raises(PermissionError):  # no handler: never passed over silently
        list(walk([tmp_path], [".md"]))


def test_first_ingest_reports_an_unreadable_folder(
    rag: Ragline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    (folder / "locked").mkdir(parents=True)
    (folder / "ok.md").write_text("Readable owl file about kestrels.\n")
    (folder / "locked" / "in.md").write_text("Hidden inside: ospreys.\n")
    _lock(monkeypatch, folder / "locked")
    outcomes, report = rag.ingest([folder])
    assert [(Path(o.path).name, o.status) for o in outcomes] == [
        ("ok.md", "indexed"),
        ("locked", "failed"),
    ]
    assert "Permission denied" in outcomes[1].reason and not report.errors


def test_unreadable_subfolder_keeps_its_documents_and_the_batch_is_synced(
    rag: Ragline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    (folder / "locked").mkdir(parents=True)
    ok, inside = folder / "ok.md", folder / "locked" / "in.md"
    ok.write_text("Readable owl file about kestrels.\n")
    inside.write_text("Hidden inside: the osprey nest count is 41.\n")
    first, _ = rag.ingest([folder])
    assert [o.status for o in first] == ["indexed", "indexed"]

    _lock(monkeypatch, folder / "locked")
    ok.write_text("Readable owl file about kestrels, edited: merlins too.\n")
    outcomes, report = rag.ingest([folder])
    by_name = {Path(o.path).name: o for o in outcomes}
    assert [(n, o.status) for n, o in by_name.items()] == [
        ("ok.md", "indexed"),
        ("locked", "failed"),
        ("in.md", "skipped"),
    ]
    assert "Permission denied" in by_name["locked"].reason
    assert "kept" in by_name["in.md"].reason and "Permission denied" in by_name["in.md"].reason
    assert not any(o.status == "deleted" for o in outcomes)
    # Its absence is unknown, not proven: the document stays, and stays searchable.
    assert rag.stores.metadata.document(doc_id_for(source_uri(inside))) is not None
    assert "osprey nest count is 41" in _texts(rag, "osprey nest count")
    # The final sync ran: the edit reported "indexed" is the version served.
    assert not report.errors
    assert "merlins" in _texts(rag, "merlins kestrels")

    monkeypatch.undo()  # readable again: nothing to do
    again, _ = rag.ingest([folder])
    assert [o.status for o in again] == ["unchanged", "unchanged"]


def test_an_explicit_folder_inside_an_unreadable_one_fails_alone(
    rag: Ragline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked, other = tmp_path / "locked", tmp_path / "other"
    (locked / "sub").mkdir(parents=True)
    other.mkdir()
    (locked / "sub" / "in.md").write_text("Hidden inside: ospreys.\n")
    (other / "ok.md").write_text("Readable owl file about kestrels.\n")
    rag.ingest([locked / "sub"])
    _lock(monkeypatch, locked)
    outcomes, report = rag.ingest([locked / "sub", other])
    assert [(Path(o.path).name, o.status) for o in outcomes] == [
        ("ok.md", "indexed"),
        ("sub", "failed"),
    ]
    assert "Permission denied" in outcomes[1].reason and not report.errors
    assert "kestrels" in _texts(rag, "owl kestrels")
    assert "ospreys" in _texts(rag, "ospreys")


def test_a_file_name_that_is_not_utf8_is_indexed_once_and_stays(
    rag: Ragline, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    odd = folder / os.fsdecode(b"bad\xff\xfename.md")
    odd.write_text("Latin1 name file about pelicans.\n")
    (folder / "sp ace.md").write_text("Space file about herons.\n")
    first, _ = rag.ingest([folder])
    assert sorted(o.status for o in first) == ["indexed", "indexed"]
    assert "pelicans" in _texts(rag, "pelicans")
    again, _ = rag.ingest([folder])
    assert [o.status for o in again] == ["unchanged", "unchanged"]
    odd.unlink()
    gone, _ = rag.ingest([folder])
    assert [(Path(o.path), o.status) for o in gone] == [
        (folder / "sp ace.md", "unchanged"),
        (odd.resolve(), "deleted"),
    ]


def test_walk_refuses_special_files_it_would_hang_on(tmp_path: Path) -> None:
    """A FIFO (or socket, device) is never opened: reading one waits for a writer or
    never ends. Given explicitly or found in a folder, it is reported (FINDINGS B11)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    explicit, inner = tmp_path / "pipe.md", folder / "inner.md"
    os.mkfifo(explicit)
    os.mkfifo(inner)
    (folder / "a.md").write_text("a")
    errors: list[tuple[Path, OSError]] = []
    found = list(walk([explicit, folder], [".md"], lambda p, e: errors.append((p, e))))
    assert found == [(folder / "a.md", True)]
    assert [(p, str(e)) for p, e in errors] == [
        (explicit, "not a regular file (a FIFO)"),
        (inner, "not a regular file (a FIFO)"),
    ]
    assert all(isinstance(e, NotRegularFile) for _, e in errors)
    assert special_kind(os.stat("/dev/null").st_mode) == "a character device"
    with pytest.raises(NotRegularFile):  # no handler: never passed over silently
        list(walk([explicit], [".md"]))


def test_ingest_reports_a_fifo_as_failed_and_goes_on(rag: Ragline, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    explicit, inner = tmp_path / "pipe.md", folder / "inner.md"
    os.mkfifo(explicit)
    os.mkfifo(inner)
    (folder / "ok.md").write_text("Readable owl file about kestrels.\n")
    outcomes, report = rag.ingest([explicit, folder])
    refused = "not a regular file (a FIFO): not read, nothing ingested from it"
    assert [(Path(o.path).name, o.status, o.reason) for o in outcomes] == [
        ("ok.md", "indexed", ""),
        ("pipe.md", "failed", refused),
        ("inner.md", "failed", refused),
    ]
    assert not report.errors and "kestrels" in _texts(rag, "owl kestrels")
