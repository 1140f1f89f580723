"""The per-key bucket stores, one contract for every backend: a bucket starts full, refills
at its rate, is shared by every store instance over the same backing (the processes and
replicas of a deployment) and is never shared between keys. A store that cannot be reached
says so, and the limiter falls back to the process's own bucket."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.settings import ApiKey, ApiSettings, Settings, WorkerSettings
from ragline.api import create_app
from ragline.api.backpressure import RateLimiter
from ragline.api.buckets import BucketStore, BucketsUnavailable, bucket_name, bucket_store
from ragline.api.buckets.process import ProcessBuckets
from ragline.api.buckets.redis import RedisBuckets
from ragline.api.buckets.sqlite import SqliteBuckets

Opener = Callable[[], BucketStore]


@pytest.fixture(params=["sqlite", "redis"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens another store over one backing, as another process would."""
    opened: list[BucketStore] = []

    def open_one() -> BucketStore:
        if request.param == "sqlite":
            store: BucketStore = SqliteBuckets(tmp_path / "rate_limits.db")
        else:
            store = RedisBuckets(request.getfixturevalue("redis_url"))
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


def _bucket() -> str:
    return bucket_name(f"test-key-{uuid.uuid4()}")  # Redis is shared by the whole suite


def test_a_new_bucket_is_full_then_waits_for_its_rate(opener: Opener) -> None:
    store, bucket = opener(), _bucket()
    assert [store.take(bucket, rate=2.0, burst=3.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = store.take(bucket, rate=2.0, burst=3.0)
    assert 0.4 < wait <= 0.5  # half a second a token, less what has refilled since


def test_a_bucket_refills_at_its_rate_up_to_its_burst(opener: Opener) -> None:
    store, bucket = opener(), _bucket()
    assert store.take(bucket, rate=20.0, burst=1.0) == 0.0
    assert store.take(bucket, rate=20.0, burst=1.0) > 0
    time.sleep(0.3)  # six tokens' worth, but the bucket holds one
    assert store.take(bucket, rate=20.0, burst=1.0) == 0.0
    assert store.take(bucket, rate=20.0, burst=1.0) > 0


def test_stores_over_one_backing_share_a_bucket_and_keys_do_not(opener: Opener) -> None:
    first, second = opener(), opener()
    bucket, other = _bucket(), _bucket()
    assert first.take(bucket, rate=0.5, burst=2.0) == 0.0
    assert second.take(bucket, rate=0.5, burst=2.0) == 0.0
    assert first.take(bucket, rate=0.5, burst=2.0) > 1.0  # the other process took the rest
    assert second.take(bucket, rate=0.5, burst=2.0) > 1.0
    assert second.take(other, rate=0.5, burst=2.0) == 0.0


def test_an_unreachable_store_raises_buckets_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(BucketsUnavailable, match="rate-limit file"):
        SqliteBuckets(blocker / "rate_limits.db").take("b", 1.0, 1.0)
    with pytest.raises(BucketsUnavailable, match="rate-limit Redis"):
        RedisBuckets("redis://127.0.0.1:9/0").take("b", 1.0, 1.0)  # discard port: refused


def test_the_limiter_limits_per_process_while_the_store_is_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    limiter = RateLimiter(RedisBuckets("redis://127.0.0.1:9/0"), clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="ragline.api"):
        waits = [limiter.wait_s("k", rate=1.0, burst=2) for _ in range(3)]
        now[0] += 30
        limiter.wait_s("k", rate=1.0, burst=2)
    assert waits[:2] == [0.0, 0.0] and waits[2] > 0  # still limited, by this process
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "per process" in warnings[0], warnings  # once a minute


class _FlakyStore:
    """A shared store that fails while `down`, counting the takes it was asked for."""

    def __init__(self) -> None:
        self.down = True
        self.asked = 0

    def take(self, bucket: str, rate: float, burst: float) -> float:
        self.asked += 1
        if self.down:
            raise BucketsUnavailable("rate-limit Redis: timed out")
        return 0.0

    def close(self) -> None:
        pass


def test_a_failed_store_is_left_alone_for_a_while_then_tried_again() -> None:
    now = [0.0]
    store = _FlakyStore()
    limiter = RateLimiter(store, clock=lambda: now[0])
    for _ in range(5):  # a timing-out store would cost each of these its timeout
        limiter.wait_s("k", rate=100.0, burst=100)
    assert store.asked == 1
    store.down = False
    now[0] += 4.0
    limiter.wait_s("k", rate=100.0, burst=100)
    assert store.asked == 1
    now[0] += 1.5  # past the pause: the store is back in use
    limiter.wait_s("k", rate=100.0, burst=100)
    limiter.wait_s("k", rate=100.0, burst=100)
    assert store.asked == 3


def test_settings_choose_redis_when_one_is_configured_else_a_file(tmp_path: Path) -> None:
    assert isinstance(bucket_store(Settings(data_dir=tmp_path)), SqliteBuckets)
    worker = WorkerSettings(broker_url="redis://broker:6379/0")
    assert isinstance(bucket_store(Settings(data_dir=tmp_path, worker=worker)), RedisBuckets)
    api = ApiSettings(rate_limit_url="redis://limits:6379/1")
    assert isinstance(bucket_store(Settings(data_dir=tmp_path, api=api)), RedisBuckets)
    assert not (tmp_path / "rate_limits.db").exists()  # nothing opened before a take
    assert isinstance(RateLimiter()._store, ProcessBuckets)


def test_two_api_replicas_share_a_keys_limit_through_redis(redis_url: str, tmp_path: Path) -> None:
    key = f"replica-key-{uuid.uuid4()}"
    api = ApiSettings(keys=[ApiKey(key=key, user="sam", rate_per_s=0.01, burst=2)])
    api.rate_limit_url = redis_url
    body = {"question": "anything at all"}
    headers = {"X-API-Key": key}
    with (
        TestClient(create_app(Settings(data_dir=tmp_path / "a", api=api))) as one,
        TestClient(create_app(Settings(data_dir=tmp_path / "b", api=api))) as two,
    ):
        codes = [c.post("/v1/search", headers=headers, json=body).status_code for c in (one, two)]
        over = [c.post("/v1/search", headers=headers, json=body) for c in (one, two)]
    assert codes == [200, 200]
    assert [r.status_code for r in over] == [429, 429]
    assert int(over[0].headers["retry-after"]) >= 1
