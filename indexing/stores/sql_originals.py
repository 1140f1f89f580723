"""Uploads' bytes in the metadata database (`original_parts`), in parts of 4 MB so neither
side holds a large file in memory at once. Production keeps them in PostgreSQL: an upload
accepted by one API host is ingested by a worker on another, and any host serves the
original, with no shared disk."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sqlalchemy import Engine, delete, exists, insert, select
from sqlalchemy.exc import IntegrityError

from indexing.models import OriginalPartRow

PART_BYTES = 4 << 20


class SqlOriginals:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine  # the metadata store's: its schema has the table

    def put(self, name: str, path: Path) -> bool:
        try:
            return self._insert(name, path)
        except IntegrityError:
            return False  # another host put the same name, so the same bytes, just now

    def _insert(self, name: str, path: Path) -> bool:
        with self._engine.begin() as conn, path.open("rb") as src:
            held = conn.execute(
                select(exists().where(OriginalPartRow.name == name, OriginalPartRow.part == 0))
            ).scalar()
            if held:
                return False  # content-addressed: the same name holds the same bytes
            part = 0
            while True:
                data = src.read(PART_BYTES)
                if not data and part:
                    break
                conn.execute(insert(OriginalPartRow), {"name": name, "part": part, "data": data})
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

    def delete(self, name: str) -> None:
        with self._engine.begin() as conn:
            conn.execute(delete(OriginalPartRow).where(OriginalPartRow.name == name))
