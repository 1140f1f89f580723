"""Where uploads' bytes live between the API that accepts them, the worker that ingests
them and whoever fetches the original later.

Every process keeps them in its upload directory (content-addressed: `<sha256><suffix>`).
With a shared store (`api.upload_store`: the metadata database, by default in production)
the accepted bytes are also put there, and a process that lacks a file fetches it into its
own directory: API replicas and workers on different hosts need no shared disk. Without
one (the embedded default, one host) the directory is all there is.
"""

from __future__ import annotations

from pathlib import Path

from core.settings import Settings
from indexing.protocols import OriginalStore


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

    def keep(self, stored: Path) -> None:
        """An accepted upload (already in this directory) reaches the shared store."""
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
        if self.dir.is_dir():
            for stored in self.dir.glob(f"{version}*"):
                if stored.is_file() and not stored.name.startswith("."):
                    return stored
        return None

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
        if self.shared is None or not self.dir.is_dir():
            return 0
        return sum(
            self.shared.put(f.name, f)
            for f in sorted(self.dir.iterdir())
            if f.is_file() and not f.name.startswith(".")
        )

    def drop(self, given: Path) -> None:
        """No version needs these bytes any more: remove them here and from the store."""
        given.unlink(missing_ok=True)
        (self.dir / given.name).unlink(missing_ok=True)
        if self.shared is not None:
            self.shared.delete(given.name)
