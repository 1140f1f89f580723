"""The id scheme: same input, same id, in every store (see shared DESIGN.md)."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from pathlib import Path
from urllib.parse import quote_from_bytes, unquote_to_bytes, urlparse

HANDLE_LEN = 6
# `[Docab12cd_p7]`, or `[Docab12cd_p7.2]` when one answer cites several passages of that
# page: ".N" numbers them (1-based, in order of first citation) so each label resolves to
# exactly one passage.
LABEL_RE = re.compile(rf"\[Doc([0-9a-f]{{{HANDLE_LEN}}})_p(\d+)(?:\.(\d+))?\]")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def source_uri(path: Path) -> str:
    """The stable source key of a local file: its absolute path as a file URI.

    A link to a file is keyed by where the link is (its folder resolved), not by its
    target: the document belongs to the folder it was found in, and goes when the link
    does. Built from the path's bytes (what `Path.as_uri` does on POSIX, spelled out so
    that it stays so): a file name need not be UTF-8, and `path_from_uri` must give it
    back."""
    return "file://" + quote_from_bytes(os.fsencode(found_at(path)))


def found_at(path: Path) -> Path:
    """A file's absolute path, links resolved, but a link to a file (a dangling one too)
    stays where it is: its folder is resolved, not the link itself."""
    try:
        link = path.is_symlink() and not path.is_dir()
    except OSError:
        link = False
    return path.absolute().parent.resolve() / path.name if link else path.resolve()


def path_from_uri(uri: str) -> Path | None:
    """The local path of a `file:` source, None for other sources (uploads, URLs).

    Percent escapes are decoded to bytes, then to the file system's name for them: a
    name that is not UTF-8 (`%FF`) comes back as the same file, never as U+FFFD (which
    names no file, so the document would look deleted)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(os.fsdecode(unquote_to_bytes(parsed.path.encode("utf-8", "surrogateescape"))))


def readable_source(source: str, name_only: bool = False) -> str:
    """A source as people read it: a local file's path (or, `name_only`, its name), an
    upload's key, else the source itself. A file name that is not UTF-8 is shown with
    U+FFFD for its odd bytes: it must go into JSON and onto terminals, which cannot carry
    the bytes themselves."""
    path = path_from_uri(source)
    if path is None:
        return source.split(":", 1)[1] if source.startswith("upload:") else source
    shown = path.name if name_only else str(path)
    return os.fsencode(shown).decode("utf-8", "replace")


def doc_id_for(source: str) -> str:
    return _sha(f"doc\x1f{source}")[:16]


def scoped_doc_id(secret: str, source: str, scope: str) -> str:
    """The id of the document a writer creates at an upload key when it can see none
    there: keyed by the deployment's secret, so nobody can compute it (and compare it
    with what an upload answered) without that secret. `scope` is the writer's user."""
    msg = f"upload-doc\x1f{source}\x1f{scope}".encode()
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()[:16]


def version_of(data: bytes) -> str:
    """A document version is the hash of its bytes: unchanged bytes, unchanged version."""
    return version_of_digest(hashlib.sha256(data).hexdigest())


def version_of_digest(sha256_hex: str) -> str:
    """The version of bytes whose SHA-256 (hex) is already known, as `version_of` gives."""
    return sha256_hex[:32]


def content_id_for(doc_id: str, version: str, ordinal: int) -> str:
    return _sha(f"chunk\x1f{doc_id}\x1f{version}\x1f{ordinal}")[:32]


def vector_id(content_id: str) -> int:
    """FAISS needs int64 ids: the first 60 bits of the content id (collisions ~1e-6 at 1B)."""
    return int(content_id[:15], 16)


def doc_handle(doc_id: str) -> str:
    return doc_id[:HANDLE_LEN]


def citation_label(doc_id: str, page: int, part: int = 0) -> str:
    """`[DocX_pY]`, or `[DocX_pY.N]` for passage N of that page when `part` > 0."""
    suffix = f".{part}" if part > 0 else ""
    return f"[Doc{doc_handle(doc_id)}_p{page}{suffix}]"


def parse_label(label: str) -> tuple[str, int] | None:
    """`[Docab12cd_p3]` or `[Docab12cd_p3.2]` -> ("ab12cd", 3); None for anything else."""
    m = LABEL_RE.fullmatch(label)
    return (m.group(1), int(m.group(2))) if m else None


def label_part(label: str) -> int:
    """The passage number of a disambiguated label (`[Docab12cd_p3.2]` -> 2), else 0."""
    m = LABEL_RE.fullmatch(label)
    return int(m.group(3)) if m and m.group(3) else 0
