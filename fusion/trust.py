"""Source trust and timeliness: how far a passage's source is trusted and how fresh it is.

Trust comes from configuration (settings.fusion): glob rules over the document's source put
it in a source class (internal_sop 1.0, external_standard 0.7, news 0.3, ...); a document no
rule matches keeps the trust it was ingested with (the upload's `source_trust` field, 1.0
by default) in the `default` class. Resolved at query time, so a changed rule applies to
every document at once, without re-ingesting.

Timeliness is an exponential decay by the document's date (the effective date found in its
text at ingest, else the file's modification time): 0.5 ** (age / half_life). Classes with
`decays = false` (statutes, standards in force) are always 1.0.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import date

from core.ids import path_from_uri
from core.settings import FusionSettings, SourceClass
from core.types import Chunk

UNKNOWN_DATE_TIMELINESS = 0.5
_KNOWN_SOURCES = 8192  # standings remembered per policy (forgotten all at once beyond)


@dataclass(frozen=True, slots=True)
class SourceStanding:
    source_class: str
    trust: float
    decays: bool


def _candidates(source: str) -> tuple[str, ...]:
    path = path_from_uri(source)
    return (source, str(path)) if path is not None else (source,)


class TrustPolicy:
    def __init__(self, settings: FusionSettings) -> None:
        self.settings = settings
        self._classes = dict(settings.source_classes)
        self._classes.setdefault("default", SourceClass())
        # Standing depends only on the source and its ingest trust, and the rules are fixed
        # for this policy's life: remembered per source (every hit of a query asks).
        self._known: dict[tuple[str, float], SourceStanding] = {}

    def standing(self, chunk: Chunk) -> SourceStanding:
        key = (chunk.source, chunk.source_trust)
        found = self._known.get(key)
        if found is None:
            if len(self._known) >= _KNOWN_SOURCES:
                self._known.clear()
            found = self._known[key] = self._standing(chunk.source, chunk.source_trust)
        return found

    def _standing(self, source: str, source_trust: float) -> SourceStanding:
        rules = self.settings.trust_rules
        names = _candidates(source) if rules else ()  # parsing the URI costs ~40 us
        for rule in rules:
            if any(fnmatch.fnmatch(n, rule.glob) for n in names):
                cls = self._classes.get(rule.source_class, self._classes["default"])
                trust = cls.trust if rule.trust is None else rule.trust
                return SourceStanding(rule.source_class, trust, cls.decays)
        default = self._classes["default"]
        return SourceStanding("default", source_trust, default.decays)

    def timeliness(self, chunk: Chunk, decays: bool, today: date) -> float:
        if not decays:
            return 1.0
        return decay(chunk.modified, today, self.settings.half_life_days)

    def authority_rank(self, source_class: str) -> int:
        order = self.settings.authority
        return order.index(source_class) if source_class in order else len(order)


def decay(when: date | None, today: date, half_life_days: float) -> float:
    """1.0 today, 0.5 after one half-life, 0.25 after two; 0.5 when the date is unknown.
    A date in the future (an effective date not reached yet) counts as today."""
    if when is None:
        return UNKNOWN_DATE_TIMELINESS
    age = max((today - when).days, 0)
    return float(0.5 ** (age / half_life_days))
