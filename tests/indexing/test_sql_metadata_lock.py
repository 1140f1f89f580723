"""The embedded metadata store's lock files: a folder that cannot hold them is a data dir
to correct, reported in one plain line (a DataDirError, which the CLI prints as
"error: ..."), not a traceback from inside the store's opening (FINDINGS B5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import DataDirError
from indexing.stores.sql_metadata import SqlMetadataStore


def test_a_lock_file_that_cannot_be_opened_is_a_data_dir_error(tmp_path: Path) -> None:
    (tmp_path / "ragline.db.schema.lock").mkdir()  # in the way: not a file
    with pytest.raises(DataDirError) as info:
        SqlMetadataStore(f"sqlite:///{tmp_path / 'ragline.db'}")
    assert str(info.value).startswith(
        f"cannot write {tmp_path / 'ragline.db.schema.lock'}: Is a directory ("
    )


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_where_no_file_can_be_made_is_a_data_dir_error() -> None:
    with pytest.raises(DataDirError, match=r"^cannot write /proc/ragline\.db\.schema\.lock: "):
        SqlMetadataStore("sqlite:////proc/ragline.db")
