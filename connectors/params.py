"""Template parameters: typed, checked against their allowed values, and bound to the
principal's attributes where the template says so. A value that does not fit is refused
with the reason; nothing a caller sends ever becomes SQL text."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from connectors.config import Param, Template
from core.errors import RaglineError
from core.months import ENGLISH_MONTHS
from core.types import Principal


class InvalidParameter(RaglineError):
    """A parameter value was refused; the message says which and why."""


class BindingDenied(RaglineError):
    """The template binds a principal attribute the caller does not have (or has with a
    value the template does not allow)."""


MONTH_IN_TEXT = re.compile(
    r"\b(\d{4})-(\d{1,2})\b|\b("
    + "|".join(sorted(ENGLISH_MONTHS, key=len, reverse=True))
    + r")\.?\s+(?:of\s+)?(\d{4})\b|(\d{4})\s*年\s*(\d{1,2})\s*月",
    re.IGNORECASE,
)


def parse_month(text: str) -> str | None:
    """ "2023-04", "April 2023", "Apr. 2023", "2023年4月" -> "2023-04"; None otherwise."""
    m = MONTH_IN_TEXT.search(text)
    if m is None:
        return None
    if m.group(1):
        year, month = int(m.group(1)), int(m.group(2))
    elif m.group(3):
        year, month = int(m.group(4)), ENGLISH_MONTHS[m.group(3).lower()]
    else:
        year, month = int(m.group(5)), int(m.group(6))
    return f"{year:04d}-{month:02d}" if 1 <= month <= 12 else None


def coerce(name: str, spec: Param, value: Any) -> Any:
    if isinstance(value, str) and len(value) > spec.max_length:
        raise InvalidParameter(f"{name}: longer than {spec.max_length} characters")
    if spec.type == "enum":
        text = str(value).strip()
        text = spec.aliases.get(text.lower(), text)
        match = next((v for v in spec.values if v.lower() == text.lower()), None)
        if match is None:
            raise InvalidParameter(f"{name}: {value!r} is not one of {spec.values}")
        return match
    if spec.type == "month":
        given = str(value).strip()
        month = parse_month(given) if MONTH_IN_TEXT.fullmatch(given) else None
        if month is None:
            raise InvalidParameter(f"{name}: expected a month like 2023-04, got {value!r}")
        return month
    if spec.type in ("int", "float"):
        if isinstance(value, bool):
            raise InvalidParameter(f"{name}: expected a number, got {value!r}")
        number = _number(value, spec.type == "int")
        if number is None:
            raise InvalidParameter(f"{name}: expected {spec.type}, got {str(value)[:80]!r}")
        if spec.min is not None and number < spec.min:
            raise InvalidParameter(f"{name}: {number} is below the minimum {spec.min:g}")
        if spec.max is not None and number > spec.max:
            raise InvalidParameter(f"{name}: {number} is above the maximum {spec.max:g}")
        return number
    if spec.type == "date":
        try:
            return date.fromisoformat(str(value).strip()).isoformat()
        except ValueError:
            raise InvalidParameter(f"{name}: expected a date YYYY-MM-DD, got {value!r}") from None
    text = str(value)
    if spec.pattern and not re.fullmatch(spec.pattern, text):
        raise InvalidParameter(f"{name}: {value!r} does not match {spec.pattern}")
    if spec.values and text not in spec.values:
        raise InvalidParameter(f"{name}: {value!r} is not one of {spec.values}")
    return text


def resolve(template: Template, given: Mapping[str, Any], principal: Principal) -> dict[str, Any]:
    """The values the template runs with: bound ones from the principal, the rest from
    `given` (checked), defaults for optional ones. Unknown names are refused."""
    unknown = sorted(set(given) - set(template.params))
    if unknown:
        raise InvalidParameter(
            f"unknown parameter(s) {unknown} for template {template.name}; "
            f"it takes {sorted(template.params)}"
        )
    values: dict[str, Any] = {}
    for name, spec in template.params.items():
        if spec.bind:
            bound = principal.attribute(spec.bind)
            everything = principal.superuser or bool(principal.roles & set(spec.unbound_roles))
            if bound is None and not everything:
                raise BindingDenied(
                    f"template {template.name} shows only the caller's own {spec.bind}, "
                    f"and this key has no {spec.bind} attribute"
                )
            if bound is not None:
                # The caller's attribute wins over anything asked for. One the template does
                # not allow is the key's configuration at fault, not the request: refused
                # (no rows of any value), and said to be the key's.
                try:
                    values[name] = coerce(name, spec, bound)
                except InvalidParameter as e:
                    raise BindingDenied(
                        f"this key's {spec.bind} attribute does not fit template "
                        f"{template.name} ({e}); the key's configuration needs fixing"
                    ) from None
                continue
        if name in given and given[name] not in (None, ""):
            values[name] = coerce(name, spec, given[name])
        elif spec.default is not None:
            values[name] = coerce(name, spec, spec.default)
        elif spec.required:
            raise InvalidParameter(f"{name}: required by template {template.name}")
        else:
            values[name] = None
    return values


_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(value: Any, integer: bool) -> int | float | None:
    """A finite number as given: ASCII digits (thousands commas allowed) or a JSON number;
    an int parameter takes no fraction (2.9 is not 2). None when it is not one."""
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if not (_INT_TEXT if integer else _FLOAT_TEXT).fullmatch(text):
            return None
        try:
            value = int(text) if integer else float(text)
        except ValueError:  # more digits than Python converts
            return None
    if isinstance(value, float):
        if not math.isfinite(value) or (integer and not value.is_integer()):
            return None
        return int(value) if integer else value
    if isinstance(value, int):
        return value if integer else float(value)
    return None
