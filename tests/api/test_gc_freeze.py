"""A serving process leaves what it loaded at start out of the cyclic garbage collector."""

from __future__ import annotations

import gc
from pathlib import Path

from fastapi.testclient import TestClient

from ragline.api import create_app
from ragline.api.app import freeze_heap

from .conftest import api_settings


def test_freeze_heap_exempts_what_is_alive_and_still_frees_by_reference_count() -> None:
    try:
        kept = [[i] for i in range(1000)]
        frozen = freeze_heap()
        assert frozen >= 1000
        assert all(not any(o is x for o in gc.get_objects(2)) for x in kept[:5])
        kept.clear()  # reference counting still frees them
        assert gc.get_freeze_count() <= frozen - 1000
    finally:
        gc.unfreeze()


def test_the_app_freezes_its_start_up_heap_only_when_told(tmp_path: Path) -> None:
    try:
        with TestClient(create_app(api_settings(tmp_path / "off", gc_freeze=False))):
            assert gc.get_freeze_count() == 0
        with TestClient(create_app(api_settings(tmp_path / "on", gc_freeze=True))):
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
