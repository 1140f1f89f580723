"""Format detection and dispatch, with size, zip-bomb, time and crash limits.

`parse_file` runs the parser in a child process by default: a hostile or pathological file
can hang pdfminer or exhaust memory, and that must cost one file, not the ingest run.
Workers are fresh interpreters, kept warm between files and replaced after a timeout or a
crash.

Formats the native parsers do not cover go to an Apache Tika server when one is configured
(`ParseOptions.tika_url`), and so do files a native parser chokes on; PDFs without a text
layer go to tesseract when OCR is on. Both run inside the worker, under the same time limit.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from core.child import start_child
from core.errors import NeedsOCR, ParseError, UnsupportedFormat
from core.formats import EXTENSION_FORMATS, TIKA_ONLY
from core.settings import IngestLimitSettings, IngestSettings
from core.types import ParsedDocument
from ingestion.sanitize import sanitize_document

MB = 1024 * 1024

_EMAIL_HEADERS = {
    "from",
    "to",
    "subject",
    "date",
    "received",
    "message-id",
    "mime-version",
    "return-path",
    "cc",
    "reply-to",
    "delivered-to",
    "content-type",
}
_HEADER_LINE = re.compile(rb"^([A-Za-z][A-Za-z0-9-]{1,40}):[ \t]")
_HTML_START = re.compile(
    rb"^\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b",
    re.IGNORECASE | re.DOTALL,
)
# Zip-bomb limits for ZIP containers (docx, xlsx, pptx, odt, epub...): real Office files
# compress XML ~2-20x and images not at all. Defaults; `ParseOptions` carries the settings.
MAX_UNZIPPED = 1024 * MB
MAX_RATIO = 100.0  # total expansion over the file's size
MAX_MEMBER_RATIO = 150.0
MAX_MEMBERS = 20_000
_RATIO_FLOOR = 32 * MB  # small archives may compress absurdly well; only big output matters


TIKA_EXTENSIONS = tuple(TIKA_ONLY)


class TikaRequired(UnsupportedFormat):
    """Only a Tika server parses this format. `fmt` names it (doc, pptx, rtf, ...)."""

    def __init__(self, message: str, fmt: str = "") -> None:
        super().__init__(message)
        self.fmt = fmt


class NativeParserFailed(ParseError):
    """A native parser library raised on this file: worth a second try with Tika. Limits
    (size, zip bomb, time, nesting, memory) and encryption are not: they raise ParseError."""


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """Optional backends; picklable, so it travels to parse workers with each job."""

    tika_url: str = ""
    tika_timeout_s: float = 60.0
    ocr: bool = False
    ocr_languages: str = "chi_sim+eng"
    # Hostile-file limits (`Settings.ingest_limits`): worker address space (0 = none) and
    # the total expansion a ZIP container may have.
    worker_memory_mb: int = 0
    max_unzipped_mb: float = MAX_UNZIPPED / MB
    max_zip_ratio: float = MAX_RATIO

    @classmethod
    def from_settings(
        cls, ingest: IngestSettings, limits: IngestLimitSettings | None = None
    ) -> ParseOptions:
        lim = limits or IngestLimitSettings()
        return cls(
            ingest.tika_url,
            ingest.tika_timeout_s,
            ingest.ocr,
            worker_memory_mb=lim.worker_memory_mb,
            max_unzipped_mb=lim.max_unzipped_mb,
            max_zip_ratio=lim.max_zip_ratio,
        )


def _tika_reason(ext: str) -> str:
    kind = TIKA_ONLY[ext]
    return f"{ext} ({kind}) needs a Tika server: set RAGLINE_INGEST__TIKA_URL"


def _needs_tika(ext: str, prefix: str = "") -> TikaRequired:
    key = ext if ext in TIKA_ONLY else ".doc"  # OLE2 under another name: likely Word
    return TikaRequired(prefix + _tika_reason(key), key[1:])


def _looks_like_email(head: bytes) -> bool:
    lines = head[:4096].replace(b"\r\n", b"\n").split(b"\n")[:40]
    if not lines or not _HEADER_LINE.match(lines[0]):
        return False
    names = set()
    for line in lines:
        if not line.strip():
            break
        m = _HEADER_LINE.match(line)
        if m:
            names.add(m.group(1).decode("ascii").lower())
    return len(names & _EMAIL_HEADERS) >= 2 and bool(names & {"from", "subject", "received"})


_ZIP_KINDS = (("word/", "docx"), ("xl/", "xlsx"), ("ppt/", "pptx"))


# OpenDocument writes its mimetype first, uncompressed.
_ODF_TYPES = (
    b"application/vnd.oasis.opendocument.text",
    b"application/vnd.oasis.opendocument.spreadsheet",
    b"application/vnd.oasis.opendocument.presentation",
)


def _zip_kind(head: bytes, ext: str) -> str | None:
    if any(t in head[:200] for t in _ODF_TYPES):
        return "odf"
    for folder, kind in _ZIP_KINDS:
        if folder.encode() in head:
            return kind
    try:
        names = zipfile.ZipFile(io.BytesIO(head)).namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        names = []
    for folder, kind in _ZIP_KINDS:
        if any(n.startswith(folder) for n in names):
            return kind
    known = {kind for _, kind in _ZIP_KINDS} | {"odf"}
    return EXTENSION_FORMATS.get(ext) if EXTENSION_FORMATS.get(ext) in known else None


def detect_format(path: Path, head: bytes) -> str:
    """The format to parse `head` (the file's first bytes, or all of them) as.

    Content decides first, so a mislabelled file is parsed as what it is; the extension
    decides when the content has no signature (text formats).
    """
    ext = path.suffix.lower()
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        kind = _zip_kind(head, ext)
        if kind:
            return kind
        if ext in TIKA_ONLY:
            raise _needs_tika(ext)
        raise UnsupportedFormat(
            f"zip archive with no Word, Excel, PowerPoint or OpenDocument content ({path.name})"
        )
    if head.startswith(b"\xd0\xcf\x11\xe0"):  # OLE2: legacy .doc/.xls/.ppt/.msg
        mislabelled = ext == ".pdf" or ext == ".docx"
        raise _needs_tika(ext, "file is really a legacy Office document; " if mislabelled else "")
    if stripped.startswith(b"{\\rtf"):
        raise _needs_tika(".rtf")
    if _HTML_START.match(stripped[:4096]):
        return "html"
    if _looks_like_email(stripped):
        return "eml"
    if ext in EXTENSION_FORMATS:
        return EXTENSION_FORMATS[ext]
    if ext in TIKA_ONLY:
        raise _needs_tika(ext)
    if b"\x00" not in head[:8192]:
        try:
            head[:8192].decode("utf-8")
            return "text"
        except UnicodeDecodeError as exc:
            if exc.start > 8180:  # a multi-byte character cut at the edge of the sample
                return "text"
    supported = ", ".join(sorted(EXTENSION_FORMATS))
    raise UnsupportedFormat(
        f"unsupported file type {ext or '(no extension)'}; supported: {supported}"
    )


def document_format(path: Path, head: bytes, options: ParseOptions | None = None) -> str:
    """`detect_format`, except that a format only Tika parses is named (doc, rtf, ...)
    instead of refused when `options` configure a Tika server."""
    try:
        return detect_format(path, head)
    except TikaRequired as exc:
        if options is None or not options.tika_url:
            raise
        return exc.fmt


def _size(n: float) -> str:
    """A size for a message: MB or KB with one decimal (callers add the exact count where a
    limit is compared, so "1024.0 MB over the 1024.0 MB limit" cannot happen unexplained)."""
    if n >= MB:
        return f"{n / MB:.1f} MB"
    return f"{n / 1024:.1f} KB" if n >= 1024 else f"{n:.0f} bytes"


def check_zip(data: bytes, max_unzipped: int = MAX_UNZIPPED, max_ratio: float = MAX_RATIO) -> None:
    """Reject a ZIP container whose members would inflate far beyond the file (zip bombs).

    Bounds the *total* expansion of all members (absolutely, and as a multiple of the
    file's size once past 32 MB), so many medium members cannot add up to gigabytes, plus
    each member's own ratio. The sizes are the central directory's: Python's zipfile never
    yields more than a member declares, so a forged small size cannot smuggle more.
    """
    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ParseError(f"corrupt zip container: {exc}") from exc
    if len(infos) > MAX_MEMBERS:
        raise ParseError(
            f"zip container has {len(infos)} members, over the {MAX_MEMBERS} "
            "limit (possible zip bomb)"
        )
    total = sum(i.file_size for i in infos)
    if total > max_unzipped:
        raise ParseError(
            f"zip members expand to {_size(total)} in all ({total:,} bytes), over "
            f"the {_size(max_unzipped)} limit ({max_unzipped:,} bytes; possible zip bomb; "
            "RAGLINE_INGEST_LIMITS__MAX_UNZIPPED_MB)"
        )
    ratio = total / max(1, len(data))
    if total > _RATIO_FLOOR and ratio > max_ratio:
        raise ParseError(
            f"zip members expand {ratio:.0f}x in all, to {_size(total)} from "
            f"{_size(len(data))} across {len(infos)} members, over the "
            f"{max_ratio:g}x limit (possible zip bomb; "
            "RAGLINE_INGEST_LIMITS__MAX_ZIP_RATIO)"
        )
    member_limit = max(MAX_MEMBER_RATIO, max_ratio)  # a raised setting raises both
    for i in infos:
        member = i.file_size / max(1, i.compress_size)
        if i.file_size > _RATIO_FLOOR and member > member_limit:
            raise ParseError(
                f"zip member {i.filename} expands {member:.0f}x to "
                f"{_size(i.file_size)} (possible zip bomb)"
            )


def _parser(fmt: str) -> Callable[[bytes, str], ParsedDocument]:
    # Imported lazily: a text file should not pay for loading pdfium.
    if fmt == "pdf":
        from ingestion.parsers import pdf as mod
    elif fmt == "docx":
        from ingestion.parsers import docx as mod  # type: ignore[no-redef]
    elif fmt == "xlsx":
        from ingestion.parsers import xlsx as mod  # type: ignore[no-redef]
    elif fmt == "pptx":
        from ingestion.parsers import pptx as mod  # type: ignore[no-redef]
    elif fmt == "odf":
        from ingestion.parsers import odf as mod  # type: ignore[no-redef]
    elif fmt == "html":
        from ingestion.parsers import html as mod  # type: ignore[no-redef]
    elif fmt == "markdown":
        from ingestion.parsers import markdown as mod  # type: ignore[no-redef]
    elif fmt == "eml":
        from ingestion.parsers import eml as mod  # type: ignore[no-redef]
    else:
        from ingestion.parsers import text as mod  # type: ignore[no-redef]
    return mod.parse


def preload_parsers() -> None:
    """Import every parser's libraries now, so later timings measure parsing only."""
    for fmt in ("pdf", "docx", "xlsx", "pptx", "odf", "html", "markdown", "text"):
        _parser(fmt)
    # pdfplumber's table finder: the PDF parser imports it at the first page with a grid.
    import ingestion.parsers.pdf_page_objects  # noqa: F401


def parse_bytes(data: bytes, path: Path, options: ParseOptions | None = None) -> ParsedDocument:
    """Parse a file's content; `path` supplies the name (extension, title fallback).

    Whatever parsed it (native, Tika, OCR), the text that comes out is sanitised here, once:
    no control characters, lone surrogates or non-characters reach the chunker, the
    embedder or a store."""
    if not data:
        raise ParseError("file is empty (0 bytes)")
    opts = options or ParseOptions()
    if data.startswith(b"PK\x03\x04"):  # any ZIP container, before any parser opens it
        check_zip(data, int(opts.max_unzipped_mb * MB), opts.max_zip_ratio)
    return sanitize_document(_dispatch(data, path, opts))


def _dispatch(data: bytes, path: Path, opts: ParseOptions) -> ParsedDocument:
    try:
        fmt = detect_format(path, data)
    except TikaRequired:
        if not opts.tika_url:
            raise
        return _tika(data, path, opts)
    try:
        return _native(fmt, data, path, opts)
    except NativeParserFailed as exc:
        if not opts.tika_url:
            raise
        try:
            doc = _tika(data, path, opts)
        except ParseError as again:
            raise ParseError(f"{exc}; Tika could not parse it either: {again}") from exc
        return replace(
            doc, warnings=(f"native {fmt} parser failed ({exc}); parsed by Tika", *doc.warnings)
        )
    except NeedsOCR as exc:
        if fmt != "pdf":
            raise
        if not opts.ocr:
            raise NeedsOCR(
                f"{exc} (OCR is off: set RAGLINE_INGEST__OCR=true; it needs "
                "Debian's tesseract-ocr tesseract-ocr-chi-sim)"
            ) from exc
        from ingestion import ocr

        if ocr.tesseract_binary() is None:
            raise NeedsOCR(ocr.unavailable_reason(str(exc))) from exc
        return ocr.ocr_pdf(data, path.name, opts.ocr_languages)


def _native(fmt: str, data: bytes, path: Path, opts: ParseOptions) -> ParsedDocument:
    try:
        if fmt == "eml":  # attachments are dispatched by format, with the same options
            from ingestion.parsers import eml

            return eml.parse(data, path.name, options=opts)
        return _parser(fmt)(data, path.name)
    except ParseError:
        raise
    except RecursionError as exc:
        raise ParseError(f"{fmt} structure nested too deeply to parse") from exc
    except MemoryError as exc:
        raise ParseError(_out_of_memory(fmt, opts)) from exc
    except Exception as exc:  # a library choking on a damaged file: record why, go on
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        raise NativeParserFailed(f"{fmt} file could not be parsed ({reason})") from exc


def _out_of_memory(fmt: str, opts: ParseOptions) -> str:
    if opts.worker_memory_mb:
        return (
            f"{fmt} parser ran out of memory: over the parse worker's "
            f"{opts.worker_memory_mb} MB limit (RAGLINE_INGEST_LIMITS__WORKER_MEMORY_MB)"
        )
    return f"{fmt} parser ran out of memory"


def _tika(data: bytes, path: Path, opts: ParseOptions) -> ParsedDocument:
    from ingestion.tika import TikaClient

    with TikaClient(opts.tika_url, opts.tika_timeout_s) as client:
        return client.parse(data, path.name)


def _read(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise ParseError(f"file not found: {path}") from exc
    except OSError as exc:
        raise ParseError(f"file cannot be read: {exc.strerror or exc}") from exc
    if size > max_bytes:
        raise ParseError(
            f"file is {size / MB:.1f} MB, over the {max_bytes / MB:g} MB limit "
            "(RAGLINE_INGEST__MAX_FILE_MB)"
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ParseError(f"file cannot be read: {exc.strerror or exc}") from exc


def parse_file(
    path: Path,
    *,
    max_bytes: int,
    timeout_s: float,
    isolate: bool = True,
    pool: ParserPool | None = None,
    options: ParseOptions | None = None,
) -> ParsedDocument:
    """Parse one file. `max_bytes` is checked before reading (MB here = 2**20 bytes);
    with `isolate`, the parse runs in a worker process killed after `timeout_s` — one of
    `pool`'s (reused across files), or a one-off worker when no pool is given. `options`
    enables the Tika and OCR backends."""
    path = Path(path)
    if not isolate:
        return parse_bytes(_read(path, max_bytes), path, options)
    check_size(path, max_bytes)
    if pool is not None:
        return pool.run(path, max_bytes, timeout_s, options)
    with ParserPool() as one_off:
        return one_off.run(path, max_bytes, timeout_s, options)


def check_size(path: Path, max_bytes: int) -> None:
    # Fail fast in the parent: no worker round-trip for a missing or oversized file.
    try:
        size = path.stat().st_size
    except OSError:
        return  # the worker reports the exact reason
    if size > max_bytes:
        _read(path, max_bytes)


# ----------------------------------------------------------------------------- workers
# Workers are `python -m ingestion.parsers._worker` subprocesses (core/child.py).

# A worker is replaced once its peak resident size has grown this much since its first
# file (a leak in a native parser library, or a heap a huge file left fragmented shows
# here), and after at most _RECYCLE_AFTER files whatever its size. Starting a worker costs
# ~0.5 s of CPU: replacing one every 200 files cost a batch of small text files ~2.5 ms of
# CPU per file, a tenth of its whole ingest.
_RECYCLE_GROWTH_MB = 256.0
_RECYCLE_AFTER = 2000
_SUCCESSOR_LEAD = 20  # parses before that when the worker's successor is started
_START_TIMEOUT_S = 120.0


class _Worker:
    def __init__(self, memory_mb: int = 0) -> None:
        self.memory_mb = memory_mb
        child = start_child("ingestion.parsers._worker", str(memory_mb))
        self.proc, self.out, self.inp = child.proc, child.out, child.inp
        self.uses = 0
        self.first_rss_mb = 0.0  # peak resident size after its first file
        self.ready = False
        self.successor: _Worker | None = None  # started before this one retires
        self._starting = threading.Lock()  # one thread reads its "ready"

    def is_ready(self) -> bool:
        """Up and waiting for work (its "ready" has arrived), without blocking; False
        while another thread is waiting for it, or when it failed to start."""
        if self.ready:
            return True
        if not self._starting.acquire(blocking=False):
            return False
        try:
            if not self.ready and self.proc.poll() is None and self.inp.poll(0):
                self._read_ready()
        except ParseError:
            return False  # killed: whoever takes it next replaces it
        finally:
            self._starting.release()
        return self.ready

    def wait_ready(self) -> None:
        if self.ready:
            return
        with self._starting:
            if not self.ready:
                self._read_ready()

    def _read_ready(self) -> None:
        try:
            if not self.inp.poll(_START_TIMEOUT_S):
                raise ParseError("parser process did not start in time")
            self.inp.recv()
        except (EOFError, OSError) as exc:
            self.kill()
            raise ParseError(
                f"parser process failed to start (exit code {self.proc.returncode})"
            ) from exc
        except ParseError:
            self.kill()
            raise
        self.ready = True

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.out.close()
        self.inp.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.out.send(None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(2)
        self.kill()


# Error types a worker's reply may name; any other becomes a plain ParseError.
_ERRORS: dict[str, type[ParseError]] = {
    e.__name__: e for e in (NeedsOCR, UnsupportedFormat, TikaRequired, NativeParserFailed)
}


class ParserPool:
    """Idle parse workers, reused; one per concurrent call (callers may use threads).
    Owned by whoever ingests (close it when done); there is no process-wide pool.

    Each worker runs under the address-space cap its options name (`worker_memory_mb`,
    RLIMIT_AS); a worker that ran out of memory, crashed or timed out is replaced.
    `peak_rss_mb` is the largest resident size any worker reported, for the record."""

    def __init__(self) -> None:
        self.idle: list[_Worker] = []
        self.lock = threading.Lock()
        self.peak_rss_mb = 0.0

    def warm(self, count: int, memory_mb: int = 0, wait: bool = False) -> None:
        """Start workers until `count` are idle: a worker takes ~0.5 s to import the
        parsers, and without `wait` that overlaps the caller's own work."""
        with self.lock:
            missing = count - len(self.idle)
        for _ in range(missing):
            self._spare(_Worker(memory_mb))
        if wait:
            with self.lock:
                starting = [w for w in self.idle if not w.ready]
            for worker in starting:
                worker.wait_ready()

    def _spare(self, worker: _Worker) -> None:
        with self.lock:  # taken last: a worker that is already up is used first
            self.idle.insert(0, worker)

    def _take(self, memory_mb: int) -> _Worker:
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        if worker is not None and (worker.proc.poll() is not None or worker.memory_mb != memory_mb):
            worker.stop()
            worker = None
        return worker or _Worker(memory_mb)

    def run(
        self, path: Path, max_bytes: int, timeout_s: float, options: ParseOptions | None = None
    ) -> ParsedDocument:
        memory_mb = options.worker_memory_mb if options else 0
        worker = self._take(memory_mb)
        worker.wait_ready()
        try:
            worker.out.send((str(path), max_bytes, options))
            if not worker.inp.poll(timeout_s):
                self._note_peak(worker)
                worker.kill()
                raise ParseError(
                    f"parse took longer than {timeout_s:g}s (RAGLINE_INGEST__PARSE_TIMEOUT_S)"
                )
            result = worker.inp.recv()
        except (EOFError, OSError) as exc:
            self._note_peak(worker)
            worker.kill()
            hint = (
                f"; it may have hit the {memory_mb} MB memory limit "
                "(RAGLINE_INGEST_LIMITS__WORKER_MEMORY_MB)"
                if memory_mb
                else ""
            )
            raise ParseError(
                f"parser process crashed (exit code {worker.proc.returncode}) on this file{hint}"
            ) from exc
        worker.uses += 1
        status, payload, rss_mb, retire = result
        self.peak_rss_mb = max(self.peak_rss_mb, rss_mb)
        if worker.uses == 1:
            worker.first_rss_mb = rss_mb
        grown = rss_mb - worker.first_rss_mb > _RECYCLE_GROWTH_MB
        if (
            (worker.uses == _RECYCLE_AFTER - _SUCCESSOR_LEAD or grown)
            and not retire
            and worker.successor is None
        ):
            # Its successor starts while it serves its last files, and it serves on until
            # the successor is up: no file waits for a worker to start.
            worker.successor = _Worker(memory_mb)
            self._spare(worker.successor)
        due = worker.uses >= _RECYCLE_AFTER or grown
        if due and worker.uses < 2 * _RECYCLE_AFTER and worker.successor is not None:
            due = worker.successor.is_ready()
        with self.lock:
            keep = not due and not retire
            if keep:
                self.idle.append(worker)
        if not keep:
            if retire:  # an unplanned end: its replacement starts now
                self._spare(_Worker(memory_mb))
            # Stopping waits for the process to exit: not on this file's time.
            threading.Thread(target=worker.stop, daemon=True).start()
        if status == "ok":
            doc: ParsedDocument = payload
            return doc
        kind, message = payload
        cls = _ERRORS.get(kind, ParseError)
        raise cls(message)

    def _note_peak(self, worker: _Worker) -> None:
        """A worker about to be killed cannot report its peak: read it from /proc."""
        self.peak_rss_mb = max(self.peak_rss_mb, _hwm_mb(worker.proc.pid))

    def close(self) -> None:
        with self.lock:
            workers, self.idle = self.idle, []
        for w in workers:
            w.stop()

    def __enter__(self) -> ParserPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def limit_memory(memory_mb: int) -> None:
    """Cap this process's address space (RLIMIT_AS): allocations past it fail with
    MemoryError (or a native library aborts) instead of taking the machine's memory."""
    if memory_mb <= 0:
        return
    import resource

    cap = memory_mb * MB
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _hwm_mb(pid: int | str) -> float:
    """Peak resident size of a process's current image (VmHWM), in MB; 0 if unknown.
    Not getrusage's ru_maxrss: Linux carries that over from the parent across fork and
    exec, so a worker started by a big process would report the parent's peak."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path(f"/proc/{pid}/status").read_text()
        hwm = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(hwm.split()[1]) / 1024
    return 0.0


def _rss_mb() -> float:
    return _hwm_mb("self")


def worker_loop(inp: Connection, out: Connection, memory_mb: int = 0) -> None:
    """Body of a worker process: parse the paths it is sent until told to stop. Each
    reply is (status, payload, peak RSS in MB, retire): a worker that ran out of memory
    asks to be replaced, since its heap may be left fragmented or half-initialised."""
    import logging

    # Damaged files make pdfminer log a line per bad operator; the reason that matters
    # travels back with the reply.
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    preload_parsers()
    limit_memory(memory_mb)  # after the libraries load: the cap is for the file's work
    out.send("ready")
    while True:
        try:
            job = inp.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if job is None:
            return
        path, max_bytes, options = job
        result: tuple[Any, ...]
        doc: ParsedDocument | None = None
        retire = False
        try:
            doc = parse_bytes(_read(Path(path), max_bytes), Path(path), options)
            result = ("ok", doc)
        except ParseError as exc:
            retire = "out of memory" in str(exc)
            result = ("error", (type(exc).__name__, str(exc)))
        except MemoryError:
            retire = True
            result = ("error", ("ParseError", _out_of_memory("file", options or ParseOptions())))
        except BaseException as exc:  # never let the worker die on one file
            result = ("error", ("ParseError", f"{type(exc).__name__}: {exc}"[:300]))
        try:
            out.send((*result, _rss_mb(), retire))
        except MemoryError:  # the parse fit, its pickled result did not
            result, doc = (), None
            out.send(
                (
                    "error",
                    ("ParseError", _out_of_memory("file", options or ParseOptions())),
                    _rss_mb(),
                    True,
                )
            )
