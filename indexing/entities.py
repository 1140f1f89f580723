"""Entity extraction for the graph store: cheap, deterministic, run on every chunk.

Entities are what a person would search a graph by: technical identifiers (error codes,
versions, part numbers, config names), clause numbers, quoted terms, capitalised names, and
a handful of keywords. The same function normalises the query side, so a query entity and a
chunk entity meet on one spelling.

Chinese keywords use forward maximum matching over jieba's IDF vocabulary instead of
`jieba.analyse.extract_tags`: a full jieba cut costs ~1.3 ms per 500 characters on this
machine, the whole of the ingestion budget; a dictionary walk is several times faster and
scores with the same IDF table.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from functools import lru_cache

from core.text import STOPWORDS, has_han, idf_stop_words, idf_table

# Technical identifiers. Lookarounds instead of \b: Han characters count as \w, so
# "错误码ERR-1042出现" has no word boundary around the code.
_L = r"(?<![A-Za-z0-9_])"
_R = r"(?![A-Za-z0-9_])"
# One lookbehind and lookahead in front of every alternative: at a Han or mid-word position
# the match fails on the first check instead of trying each alternative.
_IDENTIFIERS = re.compile(
    _L
    + r"(?=[A-Za-z0-9_])(?:"
    + "|".join(
        [
            r"[A-Z]{1,8}(?:-[A-Z0-9]+)*-\d{2,8}",  # ERR-1042, HTTP-503, ORA-00942
            r"[A-Z]{1,3}\d{3,8}",  # E1234, SAP error codes
            # P12.1.2, v3.1, 2.4.6 (a bare "3.2" is more often a clause or a number)
            r"(?:[vVpPrR]\d+(?:\.\d+){1,4}|\d+(?:\.\d+){2,4})(?:-[A-Za-z0-9]+)?",
            r"(?=[A-Z0-9-]*[A-Z])(?=[A-Z0-9-]*\d)[A-Z0-9]{2,}(?:-[A-Z0-9]+)+",  # AB-12C
            r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+",  # max_connections
            r"[A-Za-z_][\w-]+(?:\.[A-Za-z_][\w-]*)+",  # spring.datasource.url, not e.g
            r"[a-z]+(?:[A-Z][a-z0-9]+)+",  # maxConnections
        ]
    )
    + ")"
    + _R
)
_CLAUSES = re.compile(
    r"第[一二三四五六七八九十百千零〇两\d]+[条章节款项篇部]"
    r"|§\s*\d+(?:\.\d+)*"
    r"|(?<![A-Za-z])(?:section|article|clause|chapter|appendix)\s+\d+(?:\.\d+)*",
    re.IGNORECASE,
)
_QUOTED = re.compile(
    r"“([^”]{2,40})”|\"([^\"\n]{2,40})\"|「([^」]{2,40})」|《([^》]{1,40})》|`([^`\n]{2,40})`"
)
# Two or more capitalised words ("Payment Gateway", "Acme Cloud Storage").
_NAME = re.compile(r"(?<![\w-])[A-Z][A-Za-z0-9]+(?:[ \t]+[A-Z][A-Za-z0-9]+)+")
_ACRONYM = re.compile(r"(?<![A-Za-z0-9_-])[A-Z]{2,6}(?![A-Za-z0-9_-])")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]{2,}")
_HAN_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{2,}")
_SPACES = re.compile(r"\s+")
_STRIP = " \t\r\n.,;:!?'\"“”‘’()[]{}<>《》「」`，。；：！？、（）【】"

_LEADING_ARTICLES = ("the ", "a ", "an ")
_KEYWORDS = 5  # keyword entities per chunk ("a handful")


def normalize_entity(name: str) -> str:
    """One spelling per entity: NFKC (full-width to ASCII), lower case, single spaces,
    no surrounding punctuation or leading English article."""
    return _normalize(unicodedata.normalize("NFKC", name))


def _normalize(name: str) -> str:
    """normalize_entity for text that is NFKC already."""
    norm = (_SPACES.sub(" ", name) if " " in name or "\t" in name else name).strip(_STRIP).lower()
    for article in _LEADING_ARTICLES:
        if norm.startswith(article):
            norm = norm[len(article) :]
    return norm


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    return idf_stop_words() | STOPWORDS


def _han_keywords(text: str, n: int) -> list[str]:
    """Top-n Chinese words by tf-idf, segmenting by forward maximum matching over words of
    2-4 characters (97% of jieba's vocabulary)."""
    idf, stop = idf_table(text), _stop_words()
    counts: Counter[str] = Counter()
    for run in _HAN_RUN.findall(text):
        i, end = 0, len(run) - 1
        while i < end:
            # Longest dictionary word first (4, 3, then 2 characters), unrolled: this loop
            # is most of the extraction time.
            word = run[i : i + 4]
            if word not in idf:
                word = run[i : i + 3]
                if word not in idf:
                    word = run[i : i + 2]
                    if word not in idf:
                        i += 1
                        continue
            if word not in stop:
                counts[word] += 1
            i += len(word)
    # Ties break on first occurrence (Counter keeps insertion order): deterministic.
    ranked = sorted(counts.items(), key=lambda kv: -kv[1] * idf[kv[0]])
    return [w for w, _ in ranked[:n]]


def _latin_keywords(text: str, n: int, every_word: bool) -> list[str]:
    """Top-n English words: repeated, long, non-stop words (tf x log length, no corpus)."""
    stop = _stop_words()
    counts: Counter[str] = Counter(
        w for w in (m.lower() for m in _LATIN_WORD.findall(text)) if w not in stop
    )
    ranked = sorted(counts.items(), key=lambda kv: -kv[1] * math.log(len(kv[0])))
    return [w for w, c in ranked[:n] if every_word or c > 1 or len(w) >= 6]


def _candidates(text: str, keywords: int, every_word: bool) -> list[str]:
    idents = list(_IDENTIFIERS.finditer(text))
    out: list[str] = [m.group(0) for m in idents]
    out.extend(m.group(0) for m in _CLAUSES.finditer(text))
    out.extend(next(g for g in m.groups() if g) for m in _QUOTED.finditer(text))
    out.extend(m.group(0) for m in _NAME.finditer(text))
    out.extend(m.group(0) for m in _ACRONYM.finditer(text))
    # Keywords come from the text minus identifiers, so "max_connections" does not also
    # yield "connections".
    rest = text
    for m in reversed(idents):
        rest = rest[: m.start()] + " " + rest[m.end() :]
    if has_han(rest):
        out.extend(_han_keywords(rest, keywords))
    out.extend(_latin_keywords(rest, keywords, every_word))
    return out


def _dedupe(names: list[str], limit: int) -> list[str]:
    seen: dict[str, None] = {}
    for name in names:
        norm = _normalize(name)
        if len(norm) >= 2 and norm not in STOPWORDS and not norm.isdigit():
            seen.setdefault(norm, None)
            if len(seen) >= limit:
                break
    return list(seen)


def extract_entities(text: str, limit: int = 12) -> list[str]:
    """Normalised entities of a passage, most specific first (identifiers, clauses, quoted
    terms, names, then keywords), at most `limit`."""
    text = unicodedata.normalize("NFKC", text)
    return _dedupe(_candidates(text, _KEYWORDS, every_word=False), limit)


def query_entities(text: str) -> list[str]:
    """Entities of a question. Same extraction as passages, but every content word is a
    candidate (a short question has no term frequencies to rank by), so it is looked up."""
    text = unicodedata.normalize("NFKC", text)
    return _dedupe(_candidates(text, 32, every_word=True), 32)
