"""API keys to principals. The principal comes from the key alone: no request field can
widen what a caller sees."""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import Headers

from core.settings import ApiKey
from core.types import Principal
from ragline.api.backpressure import RateLimiter, retry_after
from ragline.api.buckets import BucketStore, bucket_name
from ragline.api.errors import ApiError

if TYPE_CHECKING:
    from ragline.api.context import ApiContext

ADMITTED = "principal"  # the request state's key for a caller `KeyGate` admitted

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
_header = APIKeyHeader(name="X-API-Key", auto_error=False)


class KeyRing:
    """The configured keys, their principals and their rate limits. The limits' buckets
    live in `buckets` (`ragline.api.buckets.bucket_store`: shared by every process that
    serves the keys); none = this process's memory."""

    def __init__(
        self,
        keys: Iterable[ApiKey],
        default_rate_per_s: float = 0.0,
        buckets: BucketStore | None = None,
    ) -> None:
        keys = [k for k in keys if k.key]
        self._limits = [
            (bucket_name(k.key), k.rate_per_s or default_rate_per_s, k.burst) for k in keys
        ]
        self._limiter = RateLimiter(buckets)
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
        ]

    def __len__(self) -> int:
        return len(self._keys)

    def close(self) -> None:
        self._limiter.close()

    def principal(self, presented: str) -> Principal | None:
        found = self._find(presented)
        return None if found is None else self._keys[found][1]

    def _find(self, presented: str) -> int | None:
        given = presented.encode("utf-8")
        found = None
        for i, (key, _principal) in enumerate(self._keys):
            # Constant-time, and every key compared: timing says nothing about which matched.
            if hmac.compare_digest(key, given):
                found = i
        return found

    def admit(self, presented: str) -> Principal | None:
        """The key's principal if the key is known and within its rate limit; raises 429
        with Retry-After when the key is over its limit."""
        found = self._find(presented)
        if found is None:
            return None
        bucket, rate, burst = self._limits[found]
        wait = self._limiter.wait_s(bucket, rate, burst)
        if wait > 0:
            raise ApiError(
                429,
                f"rate limit of {rate:g} requests/s for this API key exceeded "
                "(rate_per_s in RAGLINE_API__KEYS, or RAGLINE_API__RATE_PER_S)",
                None,
                {"Retry-After": retry_after(wait)},
            )
        return self._keys[found][1]


def presented_key(headers: Headers) -> str:
    """The key a request carries: `Authorization: Bearer <key>`, else `X-API-Key`."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return headers.get("x-api-key", "")


def admit(ctx: ApiContext, presented: str) -> Principal:
    """The caller of a request carrying `presented` (empty: none): raises 401 for a
    missing or unknown key, 429 with Retry-After for one over its rate limit."""
    ring = ctx.keys
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
    try:
        principal = ring.admit(presented)
    except ApiError as exc:
        if exc.status == 429:
            ctx.rag.metrics.refused.labels(reason="rate_limit").inc()
        raise
    if principal is None:
        raise ApiError(401, "invalid API key", None, challenge)
    return principal


async def authenticate(
    request: Request,
    # The two schemes, declared for the OpenAPI document; the key is read by
    # `presented_key`, the one rule `KeyGate` applies too.
    _bearer_scheme: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    _key_scheme: Annotated[str | None, Depends(_header)],
) -> Principal:
    # A request with a body was admitted before its body was read (`KeyGate`): its rate
    # limit is not charged twice.
    admitted: Principal | None = getattr(request.state, ADMITTED, None)
    if admitted is not None:
        return admitted
    return admit(request.app.state.ctx, presented_key(request.headers))


# The authenticated caller, as a handler parameter type. `authenticate` is a coroutine
# although it never awaits: FastAPI runs a plain-function dependency in a worker thread,
# a hand-over per request that cost more than the key check itself.
Caller = Annotated[Principal, Depends(authenticate)]
