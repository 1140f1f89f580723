"""Who may change which document: the one write rule every entry point applies (API
uploads and deletes, worker tasks, the CLI acting for an API key).

A principal may replace, re-tag or delete an existing document only when it may write
(`can_write`) *and* see that document under its current ACL. It may restrict a document
only to tags it holds itself, or that the document already carries (so a member of one of
its groups can keep a shared document shared). `None` as the principal is the operator
(the CLI without a key, repairs, folder syncs): the configuration is its authority.

The refusal for a document the caller cannot see never depends on that document's
content, version, ACL or state, and is checked before any byte is compared or staged:
uploads are no content oracle. It does say that the key is taken; see README
("Permissions") for why a shared key namespace cannot hide that.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.errors import RaglineError
from core.types import Document, Principal


class WriteDenied(RaglineError):
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
            "this API key may not upload or delete documents (can_write in RAGLINE_API__KEYS)"
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
