"""One search request, top to bottom: route -> parallel retrieval -> weighted RRF ->
serve-check against the truth -> rerank -> coverage decision."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace

from core.switches import Switch
from core.text import query_terms
from core.types import Chunk, Hit, Principal, QueryFilter, Route, ScoredId, SourceSpec
from fusion.breaker import CircuitBreaker
from fusion.rerank import SignalReranker
from fusion.retrieve import Retriever, SourceOutcome, retrieve_all
from fusion.rrf import weighted_rrf
from routing.intent import Intent
from routing.router import Router


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


# What the pipeline needs per source: given the question, the filter and the intent,
# a retriever for this one request.
RetrieverFactory = Callable[[str, QueryFilter, Intent], Retriever]


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
    ) -> None:
        self._fast_path = fast_path  # on: every route narrowed to `fast_source` alone
        self._fast_source = fast_source
        self._router = router
        self._sources = sources
        self._serving = serving
        self._reranker = reranker
        self._executor = executor
        self.breakers = {
            name: CircuitBreaker(breaker_failures, breaker_cooldown_s)
            for name in ("keyword", "dense", "graph")
        }

    async def search(
        self,
        question: str,
        principal: Principal,
        where: QueryFilter | None = None,
        task: str = "qa",
        top_k: int | None = None,
    ) -> SearchResult:
        t0 = time.perf_counter()
        where = where or QueryFilter.for_principal(principal)
        route, intent = self._router.decide(
            question, principal, task, available=frozenset(self._sources)
        )
        degraded = self._fast_path is not None and self._fast_path.on
        if degraded:
            route = self._degrade(route)
        retrievers = {s.name: self._sources[s.name](question, where, intent) for s in route.sources}
        t1 = time.perf_counter()
        outcomes = await retrieve_all(route, retrievers, self.breakers, self._executor)
        t2 = time.perf_counter()
        rankings: dict[str, Sequence[ScoredId]] = {o.name: o.hits for o in outcomes}
        weights = {s.name: s.weight for s in route.sources}
        fused = weighted_rrf(rankings, weights, route.rrf_k)
        served = self._serving([f.content_id for f in fused])
        # Defence in depth: stores pre-filter, and the truth is checked again here.
        hits = [
            Hit(served[f.content_id], f.score, dict(f.ranks))
            for f in fused
            if f.content_id in served and where.admits(served[f.content_id])
        ]
        t3 = time.perf_counter()
        fused_max = sum(w / (route.rrf_k + 1) for w in weights.values())
        hits = self._reranker.rerank(question, hits, fused_max)
        k = top_k or route.top_k
        covered, why = self._covered(question, hits[: max(k, 20)], route.min_coverage)
        t4 = time.perf_counter()
        warnings = [f"{o.name}: {o.status} ({o.error})" for o in outcomes if o.status != "ok"]
        if why:
            warnings.append(why)
        if degraded:
            warnings.append(f"routing degraded to {self._fast_source} only by an alert")
        timings = {
            "route": (t1 - t0) * 1000,
            "retrieve": (t2 - t1) * 1000,
            "fuse_serve": (t3 - t2) * 1000,
            "rerank": (t4 - t3) * 1000,
            **{f"source_{o.name}": o.ms for o in outcomes},
        }
        return SearchResult(question, route, intent, hits[:k], covered, outcomes, timings, warnings)

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
    def _covered(question: str, hits: Sequence[Hit], min_coverage: float) -> tuple[bool, str]:
        if not hits:
            return False, ""
        if not query_terms(question):
            return False, "the question has no content words to match"
        best = max(h.signals.get("coverage", 0.0) for h in hits[:5])
        if best < min_coverage:
            return False, f"best coverage {best:.2f} is under {min_coverage:.2f}"
        return True, ""
