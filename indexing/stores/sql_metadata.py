"""The metadata store (source of truth) on SQLAlchemy 2: SQLite embedded, PostgreSQL in
production, same models and queries."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import secrets
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any, TypeVar, cast

import numpy as np
from sqlalchemy import (
    Connection,
    Engine,
    MetaData,
    Select,
    Table,
    bindparam,
    create_engine,
    delete,
    event,
    func,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy import text as sql_text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from core.errors import DataDirError, DocumentChanged
from core.times import naive_utc
from core.types import Chunk, Document, DocumentVersion
from indexing.models import (
    AlertEventRow,
    Base,
    ChunkRow,
    DeploymentSecretRow,
    DocumentRow,
    IngestLogRow,
    JobRow,
    KnowledgeGapRow,
    OutboxRow,
    QueryLogRow,
    VersionRow,
)
from indexing.protocols import (
    AlertEventRecord,
    Expect,
    GapRecord,
    IndexedChunk,
    IngestRecord,
    JobRecord,
    OutboxEntry,
    QueryLogRecord,
)
from indexing.stores.group_commit import GroupCommit

_IN_BATCH = 500  # stay under SQLite's bound-parameter limit in IN (...) lists


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(conn: Any, _record: Any) -> None:
            # WAL lets the keyword/graph connections read while ingestion writes.
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def _document(row: DocumentRow) -> Document:
    return Document(
        doc_id=row.doc_id,
        source=row.source,
        title=row.title,
        doc_type=row.doc_type,
        acl_tags=frozenset(json.loads(row.acl_tags)),
        department=row.department,
        source_trust=row.source_trust,
        modified=row.modified,
        title_stated=bool(row.title_stated),
    )


def _table_json(chunk: Chunk) -> str:
    if not chunk.table_header and not chunk.table_rows:
        return ""
    return json.dumps(
        {"header": list(chunk.table_header), "rows": [list(r) for r in chunk.table_rows]},
        ensure_ascii=False,
    )


def _table_fields(raw: str) -> dict[str, Any]:
    if not raw:
        return {}
    data = json.loads(raw)
    return {
        "table_header": tuple(data.get("header", ())),
        "table_rows": tuple(tuple(r) for r in data.get("rows", ())),
    }


def _line_map(raw: str) -> tuple[tuple[int, int, int], ...]:
    return tuple((int(p), int(a), int(b)) for p, a, b in json.loads(raw)) if raw else ()


def _chunk(row: ChunkRow, doc: DocumentRow) -> Chunk:
    return Chunk(
        content_id=row.content_id,
        doc_id=row.doc_id,
        version=row.version,
        ordinal=row.ordinal,
        kind=row.kind,  # type: ignore[arg-type]
        text=row.text,
        page_start=row.page_start,
        page_end=row.page_end,
        line_start=row.line_start,
        line_end=row.line_end,
        source=doc.source,
        title=doc.title,
        doc_type=doc.doc_type,
        section_path=tuple(json.loads(row.section_path)),
        acl_tags=frozenset(json.loads(doc.acl_tags)),
        department=doc.department,
        source_trust=doc.source_trust,
        modified=doc.modified,
        table_id=row.table_id,
        summary=row.summary,
        entities=tuple(json.loads(row.entities)),
        **_table_fields(row.table_json),
        line_map=_line_map(row.line_map),
    )


def _job(row: JobRow) -> JobRecord:
    return JobRecord(
        job_id=row.job_id,
        kind=row.kind,
        state=row.state,
        doc_id=row.doc_id,
        version=row.version,
        batch_id=row.batch_id,
        source=row.source,
        owner=row.owner,
        reason=row.reason,
        attempts=row.attempts,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


_Row = TypeVar("_Row")


def _within(
    query: Select[_Row],
    at: InstrumentedAttribute[datetime],
    since: datetime | None,
    until: datetime | None,
) -> Select[_Row]:
    """`query` limited to rows with `since <= at < until` (either bound optional)."""
    if since is not None:
        query = query.where(at >= naive_utc(since))
    if until is not None:
        query = query.where(at < naive_utc(until))
    return query


def _payload(text: str) -> dict[str, Any]:
    # An audit read must not fail on one malformed row; it shows as an empty payload.
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# The serve-check reads two things. First, for every id, whether it is served now, and what
# would make its Chunk different from one read before: its version's staging time and its
# document's fields. A chunk row is only ever written when its version is staged, and
# staging a version again (the same file chunked anew: the same content_ids) replaces the
# version row, so `versions.created_at` changes with the rows' content. Then, only for the
# chunks not memoised under that key, their rows: reading the rows of a search's ~80 ids
# cost ~1.4 ms, their keys ~0.7 (SQLite, CMRC).
_SERVED_KEY_COLUMNS = (
    ChunkRow.content_id,
    VersionRow.created_at,
    DocumentRow.source,
    DocumentRow.title,
    DocumentRow.doc_type,
    DocumentRow.acl_tags,
    DocumentRow.department,
    DocumentRow.source_trust,
    DocumentRow.modified,
)
# ... and what a served chunk needs besides: every other chunk column but its vector.
_SERVED_ROW_COLUMNS = tuple(
    c for c in ChunkRow.__table__.c if c.name not in ("content_id", "vector")
)


def _serving_statement(*columns: Any) -> Any:
    """`columns` of the chunks among the bound ids that are served now: their version is
    current and their document not deleted. Built once per statement, ids bound per call
    (an expanding IN)."""
    return (
        select(*columns)
        .join(DocumentRow, DocumentRow.doc_id == ChunkRow.doc_id)
        .join(
            VersionRow,
            (VersionRow.doc_id == ChunkRow.doc_id) & (VersionRow.version == ChunkRow.version),
        )
        .where(
            ChunkRow.content_id.in_(bindparam("ids", expanding=True)),
            # `status || ''`: no index on status for this query. With it, SQLite started
            # from every current version and read all their chunks (the whole corpus per
            # query); now it looks the ids up.
            VersionRow.status.concat("") == "current",
            DocumentRow.deleted.is_(False),
        )
    )


_SERVED_KEYS = _serving_statement(*_SERVED_KEY_COLUMNS)
_SERVED_ROWS = _serving_statement(*_SERVED_KEY_COLUMNS, *_SERVED_ROW_COLUMNS)
_SERVED_NAMES = tuple(_SERVED_ROWS.selected_columns.keys())
_KEY_LEN = len(_SERVED_KEY_COLUMNS)
# Chunks the serve-check remembers, per store (~2 KB each for a passage of 500 Han
# characters: ~16 MB when full); cleared when it holds this many.
SERVED_MEMO = 8192

# Statements built once for the reads ingest makes per file.
_DOCUMENT = select(DocumentRow.__table__).where(DocumentRow.doc_id == bindparam("doc_id"))
_VERSIONS = (
    select(
        VersionRow.doc_id,
        VersionRow.version,
        VersionRow.status,
        VersionRow.chunk_count,
        VersionRow.page_count,
    )
    .where(VersionRow.doc_id == bindparam("doc_id"))
    .order_by(VersionRow.created_at)
)
_HAS_VERSION = (
    select(VersionRow.version)
    .join(DocumentRow, DocumentRow.doc_id == VersionRow.doc_id)
    .where(
        VersionRow.doc_id == bindparam("doc_id"),
        VersionRow.version == bindparam("version"),
        VersionRow.status.in_(("pending", "current")),
        DocumentRow.deleted.is_(False),
    )
)


def _serving_chunk(values: tuple[Any, ...]) -> Chunk:
    # A row has the attributes of both (no name in common is selected).
    row = SimpleNamespace(**dict(zip(_SERVED_NAMES, values, strict=True)))
    return _chunk(row, row)  # type: ignore[arg-type]


def _batches(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), _IN_BATCH):
        yield items[i : i + _IN_BATCH]


def _drop_sqlite_source_unique(engine: Engine) -> None:
    """An embedded file made before upload keys could hold several documents has
    `documents.source` UNIQUE; SQLite cannot drop a constraint, so the table is copied
    once into the current shape (same rows) under the current schema."""
    uniques = inspect(engine).get_unique_constraints("documents")
    indexes = inspect(engine).get_indexes("documents")
    legacy = any(u["column_names"] == ["source"] for u in uniques) or any(
        i["column_names"] == ["source"] and i.get("unique") for i in indexes
    )
    if not legacy:
        return
    cols = ", ".join(c.name for c in Base.metadata.tables["documents"].columns)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA foreign_keys=OFF")  # (a no-op inside a transaction)
        conn.commit()
        try:
            with conn.begin():
                # SQLite's documented way: new table, copy, drop, rename (with foreign
                # keys off, the other tables' references to "documents" stay as they are).
                new = Base.metadata.tables["documents"].to_metadata(
                    MetaData(), name="documents_new"
                )
                new.create(conn)
                conn.execute(
                    text(f"INSERT INTO documents_new ({cols}) SELECT {cols} FROM documents")
                )
                conn.exec_driver_sql("DROP TABLE documents")
                conn.exec_driver_sql("ALTER TABLE documents_new RENAME TO documents")
        finally:
            conn.exec_driver_sql("PRAGMA foreign_keys=ON")
            conn.commit()


def _check_expected(s: Session, doc_id: str, expect: Expect | None) -> None:
    """Inside the write's transaction: the live document must still be the expected one.
    The row is locked (PostgreSQL) until commit; SQLite serialises writers (a writer
    whose snapshot is outdated cannot commit)."""
    if expect is None:
        return
    row = s.get(DocumentRow, doc_id, with_for_update=True, populate_existing=True)
    live = _document(row) if row is not None and not row.deleted else None
    if live != expect.document:
        raise DocumentChanged(f"document {doc_id} changed while this write was prepared")


def _lock_file(engine: Engine, name: str) -> Path | None:
    """`<database>.<name>.lock`, beside a SQLite file; None for a private in-memory
    database (this process is its only user)."""
    database = engine.url.database
    if not database or database == ":memory:":
        return None
    return Path(f"{database}.{name}.lock")


def _open_lock(lock: Path) -> IO[str]:
    """The lock file, opened to be flock'd. A folder that cannot hold it (read-only, or
    not a real folder, such as /proc) is a data dir to correct: one plain reason, not a
    traceback from inside the store's first statement."""
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        return lock.open("a")
    except OSError as exc:
        raise DataDirError(
            f"cannot write {lock}: {exc.strerror or exc} (the folder of the SQLite "
            "metadata database, the data dir, must be a writable folder)"
        ) from exc


