"""One search request, top to bottom: retrieval instruction -> route -> synonyms ->
parallel retrieval -> weighted RRF (trust-weighted) -> serve-check against the truth ->
rerank -> coverage decision."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial

from core.switches import Switch
from core.text import content_terms, numbered_part_forms, query_terms
from core.types import Chunk, Hit, Principal, QueryFilter, Route, ScoredId, SourceSpec
from fusion.breaker import CircuitBreaker
from fusion.rerank import (
    SignalReranker,
    coverage,
    rarity_weights,
    searchable_text,
    synonym_alternatives,
)
from fusion.retrieve import Retriever, SourceOutcome, retrieve_then
from fusion.rrf import trust_weighted, weighted_rrf
from routing.instruction import InstructionBuilder, RetrievalInstruction, TaskContext
from routing.intent import Intent
from routing.router import Router, Rule
from routing.synonyms import Expansion, SynonymDictionary


@dataclass
class SearchResult:
    question: str
    route: Route
    intent: Intent
    hits: list[Hit]
    covered: bool
    outcomes: list[SourceOutcome]
    timings_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    instruction: RetrievalInstruction | None = None


@dataclass(frozen=True, slots=True)
class _Ranked:
    outcomes: list[SourceOutcome]
    hits: list[Hit]
    covered: bool
    why: str  # why not covered
    retrieved_at: float  # perf_counter when retrieval ended
    served_at: float  # ... and when the serve-check did


# What the pipeline needs per source: given the query, the filter and the intent,
# a retriever for this one request.
RetrieverFactory = Callable[[str, QueryFilter, Intent], Retriever]
# Corpus statistics for the rerank's rare-term signal: terms -> (chunks, {term: chunks with it}).
Frequencies = Callable[[Sequence[str]], tuple[int, dict[str, int]]]
# How long the rerank waits for those statistics once retrieval is done: they are fetched
# beside it, and a slow or failing keyword store must not slow the request down.
_STATS_GRACE_S = 0.05


def _fallback(outcomes: Sequence[SourceOutcome], route: Route) -> str:
    """What the request fell back to when a source failed, in words."""
    failed = [o for o in outcomes if o.status != "ok"]
    if not failed:
        return ""
    used = [o.name for o in outcomes if o.status == "ok"]
    spec = {s.name: s for s in route.sources}
    why = "; ".join(
        f"{o.name}: {o.status}"
        + (f" after {spec[o.name].timeout_ms:g} ms" if o.status == "timeout" else "")
        for o in failed
    )
    return f"{why}; answered from {', '.join(used)}" if used else f"{why}; no source answered"


class SearchPipeline:
    def __init__(
        self,
        router: Router,
        sources: Mapping[str, RetrieverFactory],
        serving: Callable[[Sequence[str]], dict[str, Chunk]],
        reranker: SignalReranker,
        executor: Executor | None = None,
        breaker_failures: int = 3,
        breaker_cooldown_s: float = 30.0,
        fast_path: Switch | None = None,
        fast_source: str = "keyword",
        instructions: InstructionBuilder | None = None,
        synonyms: SynonymDictionary | None = None,
        frequencies: Frequencies | None = None,
    ) -> None:
        self._fast_path = fast_path  # on: every route narrowed to `fast_source` alone
        self._fast_source = fast_source
        self._router = router
        self._sources = sources
        self._serving = serving
        self._reranker = reranker
        # The sources' threads (the app's pool; a pipeline of its own without one).
        self._executor = executor or ThreadPoolExecutor(4, thread_name_prefix="retrieve")
        self._instructions = instructions or InstructionBuilder()
        self._synonyms = synonyms
        self._frequencies = frequencies
        self.breakers = {
            name: CircuitBreaker(breaker_failures, breaker_cooldown_s)
            for name in ("keyword", "dense", "graph")
        }

    def _expand(self, query: str, where: QueryFilter, principal: Principal) -> Expansion:
        # A numbered part in its other form (第28条 / 第二十八条): the documents may write
        # either, and the two share no word.
        forms = numbered_part_forms(query)
        if self._synonyms is None:
            expansion = Expansion(query)
        else:
            # Department dictionaries apply to the departments searched and the asker's roles.
            expansion = self._synonyms.expand(query, sorted(where.departments | principal.roles))
        if not forms:
            return expansion
        return Expansion(f"{expansion.query} {' '.join(forms)}", expansion.applied)

    async def search(
        self,
        question: str,
        principal: Principal,
        where: QueryFilter | None = None,
        task: str = "qa",
        top_k: int | None = None,
        context: TaskContext | None = None,
    ) -> SearchResult:
        t0 = time.perf_counter()
        context = context or TaskContext(task=task)
        task = context.task
        instruction = await self._instructions.build(question, context)
        question = question.strip() or instruction.query  # a context alone is a question
        where = instruction.apply(where or QueryFilter.for_principal(principal))
        route, intent = self._router.decide(
            instruction.query, principal, task, available=frozenset(self._sources)
        )
        rule = self._router.rule(route.rule)
        expansion = self._expand(instruction.query, where, principal)
        run_query = expansion.query
        if rule.query_terms:
            run_query = f"{run_query} {' '.join(rule.query_terms)}"
        boost_terms = tuple(dict.fromkeys((*instruction.boost_terms, *intent.entities)))
        route = replace(
            route,
            top_k=top_k or route.top_k,  # what this request asked for, as it is served
            query=run_query if run_query != question else "",
            instruction=instruction.source,
            filters=instruction.filters_view(),
            boost_fields={f: list(boost_terms) for f in rule.boost_fields} if boost_terms else {},
            synonyms_applied=expansion.applied,
        )
        degraded = self._fast_path is not None and self._fast_path.on
        if degraded:
            route = self._degrade(route)
        retrievers = {
            s.name: self._sources[s.name](run_query, where, intent) for s in route.sources
        }
        t1 = time.perf_counter()
        # Retrieval blocks on the stores, and fusion, the serve-check (a store round trip)
        # and the rerank are CPU: the thread of the source that answers last does them, so
        # the event loop stays free to accept, refuse (429) and answer.
        ranked = await retrieve_then(
            route,
            retrievers,
            self.breakers,
            self._executor,
            partial(self._rank, question, where, route, rule, boost_terms, expansion, top_k),
            beside=self._rarity_job(question),
            grace_s=_STATS_GRACE_S,
        )
        outcomes, hits, covered, why = ranked.outcomes, ranked.hits, ranked.covered, ranked.why
        t2, t3 = ranked.retrieved_at, ranked.served_at
        t4 = time.perf_counter()
        route = replace(route, fallback=_fallback(outcomes, route))
        warnings = [f"{o.name}: {o.status} ({o.error})" for o in outcomes if o.status != "ok"]
        if why:
            warnings.append(why)
        if degraded:
            warnings.append(f"routing degraded to {self._fast_source} only by an alert")
        if task not in self._router.tasks:  # a typo must not pass unseen
            warnings.append(
                f"task {task!r} is named by no routing rule: routed by the question's intent "
                f"(known tasks: {', '.join(sorted(self._router.tasks))})"
            )
        timings = {
            "route": (t1 - t0) * 1000,
            "retrieve": (t2 - t1) * 1000,
            "fuse_serve": (t3 - t2) * 1000,
            "rerank": (t4 - t3) * 1000,
            **{f"source_{o.name}": o.ms for o in outcomes},
        }
        return SearchResult(
            question, route, intent, hits, covered, outcomes, timings, warnings, instruction
        )

    def _rank(
        self,
        question: str,
        where: QueryFilter,
        route: Route,
        rule: Rule,
        boost_terms: tuple[str, ...],
        expansion: Expansion,
        top_k: int | None,
        outcomes: Sequence[SourceOutcome],
        stats: tuple[int, dict[str, int]] | None,
    ) -> _Ranked:
        """Weighted RRF, the serve-check against the truth, the rerank and the coverage
        decision, once every source has answered (or passed its deadline) and the
        question's term statistics are in (or not)."""
        retrieved_at = time.perf_counter()
        rarity = rarity_weights(*stats) if stats else {}
        rankings: dict[str, Sequence[ScoredId]] = {o.name: o.hits for o in outcomes}
        weights = {s.name: s.weight for s in route.sources}
        fused = weighted_rrf(rankings, weights, route.rrf_k)
        served = self._serving([f.content_id for f in fused])
        fused = trust_weighted(fused, served, self._reranker)
        # Defence in depth: stores pre-filter, and the truth is checked again here.
        hits = [
            Hit(served[f.content_id], f.score, dict(f.ranks))
            for f in fused
            if f.content_id in served and where.admits(served[f.content_id])
        ]
        t3 = time.perf_counter()
        fused_max = sum(w / (route.rrf_k + 1) for w in weights.values())
        alternatives = synonym_alternatives(expansion.applied)
        hits = self._reranker.rerank(
            question,
            hits,
            fused_max,
            boost_terms=boost_terms,
            boost_fields=rule.boost_fields,
            alternatives=alternatives,
            rarity=rarity,
        )
        k = top_k or route.top_k
        covered, why = self._covered(question, hits, route.min_coverage, alternatives)
        return _Ranked(list(outcomes), hits[:k], covered, why, retrieved_at, t3)

    def _rarity_job(self, question: str) -> Callable[[], tuple[int, dict[str, int]]] | None:
        """The question's term statistics, to fetch beside retrieval (one keyword-store
        call), unless the signal is off or the keyword store's breaker is open."""
        terms = query_terms(question)
        if self._frequencies is None or not terms or not self._reranker.weights.rare_terms:
            return None
        if not self.breakers["keyword"].allow():
            return None
        return partial(self._frequencies, terms)

    def _degrade(self, route: Route) -> Route:
        """The fast path: only one source, keeping the route's own settings for it when it
        has them (else the loosest timeout and deepest top_k of the route)."""
        spec = next((s for s in route.sources if s.name == self._fast_source), None)
        if spec is None:
            spec = SourceSpec(
                self._fast_source,
                1.0,
                max((s.timeout_s for s in route.sources), default=2.0),
                max((s.top_k for s in route.sources), default=50),
            )
        return replace(
            route,
            sources=(spec,),
            strategy=f"{route.strategy}+fast_path",
            rule=f"{route.rule} (degraded: {self._fast_source} only)",
        )

    @staticmethod
    def _covered(
        question: str,
        hits: Sequence[Hit],
        min_coverage: float,
        alternatives: dict[str, list[str]],
    ) -> tuple[bool, str]:
        """Whether a top passage holds enough of the question's content words (not the
        words of its form, "how many" / "多长时间", nor of where to look, "据这篇文章")."""
        if not hits:
            return False, ""
        terms = content_terms(question)
        if not terms:
            return False, "the question has no content words to match"
        best = max(coverage(terms, searchable_text(h.chunk), alternatives) for h in hits[:5])
        if best < min_coverage:
            return False, f"best coverage {best:.2f} is under {min_coverage:.2f}"
        return True, ""
