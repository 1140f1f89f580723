"""Reranking: relevance from an optional cross-encoder and cheap signals every deployment
has (fused rank, query coverage, character-bigram overlap, the share of the question's rare
terms the passage holds and the share its lead holds, rarity from the keyword index's
statistics), then the business formula

    final = relevance x (base + w_t*timeliness + w_s*trust + w_c*coverage)

with base 0.5, w_t 0.3, w_s 0.15, w_c 0.05 by default (settings.fusion). Timeliness and
trust come from fusion.trust; a switched-off signal counts as 1.0, so it cannot reorder.

Runs with no model at all; with one (bge-reranker-v2-m3 via FlagEmbedding in production)
its score is blended into relevance. The relevance weights were measured against BM25 alone
in the same benchmark run (bench/RESULTS.md); change them only with a new measurement.
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from core.errors import ModelMissing
from core.han_script import fold_han
from core.settings import FusionSettings
from core.text import (
    GramQuery,
    char_bigrams,
    han_word,
    has_han,
    held_in_plain,
    plain_text,
    query_terms,
)
from core.types import Chunk, Hit
from fusion.trust import SourceStanding, TrustPolicy


class CrossEncoder(Protocol):
    def score(self, question: str, passages: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class SignalWeights:
    fused: float = 1.0
    coverage: float = 0.10
    bigrams: float = 0.40
    bigrams_idf: float = 1.60
    cross_encoder: float = 0.5
    boost: float = 0.3  # share of the request's entities found in the route's boost_fields
    rare_terms: float = 0.8  # share of the question's rarity (idf^3) the passage holds
    lead_terms: float = 0.8  # ... that its opening words hold (what it is about)


# The rare-term signal weighs a question term by its BM25 idf over the whole keyword index,
# cubed: the few words that name what is asked about (a person, a plant, a clause number)
# dominate, the words every passage shares ("别名", "毕业", "担任") count for little.
# Measured offline on CMRC (bench/RESULTS.md): powers 2-4 and weights 0.5-1.2 all gain.
RARITY_POWER = 3.0
# Passages a reranker remembers (`_Passage`: the searchable text, lower-cased, and what it
# derives from it; ~2 KB each for a passage of 500 Han characters, so ~30 MB when full).
SEEN_MEMO = 16_384
# A question of words alone finds them in a passage (`held_in_plain`, ~14 us for 650
# characters) until the passage has come back this often; from then on the passage's words
# are built once (`char_bigrams`, ~40 us, memoised) and intersected (~0.6 us). Most
# passages of a large corpus are seen once or twice, and building on the second sight cost
# more than it saved (bench/RESULTS.md, session 29). An ASCII passage's words are cut in C
# (~10 us, no more than one look-up), so they are built on first sight. A passage with Han
# characters is never built for such a question: its grams are all its bigrams, hundreds,
# to find a few words.
BUILD_AT_SIGHT = 4


# A passage's lead: the words it opens with, up to the first clause break. What a passage
# is about is named there ("罗保铭，天津人。", "Tower Bridge is a ..."); a passage that only
# mentions the question's subject in passing (a relative's biography, a neighbouring town)
# opens with its own. (Titles and headings are in `searchable_text` already: counting them
# again here moved answers on the shared documents to whichever section's heading repeats
# the question's words.) Measured offline on CMRC (bench/RESULTS.md, session 19).
_CLAUSE_BREAK = re.compile(r"[，。；：、,.;:!?！？（(\n]")
_BREAKS = frozenset("，。；：、,.;:!?！？")
_LEAD_HAN_CHARS = 20
_LEAD_LATIN_CHARS = 30


def lead_text(chunk: Chunk) -> str:
    """The passage's opening words up to the first clause break (at most ~20 Han
    characters or ~30 Latin ones), lower-cased; none when it opens with a clause break (it
    starts mid-sentence, or its subject was left out: "，是冷湖行政区下辖的一个镇" is about
    a town of that district, not the district)."""
    opening = chunk.text.lstrip()
    if opening[:1] in _BREAKS:
        return ""
    m = _CLAUSE_BREAK.search(opening)
    clause = opening[: m.start()] if m else opening
    if has_han(clause):
        clause = clause[:_LEAD_HAN_CHARS]
    elif len(clause) > _LEAD_LATIN_CHARS:
        clause = clause[:_LEAD_LATIN_CHARS].rsplit(" ", 1)[0]
    return fold_han(clause.lower())


def searchable_text(chunk: Chunk) -> str:
    """Title, headings and text, lower-cased, traditional Chinese read as simplified (the
    question's terms are: `core.han_script`)."""
    return fold_han(f"{chunk.title}\n{' '.join(chunk.section_path)}\n{chunk.text}".lower())


@dataclass(slots=True)
class _Passage:
    """What the rerank reads of a passage whatever the question, kept between requests."""

    text: str  # searchable_text
    plain: bool  # core.text.plain_text(text)
    han: bool  # core.text.has_han(text)
    lead: str  # lead_text
    sights: int = 0


def coverage(
    terms: Sequence[str], text: str, alternatives: dict[str, list[str]] | None = None
) -> float:
    """Share of the query's content terms that occur in the text (longer terms weigh more,
    since jieba's search mode also emits their sub-words). A term also counts as present
    when one of its domain synonyms (`alternatives`) occurs."""
    sizes = _Sizes.of(terms)
    return sizes.coverage(text, {t for t in terms if t in text}, alternatives)


@dataclass(frozen=True, slots=True)
class _Sizes:
    """A question's terms with their lengths (their weights in `coverage`) and the lengths'
    sum, worked out once per question instead of once per passage."""

    sizes: tuple[tuple[str, int], ...]
    total: int

    @classmethod
    def of(cls, terms: Sequence[str]) -> _Sizes:
        sizes = tuple((t, len(t)) for t in terms)
        return cls(sizes, sum(n for _, n in sizes))

    def coverage(
        self, text: str, held: AbstractSet[str], alternatives: dict[str, list[str]] | None
    ) -> float:
        """`coverage` once the terms the text holds (`held`) are known."""
        if not self.total:
            return 0.0
        if not alternatives:  # the usual case: no synonym to look for
            return sum(n for t, n in self.sizes if t in held) / self.total
        return (
            sum(
                n
                for t, n in self.sizes
                if t in held or any(a in text for a in alternatives.get(t, ()))
            )
            / self.total
        )


def _han_term_pairs(terms: Sequence[str], grams: AbstractSet[str]) -> dict[str, frozenset[str]]:
    """{term: its bigrams} for the terms of two or more Han characters whose bigrams are
    all among the question's grams."""
    out: dict[str, frozenset[str]] = {}
    for t in terms:
        if han_word(t):
            pairs = frozenset(map(str.__add__, t, t[1:]))
            if pairs <= grams:
                out[t] = pairs
    return out


def _terms_held(
    terms: Sequence[str],
    text: str,
    grams_held: AbstractSet[str] | None,
    pairs_of: Mapping[str, frozenset[str]],
) -> set[str]:
    """The terms `text` holds, each searched for once. Given the question's grams a plain
    text holds (`grams_held`, which has every Han bigram of the question written in it), a
    Han term (`pairs_of`) is searched for only when all its bigrams are held, and a
    two-character one is held exactly when its bigram is."""
    if grams_held is None or not pairs_of:
        return {t for t in terms if t in text}
    held = set()
    for t in terms:
        pairs = pairs_of.get(t)
        if pairs is None:
            if t in text:
                held.add(t)
        elif pairs <= grams_held and (len(t) == 2 or t in text):
            held.add(t)
    return held


def synonym_alternatives(applied: dict[str, list[str]]) -> dict[str, list[str]]:
    """{query term: synonyms}, from the expansion's {phrase found: synonyms added}: every
    content term of the phrase is satisfied by any of its synonyms."""
    out: dict[str, list[str]] = {}
    for found, added in applied.items():
        lowered = [a.lower() for a in added]
        for term in query_terms(found):
            out.setdefault(term, []).extend(lowered)
    return out


def field_boost(chunk: Chunk, terms: Sequence[str], fields: Sequence[str]) -> float:
    """Share of `terms` (entities of the request) found in the chunk's `fields`."""
    if not terms or not fields:
        return 0.0
    values = {
        "title": chunk.title,
        "section": " ".join(chunk.section_path),
        "text": chunk.text,
        "table": " ".join(chunk.table_header) if chunk.kind == "table" else "",
    }
    hay = " ".join(values.get(f, "") for f in fields).lower()
    return sum(t.lower() in hay for t in terms) / len(terms)


def rarity_weights(chunks: int, frequencies: Mapping[str, int]) -> dict[str, float]:
    """{term: idf^RARITY_POWER} with BM25's idf, ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return {
        t: math.log(1 + (chunks - df + 0.5) / (df + 0.5)) ** RARITY_POWER
        for t, df in frequencies.items()
        if chunks > 0
    }


def rare_term_coverage(rarity: Mapping[str, float], text: str | AbstractSet[str]) -> float:
    """Share of the question's rarity-weighted terms that occur in the text (or are among
    the terms a text was found to hold)."""
    return _rare_share(tuple(rarity.items()), text, sum(rarity.values()))


def _rare_share(
    rarities: Sequence[tuple[str, float]], text: str | AbstractSet[str], total: float
) -> float:
    """`rare_term_coverage` with the weights' items and sum taken once per question (a
    rerank asks for every passage)."""
    return sum(w for t, w in rarities if t in text) / total if total else 0.0


def bigram_overlap(query_grams: AbstractSet[str], text_grams: AbstractSet[str]) -> float:
    if not query_grams:
        return 0.0
    return len(query_grams & text_grams) / len(query_grams)


def rare_bigram_overlap(
    query_grams: AbstractSet[str], candidates: Sequence[AbstractSet[str]]
) -> list[float]:
    """Query bigrams weighted by how rare they are among the candidates (an idf that needs
    no corpus statistics): a bigram every candidate shares says nothing about which one
    answers; one that only the right passage has says a lot."""
    n = len(candidates)
    held_by = Counter(g for c in candidates for g in c)  # candidates hold few of the grams
    weight = {g: math.log(1 + n / (1 + held_by[g])) for g in query_grams}
    total = sum(weight.values())
    if not total:
        return [0.0] * n
    return [sum(w for g, w in weight.items() if g in c) / total for c in candidates]


class SignalReranker:
    def __init__(
        self,
        weights: SignalWeights | None = None,
        cross_encoder: CrossEncoder | None = None,
        today: date | None = None,
        fusion: FusionSettings | None = None,
    ) -> None:
        self.weights = weights or SignalWeights()
        self._ce = cross_encoder
        # The model the audit trail names: "" when none scores the passages.
        self.cross_encoder_name = str(getattr(cross_encoder, "name", "")) if cross_encoder else ""
        self._today = today
        self.fusion = fusion or FusionSettings()
        self.policy = TrustPolicy(self.fusion)
        # The passages seen, by everything their searchable text is made of (a memo keyed by
        # the whole frozen chunk hashed all its fields, ~2.7 us a passage, 75 a search);
        # cleared when it holds SEEN_MEMO.
        self._seen: dict[tuple[str, tuple[str, ...], str], _Passage] = {}

    def rerank(
        self,
        question: str,
        hits: Sequence[Hit],
        fused_max: float,
        *,
        boost_terms: Sequence[str] = (),
        boost_fields: Sequence[str] = (),
        alternatives: dict[str, list[str]] | None = None,
        rarity: Mapping[str, float] | None = None,
    ) -> list[Hit]:
        w = self.weights
        f = self.fusion
        terms = query_terms(question)
        grams = char_bigrams(question)
        today = self._today or date.today()
        ce_scores = (
            self._ce.score(question, [h.chunk.text for h in hits]) if self._ce and hits else None
        )
        standings = [self.policy.standing(h.chunk) for h in hits]
        if f.timeliness_reference == "newest":
            dated = [h.chunk.modified for h, st in zip(hits, standings, strict=True) if st.decays]
            newest = max((d for d in dated if d is not None), default=None)
            if newest is not None and newest < today:
                today = newest
        passages = [self._passage(h.chunk) for h in hits]
        texts = [p.text for p in passages]
        held_grams = self._grams_held(grams, passages)  # the question's grams in each
        rare = rare_bigram_overlap(grams, held_grams)
        rarity_total = sum(rarity.values()) if rarity else 0.0
        pairs_of = _han_term_pairs(terms, grams)
        sizes = _Sizes.of(terms)
        rarities = tuple(rarity.items()) if rarity else ()
        timeliness: dict[tuple[date | None, bool], float] = {}  # by date and decay
        for i, hit in enumerate(hits):
            s = hit.signals
            s["fused"] = hit.score / fused_max if fused_max > 0 else 0.0
            held = _terms_held(
                terms, texts[i], held_grams[i] if passages[i].plain else None, pairs_of
            )
            s["coverage"] = sizes.coverage(texts[i], held, alternatives)
            s["bigrams"] = bigram_overlap(grams, held_grams[i])
            s["bigrams_idf"] = rare[i]
            relevance = (
                w.fused * s["fused"]
                + w.coverage * s["coverage"]
                + w.bigrams * s["bigrams"]
                + w.bigrams_idf * s["bigrams_idf"]
            )
            if rarity and w.rare_terms:
                s["rare_terms"] = _rare_share(rarities, held, rarity_total)
                relevance += w.rare_terms * s["rare_terms"]
            if rarity and w.lead_terms and f.use_lead_terms:
                s["lead_terms"] = _rare_share(rarities, passages[i].lead, rarity_total)
                relevance += w.lead_terms * s["lead_terms"]
            if boost_terms and boost_fields:
                s["boost"] = field_boost(hit.chunk, boost_terms, boost_fields)
                relevance += w.boost * s["boost"]
            if ce_scores is not None:
                s["cross_encoder"] = ce_scores[i]
                relevance += w.cross_encoder * ce_scores[i]
            standing = standings[i]
            hit.source_class = standing.source_class
            s["trust"] = standing.trust if f.use_trust else 1.0
            if f.use_timeliness:
                key = (hit.chunk.modified, standing.decays)
                if (fresh := timeliness.get(key)) is None:
                    fresh = timeliness[key] = self.policy.timeliness(
                        hit.chunk, standing.decays, today
                    )
                s["timeliness"] = fresh
            else:
                s["timeliness"] = 1.0
            s["relevance"] = relevance
            hit.score = relevance * (
                f.base
                + f.timeliness_weight * s["timeliness"]
                + f.trust_weight * s["trust"]
                + f.coverage_weight * s["coverage"]
            )
        if f.order_versions:
            self._order_versions(hits, texts, standings)
        return sorted(hits, key=lambda h: (-h.score, h.chunk.content_id))

    def _passage(self, chunk: Chunk) -> _Passage:
        """The chunk's `_Passage`, made on first sight; its sightings counted."""
        key = (chunk.title, chunk.section_path, chunk.text)
        passage = self._seen.get(key)
        if passage is None:
            if len(self._seen) >= SEEN_MEMO:
                self._seen.clear()
            text = searchable_text(chunk)
            passage = self._seen[key] = _Passage(
                text, plain_text(text), has_han(text), lead_text(chunk)
            )
        # Concurrent reranks may miss a count: it only moves when the words are built,
        # and both ways give the same grams.
        passage.sights += 1
        return passage

    @staticmethod
    def _grams_held(grams: AbstractSet[str], passages: Sequence[_Passage]) -> list[frozenset[str]]:
        """`grams & char_bigrams(text)` for each passage's searchable text (lower case),
        looked up in plain texts (`held_in_plain`) where the question has Han bigrams (a
        Chinese passage's grams are many). A question of words alone looks them up too, in
        a passage with Han characters always, in other non-ASCII ones until the passage has
        come back BUILD_AT_SIGHT times; then it reads them from the passage's memoised words
        (`char_bigrams`)."""
        if not grams:
            return [frozenset()] * len(passages)
        query = GramQuery.of(grams)
        return [
            held_in_plain(query, p.text, p.han)
            if p.plain
            and (query.han_pairs or p.han or (p.sights < BUILD_AT_SIGHT and not p.text.isascii()))
            else query.grams & char_bigrams(p.text)
            for p in passages
        ]

    def _order_versions(
        self, hits: Sequence[Hit], texts: Sequence[str], standings: Sequence[SourceStanding]
    ) -> None:
        """Near-identical passages of different documents are versions (or copies) of one
        text: the newer one, then the more authoritative, must not rank under the other.
        Where it does, the two swap scores. Only the first 20 hits are compared, and a
        pair's texts only when the order is wrong for the versions' keys (their grams cost
        ~0.15 ms a passage; most pairs are of one date and class, or already in order)."""
        top = min(len(hits), 20)
        policy = self.policy
        least = self.fusion.version_similarity
        keys = [
            _version_key(policy, h.chunk, st)
            for h, st in zip(hits[:top], standings[:top], strict=True)
        ]
        grams: list[frozenset[str] | None] = [None] * top

        def grams_of(i: int) -> frozenset[str]:
            got = grams[i]
            if got is None:
                got = grams[i] = char_bigrams(texts[i])
            return got

        for i in range(top):
            for j in range(i + 1, top):
                a, b = hits[i], hits[j]
                ka, kb = keys[i], keys[j]
                if ka == kb or a.chunk.doc_id == b.chunk.doc_id:
                    continue
                better, worse = (a, b) if ka < kb else (b, a)
                if better.score >= worse.score:
                    continue
                ga, gb = grams_of(i), grams_of(j)
                small, large = sorted((len(ga), len(gb)))
                if small < least * large:  # Jaccard is at most small/large
                    continue
                inter = len(ga & gb)
                if inter / ((len(ga) + len(gb) - inter) or 1) < least:
                    continue
                better.score, worse.score = worse.score, better.score
                better.signals["version_first"] = 1.0


