"""Which language a question is in, and the fixed "not covered" sentence for it.

Only two languages matter for now (Chinese and English); anything with Han characters is
answered in Chinese, everything else in English.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

from core.text import has_han

Lang = Literal["zh", "en"]

# Read-only on purpose: a shared default must not be mutable module state.
DEFAULT_NOT_COVERED: Mapping[Lang, str] = MappingProxyType(
    {
        "zh": "资料中没有找到能回答这个问题的内容。",
        "en": "The indexed material does not cover this question.",
    }
)


def language_of(text: str) -> Lang:
    return "zh" if has_han(text) else "en"
