"""Moments as the stores keep them: naive UTC (`DateTime` columns without a zone)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload


@overload
def naive_utc(at: datetime) -> datetime: ...


@overload
def naive_utc(at: datetime | None) -> datetime | None: ...


def naive_utc(at: datetime | None) -> datetime | None:
    """An aware moment turned into naive UTC, before it is stored or compared with the
    stores' timestamps; a naive one is taken as UTC already, and None stays None (an open
    bound)."""
    if at is None or at.tzinfo is None:
        return at
    return at.astimezone(UTC).replace(tzinfo=None)