def _version_key(policy: TrustPolicy, chunk: Chunk, standing: SourceStanding) -> tuple[int, int]:
    """Smaller is preferred: newer first, then the more authoritative source class."""
    newer = -(chunk.modified.toordinal() if chunk.modified else 0)
    return (newer, policy.authority_rank(standing.source_class))


class FlagCrossEncoder:
    """bge-reranker-v2-m3 (or any FlagEmbedding reranker) from a local directory."""

    def __init__(self, model_path: str, use_fp16: bool = False) -> None:
        if not Path(model_path).expanduser().is_dir():
            raise ModelMissing(
                f"RAGLINE_RETRIEVAL__RERANKER_PATH={model_path!r} is not a directory; point it "
                "at a downloaded bge-reranker-v2-m3, or leave it empty to rerank without a model"
            )
        if importlib.util.find_spec("FlagEmbedding") is None:
            raise ModelMissing(
                "RAGLINE_RETRIEVAL__RERANKER_PATH is set but FlagEmbedding is missing: "
                "pip install 'ragline[bge]', or leave the path empty"
            )
        self._path = str(Path(model_path).expanduser())
        self.name = self._path  # what the audit trail records as the cross-encoder
        self._fp16 = use_fp16
        self._model: Any = None

    def score(self, question: str, passages: Sequence[str]) -> list[float]:
        if self._model is None:
            try:
                from FlagEmbedding import FlagReranker
            except ImportError as exc:
                raise ModelMissing(
                    "a reranker path is set but FlagEmbedding is missing: "
                    "pip install 'ragline[bge]'"
                ) from exc
            self._model = FlagReranker(self._path, use_fp16=self._fp16)
        scores = self._model.compute_score([[question, p] for p in passages], normalize=True)
        return [float(s) for s in (scores if isinstance(scores, list) else [scores])]
