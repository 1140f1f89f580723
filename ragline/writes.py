"""Who may change which document: the one write rule every entry point applies (API
uploads and deletes, worker tasks, the CLI acting for an API key).

A principal may replace, re-tag or delete an existing document only when it may write
(`can_write`) *and* see that document under its current ACL. It may restrict a document
only to tags it holds itself, or that the document already carries (so a member of one of
its groups can keep a shared document shared). `None` as the principal is the operator
(the CLI without a key, repairs, folder syncs): the configuration is its authority.

Uploads never target a document the caller cannot see (`upload_target`): a writer who
sees no document at an upload key gets a document of its own there, with an id nobody
can compute without the deployment's secret, so the answer (status, body, the job, the
document it then reads) is the same whether a hidden document holds that key or not.
Local files (`file:` sources, CLI) keep one document per file: a write to one the caller
cannot see is refused, before any byte is compared or staged (the caller holds the file).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import Forbidden
from core.ids import doc_id_for
from core.types import Document, Principal


class WriteDenied(Forbidden):
    """The principal may not make this change; the message is meant for the caller."""


def authorize_write(
    principal: Principal | None,
    existing: Document | None,
    tags: Iterable[str] | None = None,
    key: str = "",
) -> None:
    """Raise WriteDenied unless `principal` may write `existing` (None: a new document)
    with ACL `tags` (None: keep the document's current tags)."""
    if principal is None or principal.superuser:
        return
    if not principal.can_write:
        raise WriteDenied(
            "this API key may not change documents: upload, delete, reindex or sync "
            "(can_write in RAGLINE_API__KEYS)"
        )
    visible = existing is not None and principal.can_see(existing.acl_tags)
    # Checked first and without looking at a hidden document, so this message is the
    # same whether or not a document the caller cannot see holds the key.
    allowed = principal.access_tokens | (existing.acl_tags if visible and existing else set())
    foreign = sorted(set(tags or ()) - allowed)
    if foreign:
        raise WriteDenied(f"you may only restrict a document to tags you hold; not: {foreign}")
    if existing is not None and not visible:
        raise WriteDenied(
            f"you may not write to {key or 'this document'}: the key belongs to a document "
            "you have no access to"
        )


@dataclass(frozen=True, slots=True)
class UploadTarget:
    """The document an upload writes: an existing one the caller may see, or a new id."""

    doc_id: str
    existing: Document | None


def upload_target(
    principal: Principal | None,
    source: str,
    at_key: Sequence[Document],
    own_id: str,
    own_taken: bool,
) -> UploadTarget:
    """Which document an upload of `source` by `principal` writes.

    `at_key` are the live documents with that source; `own_id` is the id this writer's
    own document there has or gets (`core.ids.scoped_doc_id`), `own_taken` whether any
    document (live or deleted) already holds that id. Only documents the caller may see
    are considered: its own first, then the key's original (`doc_id_for(source)`), then
    the others by id. Seeing none, an operator or superuser creates the original id, any
    other writer its own id; should a document it cannot see hold even that (restricted
    away from it since), a random id, which is as unguessable as `own_id`."""
    visible = [d for d in at_key if principal is None or principal.can_see(d.acl_tags)]
    original = doc_id_for(source)
    rank = {own_id: 0, original: 1}
    if visible:
        best = min(visible, key=lambda d: (rank.get(d.doc_id, 2), d.doc_id))
        return UploadTarget(best.doc_id, best)
    if principal is None or principal.superuser:
        return UploadTarget(original, None)
    if own_taken:
        return UploadTarget(secrets.token_hex(8), None)
    return UploadTarget(own_id, None)


def original_denial(
    principal: Principal, doc: Document, readers: bool, roles: Iterable[str]
) -> str | None:
    """Why `principal` (who sees `doc`) may not have a version's original, unmasked bytes;
    None when it may: `readers` opens them to everyone who sees the document, otherwise
    they are for superusers, the `roles`, and those who may write the document."""
    if readers or principal.superuser or principal.roles & set(roles):
        return None
    try:
        authorize_write(principal, doc, None, doc.doc_id)
    except WriteDenied:
        return (
            "the original file is not PII-masked: it is served to keys that may write "
            "this document and to admins (RAGLINE_ORIGINALS__READERS, __ROLES); "
            f"read its indexed, masked text at /v1/documents/{doc.doc_id}/view"
        )
    return None


def principal_to_dict(principal: Principal | None) -> dict[str, Any] | None:
    """JSON for a task message: the worker re-checks the write with the same principal."""
    if principal is None:
        return None
    return {
        "user": principal.user,
        "roles": sorted(principal.roles),
        "tags": sorted(principal.tags),
        "superuser": principal.superuser,
        "can_write": principal.can_write,
    }


def principal_from_dict(data: dict[str, Any] | None) -> Principal | None:
    if data is None:
        return None
    return Principal(
        user=str(data.get("user", "anonymous")),
        roles=frozenset(data.get("roles", ())),
        tags=frozenset(data.get("tags", ())),
        superuser=bool(data.get("superuser", False)),
        can_write=bool(data.get("can_write", False)),
    )
