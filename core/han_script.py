"""Traditional and simplified Chinese as one language to search and to check answers in.

A question written in traditional characters (經理, 內存) and a document in simplified ones
(经理, 内存), or the other way round, share no word. The keyword index and the query are
therefore cut from text folded to simplified characters (`fold_han`), and the answer step
reads the question in the script of the passages it quotes from (`in_script_of`), so that
every comparison it makes sees one script.

The character tables are OpenCC's (TSCharacters, STCharacters; Apache-2.0), as shipped
in the opencc-python-reimplemented package; a character with several forms takes the
first (the common one). Characters written alike in both scripts stay as they are.
Japanese and Korean text (kana or hangul beside the Han characters) is left alone.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.errors import ConfigError
from core.lang import has_hangul, has_kana


@dataclass(frozen=True, slots=True)
class _Tables:
    to_simplified: dict[int, str]
    to_traditional: dict[int, str]
    traditional: frozenset[str]  # characters only the traditional script writes
    simplified: frozenset[str]  # characters only the simplified script writes


def _pairs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        source, _, targets = line.partition("\t")
        first = targets.split(" ")[0] if targets else ""
        if len(source) == 1 and len(first) == 1 and source != first:
            out[source] = first
    return out


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    spec = importlib.util.find_spec("opencc")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the package opencc-python-reimplemented is missing (its character tables fold "
            "traditional and simplified Chinese): run `make setup`"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "dictionary"
    ts = _pairs(folder / "TSCharacters.txt")
    st = _pairs(folder / "STCharacters.txt")
    # A character both scripts write (乾 of 乾隆, also traditional for 干) tells neither.
    both = ts.keys() & st.keys()
    return _Tables(
        {ord(k): v for k, v in ts.items()},
        {ord(k): v for k, v in st.items()},
        frozenset(ts.keys() - both),
        frozenset(st.keys() - both),
    )


def _japanese_or_korean(text: str) -> bool:
    """Kana or hangul beside the Han characters: Japanese kanji (開業, 職人) or Korean
    hanja, which are no traditional Chinese to fold."""
    return has_kana(text) or has_hangul(text)


def load_script_tables() -> None:
    """Read the character tables now (~40 ms), not at the first Chinese text."""
    _tables()


def fold_han(text: str) -> str:
    """`text` with its traditional characters written simplified (for matching only)."""
    if text.isascii():
        return text
    tables = _tables()
    if tables.traditional.isdisjoint(text) or _japanese_or_korean(text):
        return text
    return text.translate(tables.to_simplified)


def read_folded(terms: Sequence[str]) -> bool:
    """Whether terms were cut from text read as simplified (a Chinese question's are; a
    Japanese question's kanji, 開業, are not): then the text they are looked for in must be
    read so too, and otherwise not."""
    joined = "".join(terms)
    return fold_han(joined) == joined


def traditional_share(text: str) -> float:
    """Of the distinct characters in `text` that only one script writes, the traditional
    share (0.5 when there are none)."""
    if text.isascii():
        return 0.5
    tables = _tables()
    chars = set(text)
    trad = len(tables.traditional.intersection(chars))
    simp = len(tables.simplified.intersection(chars))
    return 0.5 if trad + simp == 0 else trad / (trad + simp)


def in_script_of(text: str, sample: str) -> str:
    """`text` written in the script `sample` is written in: a traditional question over
    simplified passages is read simplified, and the other way round; unchanged where
    either tells no script."""
    if text.isascii() or _japanese_or_korean(text) or _japanese_or_korean(sample):
        return text
    asked, written = traditional_share(text), traditional_share(sample)
    if asked > 0.5 and written < 0.5:
        return text.translate(_tables().to_simplified)
    if asked < 0.5 and written > 0.5:
        return text.translate(_tables().to_traditional)
    return text
