"""Content-addressed upload storage: a file's path is the sha256 of its bytes plus its
suffix, so identical bytes are stored once and a stored file never changes."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,10}$")
_CHUNK = 1 << 20


class UploadTooLarge(Exception):
    pass


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


def store_upload(src: BinaryIO, directory: Path, suffix: str, max_bytes: int) -> StoredUpload:
    """Copy `src` to `directory/<sha256><suffix>` (atomically), hashing as it streams and
    stopping as soon as it exceeds `max_bytes`."""
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=".upload-", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            while block := src.read(_CHUNK):
                size += len(block)
                if size > max_bytes:
                    raise UploadTooLarge(size)
                digest.update(block)
                out.write(block)
        sha = digest.hexdigest()
        final = directory / f"{sha}{suffix}"
        if final.exists():
            tmp.unlink()
        else:
            os.replace(tmp, final)
        return StoredUpload(final, sha, size)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
