"""Uploads' bytes in the metadata database (`original_parts`), in parts of 4 MB so neither
side holds a large file in memory at once. Production keeps them in PostgreSQL: an upload
accepted by one API host is ingested by a worker on another, and any host serves the
original, with no shared disk."""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from core.times import naive_utc
from indexing.models import OriginalPartRow

PART_BYTES = 4 << 20


class SqlOriginals:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine  # the metadata store's: its schema has the table

    def put(self, name: str, path: Path, accepted: bool = True) -> bool:
        try:
            return self._insert(name, path, accepted)
        except IntegrityError:
            return False  # another host put the same name, so the same bytes, just now

    def _insert(self, name: str, path: Path, accepted: bool) -> bool:
        now = naive_utc(datetime.now(UTC))
        held_first = OriginalPartRow.name == name, OriginalPartRow.part == 0
        with self._engine.begin() as conn, path.open("rb") as src:
            # Held already (content-addressed: the same name holds the same bytes): only
            # accepted again, which keeps them from removal while their job is queued. A
            # copy of what a host holds (`repair`) is no new acceptance: left as it was.
            if accepted:
                held = conn.execute(
                    update(OriginalPartRow).where(*held_first).values(accepted_at=now)
                ).rowcount
            else:
                held = conn.execute(
                    select(func.count()).select_from(OriginalPartRow).where(*held_first)
                ).scalar_one()
            if held:
                return False
            part = 0
            while True:
                data = src.read(PART_BYTES)
                if not data and part:
                    break
                conn.execute(
                    insert(OriginalPartRow),
                    {"name": name, "part": part, "data": data, "accepted_at": now},
                )
                part += 1
                if len(data) < PART_BYTES:
                    break
        return True

    def fetch(self, name: str, into: Path) -> bool:
        into.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=into.parent, prefix=".fetch-")
        found = False
        try:
            with os.fdopen(fd, "wb") as out, self._engine.connect() as conn:
                parts = conn.execution_options(stream_results=True, max_row_buffer=2).execute(
                    select(OriginalPartRow.data)
                    .where(OriginalPartRow.name == name)
                    .order_by(OriginalPartRow.part)
                )
                for (data,) in parts:
                    out.write(data)
                    found = True
            if found:
                os.replace(tmp, into)
            return found
        finally:
            Path(tmp).unlink(missing_ok=True)  # gone already when it was moved

    def find(self, version: str) -> str | None:
        with self._engine.connect() as conn:
            return conn.execute(
                select(OriginalPartRow.name)
                .where(OriginalPartRow.name.startswith(version, autoescape=True))
                .where(OriginalPartRow.part == 0)
                .order_by(OriginalPartRow.name)
                .limit(1)
            ).scalar()

    def names(self, accepted_before: datetime, prefix: str = "") -> list[str]:
        query = select(OriginalPartRow.name).where(
            OriginalPartRow.part == 0, _accepted_before(accepted_before)
        )
        if prefix:
            query = query.where(OriginalPartRow.name.startswith(prefix, autoescape=True))
        with self._engine.connect() as conn:
            return list(conn.execute(query.order_by(OriginalPartRow.name)).scalars())

    def delete(self, name: str, accepted_before: datetime | None = None) -> bool:
        first = delete(OriginalPartRow).where(
            OriginalPartRow.name == name, OriginalPartRow.part == 0
        )
        if accepted_before is not None:
            first = first.where(_accepted_before(accepted_before))
        with self._engine.begin() as conn:
            # The first part decides (a put that accepts the bytes again updates it), then
            # the rest go with it.
            if not conn.execute(first).rowcount:
                return False
            conn.execute(delete(OriginalPartRow).where(OriginalPartRow.name == name))
        return True


def _accepted_before(at: datetime) -> ColumnElement[bool]:
    """Last accepted before `at`; bytes kept before the time was recorded count as old."""
    return or_(OriginalPartRow.accepted_at.is_(None), OriginalPartRow.accepted_at < naive_utc(at))
