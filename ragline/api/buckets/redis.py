"""Token buckets in Redis, shared by every API replica and process: one script call per
take, which reads, refills and writes the bucket atomically on the server by the server's
clock (replicas' clocks need not agree). A bucket expires once it would be full again."""

from __future__ import annotations

import threading
from typing import Any

import redis

from ragline.api.buckets import BucketsUnavailable

# The same arithmetic as `refill_and_take`; a number goes back as a string (Redis would cut
# a Lua number to an integer reply).
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens, stamp = tonumber(state[1]), tonumber(state[2])
if tokens == nil or stamp == nil then tokens, stamp = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens),
           'stamp', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return string.format('%.17g', wait)
"""
_PREFIX = "ragline:rate:"
# A request never waits long on the limiter: past this the caller falls back to its own
# process's bucket.
_TIMEOUT_S = 0.5


class RedisBuckets:
    def __init__(self, url: str) -> None:
        self._url = url
        self._lock = threading.Lock()
        self._client: Any = None
        self._script: Any = None

    def take(self, bucket: str, rate: float, burst: float) -> float:
        try:
            with self._lock:
                if self._script is None:
                    self._client = redis.Redis.from_url(
                        self._url, socket_connect_timeout=_TIMEOUT_S, socket_timeout=_TIMEOUT_S
                    )
                    self._script = self._client.register_script(_TAKE)
                script = self._script
            return float(script(keys=[_PREFIX + bucket], args=[repr(rate), repr(burst)]))
        except (redis.RedisError, OSError) as exc:
            raise BucketsUnavailable(f"rate-limit Redis: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
            self._client = self._script = None
