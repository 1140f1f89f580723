"""Dense index on FAISS (exact inner product), persisted under one directory.

Filtering happens inside the FAISS search through an id selector, so ACL and the other
filters apply before top-k. FAISS stores no payload, so this module keeps, next to the
index, one row of filter attributes per vector in FAISS's own storage order (`_Columns`,
numpy arrays of small integer codes). A filter is then a few vectorised comparisons giving
a boolean mask over storage positions, handed to FAISS as a bitmap selector on the inner
flat index: ~0.1 ms at 50k vectors, where building an id hash set in Python costs 5-30 ms.
The order stays aligned because `IndexIDMap2.remove_ids` and `IndexFlat.remove_ids` both
compact in place, keeping survivors in order, and `add` appends: `_Columns` does the same.

Approximate search (`kind="ivf"`, or `"auto"` from `approx_min` vectors up; see `_Ivf`):
an IVF index over the same storage positions, trained by the writer and saved beside the
vectors, kept in step with appends and removals without a rebuild; candidates are rescored
exactly. Filters apply inside the IVF scan (the same bitmap); where the IVF declines (a
very selective filter, too few candidates) the exact kernel answers. `kind="hnsw"` keeps
the older HNSW graph (search only, rebuilt after a removal). Recall against exact on real
embeddings: `ragline bench scale`, bench/tune_ivf.py.

On disk: `dense-<generation>.faiss` (+ `dense-<generation>.ivf` when the IVF is in use)
plus `dense.json` (model, dim, generation, payload).
`dense.json` is replaced last, atomically, so it is the commit point: a crash mid-flush
leaves the previous generation intact.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

import faiss
import numpy as np

from core.cores import cores
from core.errors import EmbedderMismatch, StoreError
from core.ids import vector_id
from core.types import Chunk, QueryFilter, ScoredId
from indexing.protocols import IndexedChunk

log = logging.getLogger("ragline.dense")

_SIDECAR = "dense.json"
_FORMAT = 1
# What reading a damaged index raises: a missing or cut file (FAISS: RuntimeError), a
# sidecar that is not JSON or not UTF-8 (ValueError), or JSON of another shape.
_UNREADABLE = (OSError, RuntimeError, ValueError, KeyError, TypeError, AttributeError)


@dataclass(frozen=True, slots=True)
class _Payload:
    content_id: str
    doc_id: str
    acl_tags: frozenset[str]
    doc_type: str
    department: str
    modified: date | None

    @classmethod
    def of(cls, chunk: Chunk) -> _Payload:
        return cls(
            chunk.content_id,
            chunk.doc_id,
            chunk.acl_tags,
            chunk.doc_type,
            chunk.department,
            chunk.modified,
        )

    def to_json(self) -> list[Any]:
        modified = self.modified.isoformat() if self.modified else None
        tags = sorted(self.acl_tags)
        return [self.content_id, self.doc_id, tags, self.doc_type, self.department, modified]

    @classmethod
    def from_json(cls, row: list[Any]) -> _Payload:
        cid, doc_id, tags, doc_type, department, modified = row
        day = date.fromisoformat(modified) if modified else None
        return cls(cid, doc_id, frozenset(tags), doc_type, department, day)


class _Codes:
    """Interns values (doc types, tag sets, ...) as small ints for the numpy columns."""

    def __init__(self) -> None:
        self.code: dict[Any, int] = {}

    def __call__(self, value: Any) -> int:
        return self.code.setdefault(value, len(self.code))

    def of(self, values: Iterable[Any]) -> np.ndarray:
        return np.fromiter((self.code[v] for v in values if v in self.code), dtype=np.int32)


_NO_DATE = -1  # a chunk without a modified date fails every date filter


class _Columns:
    """Filter attributes of every vector, row i = FAISS storage position i."""

    def __init__(self) -> None:
        self.vids = np.zeros(0, dtype=np.int64)
        self.acl = np.zeros(0, dtype=np.int32)  # code of the chunk's whole tag set
        self.doc_type = np.zeros(0, dtype=np.int32)
        self.doc_id = np.zeros(0, dtype=np.int32)
        self.department = np.zeros(0, dtype=np.int32)
        self.modified = np.zeros(0, dtype=np.int32)  # date ordinal or _NO_DATE
        self.tag_sets, self.doc_types, self.doc_ids, self.departments = (
            _Codes(),
            _Codes(),
            _Codes(),
            _Codes(),
        )

    def append(self, vids: np.ndarray, rows: Sequence[_Payload]) -> None:
        def col(values: Iterable[int]) -> np.ndarray:
            return np.fromiter(values, dtype=np.int32, count=len(rows))

        self.vids = np.concatenate([self.vids, vids])
        self.acl = np.concatenate([self.acl, col(self.tag_sets(p.acl_tags) for p in rows)])
        self.doc_type = np.concatenate(
            [self.doc_type, col(self.doc_types(p.doc_type) for p in rows)]
        )
        self.doc_id = np.concatenate([self.doc_id, col(self.doc_ids(p.doc_id) for p in rows)])
        self.department = np.concatenate(
            [self.department, col(self.departments(p.department) for p in rows)]
        )
        self.modified = np.concatenate(
            [self.modified, col(p.modified.toordinal() if p.modified else _NO_DATE for p in rows)]
        )

    def set_rows(self, positions: np.ndarray, rows: Sequence[_Payload]) -> None:
        """Replace the attributes of the rows at `positions` (a metadata change: the
        vectors and their storage order stay)."""
        for pos, p in zip(positions.tolist(), rows, strict=True):
            self.acl[pos] = self.tag_sets(p.acl_tags)
            self.doc_type[pos] = self.doc_types(p.doc_type)
            self.doc_id[pos] = self.doc_ids(p.doc_id)
            self.department[pos] = self.departments(p.department)
            self.modified[pos] = p.modified.toordinal() if p.modified else _NO_DATE

    def keep(self, mask: np.ndarray) -> None:
        """Drop the rows where `mask` is False, keeping order (as FAISS compacts)."""
        for name in ("vids", "acl", "doc_type", "doc_id", "department", "modified"):
            setattr(self, name, getattr(self, name)[mask])

    def admitted(self, where: QueryFilter) -> np.ndarray | None:
        """Boolean mask of rows `where` admits (QueryFilter.admits, vectorised); None when
        nothing is restricted."""
        mask: np.ndarray | None = None

        def narrow(m: np.ndarray) -> None:
            nonlocal mask
            mask = m if mask is None else mask & m

        if where.access_tokens is not None:
            tokens = where.access_tokens
            visible = [c for tags, c in self.tag_sets.code.items() if not tags or tags & tokens]
            narrow(np.isin(self.acl, np.asarray(visible, dtype=np.int32)))
        for wanted, codes, column in (
            (where.doc_types, self.doc_types, self.doc_type),
            (where.doc_ids, self.doc_ids, self.doc_id),
            (where.departments, self.departments, self.department),
        ):
            if wanted:
                narrow(np.isin(column, codes.of(wanted)))
        if where.modified_from:
            narrow(self.modified >= where.modified_from.toordinal())
        if where.modified_to:
            narrow((self.modified <= where.modified_to.toordinal()) & (self.modified >= 0))
        return mask


def _stamp(path: Path) -> tuple[int, int]:
    """Identity of a sidecar version: os.replace gives every flush a new inode, so this
    changes even where mtime has coarse granularity."""
    st = path.stat()
    return (st.st_ino, st.st_mtime_ns)


def _file_identity(path: Path) -> tuple[int, int, int]:
    """Inode, size and mtime of a FAISS file: a flush never changes a file in place
    (each generation is a new file), so the same inode with another size or mtime is a
    file changed under the processes that map it."""
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


IndexKind = Literal["flat", "hnsw", "ivf", "auto"]


# The least share of an IVF index's lists an automatic probe count covers.
MIN_PROBE_SHARE = 0.2


def ivf_lists(total: int) -> int:
    """Inverted lists for `total` vectors: about 4 * sqrt(n), with at least 39 training
    points per list (FAISS's minimum for k-means); 1 list (exact) for tiny indexes."""
    return max(1, min(int(4 * total**0.5), total // 39))


class _Ivf:
    """An inverted-file index over the exact index's storage positions, search only:
    8-bit scalar-quantised codes (a quarter of the flat vectors' memory) probed in
    `nprobe` lists, then the candidates rescored exactly against the flat vectors, so
    scores are the same cosines as exact search. Removals renumber the stored positions
    in place (the flat index compacts), appends add; no rebuild for either. Retrained
    when the index has grown or shrunk so that its list count is off by 2x."""

    def __init__(self, vectors: np.ndarray, dim: int) -> None:
        total = len(vectors)
        self.nlist = ivf_lists(total)
        self.trained_for = total
        quantizer = faiss.IndexFlatIP(dim)
        self.index: Any = faiss.IndexIVFScalarQuantizer(
            quantizer, dim, self.nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        # k-means on a sample: 64 points per list is plenty and keeps 1M builds in seconds.
        sample = vectors
        if total > 64 * self.nlist:
            pick = np.random.default_rng(0).choice(total, 64 * self.nlist, replace=False)
            sample = vectors[np.sort(pick)]
        self.index.train(np.ascontiguousarray(sample, dtype=np.float32))
        self.extend(vectors, 0)

    @classmethod
    def read(cls, path: Path) -> _Ivf:
        self = cls.__new__(cls)
        self.index = faiss.read_index(str(path))
        self.nlist = int(self.index.nlist)
        self.trained_for = int(self.index.ntotal)
        return self

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def stale(self, total: int) -> bool:
        target = ivf_lists(total)
        return target >= 2 * self.nlist or 2 * target <= self.nlist

    def extend(self, vectors: np.ndarray, start: int) -> None:
        for lo in range(0, len(vectors), 65536):  # bounded temporary copies
            part = np.ascontiguousarray(vectors[lo : lo + 65536], dtype=np.float32)
            ids = np.arange(start + lo, start + lo + len(part), dtype=np.int64)
            self.index.add_with_ids(part, ids)

    def remove(self, positions: np.ndarray) -> None:
        """Drop the vectors at sorted storage `positions` and shift the positions after
        them down, as the flat index's compaction does."""
        self.index.remove_ids(faiss.IDSelectorBatch(positions.astype(np.int64)))
        lists = self.index.invlists
        for no in range(self.nlist):
            n = lists.list_size(no)
            if n:
                ids = faiss.rev_swig_ptr(lists.get_ids(no), n)  # a view: updated in place
                ids -= np.searchsorted(positions, ids)

    def probes(self, nprobe: int, total: int, allowed: int) -> int:
        """Lists to probe: `nprobe`, or when 0 about 4 * sqrt(lists) but at least a fifth
        of them (the square root held for recall@10 >= 0.95 up to 100k vectors; at 1M,
        4,000 lists, derived vectors need 800 probes for 0.961, real embeddings give 0.992
        there at a p95 of 17 ms, bench/RESULTS.md). A filter admitting a fraction f of
        the vectors probes 1/f times as many, so about as many admitted candidates are
        seen."""
        auto = max(np.ceil(4 * self.nlist**0.5), np.ceil(self.nlist * MIN_PROBE_SHARE))
        base = nprobe if nprobe > 0 else int(auto)
        return min(self.nlist, int(np.ceil(base * total / max(allowed, 1))))


class _Hnsw:
    """An HNSW graph over the exact index's storage positions (search only)."""

    def __init__(self, dim: int, m: int, ef_construction: int) -> None:
        self.index: Any = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = ef_construction

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def extend(self, vectors: np.ndarray) -> None:
        if len(vectors):
            self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))


class FaissDenseIndex:
    """`IndexIDMap2(IndexFlatIP)`: exact, supports remove_ids; vectors are L2-normalised so
    inner product is cosine similarity. `kind` picks exact search ("flat", the default),
    HNSW ("hnsw") or HNSW from `approx_min` vectors up ("auto")."""

    name = "dense"

    def __init__(
        self,
        directory: Path,
        dim: int,
        model: str,
        threads: int = 1,
        *,
        kind: IndexKind = "flat",
        approx_min: int = 100_000,
        hnsw_m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
        nprobe: int = 0,
        mmap: bool = False,
        serve_damaged: bool = False,
    ) -> None:
        self.dim = dim
        self.model = model
        self.kind = kind
        self._approx_min = approx_min
        self._hnsw_params = (hnsw_m, ef_construction)
        self._ef_search = ef_search
        self._hnsw: _Hnsw | None = None  # None = not built or stale
        self._nprobe = nprobe
        self._ivf: _Ivf | None = None  # None = not built (or not needed)
        self._dir = Path(directory)
        self._lock = threading.RLock()
        self._payload: dict[int, _Payload] = {}
        # Each payload row as JSON, as last written: a flush serialises only the rows
        # that are new or changed since (a payload object is replaced on every change).
        self._row_json: dict[int, tuple[_Payload, str]] = {}
        self._cols = _Columns()
        self._generation = 0
        self._stamp = (0, 0)  # identity of the sidecar loaded, for refresh()
        # Why the index on disk cannot be read ("" when it can), and the sidecar version
        # that failed: a reader keeps what it loaded and does not read that version again
        # on every query; a writer is refused with the reason until a good flush appears.
        self.damage = ""
        self._failed: tuple[int, int] | None = None
        # The vectors this process held are gone (their mapped file was changed in
        # place): dense search is refused with `damage` until a good index loads.
        self._lost = False
        self._dirty = False
        # Memory-map the flat vectors read from disk (read-only, shared by every process on
        # the host through the page cache); copied into private memory on the first write.
        self._mmap = mmap
        self._mapped = False
        self._mapped_file: tuple[int, int, int] | None = None  # its identity when mapped
        # One thread per query: on 2 cores more threads add an ~8 ms floor (ENGINES.md).
        # Searches run concurrently from the caller's thread pool. Set in every thread that
        # runs FAISS (`_one_team`).
        self._threads = threads
        self._index = self._empty()
        try:
            self._load()
        except StoreError as exc:
            if not serve_damaged:
                raise
            # Opened without its vectors: dense search refused with the reason until a
            # rebuilt index loads (`refresh`), the other sources answering meanwhile.
            self._search_off(exc, self._sidecar_stamp())

    def _one_team(self) -> None:
        """OpenMP's thread count is a setting of each thread, not of the process: a thread
        that never set it gets OMP_NUM_THREADS as read when FAISS loaded, else every core.
        Pool threads searching with every core made an OpenMP team each and left its
        threads spinning at a barrier beside the Python work (bench/RESULTS.md, session
        32), so each call that runs FAISS sets it in its own thread (~0.1 us)."""
        faiss.omp_set_num_threads(self._threads)

    # ---- persistence -------------------------------------------------------------------

    def _empty(self) -> Any:  # faiss' stubs miss the numpy-friendly Python wrappers
        return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))

    def _load(self) -> None:
        sidecar = self._dir / _SIDECAR
        if not sidecar.exists():
            return
        try:
            stamp, meta, index = self._read(sidecar)
            rows = [_Payload.from_json(row) for row in meta["payload"]]  # in storage order
            vids = np.fromiter((vector_id(p.content_id) for p in rows), np.int64, len(rows))
            held = faiss.vector_to_array(index.id_map)
        except _UNREADABLE as exc:
            raise self._damaged(exc) from exc
        if not np.array_equal(held, vids):
            raise StoreError(
                f"dense index in {self._dir} does not match its sidecar: "
                "run `ragline repair --rebuild dense`"
            )
        self._index = index
        self._mapped = self._mmap
        self._payload = dict(zip(vids.tolist(), rows, strict=True))
        self._cols = _Columns()
        self._cols.append(vids, rows)
        self._generation = int(meta["generation"])
        self._stamp = stamp
        self._hnsw = None
        self._ivf = self._saved_ivf(bool(meta.get("ivf")), int(index.ntotal))
        self._mapped_file = self._identity() if self._mapped else None
        self.damage = ""
        self._failed = None
        self._lost = False

    @property
    def lost(self) -> bool:
        """Whether dense search is refused (the loaded vectors were dropped, `damage` says
        why); False while a damaged index on disk leaves the loaded one serving."""
        return self._lost

    def _identity(self) -> tuple[int, int, int] | None:
        try:
            return _file_identity(self._dir / f"dense-{self._generation}.faiss")
        except FileNotFoundError:
            return None

    def _mapping_changed(self) -> bool:
        """Whether the file this process maps was changed in place (truncated, zeroed,
        rewritten): its pages may be gone, and FAISS reading them would end the process
        (SIGBUS). A file removed (a newer flush) leaves the mapping whole. One stat()."""
        if not self._mapped or self._mapped_file is None:
            return False
        now = self._identity()
        return now is not None and now[0] == self._mapped_file[0] and now != self._mapped_file

    def _check_mapping_locked(self) -> None:
        """Under the lock, before FAISS reads mapped vectors: a file changed in place is
        dropped (never read) and loaded again; when it cannot be, dense search is refused
        with the reason until a good index appears (`ragline repair --rebuild dense`)."""
        if not self._mapping_changed():
            return
        held, was = int(self._index.ntotal), self._mapped_file
        now = self._identity()
        stamp = self._sidecar_stamp()
        self._drop_vectors_locked()
        self._stamp = (0, 0)
        self._lost = True
        log.error(
            "dense index file %s was changed in place (%s -> %s bytes) under this "
            "process's memory map: its %d vectors are dropped, loading it again",
            self._dir / f"dense-{self._generation}.faiss",
            was[1] if was else "?",
            now[1] if now else "?",
            held,
        )
        try:
            self._load()
        except StoreError as exc:
            self._search_off(exc, stamp)

    def _sidecar_stamp(self) -> tuple[int, int] | None:
        try:
            return _stamp(self._dir / _SIDECAR)
        except OSError:
            return None

    def _search_off(self, exc: StoreError, stamp: tuple[int, int] | None) -> None:
        """Dense search refused with the reason (`exc`) until a good index loads; the
        sidecar version that failed (`stamp`) is not read again."""
        self.damage, self._failed, self._lost = str(exc), stamp, True
        log.error("dense search is off in this process: %s", self.damage)

    def _drop_vectors_locked(self) -> None:
        """Forget every vector and payload held (and any mapping of a file)."""
        self._index = self._empty()
        self._mapped = False
        self._mapped_file = None
        self._payload = {}
        self._row_json = {}
        self._cols = _Columns()
        self._hnsw = None
        self._ivf = None

    def _read(self, sidecar: Path) -> tuple[tuple[int, int], dict[str, Any], Any]:
        """The sidecar and the index file it names. Another process may flush between the
        two reads (the old generation's file is deleted after the switch): read again, and
        on the third failure it is not a race."""
        for _ in range(2):
            try:
                return self._read_once(sidecar)
            except (FileNotFoundError, RuntimeError):
                continue
        return self._read_once(sidecar)

    def _read_once(self, sidecar: Path) -> tuple[tuple[int, int], dict[str, Any], Any]:
        stamp = _stamp(sidecar)
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise TypeError(f"{_SIDECAR} holds {type(meta).__name__}, not an object")
        self._check_embedder(meta)
        path = self._dir / f"dense-{int(meta['generation'])}.faiss"
        flags = faiss.IO_FLAG_MMAP_IFC if self._mmap else 0
        return stamp, meta, faiss.read_index(str(path), flags)

    def _damaged(self, exc: BaseException) -> StoreError:
        """The error for an index that cannot be read: every command opens it first, so
        it names the way out (`repair --rebuild dense` sets the directory aside and
        builds a new index from the metadata store)."""
        # FAISS's messages open with its source location; the reason is the last part.
        reason = str(exc).rsplit("Error: ", 1)[-1].strip() or type(exc).__name__
        if not isinstance(exc, RuntimeError | OSError):
            reason = f"{type(exc).__name__}: {reason}"
        return StoreError(
            f"dense index in {self._dir} cannot be read ({reason}): "
            "run `ragline repair --rebuild dense` to build it again"
        )

    def _saved_ivf(self, saved: bool, total: int) -> _Ivf | None:
        """The approximate index the writer saved, when it matches the vectors. It is
        derived from them, so one that is missing, stale or unreadable is only trained
        again (on the first search, or by the writer's next flush), not an error."""
        path = self._dir / f"dense-{self._generation}.ivf"
        if not saved or not path.exists():
            return None
        try:
            ivf = _Ivf.read(path)
        except _UNREADABLE as exc:
            log.warning("approximate index %s cannot be read, training a new one: %s", path, exc)
            return None
        return ivf if ivf.size == total else None

    def _check_embedder(self, meta: dict[str, Any]) -> None:
        if meta["model"] != self.model or int(meta["dim"]) != self.dim:
            raise EmbedderMismatch(
                f"dense index in {self._dir} was built with model {meta['model']!r} "
                f"(dim {meta['dim']}) but the configured embedder is {self.model!r} "
                f"(dim {self.dim}): a reindex is needed, run `ragline repair --rebuild dense`"
            )

    def changed_on_disk(self) -> bool:
        """Whether another process flushed an index this one has not loaded (one that
        failed to load counts once), or the file this process maps was changed in place:
        a stat() or two, without the lock, so a caller can skip `refresh` (and a thread)
        when it is not."""
        if self._mapping_changed():
            return True
        try:
            stamp = _stamp(self._dir / _SIDECAR)
        except FileNotFoundError:
            return False
        return stamp != self._stamp and stamp != self._failed

    def refresh(self) -> bool:
        """Reload when another process (an ingestion worker) flushed a newer index: the API
        process calls this before searching, or on the "indexed" event. One stat() when
        nothing changed. Never discards this instance's own unflushed writes.

        An index on disk that cannot be read raises StoreError (a writer must not write
        over it) and, for as long as that version stays, raises it again without reading
        it; what this process loaded stays searchable meanwhile (unless its mapped file
        itself was damaged: then dense search is refused with the reason)."""
        with self._lock:
            self._check_mapping_locked()
            try:
                stamp = _stamp(self._dir / _SIDECAR)
            except FileNotFoundError:
                return False
            if stamp == self._stamp or self._dirty:
                return False
            if stamp == self._failed:
                raise StoreError(self.damage)
            try:
                self._load()
            except StoreError as exc:
                self.damage, self._failed = str(exc), stamp
                if not self._lost:
                    log.warning(
                        "dense index on disk cannot be loaded, this process keeps the %d "
                        "vectors it holds: %s",
                        int(self._index.ntotal),
                        self.damage,
                    )
                raise
            return True

    def flush(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            self._dir.mkdir(parents=True, exist_ok=True)
            # Unique per flush (not a counter), so two processes flushing by mistake never
            # write the same file; the embedded profile has a single writer (the applier).
            generation = max(self._generation + 1, time.time_ns())
            index_path = self._dir / f"dense-{generation}.faiss"
            tmp = index_path.with_suffix(".faiss.tmp")
            faiss.write_index(self._index, str(tmp))
            os.replace(tmp, index_path)
            # The approximate index is built here, by the writer, and saved beside the
            # vectors, so reader processes load it instead of each training their own.
            ivf = self._current_ivf() if self._wants_ivf(int(self._index.ntotal)) else None
            if ivf is not None:
                faiss.write_index(ivf.index, str(tmp))
                os.replace(tmp, self._dir / f"dense-{generation}.ivf")
            meta = {
                "format": _FORMAT,
                "model": self.model,
                "dim": self.dim,
                "generation": generation,
                "ivf": ivf is not None,
            }
            head = json.dumps(meta, ensure_ascii=False, separators=(",", ":"))[:-1]
            rows = ",".join(self._rows_json())
            tmp_meta = self._dir / (_SIDECAR + ".tmp")
            with tmp_meta.open("w", encoding="utf-8") as fh:
                # One write of cached row strings: json.dump of every row at every flush
                # was most of a flush at 500k vectors (bench/RESULTS.md).
                fh.write(f'{head},"payload":[{rows}]}}')
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp_meta, self._dir / _SIDECAR)  # the commit point
            (self._dir / f"dense-{self._generation}.faiss").unlink(missing_ok=True)
            (self._dir / f"dense-{self._generation}.ivf").unlink(missing_ok=True)
            self._generation = generation
            self._stamp = _stamp(self._dir / _SIDECAR)
            self._dirty = False

    def _rows_json(self) -> list[str]:
        """The payload rows in storage order as JSON, reusing the strings of rows that
        did not change since the last flush; rows no longer held are dropped."""
        cache: dict[int, tuple[_Payload, str]] = {}
        out: list[str] = []
        for vid in self._cols.vids.tolist():
            payload = self._payload[vid]
            held = self._row_json.get(vid)
            if held is None or held[0] is not payload:
                row = json.dumps(payload.to_json(), ensure_ascii=False, separators=(",", ":"))
                held = (payload, row)
            cache[vid] = held
            out.append(held[1])
        self._row_json = cache
        return out

    def close(self) -> None:
        self.flush()

    # ---- writes ------------------------------------------------------------------------

    def _own_locked(self) -> None:
        """A memory-mapped index is read-only (FAISS aborts the process on a write to a
        mapped vector): take a private copy before the first change."""
        if self._lost:  # writing over a lost index would drop every vector it held
            raise StoreError(self.damage)
        if self._mapping_changed():  # writers refresh first; this is a change since
            raise StoreError(
                f"dense index file in {self._dir} was changed in place during a write: "
                "run `ragline repair --rebuild dense` if it does not load again"
            )
        if self._mapped:
            # clone_index keeps viewing the mapping; a serialised round trip owns its data.
            self._index = faiss.deserialize_index(faiss.serialize_index(self._index))
            self._mapped = False

    def _remove_locked(self, ids: np.ndarray) -> None:
        gone = np.isin(self._cols.vids, ids)
        if gone.any():
            self._own_locked()
            removed = self._cols.vids[gone]
            self._index.remove_ids(removed)
            if self._ivf is not None:
                self._ivf.remove(np.flatnonzero(gone))
            self._cols.keep(~gone)
            self._hnsw = None  # positions moved: the graph is rebuilt on the next search
            for vid in removed.tolist():
                del self._payload[vid]
            self._dirty = True

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        latest = {item.chunk.content_id: item for item in items}  # last one wins
        if not latest:
            return
        vectors = np.stack([np.asarray(i.vector, dtype=np.float32) for i in latest.values()])
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise EmbedderMismatch(
                f"vectors of shape {vectors.shape[1:]} for a dense index of dim {self.dim}: "
                "run `ragline repair --rebuild dense` after changing the embedder"
            )
        ids = np.fromiter((vector_id(c) for c in latest), dtype=np.int64, count=len(latest))
        rows = [_Payload.of(item.chunk) for item in latest.values()]
        with self._lock:
            self._one_team()
            self._remove_locked(ids)  # upsert = replace: applying twice keeps one copy
            self._own_locked()
            start = int(self._index.ntotal)
            self._index.add_with_ids(np.ascontiguousarray(vectors), ids)
            if self._ivf is not None:
                self._ivf.extend(vectors, start)
            self._cols.append(ids, rows)
            self._payload.update(zip(ids.tolist(), rows, strict=True))
            self._dirty = True

    def delete(self, content_ids: Sequence[str]) -> None:
        ids = np.fromiter((vector_id(c) for c in content_ids), dtype=np.int64)
        with self._lock:
            self._remove_locked(ids)

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        latest = {vector_id(c.content_id): _Payload.of(c) for c in chunks}
        with self._lock:
            held = {vid: row for vid, row in latest.items() if vid in self._payload}
            changed = {vid: row for vid, row in held.items() if self._payload[vid] != row}
            if not changed:
                return
            wanted = np.fromiter(changed, dtype=np.int64, count=len(changed))
            positions = np.flatnonzero(np.isin(self._cols.vids, wanted))
            rows = [changed[vid] for vid in self._cols.vids[positions].tolist()]
            self._cols.set_rows(positions, rows)
            self._payload.update(changed)
            self._dirty = True

    def rebuild_from(self, items: Iterable[IndexedChunk], batch: int = 4096) -> None:
        """Drop everything and bulk-load (used by `ragline repair --rebuild dense`)."""
        with self._lock:
            self._drop_vectors_locked()
            self._lost = False
            pending: list[IndexedChunk] = []
            for item in items:
                pending.append(item)
                if len(pending) >= batch:
                    self.upsert(pending)
                    pending = []
            self.upsert(pending)
            self._dirty = True

    # ---- approximate search ------------------------------------------------------------

    def _vectors(self, start: int = 0) -> np.ndarray:
        """Stored vectors from position `start` on, in storage order (no copy of the rest)."""
        inner: Any = faiss.downcast_index(self._index.index)
        codes = faiss.vector_to_array(inner.codes).view(np.float32).reshape(-1, self.dim)
        return codes[start:]

    def _wants_ivf(self, total: int) -> bool:
        return self.kind == "ivf" or (self.kind == "auto" and total >= self._approx_min)

    def _current_ivf(self) -> _Ivf:
        """The IVF index, trained now when missing or when the size moved too far."""
        total = int(self._index.ntotal)
        if self._ivf is None or self._ivf.stale(total) or self._ivf.size != total:
            # Training is rare, minutes of k-means at 1M vectors, and holds the store's
            # lock (this process's searches wait): it gets every core.
            faiss.omp_set_num_threads(cores())
            try:
                self._ivf = _Ivf(self._vectors(), self.dim)
            finally:
                self._one_team()
        return self._ivf

    def _ivf_search(
        self, query: np.ndarray, k: int, mask: np.ndarray | None, allowed: int
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """IVF candidates rescored exactly; None when exact search should answer instead
        (a filter so selective that most lists would be probed anyway, or fewer
        candidates found than asked for)."""
        total = int(self._index.ntotal)
        ivf = self._current_ivf()
        nprobe = ivf.probes(self._nprobe, total, allowed)
        if ivf.nlist > 1 and nprobe * 2 > ivf.nlist:
            return None
        params: Any = faiss.SearchParametersIVF()
        params.nprobe = nprobe
        bitmap = None if mask is None else np.packbits(mask, bitorder="little")
        if bitmap is not None:  # kept referenced until the search returns
            params.sel = faiss.IDSelectorBitmap(total, faiss.swig_ptr(bitmap))
        want = min(allowed, max(4 * k, 40))
        _, pos = ivf.index.search(query, want, params=params)
        found = pos[0][pos[0] >= 0]
        if len(found) < min(k, allowed):
            return None
        inner: Any = faiss.downcast_index(self._index.index)
        exact = inner.reconstruct_batch(found) @ query[0]
        top = np.argsort(-exact, kind="stable")[:k]
        return exact[top][None, :], found[top][None, :]

    def _use_approx(self, total: int, allowed: int) -> bool:
        """HNSW only when asked for (`auto` means IVF; where IVF declines, exact answers)."""
        if self.kind != "hnsw":
            return False
        # A selective filter leaves HNSW walking through excluded nodes and missing
        # admitted ones; the exact kernel over a small admitted set is fast anyway.
        return allowed >= 0.2 * total

    def _approx_search(
        self, query: np.ndarray, k: int, mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        total = int(self._index.ntotal)
        if self._hnsw is None or self._hnsw.size > total:
            self._hnsw = _Hnsw(self.dim, *self._hnsw_params)
        if self._hnsw.size < total:  # appended since: extend the graph
            self._hnsw.extend(self._vectors(self._hnsw.size))
        params: Any = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
        params.efSearch = max(self._ef_search, k)
        bitmap = None if mask is None else np.packbits(mask, bitorder="little")
        if bitmap is not None:  # kept referenced until the search returns
            params.sel = faiss.IDSelectorBitmap(total, faiss.swig_ptr(bitmap))
        scores, pos = self._hnsw.index.search(query, k, params=params)
        return scores, pos

    # ---- reads -------------------------------------------------------------------------

    def content_ids(self) -> set[str]:
        with self._lock:
            return {p.content_id for p in self._payload.values()}

    def metadata_signature(self, chunk: Chunk) -> str:
        return json.dumps(_Payload.of(chunk).to_json())

    def held_metadata(self) -> dict[str, str]:
        with self._lock:
            return {p.content_id: json.dumps(p.to_json()) for p in self._payload.values()}

    def search(self, vector: np.ndarray, k: int, where: QueryFilter) -> list[ScoredId]:
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        if query.shape[1] != self.dim:
            raise EmbedderMismatch(
                f"query vector of dim {query.shape[1]} for a dense index of dim {self.dim}"
            )
        with self._lock:
            self._check_mapping_locked()
            if self._lost:
                raise StoreError(self.damage)
            self._one_team()
            total = int(self._index.ntotal)
            if k <= 0 or total == 0:
                return []
            mask = self._cols.admitted(where)
            allowed = total if mask is None else int(mask.sum())
            if allowed == 0:
                return []
            approx = (
                self._ivf_search(query, min(k, allowed), mask, allowed)
                if self._wants_ivf(total)
                else None
            )
            if approx is not None:
                scores, pos = approx
                ids = self._cols.vids[pos]
            elif self._use_approx(total, allowed):
                scores, pos = self._approx_search(query, min(k, allowed), mask)
                ids = np.where(pos >= 0, self._cols.vids[pos], -1)
            elif mask is None or allowed == total:
                # Nothing excluded: no selector, FAISS's unfiltered kernel is ~2x faster.
                scores, ids = self._index.search(query, min(k, total), params=None)
            else:
                # A bitmap over storage positions, checked on the inner flat index: no id
                # translation, no hash set. Positions map back to ids through our columns.
                bitmap = np.packbits(mask, bitorder="little")
                selector = faiss.IDSelectorBitmap(total, faiss.swig_ptr(bitmap))
                params = faiss.SearchParameters()
                params.sel = selector
                inner: Any = faiss.downcast_index(self._index.index)
                scores, pos = inner.search(query, min(k, allowed), params=params)
                ids = np.where(pos >= 0, self._cols.vids[pos], -1)
            return [
                ScoredId(self._payload[vid].content_id, float(score))
                for score, vid in zip(scores[0].tolist(), ids[0].tolist(), strict=True)
                if vid >= 0
            ]
