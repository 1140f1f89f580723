"""Small writes of concurrent requests committed in one transaction (a group commit).

Every ask writes its audit record, its trace and, when the documents do not cover it, a
knowledge gap: three short transactions, each paying for a pooled connection, a commit
and (SQLite) the WAL frames of the pages it touched, or (PostgreSQL) a WAL flush. Under
load many requests finish at once, so `GroupCommit.run(work)` puts the works queued at
that moment in one transaction (`core/batching.py`: no timer; a lone caller commits at
once). Each caller still returns only once its write is committed, so an answer is never
returned before its audit record exists.

A work is a function of the connection, with no effect outside the database: when one
work of a batch fails, the transaction rolls back and each work runs again alone in its
own, so only the failing caller gets the error and the others' writes stand. A work must
not call `run` itself: it would wait for the batch it is part of.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, Engine

from core.batching import Batcher

R = TypeVar("R")
Work = Callable[[Connection], Any]


@dataclass(frozen=True, slots=True)
class _Outcome:
    value: Any = None
    error: Exception | None = None


class GroupCommit:
    def __init__(self, engine: Engine, max_batch: int = 64) -> None:
        self._engine = engine
        self._batcher: Batcher[Work, _Outcome] = Batcher(self._commit, max_batch)

    @property
    def transactions(self) -> int:
        """Batches committed so far, and the works they held (for tests and benches)."""
        return self._batcher.calls

    @property
    def works(self) -> int:
        return self._batcher.items

    def run(self, work: Callable[[Connection], R]) -> R:
        """`work(connection)` inside a transaction, committed before this returns."""
        outcome = self._batcher.submit(work)
        if outcome.error is not None:
            raise outcome.error
        return cast(R, outcome.value)

    def _commit(self, works: list[Work]) -> Sequence[_Outcome]:
        if len(works) > 1:
            try:
                with self._engine.begin() as conn:
                    values = [work(conn) for work in works]
            except Exception:
                pass
            else:
                return [_Outcome(v) for v in values]
        return [self._alone(work) for work in works]

    def _alone(self, work: Work) -> _Outcome:
        try:
            with self._engine.begin() as conn:
                return _Outcome(work(conn))
        except Exception as exc:
            return _Outcome(error=exc)
