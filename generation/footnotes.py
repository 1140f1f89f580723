"""Footnotes of a quoted passage: a value or a header marked "60 days end of month*",
"Ancienneté(1)", "认定起点注1", "Zuschlag²" means what its note says ("* End of month means
the 60 days are counted from ..."), and a quote without the note misleads. The note is a
line of its own that starts with the same mark, in the same document.

Marks read: asterisks, daggers, a number in brackets or parentheses, superscript or circled
digits written onto a word, and 注/Note/Nota with a number. A plain digit after a word is
not one ("day2" may be a typing slip, "A4" a name).
"""

from __future__ import annotations

import re

_SUPERSCRIPT = str.maketrans("¹²³⁴⁵⁶⁷⁸⁹⁰", "1234567890")
_CIRCLED = {chr(0x2460 + i): str(i + 1) for i in range(20)}  # ① .. ⑳

# A mark written onto the word or number before it.
_MARK = re.compile(
    r"(?<=[^\s(\[|])(?:(\*{1,3}|†|‡)|\((\d{1,2})\)|\[(\d{1,2})\]|([¹²³⁴⁵⁶⁷⁸⁹]{1,2})|"
    r"([①-⑳])|\s?注\s?(\d{1,2}))"
)
# A note: a line opening with its mark ("* ...", "(1) ...", "① ...", "注1：...",
# "Note 2: ...", "¹ ...").
_NOTE = re.compile(
    r"^\s*(?:(notes?|nota|anmerkung|hinweis|注)\s*)?(?:(\*{1,3}|†|‡)|\((\d{1,2})\)|"
    r"\[(\d{1,2})\]|([¹²³⁴⁵⁶⁷⁸⁹]{1,2})|([①-⑳])|(\d{1,2})(?=\s*[:：.)]))\s*[:：.)]?\s*\S",
    re.IGNORECASE,
)


def _key(groups: tuple[str | None, ...]) -> str:
    for g in groups:
        if g:
            return _CIRCLED.get(g, g.translate(_SUPERSCRIPT))
    return ""


def marks(text: str) -> list[str]:
    """The marks written onto words of `text`, each once, in order ("*", "1")."""
    return list(dict.fromkeys(_key(m.groups()) for m in _MARK.finditer(text)))


def note_mark(text: str) -> str:
    """The mark a note line opens with, or "" for any other line."""
    m = _NOTE.match(text)
    if m is None or (m.group(7) and not m.group(1)):
        return ""  # "1. Introduction", "2) the next step": numbered lines, not notes
    return _key(m.groups()[1:])


# A mark at the end of a value ("TBD²", "da definire (2)", "待定*"), and the characters
# such a mark ends with (most values end otherwise: the pattern is not run on them).
_TRAILING = re.compile(r"\s*(?:[¹²³⁴⁵⁶⁷⁸⁹]+|\*{1,3}|†|‡|\(\d{1,2}\)|\[\d{1,2}\]|[①-⑳])$")
_TRAILING_ENDS = frozenset("¹²³⁴⁵⁶⁷⁸⁹*†‡)]") | frozenset(_CIRCLED)


def strip_mark(value: str) -> str:
    """The value without a footnote mark written after it; a value that is a mark alone
    ("(1)", "*") stays as it is."""
    if not value or value[-1] not in _TRAILING_ENDS:
        return value
    return _TRAILING.sub("", value) or value
