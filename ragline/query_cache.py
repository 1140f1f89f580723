"""A small TTL cache of query results, dropped whole whenever the index changes.

Keyed by principal + endpoint + question + options, so one caller never gets another's
answer. A generation counter closes the race with an index change: a result computed
while an "indexed" event arrived is not stored, so nothing older than the event survives.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Any

from core.types import Principal


def cache_key(principal: Principal, endpoint: str, question: str, options: dict[str, Any]) -> str:
    raw = json.dumps(
        {
            "user": principal.user,
            "roles": sorted(principal.roles),
            "tags": sorted(principal.tags),
            # Templates bind these (region, department): they change which rows come back.
            "attributes": sorted(principal.attributes),
            "endpoint": endpoint,
            "question": question,
            "options": options,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class QueryCache:
    def __init__(self, ttl_s: float = 60.0, max_entries: int = 1024) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._items: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()
        self._generation = 0
        self.hits = 0
        self.misses = 0

    @property
    def generation(self) -> int:
        return self._generation

    def get(self, key: str) -> dict[str, Any] | None:
        if self._ttl <= 0:
            return None
        now = time.monotonic()
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0] < now:
                self._items.pop(key, None)
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[1]

    def put(self, key: str, value: dict[str, Any], generation: int) -> bool:
        """Store unless the index changed since `generation` was read (then False)."""
        if self._ttl <= 0:
            return False
        with self._lock:
            if generation != self._generation:
                return False
            self._items[key] = (time.monotonic() + self._ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)
            return True

    def invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
