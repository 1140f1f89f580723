"""Where uploads' bytes live between the door that accepts them, the worker that ingests
them and whoever fetches the original later.

Every process keeps them in its upload directory (content-addressed: `<sha256><suffix>`).
With a shared store (`api.upload_store`: the metadata database, by default in production)
the accepted bytes are also put there, and a process that lacks a file fetches it into its
own directory: API replicas and workers on different hosts need no shared disk. Without
one (the embedded default, one host) the directory is all there is.

Bytes that no live document and no job on its way needs any more are removed: after a
delete or a failed ingestion (`release`), and by `ragline repair` on each host (`sweep`).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO

from core.errors import TooLarge
from core.ids import version_of_digest
from core.settings import Settings
from indexing.protocols import MetadataStore, OriginalStore
from ragline.jobs import UNFINISHED

# Bytes accepted this recently are never removed as unneeded: the upload that brought them
# (perhaps again: they are content-addressed) may not have queued its job yet.
RECENT_UPLOAD_S = 60.0
# Files a process was writing or fetching, untouched this long: it stopped.
PARTIAL_UPLOAD_S = 3600.0

_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,10}$")
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class StoredUpload:
    path: Path
    sha256: str
    size: int


def upload_suffix(filename: str, doc_type: str = "") -> str:
    """The stored file's suffix picks its parser: the client's file name's suffix, or
    `doc_type` for a name without one. Anything odd is dropped (content sniffing decides)."""
    suffix = Path(filename).suffix.lower()
    if not suffix and doc_type:
        suffix = "." + doc_type.lower().lstrip(".")
    return suffix if _SUFFIX.match(suffix) else ""


def upload_dir(settings: Settings) -> Path:
    configured = settings.api.upload_dir
    return Path(configured) if configured else settings.data_dir / "uploads"


def shares_uploads(settings: Settings) -> bool:
    """Whether the settings keep uploads in the metadata database as well."""
    choice = settings.api.upload_store
    if choice == "auto":
        return not settings.resolved_metadata_url.startswith("sqlite")
    return choice == "database"


class Uploads:
    def __init__(self, directory: Path, shared: OriginalStore | None = None) -> None:
        self.dir = directory
        self.shared = shared

    def store(self, src: BinaryIO, suffix: str, max_bytes: int) -> StoredUpload:
        """Copy `src` to `<sha256><suffix>` in this directory (atomically), hashing as it
        streams; TooLarge as soon as it exceeds `max_bytes` (nothing is left behind)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        size = 0
        fd, tmp_name = tempfile.mkstemp(dir=self.dir, prefix=".upload-", suffix=".part")
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                while block := src.read(_CHUNK):
                    size += len(block)
                    if size > max_bytes:
                        raise TooLarge(f"the upload is larger than {max_bytes} bytes")
                    digest.update(block)
                    out.write(block)
            sha = digest.hexdigest()
            final = self.dir / f"{sha}{suffix}"
            if final.exists():
                tmp.unlink()
            else:
                os.replace(tmp, final)
            return StoredUpload(final, sha, size)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def keep(self, stored: Path) -> None:
        """An accepted upload (already in this directory) reaches the shared store. Its
        bytes count as accepted now, here and there, so nothing removes them before the
        upload's job is queued (content-addressed: they may be old bytes seen again)."""
        stored.touch()
        if self.shared is not None:
            self.shared.put(stored.name, stored)

    def local(self, given: Path) -> Path | None:
        """The upload at `given` (a path on whichever host accepted it) as a file on this
        host: there already, or fetched into this directory; None when nobody has it."""
        if given.is_file():
            return given
        here = self.dir / given.name
        if here.is_file():
            return here
        if self.shared is not None and self.shared.fetch(given.name, here):
            return here
        return None

    def _here(self, version: str) -> Path | None:
        """The stored upload of this version in this directory."""
        return next(self._files(f"{version}*"), None)

    def _files(self, pattern: str = "*") -> Iterator[Path]:
        """Stored uploads in this directory (not the files being written or fetched)."""
        if self.dir.is_dir():
            for stored in sorted(self.dir.glob(pattern)):
                if stored.is_file() and not stored.name.startswith("."):
                    yield stored

    def holds(self, version: str) -> bool:
        """Whether this host or the shared store has this version's bytes (nothing is
        fetched to say so)."""
        if self._here(version) is not None:
            return True
        return self.shared is not None and self.shared.find(version) is not None

    def original(self, version: str) -> Path | None:
        """The stored upload of this version on this host, fetched if need be."""
        here = self._here(version)
        if here is not None:
            return here
        name = self.shared.find(version) if self.shared is not None else None
        return self.local(self.dir / name) if name else None

    def share_local(self) -> int:
        """Put every upload this directory holds into the shared store, for a host that
        accepted uploads before the store was shared (`ragline repair`); how many it did
        not hold yet."""
        if self.shared is None:
            return 0
        return sum(self.shared.put(f.name, f, accepted=False) for f in self._files())

    def versions(self, accepted_before: datetime) -> set[str]:
        """The versions whose bytes this directory or the shared store holds, last
        accepted before then."""
        cutoff = _timestamp(accepted_before)
        here = {f.name for f in self._files() if f.stat().st_mtime < cutoff}
        there = set(self.shared.names(accepted_before)) if self.shared is not None else set()
        return {v for n in here | there if (v := version_of_name(n))}

    def forget(self, version: str, accepted_before: datetime) -> int:
        """Remove this version's bytes last accepted before then, here and from the shared
        store (another host's own copy stays there until it forgets it too); how many
        files and names went."""
        if not version:
            return 0  # (a prefix of every name)
        cutoff = _timestamp(accepted_before)
        gone = 0
        for f in self._files(f"{version}*"):
            if f.stat().st_mtime < cutoff:
                f.unlink(missing_ok=True)
                gone += 1
        if self.shared is not None:
            gone += sum(
                self.shared.delete(name, accepted_before)
                for name in self.shared.names(accepted_before, prefix=version)
            )
        return gone

    def forget_partial(self, written_before: datetime) -> int:
        """Remove files left half-written or half-fetched by a process that stopped, last
        written before then; how many."""
        if not self.dir.is_dir():
            return 0
        cutoff = _timestamp(written_before)
        stale = [
            f
            for f in self.dir.iterdir()
            if f.name.startswith((".upload-", ".fetch-")) and f.stat().st_mtime < cutoff
        ]
        for f in stale:
            f.unlink(missing_ok=True)
        return len(stale)


