"""What the gateway needs from each connector kind. One module per backend implements
these (`sql_rows`, `http_status`, `memory`); the gateway holds the rules every source
shares (permissions, timeouts, breakers, freshness, audit, traces)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from core.blocks import RowSet


@dataclass(frozen=True, slots=True)
class RowsFetch:
    rows: RowSet
    duration_ms: float
    sql: str


@dataclass(frozen=True, slots=True)
class StatusFetch:
    fields: dict[str, Any]
    url: str  # as requested, without credentials
    fetched_at: datetime
    from_cache: bool
    attempts: int


class RowsConnector(Protocol):
    """Runs declared templates on one database, read-only."""

    source_id: str

    def run(self, template: str, params: Mapping[str, Any], timeout_s: float) -> RowsFetch: ...

    def updated_at(self) -> datetime | None:
        """When the data last changed, if the source declares how to ask; None = unknown."""
        ...

    def close(self) -> None: ...


class StatusConnector(Protocol):
    """Fetches one live status record over HTTP."""

    source_id: str

    def check(self, params: Mapping[str, Any]) -> dict[str, str]:
        """The parameters as the source accepts them; raises InvalidParameter otherwise."""
        ...

    def fetch(self, params: Mapping[str, str], max_age_s: float) -> StatusFetch: ...

    def cached(self, params: Mapping[str, str]) -> StatusFetch | None:
        """The last good result for these parameters, however old."""
        ...

    def close(self) -> None: ...


class SourceFailed(Exception):
    """A connector could not answer (timeout, refused, server error): the source is
    unavailable for this request and counts against its breaker."""
