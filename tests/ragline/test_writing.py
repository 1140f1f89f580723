"""`Ragline.writing`: the one writer of a deployment's derived stores. Re-entrant inside
a process (an ingest syncs inside a task that already writes), exclusive across
processes: a second instance on the same data waits (issue 13, Celery scale-out)."""

from __future__ import annotations

import threading
from pathlib import Path

from core.settings import Settings
from ragline.app import Ragline


def _in_thread(fn: object, timeout: float) -> bool:
    """Run `fn` in a thread; True when it finished within `timeout` seconds."""
    done = threading.Event()

    def run() -> None:
        fn()  # type: ignore[operator]
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(timeout)


def test_writing_is_reentrant_within_one_instance(tmp_path: Path) -> None:
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:

        def nested() -> None:
            with rag.writing(), rag.writing():
                rag.sync()  # takes it a third time
                rag.repair()

        assert _in_thread(nested, 30), "nested writing() deadlocked"
        assert _in_thread(rag.sync, 30), "writing() was not released"
    finally:
        rag.close()


def test_a_second_instance_waits_for_the_writer(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    first, second = Ragline(settings), Ragline(settings)
    try:
        synced = threading.Event()

        def sync_second() -> None:
            second.sync()
            synced.set()

        with first.writing():
            threading.Thread(target=sync_second, daemon=True).start()
            assert not synced.wait(1.0), "the second instance synced while the first wrote"
        assert synced.wait(30), "the second instance never got to write"
    finally:
        first.close()
        second.close()
