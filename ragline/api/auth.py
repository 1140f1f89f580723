"""API keys to principals. The principal comes from the key alone: no request field can
widen what a caller sees."""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from core.settings import ApiKey
from core.types import Principal
from ragline.api.errors import ApiError

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
_header = APIKeyHeader(name="X-API-Key", auto_error=False)


class KeyRing:
    def __init__(self, keys: Iterable[ApiKey]) -> None:
        self._keys = [
            (
                k.key.encode("utf-8"),
                Principal(
                    user=k.user,
                    roles=frozenset(k.roles),
                    tags=frozenset(k.tags),
                    can_write=k.can_write,
                    attributes=tuple(sorted(k.attributes.items())),
                ),
            )
            for k in keys
            if k.key
        ]

    def __len__(self) -> int:
        return len(self._keys)

    def principal(self, presented: str) -> Principal | None:
        given = presented.encode("utf-8")
        found = None
        for key, principal in self._keys:
            # Constant-time, and every key compared: timing says nothing about which matched.
            if hmac.compare_digest(key, given):
                found = principal
        return found


def authenticate(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_header)],
) -> Principal:
    ring: KeyRing = request.app.state.ctx.keys
    presented = bearer.credentials if bearer else api_key
    challenge = {"WWW-Authenticate": "Bearer"}
    if not presented:
        raise ApiError(
            401,
            "missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key'",
            None,
            challenge,
        )
    if not len(ring):
        raise ApiError(
            401, "no API keys are configured on this server (RAGLINE_API__KEYS)", None, challenge
        )
    principal = ring.principal(presented)
    if principal is None:
        raise ApiError(401, "invalid API key", None, challenge)
    return principal


def require_writer(principal: Principal, tags: Iterable[str] = ()) -> None:
    """Writes need a key allowed to write, and a writer may only restrict a document to
    tags it holds itself: otherwise it could hide documents from their owners' group or
    plant content under a tag it cannot read."""
    if not (principal.can_write or principal.superuser):
        raise ApiError(
            403, "this API key may not upload or delete documents (can_write in RAGLINE_API__KEYS)"
        )
    foreign = sorted(set(tags) - principal.access_tokens)
    if foreign and not principal.superuser:
        raise ApiError(403, f"you may only restrict a document to tags you hold; not: {foreign}")


# The authenticated caller, as a handler parameter type.
Caller = Annotated[Principal, Depends(authenticate)]
