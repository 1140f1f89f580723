""" "A version became searchable" events, from whoever indexes to whoever caches.

Two adapters of one port: `LocalEventBus` (callbacks in this process: the embedded
default, where the API runs tasks itself) and `RedisEventBus` (Redis pub/sub: workers
publish, every API process subscribes). Subscribers drop caches and reload the dense
index, so no answer is served from state that predates an upload.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from core.settings import Settings

log = logging.getLogger(__name__)

EventKind = Literal["indexed", "deleted", "resync"]


@dataclass(frozen=True, slots=True)
class IndexEvent:
    """`resync` means "anything may have changed" (a repair, or a subscriber that was
    disconnected and may have missed events)."""

    kind: EventKind
    doc_id: str = ""
    version: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: str | bytes) -> IndexEvent:
        data: dict[str, Any] = json.loads(raw)
        return cls(data.get("kind", "resync"), data.get("doc_id", ""), data.get("version", ""))


Listener = Callable[[IndexEvent], None]


class EventBus(Protocol):
    def publish(self, event: IndexEvent) -> None: ...

    def subscribe(self, listener: Listener) -> None: ...

    def close(self) -> None: ...


def _notify(listeners: list[Listener], event: IndexEvent) -> None:
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # one broken listener must not starve the others
            log.exception("event listener failed on %s", event)


class LocalEventBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def publish(self, event: IndexEvent) -> None:
        with self._lock:
            listeners = list(self._listeners)
        _notify(listeners, event)

    def subscribe(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def close(self) -> None:
        with self._lock:
            self._listeners.clear()


class RedisEventBus:
    """Publishes on one channel; `subscribe` starts a single listener thread on first use.
    After a lost connection it reconnects and delivers a `resync`, since pub/sub does not
    replay what was published meanwhile."""

    def __init__(self, url: str, channel: str) -> None:
        import redis

        self._redis = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        self._channel = channel
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.subscribed = threading.Event()  # set once SUBSCRIBE is confirmed

    def publish(self, event: IndexEvent) -> None:
        self._redis.publish(self._channel, event.to_json())

    def subscribe(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._listen, name="ragline-events", daemon=True
                )
                self._thread.start()

    def _listen(self) -> None:
        import redis

        first = True
        while not self._stop.is_set():
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self._channel)
                if not first:
                    self._deliver(IndexEvent("resync"))
                first = False
                while not self._stop.is_set():
                    if pubsub.connection is not None and not self.subscribed.is_set():
                        self.subscribed.set()
                    message = pubsub.get_message(timeout=0.5)
                    if message and message.get("type") == "message":
                        self._deliver(IndexEvent.from_json(message["data"]))
            except (redis.RedisError, OSError) as exc:
                self.subscribed.clear()
                log.warning("event subscription lost (%s); reconnecting", exc)
                self._stop.wait(1.0)
            finally:
                pubsub.close()

    def _deliver(self, event: IndexEvent) -> None:
        with self._lock:
            listeners = list(self._listeners)
        _notify(listeners, event)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=3)
        self._redis.close()


def events_url(settings: Settings) -> str:
    return settings.worker.events_url or settings.worker.broker_url


def make_event_bus(settings: Settings, channel: str) -> EventBus:
    url = events_url(settings)
    return RedisEventBus(url, channel) if url else LocalEventBus()
