"""Uploads between hosts: what one host accepted, another fetches from the shared store
into its own directory; without a shared store the directory is all there is."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.settings import ApiSettings, Settings
from indexing.stores.sql_metadata import SqlMetadataStore
from indexing.stores.sql_originals import SqlOriginals
from ragline.uploads import Uploads, shares_uploads, version_of_name


def test_a_host_without_the_file_fetches_it_and_forget_removes_it_there_and_shared(
    tmp_path: Path,
) -> None:
    meta = SqlMetadataStore(f"sqlite:///{tmp_path / 'meta.db'}")
    try:
        store = SqlOriginals(meta.engine)
        api, worker = Uploads(tmp_path / "api", store), Uploads(tmp_path / "worker", store)
        api.dir.mkdir()
        accepted = api.dir / "0123abcd.pdf"
        accepted.write_bytes(b"%PDF-1.4 the bytes")
        api.keep(accepted)
        remote = Path("/api-host/uploads/0123abcd.pdf")  # the path the job names
        here = worker.local(remote)
        assert here == worker.dir / "0123abcd.pdf" and here.read_bytes() == b"%PDF-1.4 the bytes"
        elsewhere = Uploads(tmp_path / "viewer", store)
        assert elsewhere.holds("0123abcd") and not elsewhere.dir.exists()  # not fetched
        assert elsewhere.original("0123abcd") == elsewhere.dir / "0123abcd.pdf"
        assert worker.forget("0123abcd", datetime.now(UTC) + timedelta(seconds=1)) == 2
        assert not here.exists()
        assert Uploads(tmp_path / "late", store).local(remote) is None
        assert api.original("0123abcd") == accepted  # the API host's own copy stays
    finally:
        meta.close()


def test_uploads_from_before_the_store_was_shared_are_put_into_it(tmp_path: Path) -> None:
    meta = SqlMetadataStore(f"sqlite:///{tmp_path / 'meta.db'}")
    try:
        store = SqlOriginals(meta.engine)
        uploads = Uploads(tmp_path / "uploads", store)
        uploads.dir.mkdir()
        for name in ("aa11.pdf", "bb22.md", ".fetch-partial"):
            (uploads.dir / name).write_bytes(name.encode())
        store.put("bb22.md", uploads.dir / "bb22.md")  # shared already
        assert uploads.share_local() == 1
        assert uploads.share_local() == 0
        assert store.find("aa11") == "aa11.pdf" and store.find(".fetch") is None
    finally:
        meta.close()


def test_without_a_shared_store_only_this_directory_counts(tmp_path: Path) -> None:
    uploads = Uploads(tmp_path / "uploads")
    assert uploads.local(tmp_path / "other-host" / "feed.txt") is None
    assert uploads.original("feed") is None and not uploads.holds("feed")
    uploads.dir.mkdir()
    (uploads.dir / "feed.txt").write_text("x")
    assert uploads.local(Path("/other-host/feed.txt")) == uploads.dir / "feed.txt"
    assert uploads.original("feed") == uploads.dir / "feed.txt" and uploads.holds("feed")


def test_uploads_are_shared_by_default_only_with_a_server_database(tmp_path: Path) -> None:
    assert not shares_uploads(Settings(data_dir=tmp_path))
    pg = "postgresql+psycopg://u:p@db:5432/ragline"
    assert shares_uploads(Settings(data_dir=tmp_path, metadata_url=pg))
    directory = ApiSettings(upload_store="directory")
    assert not shares_uploads(Settings(data_dir=tmp_path, metadata_url=pg, api=directory))
    database = ApiSettings(upload_store="database")
    assert shares_uploads(Settings(data_dir=tmp_path, api=database))


def test_forget_spares_bytes_accepted_since_and_versions_lists_the_rest(
    tmp_path: Path,
) -> None:
    meta = SqlMetadataStore(f"sqlite:///{tmp_path / 'meta.db'}")
    try:
        store = SqlOriginals(meta.engine)
        uploads = Uploads(tmp_path / "uploads", store)
        uploads.dir.mkdir()
        old, new = uploads.dir / "aa11.pdf", uploads.dir / "bb22.md"
        for f in (old, new):
            f.write_bytes(f.name.encode())
            uploads.keep(f)
        long_ago = datetime.now(UTC) - timedelta(hours=2)
        os.utime(old, (long_ago.timestamp(), long_ago.timestamp()))  # this host's copy
        (uploads.dir / ".upload-x.part").write_bytes(b"half")  # being written: not listed
        cutoff = datetime.now(UTC) - timedelta(minutes=1)
        assert uploads.versions(cutoff) == {"aa11"}  # the shared copy is recent
        assert uploads.forget("aa11", cutoff) == 1  # only the old local copy went
        assert not old.exists() and store.find("aa11") == "aa11.pdf"
        # Accepted again: the local copy counts as new, whatever its bytes' age.
        os.utime(new, (long_ago.timestamp(), long_ago.timestamp()))
        uploads.keep(new)
        assert uploads.forget("bb22", cutoff) == 0 and new.exists()
        later = datetime.now(UTC) + timedelta(seconds=1)
        assert uploads.versions(later) == {"aa11", "bb22"}
        assert uploads.forget("bb22", later) == 2 and store.find("bb22") is None
    finally:
        meta.close()


def test_forget_partial_removes_only_what_a_stopped_process_left(tmp_path: Path) -> None:
    uploads = Uploads(tmp_path / "uploads")
    assert uploads.forget_partial(datetime.now(UTC)) == 0  # no directory yet
    uploads.dir.mkdir()
    stale, fresh = uploads.dir / ".upload-a.part", uploads.dir / ".fetch-b"
    stored = uploads.dir / "cc33.txt"
    for f in (stale, fresh, stored):
        f.write_bytes(b"x")
    long_ago = (datetime.now(UTC) - timedelta(hours=2)).timestamp()
    os.utime(stale, (long_ago, long_ago))
    os.utime(stored, (long_ago, long_ago))
    assert uploads.forget_partial(datetime.now(UTC) - timedelta(hours=1)) == 1
    assert not stale.exists() and fresh.exists() and stored.exists()


def test_a_stored_name_begins_with_its_version(tmp_path: Path) -> None:
    digest = "0123456789abcdef" * 4
    assert version_of_name(f"{digest}.pdf") == digest[:32]
    assert version_of_name("ab12.md") == "ab12"
    assert version_of_name("README") == ""
    uploads = Uploads(tmp_path)
    (tmp_path / "README").write_text("x")
    assert uploads.forget("", datetime.now(UTC) + timedelta(days=1)) == 0  # not "every name"
    assert (tmp_path / "README").exists()
