from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from indexing.stores.sql_metadata import SqlMetadataStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlMetadataStore]:
    """A real (SQLite) metadata store, empty."""
    s = SqlMetadataStore(f"sqlite:///{tmp_path / 'ragline.db'}")
    yield s
    s.close()
