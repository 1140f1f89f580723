"""Principals and a trace helper shared by the gateway tests."""

from __future__ import annotations

import uuid

from connectors.records import Trace
from core.types import Principal

ANALYST = Principal("ann", roles=frozenset({"analyst"}))
SALES_WEST = Principal("wes", roles=frozenset({"sales"}), attributes=(("region", "West"),))
SALES_NONE = Principal("sam", roles=frozenset({"sales"}))  # no region attribute
SUPPORT = Principal("sue", roles=frozenset({"support"}))
NOBODY = Principal("nora", roles=frozenset({"intern"}))


def trace(principal: Principal = ANALYST, op: str = "test") -> Trace:
    return Trace(uuid.uuid4().hex, principal.user, op)