def release(
    uploads: Uploads,
    metadata: MetadataStore,
    versions: Collection[str],
    accepted_before: datetime | None = None,
    except_job: str = "",
) -> int:
    """Remove the stored uploads of these versions that nothing needs any more: no live
    document's version (superseded ones included: old answers cite them) and no job on its
    way (but `except_job`). Bytes accepted since `accepted_before` (default: the last
    `RECENT_UPLOAD_S`) stay. How many files and names went."""
    if not versions:
        return 0
    before = accepted_before or datetime.now(UTC) - timedelta(seconds=RECENT_UPLOAD_S)
    unneeded = set(versions) - metadata.versions_needed(versions, UNFINISHED, except_job)
    return sum(uploads.forget(v, before) for v in sorted(unneeded))


def sweep(uploads: Uploads, metadata: MetadataStore) -> int:
    """Remove every stored upload nothing needs (this host's directory and the shared
    store), and half-written files of stopped processes: bytes of deleted documents whose
    removal was missed (a delete queued while no worker ran), of failed uploads accepted
    by another host, of documents deleted before this version removed them."""
    now = datetime.now(UTC)
    before = now - timedelta(seconds=RECENT_UPLOAD_S)
    removed = release(uploads, metadata, uploads.versions(before), before)
    return removed + uploads.forget_partial(now - timedelta(seconds=PARTIAL_UPLOAD_S))


_LEADING_HEX = re.compile(r"[0-9a-f]*")


def version_of_name(name: str) -> str:
    """The content version of a stored upload's name (`<sha256><suffix>`)."""
    digits = _LEADING_HEX.match(name)
    return version_of_digest(digits.group(0)) if digits else ""


# A file's modification time comes from the kernel's coarse clock (a few ms behind the
# clock `datetime.now` reads): a file touched just after a moment can carry a time just
# before it. A file counts as older than a moment only by more than this.
_MTIME_SLACK_S = 0.05


def _timestamp(at: datetime) -> float:
    """A moment as file times are compared with it: a time without a zone is UTC (as the
    stores keep it), less the file clock's slack."""
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp() - _MTIME_SLACK_S
