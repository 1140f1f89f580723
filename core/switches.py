"""Operational switches: small on/off state objects that an automatic action flips and the
query path reads (degrade routing to the fast path, pause LLM generation). One instance per
application, never module-level; thread-safe, because the alert scheduler flips them from
its own thread while requests read them."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


@dataclass
class Switch:
    name: str
    _on: bool = False
    _reason: str = ""
    _since: datetime | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def on(self) -> bool:
        return self._on

    @property
    def reason(self) -> str:
        return self._reason

    def turn_on(self, reason: str) -> bool:
        """True when this call changed it."""
        with self._lock:
            changed = not self._on
            self._on, self._reason = True, reason
            if changed:
                self._since = datetime.now(UTC)
            return changed

    def turn_off(self) -> bool:
        with self._lock:
            changed = self._on
            self._on, self._reason, self._since = False, "", None
            return changed

    def view(self) -> dict[str, Any]:
        with self._lock:
            return {
                "name": self.name,
                "on": self._on,
                "reason": self._reason,
                "since": self._since.isoformat() if self._since else None,
            }
