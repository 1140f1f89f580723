"""Suite-wide defaults, and the real Redis that Redis tests share."""

from __future__ import annotations

import os

import pytest

# An API app loads its models before serving (RAGLINE_API__WARM_UP, seconds per app); the
# tests start hundreds of apps and load what they need on first use instead.
os.environ.setdefault("RAGLINE_API__WARM_UP", "false")
# ... and each would freeze the whole test process's heap out of garbage collection.
os.environ.setdefault("RAGLINE_API__GC_FREEZE", "false")


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A real Redis (RAGLINE_TEST_REDIS_URL, from `deploy/local/services up redis`)."""
    url = os.environ.get("RAGLINE_TEST_REDIS_URL", "")
    if not url:
        pytest.skip(
            "RAGLINE_TEST_REDIS_URL is not set: run `deploy/local/services up redis` and "
            'eval "$(deploy/local/env.sh)"'
        )
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis at {url} is unreachable ({exc}): deploy/local/services up redis")
    return url
