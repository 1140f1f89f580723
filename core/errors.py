"""Errors that carry a reason a person can act on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class RaglineError(Exception):
    """Base of every error Ragline raises on purpose."""


class ParseError(RaglineError):
    """A file could not be parsed; the message is the reason recorded for that file."""


class UnsupportedFormat(ParseError):
    pass


class NeedsOCR(ParseError):
    pass


class ModelMissing(RaglineError):
    """A model could not be loaded; the message names the setting to fill in."""


class ConfigError(RaglineError):
    pass


class DataDirError(ConfigError):
    """The data dir cannot be used: it cannot be created or written, or a command that
    only reads found nothing ingested there (a mistyped RAGLINE_DATA_DIR or --data-dir
    is the usual cause). A setting to correct, not a store that is down."""


class StoreError(RaglineError):
    """A store failed; callers treat it as that store being unavailable."""


class EmbedderMismatch(StoreError):
    """An index was built with another embedder: a reindex is needed."""


class DocumentChanged(StoreError):
    """A guarded write found the document no longer as the writer last read it (its ACL
    tightened, it was deleted or created meanwhile): decide again on the fresh state."""


class InvalidRequest(RaglineError):
    """A request (task context, filter) that cannot be understood; the message says why."""


class Forbidden(RaglineError):
    """The caller may not do this; the message says why, and what it may do instead."""


class NotFound(RaglineError):
    """Nothing the caller may see has this id: an unknown one and a hidden one alike."""


class Conflict(RaglineError):
    """The request cannot apply to the current state; the message says what to do."""


class TooLarge(RaglineError):
    """The request's content is over a configured limit; the message names the setting."""


class Unavailable(RaglineError):
    """A service the request needs (the task queue) is not reachable: try again later."""


def validation_summary(errors: Iterable[Mapping[str, Any]]) -> str:
    """Validation errors (pydantic's error dicts) said plainly, as every door refuses a
    request: "where: what; …", never the input values (they could echo a whole document)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())) or 'arguments'}: {e.get('msg', 'invalid')}"
        for e in errors
    )
