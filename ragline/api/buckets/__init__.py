"""Per-key token buckets, shared by every process that serves the keys.

`ragline serve` runs one process per core, a deployment may run several API replicas and a
gRPC server beside them: a key allowed 5 requests a second must get 5 in all, not 5 from
each process. A bucket's state (tokens, when they were counted) therefore lives in a store
every process reaches; the settings choose it (`bucket_store`):

- Redis (`ragline.api.buckets.redis`), shared by every replica: `RAGLINE_API__RATE_LIMIT_URL`,
  else the worker's Redis (`RAGLINE_WORKER__EVENTS_URL` / `BROKER_URL`) in production;
- a SQLite file under the data directory (`ragline.api.buckets.sqlite`), shared by the
  processes of one host, when there is no Redis (the embedded default);
- process memory (`ragline.api.buckets.process`): what a process falls back to while its
  shared store cannot be reached, so a key is still limited, per process.

Buckets are named by a digest of the key, never by the key itself.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from core.settings import Settings


class BucketsUnavailable(Exception):
    """The shared store did not answer; the message says which and why."""


class BucketStore(Protocol):
    def take(self, bucket: str, rate: float, burst: float) -> float:
        """Take one token from `bucket` (refilled at `rate` tokens a second, at most
        `burst` saved up, full when first used): 0.0 when there was one, else the seconds
        until there will be. Raises BucketsUnavailable when the store cannot be reached."""
        ...

    def close(self) -> None: ...


def refill_and_take(
    tokens: float, stamp: float, now: float, rate: float, burst: float
) -> tuple[float, float]:
    """(tokens left, seconds to wait) for a bucket last counted at `stamp` holding
    `tokens`. A clock that went back (another host, a reboot) refills nothing."""
    tokens = min(burst, tokens + max(0.0, now - stamp) * rate)
    if tokens >= 1.0:
        return tokens - 1.0, 0.0
    return tokens, (1.0 - tokens) / rate


def bucket_name(key: str) -> str:
    """A key's bucket: a digest, so the store never holds a usable key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def shared_url(settings: Settings) -> str:
    """The Redis URL the buckets live in; empty = none configured."""
    return settings.api.rate_limit_url or settings.worker.events_url or settings.worker.broker_url


def bucket_store(settings: Settings) -> BucketStore:
    """The store the settings choose: Redis when one is configured, else a SQLite file in
    the data directory. Neither connects before its first `take`, so a deployment whose
    keys have no rate limit never touches it."""
    url = shared_url(settings)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from ragline.api.buckets.redis import RedisBuckets

        return RedisBuckets(url)
    from ragline.api.buckets.sqlite import SqliteBuckets

    return SqliteBuckets(Path(settings.data_dir) / "rate_limits.db")