@contextmanager
def _sqlite_file_lock(engine: Engine, name: str) -> Iterator[None]:
    """An exclusive flock on the `name` lock file, across the processes of one host."""
    lock = _lock_file(engine, name)
    if lock is None:
        yield
        return
    with _open_lock(lock) as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_QUERY_LOG = cast(Table, QueryLogRow.__table__)
_GAPS = cast(Table, KnowledgeGapRow.__table__)
# The knowledge-gap upsert, written for every question not covered: statements built once
# (built per call, each took a cache-key walk before it could reuse its compiled form).
_GAP_SEEN = (
    select(_GAPS.c.normalised, _GAPS.c.count, _GAPS.c.first_at, _GAPS.c.roles)
    .where(_GAPS.c.key == bindparam("gap_key"))
    .with_for_update()
)
_GAP_UPDATE = _GAPS.update().where(_GAPS.c.key == bindparam("gap_key"))
_GAP_INSERT = _GAPS.insert()
_QUERY_LOG_INSERT = _QUERY_LOG.insert()

# The advisory lock the outbox applier holds ("ragline-writer"); migrations use another.
_WRITER_LOCK_KEY = 0x72676C77726974


def _role_key(name: str) -> int:
    """A role's PostgreSQL advisory lock key: a signed 64-bit number from its name."""
    digest = hashlib.sha256(f"ragline-role:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class _Role:
    """One held role: an open flock'd file (SQLite) or a connection holding a session
    advisory lock (PostgreSQL); neither for a private in-memory database."""

    def __init__(self, name: str, file: IO[str] | None = None, conn: Connection | None = None):
        self.name, self.file, self.conn = name, file, conn

    def alive(self) -> bool:
        """A lock on a connection lasts as long as the connection: check it answers."""
        if self.conn is None:
            return True
        try:
            self.conn.execute(sql_text("SELECT 1"))
            self.conn.commit()
            return True
        except Exception:
            return False

    def release(self) -> None:
        if self.file is not None:
            self.file.close()  # closing the file lets go of its flock
        if self.conn is not None:
            with contextlib.suppress(Exception):  # a dead connection held nothing
                self.conn.execute(
                    sql_text("SELECT pg_advisory_unlock(:k)"), {"k": _role_key(self.name)}
                )
                self.conn.commit()
            self.conn.close()


def _add_sqlite_columns(engine: Engine) -> None:
    """Columns added to a table since an embedded file was made (`create_all` makes
    missing tables only): added as nullable, as their Alembic revisions do."""
    with engine.begin() as conn:
        for table in Base.metadata.sorted_tables:
            info = conn.exec_driver_sql(f'PRAGMA table_info("{table.name}")')
            have = {row[1] for row in info}  # (cid, name, type, ...)
            for column in table.columns:
                if column.name not in have and column.nullable and not column.primary_key:
                    kind = column.type.compile(dialect=engine.dialect)
                    conn.exec_driver_sql(
                        f'ALTER TABLE "{table.name}" ADD COLUMN "{column.name}" {kind}'
                    )


class SqlMetadataStore:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        if self.engine.dialect.name == "sqlite":
            # The embedded file is rebuilt rather than migrated. Processes opening a new
            # file at once (`serve --workers N`) take turns, or both would create a table.
            with _sqlite_file_lock(self.engine, "schema"):
                Base.metadata.create_all(self.engine)
                # Columns first: the copy that drops the old UNIQUE names every column.
                _add_sqlite_columns(self.engine)
                _drop_sqlite_source_unique(self.engine)
        else:
            # A shared server database changes only through Alembic revisions.
            from indexing.migrate import upgrade

            upgrade(self.engine)
        self._session = sessionmaker(self.engine, expire_on_commit=False)
        # The serve-check's chunks: {content_id: (its key when read, Chunk)}.
        self._served: dict[str, tuple[tuple[Any, ...], Chunk]] = {}
        # The writes every query makes (audit record, knowledge gap; the trace records
        # share it), committed together with those of concurrent queries.
        self.writes = GroupCommit(self.engine)
        self._roles: dict[str, _Role] = {}
        self._roles_lock = threading.Lock()

    # -- the writer lock --------------------------------------------------------------
    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Held while the outbox is applied or the derived stores are repaired: one writer
        at a time for this deployment, or a slow process could re-apply an upsert after
        a faster one applied the delete that followed it. PostgreSQL: a session advisory
        lock, so workers on several hosts exclude each other; SQLite (one host): an
        exclusive flock on a file beside the database. Not re-entrant."""
        if self.engine.dialect.name != "sqlite":
            with self.engine.connect() as conn:
                conn.execute(sql_text("SELECT pg_advisory_lock(:k)"), {"k": _WRITER_LOCK_KEY})
                conn.commit()
                try:
                    yield
                finally:
                    conn.execute(sql_text("SELECT pg_advisory_unlock(:k)"), {"k": _WRITER_LOCK_KEY})
                    conn.commit()
            return
        with _sqlite_file_lock(self.engine, "writer"):
            yield

    def claim(self, name: str) -> bool:
        """Whether this store holds the role `name` for the deployment: taken when no one
        holds it, kept until close (or the process ends). PostgreSQL: a session advisory
        lock on a connection of its own, so processes on several hosts exclude each other;
        a holder whose connection died lets go and tries again. SQLite (one host): a
        non-blocking flock on a file beside the database."""
        with self._roles_lock:
            held = self._roles.get(name)
            if held is not None:
                if held.alive():
                    return True
                del self._roles[name]
                held.release()
            role = self._take(name)
            if role is not None:
                self._roles[name] = role
            return role is not None

    def _take(self, name: str) -> _Role | None:
        if self.engine.dialect.name != "sqlite":
            conn = self.engine.connect()
            try:
                got = conn.execute(
                    sql_text("SELECT pg_try_advisory_lock(:k)"), {"k": _role_key(name)}
                ).scalar()
                conn.commit()
            except Exception:
                conn.close()
                raise
            if got:
                return _Role(name, conn=conn)
            conn.close()
            return None
        lock = _lock_file(self.engine, f"role-{name}")
        if lock is None:
            return _Role(name)
        fh = _open_lock(lock)  # held open: the flock lives as long as the file
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            return None
        return _Role(name, file=fh)

    # -- documents and versions -------------------------------------------------------
    def document(self, doc_id: str) -> Document | None:
        # Plain rows, no ORM identity map: ingest asks three times per file.
        with self.engine.connect() as conn:
            row = conn.execute(_DOCUMENT, {"doc_id": doc_id}).first()
        return _document(row) if row is not None and not row.deleted else None  # type: ignore[arg-type]

    def documents(self) -> list[Document]:
        with self._session() as s:
            rows = s.scalars(select(DocumentRow).where(DocumentRow.deleted.is_(False)))
            return [_document(r) for r in rows]

    def documents_at(self, source: str) -> list[Document]:
        with self._session() as s:
            rows = s.scalars(
                select(DocumentRow)
                .where(DocumentRow.source == source, DocumentRow.deleted.is_(False))
                .order_by(DocumentRow.doc_id)
            )
            return [_document(r) for r in rows]

    def deployment_secret(self, name: str) -> str:
        with self._session() as s:
            row = s.get(DeploymentSecretRow, name)
            if row is not None:
                return row.value
        try:
            with self._session.begin() as s:
                s.add(DeploymentSecretRow(name=name, value=secrets.token_hex(32)))
        except IntegrityError:
            pass  # another process made it first: theirs is the one
        with self._session() as s:
            value = s.scalar(
                select(DeploymentSecretRow.value).where(DeploymentSecretRow.name == name)
            )
            assert value is not None
            return value

    def versions(self, doc_id: str) -> list[DocumentVersion]:
        with self.engine.connect() as conn:
            rows = conn.execute(_VERSIONS, {"doc_id": doc_id})
            return [
                DocumentVersion(r.doc_id, r.version, r.status, r.chunk_count, r.page_count)
                for r in rows
            ]

    def current_version(self, doc_id: str) -> str | None:
        with self._session() as s:
            return s.scalar(
                select(VersionRow.version).where(
                    VersionRow.doc_id == doc_id, VersionRow.status == "current"
                )
            )

    def has_version(self, doc_id: str, version: str) -> bool:
        with self.engine.connect() as conn:
            row = conn.execute(_HAS_VERSION, {"doc_id": doc_id, "version": version}).first()
        return row is not None

    def versions_needed(
        self, versions: Collection[str], job_states: Collection[str], except_job: str = ""
    ) -> set[str]:
        needed: set[str] = set()
        with self._session() as s:
            for batch in _batches(sorted(set(versions))):
                needed.update(
                    s.scalars(
                        select(VersionRow.version)
                        .join(DocumentRow, DocumentRow.doc_id == VersionRow.doc_id)
                        .where(
                            VersionRow.version.in_(batch),
                            VersionRow.status.in_(("pending", "current", "superseded")),
                            DocumentRow.deleted.is_(False),
                        )
                    )
                )
                needed.update(
                    s.scalars(
                        select(JobRow.version).where(
                            JobRow.version.in_(batch),
                            JobRow.state.in_(tuple(job_states)),
                            JobRow.job_id != except_job,
                        )
                    )
                )
        return needed

    def stage_version(
        self,
        document: Document,
        version: DocumentVersion,
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        stores: Iterable[str],
        lineage: dict[str, Any] | None = None,
        expect: Expect | None = None,
    ) -> None:
        now = _now()
        with self._session.begin() as s:
            _check_expected(s, document.doc_id, expect)
            s.merge(
                DocumentRow(
                    doc_id=document.doc_id,
                    source=document.source,
                    title=document.title,
                    doc_type=document.doc_type,
                    acl_tags=json.dumps(sorted(document.acl_tags)),
                    department=document.department,
                    source_trust=document.source_trust,
                    modified=document.modified,
                    deleted=False,
                    updated_at=now,
                    title_stated=document.title_stated,
                )
            )
            existing = s.get(VersionRow, (version.doc_id, version.version))
            if existing is not None:
                # Re-staging a version (e.g. after it was deleted and the file came back):
                # drop its old rows so the stage is exact.
                s.execute(
                    delete(ChunkRow).where(
                        ChunkRow.doc_id == version.doc_id, ChunkRow.version == version.version
                    )
                )
                s.delete(existing)
                s.flush()
            s.add(
                VersionRow(
                    doc_id=version.doc_id,
                    version=version.version,
                    status="pending",
                    chunk_count=len(chunks),
                    page_count=version.page_count,
                    lineage=json.dumps(lineage or {}, sort_keys=True),
                    created_at=now,
                )
            )
            s.add_all(
                ChunkRow(
                    content_id=c.content_id,
                    doc_id=c.doc_id,
                    version=c.version,
                    ordinal=c.ordinal,
                    kind=c.kind,
                    text=c.text,
                    page_start=c.page_start,
                    page_end=c.page_end,
                    line_start=c.line_start,
                    line_end=c.line_end,
                    section_path=json.dumps(list(c.section_path), ensure_ascii=False),
                    table_id=c.table_id,
                    summary=c.summary,
                    entities=json.dumps(list(c.entities), ensure_ascii=False),
                    table_json=_table_json(c),
                    line_map=json.dumps([list(e) for e in c.line_map]) if c.line_map else "",
                    vector=np.asarray(vec, dtype=np.float32).tobytes(),
                )
                for c, vec in zip(chunks, vectors, strict=True)
            )
            for store in stores:
                s.add(
                    OutboxRow(
                        store=store,
                        op="upsert",
                        doc_id=version.doc_id,
                        version=version.version,
                        created_at=now,
                    )
                )

    # -- outbox -----------------------------------------------------------------------
    def pending(self, store: str, limit: int = 100) -> list[OutboxEntry]:
        with self._session() as s:
            rows = s.scalars(
                select(OutboxRow)
                .where(OutboxRow.store == store, OutboxRow.done.is_(False))
                .order_by(OutboxRow.id)
                .limit(limit)
            )
            return [
                OutboxEntry(r.id, r.store, r.op, r.doc_id, r.version, r.attempts, r.last_error)
                for r in rows
            ]

    def mark_done(self, entry_ids: Sequence[int]) -> None:
        if not entry_ids:
            return
        with self._session.begin() as s:
            s.execute(
                update(OutboxRow)
                .where(OutboxRow.id.in_(list(entry_ids)))
                .values(done=True, done_at=_now(), last_error="")
            )

    def mark_failed(self, entry_id: int, error: str) -> None:
        with self._session.begin() as s:
            s.execute(
                update(OutboxRow)
                .where(OutboxRow.id == entry_id)
                .values(attempts=OutboxRow.attempts + 1, last_error=error[:2000])
            )

    def version_items(self, doc_id: str, version: str) -> list[IndexedChunk]:
        with self._session() as s:
            doc = s.get(DocumentRow, doc_id)
            if doc is None:
                return []
            rows = s.scalars(
                select(ChunkRow)
                .where(ChunkRow.doc_id == doc_id, ChunkRow.version == version)
                .order_by(ChunkRow.ordinal)
            )
            return [
                IndexedChunk(_chunk(r, doc), np.frombuffer(r.vector, dtype=np.float32))
                for r in rows
            ]

    def items(self, content_ids: Sequence[str]) -> list[IndexedChunk]:
        """Chunks with vectors by content_id, whatever their version's status (for repair)."""
        out: list[IndexedChunk] = []
        with self._session() as s:
            for batch in _batches(list(content_ids)):
                rows = s.execute(
                    select(ChunkRow, DocumentRow)
                    .join(DocumentRow, DocumentRow.doc_id == ChunkRow.doc_id)
                    .where(ChunkRow.content_id.in_(list(batch)))
                )
                out.extend(
                    IndexedChunk(_chunk(c, d), np.frombuffer(c.vector, dtype=np.float32))
                    for c, d in rows
                )
        return out

    def replace_vectors(self, vectors: Mapping[str, np.ndarray]) -> None:
        with self._session.begin() as s:
            for content_id, vector in vectors.items():
                s.execute(
                    update(ChunkRow)
                    .where(ChunkRow.content_id == content_id)
                    .values(vector=np.asarray(vector, dtype=np.float32).tobytes())
                )

    def version_content_ids(self, doc_id: str, version: str) -> list[str]:
        with self._session() as s:
            return list(
                s.scalars(
                    select(ChunkRow.content_id).where(
                        ChunkRow.doc_id == doc_id, ChunkRow.version == version
                    )
                )
            )

    def promote_ready(self) -> list[DocumentVersion]:
        promoted: list[DocumentVersion] = []
        with self._session.begin() as s:
            not_done = (
                select(func.count())
                .select_from(OutboxRow)
                .where(
                    OutboxRow.doc_id == VersionRow.doc_id,
                    OutboxRow.version == VersionRow.version,
                    OutboxRow.op == "upsert",
                    OutboxRow.done.is_(False),
                )
                .scalar_subquery()
            )
            ready = s.scalars(
                select(VersionRow).where(VersionRow.status == "pending", not_done == 0)
            ).all()
            now = _now()
            for v in ready:
                stores = s.scalars(
                    select(OutboxRow.store).where(
                        OutboxRow.doc_id == v.doc_id,
                        OutboxRow.version == v.version,
                        OutboxRow.op == "upsert",
                    )
                ).all()
                old = s.scalars(
                    select(VersionRow).where(
                        VersionRow.doc_id == v.doc_id, VersionRow.status == "current"
                    )
                ).all()
                for o in old:
                    o.status = "superseded"
                    s.add_all(
                        OutboxRow(
                            store=st,
                            op="delete",
                            doc_id=o.doc_id,
                            version=o.version,
                            created_at=now,
                        )
                        for st in set(stores)
                    )
                v.status = "current"
                v.promoted_at = now
                promoted.append(
                    DocumentVersion(v.doc_id, v.version, "current", v.chunk_count, v.page_count)
                )
        return promoted

    def delete_document(self, doc_id: str, stores: Iterable[str]) -> bool:
        stores = list(stores)
        with self._session.begin() as s:
            doc = s.get(DocumentRow, doc_id)
            if doc is None or doc.deleted:
                return False
            doc.deleted = True
            doc.updated_at = now = _now()
            live = s.scalars(
                select(VersionRow).where(
                    VersionRow.doc_id == doc_id, VersionRow.status.in_(("pending", "current"))
                )
            ).all()
            for v in live:
                v.status = "deleted"
                # A pending version's upserts must not resurrect it after the delete.
                s.execute(
                    update(OutboxRow)
                    .where(
                        OutboxRow.doc_id == doc_id,
                        OutboxRow.version == v.version,
                        OutboxRow.op == "upsert",
                        OutboxRow.done.is_(False),
                    )
                    .values(done=True, done_at=now, last_error="cancelled: document deleted")
                )
                s.add_all(
                    OutboxRow(
                        store=st, op="delete", doc_id=doc_id, version=v.version, created_at=now
                    )
                    for st in stores
                )
            return True

    def update_document(
        self, document: Document, stores: Iterable[str], expect: Expect | None = None
    ) -> bool:
        stores = list(stores)
        with self._session.begin() as s:
            _check_expected(s, document.doc_id, expect)
            doc = s.get(DocumentRow, document.doc_id)
            if doc is None or doc.deleted:
                return False
            doc.title = document.title
            doc.title_stated = document.title_stated
            doc.doc_type = document.doc_type
            doc.acl_tags = json.dumps(sorted(document.acl_tags))
            doc.department = document.department
            doc.source_trust = document.source_trust
            doc.modified = document.modified
            doc.updated_at = now = _now()
            live = s.scalars(
                select(VersionRow.version).where(
                    VersionRow.doc_id == document.doc_id,
                    VersionRow.status.in_(("pending", "current")),
                )
            ).all()
            s.add_all(
                OutboxRow(store=st, op="meta", doc_id=document.doc_id, version=v, created_at=now)
                for v in live
                for st in stores
            )
            return True

    # -- serving ----------------------------------------------------------------------
    def serving(self, content_ids: Sequence[str]) -> dict[str, Chunk]:
        # The serve-check of every query: the status and deletion checks run in SQL every
        # time, through prepared statements and plain rows (no ORM identity map or instance
        # state). The ids with a memoised Chunk are checked through their keys
        # (`_SERVED_KEYS`): any change to the chunk or its document's fields (a version
        # staged again, a new title, ACL, trust...) is a new key, and the row is read
        # again. The others' rows are read at once, so a search of unseen chunks costs one
        # statement, as before there was a memo.
        out: dict[str, Chunk] = {}
        memo = self._served
        known = [i for i in content_ids if i in memo]
        unread = [i for i in content_ids if i not in memo]
        with self.engine.connect() as conn:
            for batch in _batches(known):
                for row in conn.execute(_SERVED_KEYS, {"ids": list(batch)}):
                    key = tuple(row)
                    seen = memo.get(key[0])
                    if seen is not None and seen[0] == key:
                        out[key[0]] = seen[1]
                    else:
                        unread.append(key[0])
            for batch in _batches(unread):
                for row in conn.execute(_SERVED_ROWS, {"ids": list(batch)}):
                    values = tuple(row)
                    chunk = _serving_chunk(values)
                    if len(memo) >= SERVED_MEMO:
                        memo.clear()
                    memo[chunk.content_id] = (values[:_KEY_LEN], chunk)
                    out[chunk.content_id] = chunk
        return out

    def _ids_with_status(self, status: str) -> set[str]:
        with self._session() as s:
            return set(
                s.scalars(
                    select(ChunkRow.content_id)
                    .join(
                        VersionRow,
                        (VersionRow.doc_id == ChunkRow.doc_id)
                        & (VersionRow.version == ChunkRow.version),
                    )
                    .where(VersionRow.status == status)
                )
            )

    def serving_ids(self) -> set[str]:
        return self._ids_with_status("current")

    def pending_ids(self) -> set[str]:
        """content_ids of staged, not yet promoted versions (may or may not be applied)."""
        return self._ids_with_status("pending")

    # -- logs -------------------------------------------------------------------------
    def record_ingest(self, record: IngestRecord) -> None:
        with self._session.begin() as s:
            s.add(
                IngestLogRow(
                    source=record.source,
                    status=record.status,
                    reason=record.reason,
                    doc_id=record.doc_id,
                    version=record.version,
                    at=record.at,
                )
            )

    def ingest_log(
        self, limit: int = 1000, since: datetime | None = None, until: datetime | None = None
    ) -> list[IngestRecord]:
        """The newest `limit` outcomes in `[since, until)`, newest first."""
        query = select(IngestLogRow)
        query = _within(query, IngestLogRow.at, since, until)
        with self._session() as s:
            rows = s.scalars(query.order_by(IngestLogRow.id.desc()).limit(limit))
            return [
                IngestRecord(r.source, r.status, r.reason, r.doc_id, r.version, r.at) for r in rows
            ]

    def log_query(self, trace_id: str, user: str, question: str, payload: str) -> None:
        # One INSERT through Core (an ORM unit of work cost more than the statement), in
        # the group commit of concurrent queries.
        row = {
            "trace_id": trace_id,
            "user": user,
            "question": question,
            "payload": payload,
            "at": _now(),
        }
        self.writes.run(lambda conn: conn.execute(_QUERY_LOG_INSERT, row))

    def query_log(
        self,
        since: datetime | None = None,
        until: datetime | None = None,
        user: str | None = None,
        limit: int = 1000,
        trace_id: str | None = None,
        mentions: str | None = None,
    ) -> list[QueryLogRecord]:
        query = select(QueryLogRow)
        if trace_id is not None:
            query = query.where(QueryLogRow.trace_id == trace_id)
        if mentions:
            query = query.where(QueryLogRow.payload.contains(mentions, autoescape=True))
        query = _within(query, QueryLogRow.at, since, until)
        if user is not None:
            query = query.where(QueryLogRow.user == user)
        query = query.order_by(QueryLogRow.at.desc(), QueryLogRow.trace_id).limit(limit)
        with self._session() as s:
            return [
                QueryLogRecord(r.trace_id, r.user, r.question, r.at, _payload(r.payload))
                for r in s.scalars(query)
            ]

    # -- knowledge gaps ---------------------------------------------------------------
    @staticmethod
    def _gap(r: KnowledgeGapRow) -> GapRecord:
        return GapRecord(
            key=r.key,
            normalised=r.normalised,
            question=r.question,
            count=r.count,
            first_at=r.first_at,
            last_at=r.last_at,
            roles=tuple(json.loads(r.roles or "[]")),
            near_misses=tuple(json.loads(r.near_misses or "[]")),
            reason=r.reason,
            best_coverage=r.best_coverage,
            status=r.status,
            closed_at=r.closed_at,
            closed_by=r.closed_by,
        )

    def record_gap(
        self,
        key: str,
        normalised: str,
        question: str,
        roles: Sequence[str],
        near_misses: Sequence[dict[str, Any]],
        reason: str,
        best_coverage: float,
    ) -> GapRecord:
        misses = json.dumps(list(near_misses), ensure_ascii=False, default=str)
        try:
            return self._record_gap(key, normalised, question, roles, misses, reason, best_coverage)
        except IntegrityError:
            # Two requests asked the same new question at once and both inserted (SQLite
            # has no row lock to make the second wait): the row exists now, so count again.
            return self._record_gap(key, normalised, question, roles, misses, reason, best_coverage)

    def _record_gap(
        self,
        key: str,
        normalised: str,
        question: str,
        roles: Sequence[str],
        misses: str,
        reason: str,
        best_coverage: float,
    ) -> GapRecord:
        # Core statements, not the ORM: written on every question not covered (1.3 ms
        # per ask through a session, most of the ask's writes), in the group commit.
        now = _now()

        def write(conn: Connection) -> dict[str, Any]:
            seen = conn.execute(_GAP_SEEN, {"gap_key": key}).first()
            values: dict[str, Any] = {
                "question": question,
                "last_at": now,
                "near_misses": misses,
                "reason": reason,
                "best_coverage": best_coverage,
                "status": "open",
                "closed_at": None,
                "closed_by": "",
            }
            if seen is None:
                values |= {
                    "key": key,
                    "normalised": normalised,
                    "count": 1,
                    "first_at": now,
                    "roles": json.dumps(sorted(set(roles))),
                }
                conn.execute(_GAP_INSERT, values)
            else:
                first_normalised, count, first_at, asked = seen
                asked_by = set(json.loads(asked or "[]")) | set(roles)
                values |= {"count": count + 1, "roles": json.dumps(sorted(asked_by))}
                conn.execute(_GAP_UPDATE, {**values, "gap_key": key})
                values |= {"key": key, "normalised": first_normalised, "first_at": first_at}
            return values

        return self._gap(SimpleNamespace(**self.writes.run(write)))  # type: ignore[arg-type]

    def gaps(
        self, since: datetime | None = None, status: str | None = None, limit: int = 1000
    ) -> list[GapRecord]:
        query = select(KnowledgeGapRow)
        if since is not None:
            query = query.where(KnowledgeGapRow.last_at >= naive_utc(since))
        if status is not None:
            query = query.where(KnowledgeGapRow.status == status)
        query = query.order_by(
            KnowledgeGapRow.count.desc(), KnowledgeGapRow.last_at.desc(), KnowledgeGapRow.key
        ).limit(limit)
        with self._session() as s:
            return [self._gap(r) for r in s.scalars(query)]

    def close_gap(self, key: str, closed_by: str) -> None:
        with self._session.begin() as s:
            s.execute(
                update(KnowledgeGapRow)
                .where(KnowledgeGapRow.key == key, KnowledgeGapRow.status == "open")
                .values(status="closed", closed_at=_now(), closed_by=closed_by)
            )

    # -- jobs -------------------------------------------------------------------------
    def create_job(self, job: JobRecord) -> JobRecord:
        now = _now()
        with self._session.begin() as s:
            row = s.get(JobRow, job.job_id)
            if row is None:
                row = JobRow(
                    job_id=job.job_id,
                    kind=job.kind,
                    doc_id=job.doc_id,
                    version=job.version,
                    batch_id=job.batch_id,
                    source=job.source,
                    owner=job.owner,
                    state=job.state,
                    reason=job.reason[:4000],
                    attempts=job.attempts,
                    created_at=job.created_at or now,
                    updated_at=now,
                )
                s.add(row)
                s.flush()
            return _job(row)

    def update_job(
        self,
        job_id: str,
        state: str,
        reason: str = "",
        *,
        version: str | None = None,
        doc_id: str | None = None,
        attempt: bool = False,
    ) -> JobRecord | None:
        with self._session.begin() as s:
            row = s.get(JobRow, job_id)
            if row is None:
                return None
            row.state = state
            row.reason = reason[:4000]
            row.updated_at = _now()
            if version is not None:
                row.version = version
            if doc_id is not None:
                row.doc_id = doc_id
            if attempt:
                row.attempts += 1
            s.flush()
            return _job(row)

    def version_times(self, doc_id: str) -> dict[str, tuple[datetime, datetime | None]]:
        with self._session() as s:
            rows = s.execute(
                select(VersionRow.version, VersionRow.created_at, VersionRow.promoted_at).where(
                    VersionRow.doc_id == doc_id
                )
            )
            return {v: (created, promoted) for v, created, promoted in rows}

    def job(self, job_id: str) -> JobRecord | None:
        with self._session() as s:
            row = s.get(JobRow, job_id)
            return _job(row) if row else None

    def hold_job_task(self, job_id: str, runner: str, task: str) -> None:
        with self._session.begin() as s:
            held = update(JobRow).where(JobRow.job_id == job_id)
            s.execute(held.values(task=task, runner=runner))

    def held_job_tasks(self, states: Collection[str]) -> list[tuple[str, str, str]]:
        query = select(JobRow.job_id, JobRow.runner, JobRow.task).where(
            JobRow.state.in_(list(states)), JobRow.task.is_not(None)
        )
        with self._session() as s:
            rows = s.execute(query.order_by(JobRow.created_at, JobRow.job_id))
            return [(job_id, runner or "", task or "") for job_id, runner, task in rows]

    def take_job_task(self, job_id: str, runner: str, taker: str) -> bool:
        with self._session.begin() as s:
            taken = s.execute(
                update(JobRow)
                .where(JobRow.job_id == job_id, JobRow.runner == runner)
                .values(runner=taker)
                .returning(JobRow.job_id)
            )
            return taken.first() is not None

    def jobs(
        self,
        *,
        batch_id: str = "",
        doc_id: str = "",
        state: str = "",
        limit: int = 100,
        offset: int = 0,
    ) -> list[JobRecord]:
        query = select(JobRow)
        if batch_id:
            query = query.where(JobRow.batch_id == batch_id)
        if doc_id:
            query = query.where(JobRow.doc_id == doc_id)
        if state:
            query = query.where(JobRow.state == state)
        with self._session() as s:
            newest = query.order_by(JobRow.created_at.desc(), JobRow.job_id.desc())
            rows = s.scalars(newest.offset(offset).limit(limit))
            return [_job(r) for r in rows]

    def job_counts(self) -> dict[str, int]:
        with self._session() as s:
            rows = s.execute(select(JobRow.state, func.count()).group_by(JobRow.state))
            return {state: int(n) for state, n in rows}

    def version_lineage(self, doc_id: str, version: str) -> dict[str, Any]:
        with self._session() as s:
            raw = s.scalar(
                select(VersionRow.lineage).where(
                    VersionRow.doc_id == doc_id, VersionRow.version == version
                )
            )
        return _payload(raw) if raw else {}

    def oldest_unsearchable(self) -> datetime | None:
        with self._session() as s:
            return s.scalar(
                select(func.min(VersionRow.created_at)).where(VersionRow.status == "pending")
            )

    # -- alert events -----------------------------------------------------------------
    def record_alert_event(self, record: AlertEventRecord) -> None:
        with self._session.begin() as s:
            s.add(
                AlertEventRow(
                    at=naive_utc(record.at),
                    alert=record.alert[:128],
                    subject=record.subject[:128],
                    event=record.event[:32],
                    severity=record.severity[:16],
                    value=record.value,
                    threshold=record.threshold,
                    message=record.message[:4000],
                    detail=json.dumps(record.detail, sort_keys=True, default=str),
                )
            )

    def alert_events(
        self, since: datetime | None = None, until: datetime | None = None, limit: int = 1000
    ) -> list[AlertEventRecord]:
        query = select(AlertEventRow)
        query = _within(query, AlertEventRow.at, since, until)
        query = query.order_by(AlertEventRow.at.desc(), AlertEventRow.id.desc()).limit(limit)
        with self._session() as s:
            return [
                AlertEventRecord(
                    r.alert,
                    r.event,
                    r.at,
                    r.subject,
                    r.severity,
                    r.value,
                    r.threshold,
                    r.message,
                    _payload(r.detail),
                )
                for r in s.scalars(query)
            ]

    def close(self) -> None:
        with self._roles_lock:
            for role in self._roles.values():
                role.release()
            self._roles.clear()
        self.engine.dispose()
