"""GroupCommit: writes of concurrent callers share a transaction; each caller returns only
once its write is committed; a failing write fails alone. SQLite, and PostgreSQL when its
server is available."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import postgres_url
from sqlalchemy import Column, Connection, Engine, Integer, MetaData, String, Table, select
from sqlalchemy.exc import IntegrityError

from indexing.migrate import scratch_database
from indexing.stores.group_commit import GroupCommit
from indexing.stores.sql_metadata import make_engine

_META = MetaData()
_NOTES = Table(
    "notes",
    _META,
    Column("id", Integer, primary_key=True),
    Column("text", String(100), nullable=False),
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        eng = make_engine(f"sqlite:///{tmp_path / 'notes.db'}")
        _META.create_all(eng)
        yield eng
        eng.dispose()
        return
    with scratch_database(postgres_url()) as url:
        eng = make_engine(url)
        _META.create_all(eng)
        yield eng
        eng.dispose()


def _insert(note_id: int, text: str = "note") -> object:
    def work(conn: Connection) -> int:
        conn.execute(_NOTES.insert(), {"id": note_id, "text": text})
        return note_id

    return work


def _stored(engine: Engine) -> set[int]:
    with engine.connect() as conn:
        return set(conn.scalars(select(_NOTES.c.id)))


def test_a_lone_write_is_committed_before_run_returns(engine: Engine) -> None:
    writes = GroupCommit(engine)
    assert writes.run(_insert(1)) == 1
    assert _stored(engine) == {1}  # another connection sees it: committed
    assert (writes.transactions, writes.works) == (1, 1)


def _pile_up(writes: GroupCommit, works: list[object]) -> dict[int, object]:
    """The first work holds the transaction until the others are queued behind it."""
    gate, entered = threading.Event(), threading.Event()
    out: dict[int, object] = {}

    def held(conn: Connection) -> int:
        entered.set()
        assert gate.wait(5)
        conn.execute(_NOTES.insert(), {"id": 0, "text": "first"})
        return 0

    def call(i: int, work: object) -> None:
        try:
            out[i] = writes.run(work)  # type: ignore[arg-type]
        except Exception as exc:
            out[i] = exc

    first = threading.Thread(target=call, args=(0, held))
    first.start()
    assert entered.wait(5)
    rest = [threading.Thread(target=call, args=(i + 1, w)) for i, w in enumerate(works)]
    for t in rest:
        t.start()
    deadline = time.monotonic() + 5
    while len(writes._batcher.queue) < len(works):
        assert time.monotonic() < deadline, "writers did not queue"
        time.sleep(0.001)
    gate.set()
    for t in [first, *rest]:
        t.join(10)
    return out


def test_writes_waiting_behind_a_commit_share_the_next_transaction(engine: Engine) -> None:
    writes = GroupCommit(engine)
    out = _pile_up(writes, [_insert(i) for i in range(1, 6)])
    assert out == {i: i for i in range(6)}  # each caller got its own work's value
    assert _stored(engine) == set(range(6))
    assert (writes.transactions, writes.works) == (2, 6)  # five writes, one transaction


def test_a_failing_write_fails_alone_and_the_others_stand(engine: Engine) -> None:
    writes = GroupCommit(engine)
    # Work 3 inserts an id that work 1 inserts too: the shared transaction fails, then
    # each runs alone; the second insert of id 1 is the one that fails.
    out = _pile_up(writes, [_insert(1), _insert(2), _insert(1, "again")])
    assert out[1] == 1 and out[2] == 2
    assert isinstance(out[3], IntegrityError)
    assert _stored(engine) == {0, 1, 2}
    with engine.connect() as conn:
        assert conn.scalar(select(_NOTES.c.text).where(_NOTES.c.id == 1)) == "note"
    assert writes.run(_insert(9)) == 9  # and later writes go on


def test_a_work_sees_the_writes_before_it_in_its_transaction(engine: Engine) -> None:
    writes = GroupCommit(engine)

    def count_then_insert(note_id: int) -> object:
        def work(conn: Connection) -> int:
            seen = len(conn.execute(select(_NOTES.c.id)).all())
            conn.execute(_NOTES.insert(), {"id": note_id, "text": "n"})
            return seen

        return work

    out = _pile_up(writes, [count_then_insert(1), count_then_insert(2)])
    assert out == {0: 0, 1: 1, 2: 2}  # the held work's row, then work 1's, were visible
