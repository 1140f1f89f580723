"""The JSONPath subset field mappings use: `$.a.b`, `$.items[0].state`, `$["odd key"]`."""

from __future__ import annotations

import re
from typing import Any

_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[\"([^\"]+)\"\]|\['([^']+)'\]")
_MISSING = object()


def compile_path(path: str) -> tuple[str | int, ...]:
    if not path.startswith("$"):
        raise ValueError(f"JSONPath must start with '$': {path!r}")
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            raise ValueError(f"unsupported JSONPath at {path[pos:]!r} in {path!r}")
        name, index, dq, sq = m.groups()
        steps.append(int(index) if index is not None else (name or dq or sq))
        pos = m.end()
    return tuple(steps)


def extract(document: Any, steps: tuple[str | int, ...]) -> Any:
    """The value at `steps`, or None when the path is absent."""
    node = document
    for step in steps:
        if isinstance(step, int):
            fits = isinstance(node, list) and -len(node) <= step < len(node)
            node = node[step] if fits else _MISSING
        else:
            node = node.get(step, _MISSING) if isinstance(node, dict) else _MISSING
        if node is _MISSING:
            return None
    return node
