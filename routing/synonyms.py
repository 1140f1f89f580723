"""Domain synonyms: expand a query's terms before keyword retrieval and dense embedding.

The dictionary is TOML: a `[global]` table and `[department.NAME]` tables, each entry a
group `term = ["synonym", ...]` (any member found in the query adds the others). The file
is re-read when it changes on disk (checked by modification time on each use), so
administrators edit it without a restart; a broken edit keeps the last good dictionary and
says why in `error`.
"""

from __future__ import annotations

import logging
import re
import threading
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import ConfigError
from core.text import LATIN_WORD_END, starts_latin_word

log = logging.getLogger("ragline.synonyms")

DEFAULT_SYNONYMS = Path(__file__).with_name("synonyms.toml")


@dataclass(frozen=True, slots=True)
class Expansion:
    query: str  # the query with synonyms appended (unchanged when nothing applied)
    applied: dict[str, list[str]] = field(default_factory=dict)  # term found -> added


def _groups(table: object, where: str) -> list[tuple[str, ...]]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table of term = [synonyms]")
    out = []
    for term, syns in table.items():
        if isinstance(syns, str):
            syns = [syns]
        if not isinstance(syns, list) or not all(isinstance(s, str) and s.strip() for s in syns):
            raise ConfigError(f"{where}.{term}: expected a list of non-empty strings")
        out.append(tuple(dict.fromkeys([term.strip(), *(s.strip() for s in syns)])))
    return out


def parse_synonyms(text: str, where: str) -> dict[str, list[tuple[str, ...]]]:
    """{"": global groups, department: groups}."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"synonyms {where}: {exc}") from exc
    unknown = set(data) - {"global", "department"}
    if unknown:
        raise ConfigError(
            f"synonyms {where}: unknown tables {sorted(unknown)} (global, department)"
        )
    out: dict[str, list[tuple[str, ...]]] = {"": _groups(data.get("global", {}), "global")}
    departments = data.get("department", {})
    if not isinstance(departments, dict):
        raise ConfigError(f"synonyms {where}: [department.NAME] tables expected")
    for name, table in departments.items():
        out[name] = _groups(table, f"department.{name}")
    return out


# After a Latin term: the end of its word, the last word also in its plural; a hyphen
# after (or before) it joins it to another word.
_WORD_END = re.compile(rf"{LATIN_WORD_END}(?!-)")
_PLURAL_WORD_END = re.compile(rf"(?:e?s)?{LATIN_WORD_END}(?!-)")


def _occurs(term: str, lowered: str) -> bool:
    """Han and other scripts: substring. Latin: whole words, the last one also in its
    plural ("policy enforcement points", "PEPs" name the group of "PEP")."""
    t = term.lower()
    if not t.isascii() or t not in lowered:  # (most terms of most groups: not written)
        return t in lowered
    ending = _PLURAL_WORD_END if t[-1:].isalpha() else _WORD_END
    return starts_latin_word(lowered, t, ending, joiners="-")


class SynonymDictionary:
    def __init__(self, path: Path | None = None, max_expansions: int = 8) -> None:
        self.path = path or DEFAULT_SYNONYMS
        self.max_expansions = max_expansions
        self.error = ""
        self._lock = threading.Lock()
        self._mtime: float | None = None
        self._groups: dict[str, list[tuple[str, ...]]] = {"": []}
        self._reload(strict=True)

    def _reload(self, strict: bool = False) -> None:
        try:
            mtime = self.path.stat().st_mtime
            if mtime == self._mtime:
                return
            groups = parse_synonyms(self.path.read_text(encoding="utf-8"), str(self.path))
        except (OSError, ConfigError) as exc:
            if strict:
                raise ConfigError(f"{exc} (RAGLINE_SYNONYMS__PATH)") from exc
            if str(exc) != self.error:
                log.warning("synonyms not reloaded, keeping the last good ones: %s", exc)
            self.error = str(exc)
            return
        self._groups, self._mtime, self.error = groups, mtime, ""

    def groups(self, departments: Iterable[str] = ()) -> list[tuple[str, ...]]:
        with self._lock:
            self._reload()
            out = list(self._groups.get("", []))
            for d in departments:
                out.extend(self._groups.get(d, []))
        return out

    def expand(self, query: str, departments: Iterable[str] = ()) -> Expansion:
        lowered = query.lower()
        applied: dict[str, list[str]] = {}
        added: list[str] = []
        for group in self.groups(departments):
            found = next((t for t in group if _occurs(t, lowered)), None)
            if found is None:
                continue
            new = [t for t in group if t != found and not _occurs(t, lowered) and t not in added]
            new = new[: max(self.max_expansions - len(added), 0)]
            if new:
                applied[found] = new
                added.extend(new)
        if not added:
            return Expansion(query)
        return Expansion(f"{query} {' '.join(added)}", applied)
