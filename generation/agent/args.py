"""Tolerant parsing of a tool call's arguments: models send broken JSON, YAML-ish
key/value lists, or just the query text. Each step is tried in turn, and the step that
worked is reported so the trace shows how much was guessed; nothing ever raises."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

ParseMode = Literal["strict", "repaired", "key_value", "raw", "empty"]

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_UNQUOTED_KEY = re.compile(r"([{,]\s*)([A-Za-z_][\w-]*)(\s*:)")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_KEY_VALUE = re.compile(
    r"""(?P<key>[A-Za-z_][\w-]*)\s*[:=]\s*
        (?:"(?P<dq>(?:[^"\\]|\\.)*)"|'(?P<sq>(?:[^'\\]|\\.)*)'|(?P<bare>[^,;\n}]+))""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class ParsedArgs:
    values: dict[str, Any]
    mode: ParseMode
    raw: str


def _as_object(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _strict(text: str) -> dict[str, Any] | None:
    try:
        return _as_object(json.loads(text))
    except (ValueError, TypeError):
        return None


def _balance(text: str) -> str:
    """Close the brackets and string a truncated JSON object left open."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack and stack[-1] == ch:
            stack.pop()
    return text + ('"' if in_string else "") + "".join(reversed(stack))


def _repaired(text: str) -> dict[str, Any] | None:
    fixed = text.strip()
    if m := _FENCE.match(fixed):
        fixed = m.group(1)
    start = fixed.find("{")
    if start < 0:
        return None
    fixed = fixed[start:]
    # Python-style literals and single quotes are the commonest slips.
    if '"' not in fixed:
        fixed = fixed.replace("'", '"')
    fixed = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", fixed))
    fixed = re.sub(r"\bNone\b", "null", fixed)
    fixed = _UNQUOTED_KEY.sub(r'\1"\2"\3', fixed)
    fixed = _TRAILING_COMMA.sub(r"\1", _balance(fixed))
    fixed = _TRAILING_COMMA.sub(r"\1", fixed)
    for candidate in (fixed, fixed[: fixed.rfind("}") + 1]):
        if (obj := _strict(candidate)) is not None:
            return obj
    return None


def _scalar(text: str) -> Any:
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d*", text):
        return float(text)
    return text


def _key_values(text: str, known: frozenset[str]) -> dict[str, Any] | None:
    found: dict[str, Any] = {}
    for m in _KEY_VALUE.finditer(text):
        key = m.group("key")
        if known and key not in known:
            continue
        value = m.group("dq") if m.group("dq") is not None else m.group("sq")
        found[key] = value if value is not None else _scalar(m.group("bare"))
    return found or None


def parse_arguments(
    raw: str | dict[str, Any] | None, primary: str, known: frozenset[str] = frozenset()
) -> ParsedArgs:
    """`raw` as the model sent it; `primary` is the parameter a bare string stands for
    (the query); `known` are the tool's parameter names (key/value extraction only
    accepts those, so prose is not mistaken for arguments)."""
    if isinstance(raw, dict):  # some servers send an object instead of a JSON string
        return ParsedArgs(dict(raw), "strict", json.dumps(raw, ensure_ascii=False))
    text = (raw or "").strip()
    if not text or text in ("{}", "null"):
        return ParsedArgs({}, "empty", raw or "")
    if (obj := _strict(text)) is not None:
        return ParsedArgs(obj, "strict", text)
    if (obj := _repaired(text)) is not None:
        return ParsedArgs(obj, "repaired", text)
    if (obj := _key_values(text, known)) is not None:
        return ParsedArgs(obj, "key_value", text)
    bare = text.strip().strip("{}").strip().strip("\"'").strip()
    return ParsedArgs({primary: bare} if bare else {}, "raw" if bare else "empty", text)
