"""Wiring: build every component from Settings once, hand them to each other, close them.

No layer reads settings or the environment itself; this is the one place that does.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.ids import path_from_uri
from core.settings import Settings
from core.switches import Switch
from core.types import Answer, Principal, QueryFilter, ScoredId
from fusion.pipeline import SearchPipeline, SearchResult
from fusion.rerank import SignalReranker
from fusion.retrieve import Retriever
from generation.answer import AnswerGenerator
from generation.llm import OpenAICompatibleClient
from indexing.embedders import Embedder, make_embedder
from indexing.entities import query_entities
from indexing.factory import Stores, open_stores
from indexing.sync import OutboxApplier, StoreDivergence, SyncReport, check, repair
from ingestion.parse import TIKA_EXTENSIONS
from ingestion.pii import PiiMasker
from monitoring.completeness import completeness
from monitoring.latency_window import LatencyWindow
from monitoring.metrics import Metrics, OpsState
from ragline.ingest import DocumentIngestor, FileOutcome, walk
from routing.intent import Intent
from routing.router import Router


def retrieval_ms(timings_ms: dict[str, float]) -> float:
    """Route to rerank: the sequential stages of a search (per-source timings run in
    parallel inside "retrieve")."""
    return sum(v for k, v in timings_ms.items() if not k.startswith("source_"))


class Ragline:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.embedder: Embedder = make_embedder(settings.embedder)
        self.stores: Stores = open_stores(settings, self.embedder)
        self.applier = OutboxApplier(self.stores.metadata, self.stores.derived)
        rules = settings.retrieval.routing_rules
        self.router = Router(Path(rules) if rules else None)
        # Store calls block; a small pool lets the sources of one request run together.
        self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="retrieve")
        # Operational switches the alert actions flip and the query path reads.
        self.pipeline_reranker = SignalReranker()
        self.fast_path = Switch("degrade_routing")
        self.llm_paused = Switch("pause_llm")
        self.latencies = LatencyWindow(settings.monitoring.latency_samples)
        self.pipeline = SearchPipeline(
            self.router,
            {"keyword": self._keyword, "dense": self._dense, "graph": self._graph},
            self.stores.metadata.serving,
            self.pipeline_reranker,
            self._executor,
            settings.retrieval.breaker_failures,
            settings.retrieval.breaker_cooldown_s,
            fast_path=self.fast_path,
            fast_source=settings.monitoring.fast_path,
        )
        self.llm = OpenAICompatibleClient(settings.llm) if settings.llm.base_url else None
        self.metrics = Metrics()
        self.metrics.watch_state(self.ops_state)
        self.answerer = AnswerGenerator(self.llm, settings.retrieval.answer_sentences)
        # What is served while LLM generation is paused by the citation-completeness alert.
        self.extractive = AnswerGenerator(None, settings.retrieval.answer_sentences)
        self._ingestor: DocumentIngestor | None = None

    # -- retrievers: one closure per request ----------------------------------------
    def _keyword(self, question: str, where: QueryFilter, intent: Intent) -> Retriever:
        return lambda k: self.stores.keyword.search(question, k, where)

    def _dense(self, question: str, where: QueryFilter, intent: Intent) -> Retriever:
        self.embedder.load()  # once per process, outside the source's timeout

        def run(k: int) -> list[ScoredId]:
            return self.stores.dense.search(self.embedder.embed_query(question), k, where)

        return run

    def _graph(self, question: str, where: QueryFilter, intent: Intent) -> Retriever:
        entities = list(dict.fromkeys([*intent.entities, *query_entities(question)]))
        return lambda k: self.stores.graph.search(entities, k, where) if entities else []

    # -- ingestion ------------------------------------------------------------------
    @property
    def ingestor(self) -> DocumentIngestor:
        if self._ingestor is None:
            self._ingestor = DocumentIngestor(
                self.settings,
                self.stores.metadata,
                self.embedder,
                self.stores.derived,
                PiiMasker(self.settings.ingest.pii_rules or None, self.settings.ingest.pii_salt),
                summarizer=(
                    self.llm.summarize if self.llm and self.settings.ingest.summarize else None
                ),
            )
        return self._ingestor

    def ingest(
        self,
        paths: Iterable[Path],
        tags: Iterable[str] = (),
        progress: Any = None,
        sync_every: int = 200,
    ) -> tuple[list[FileOutcome], SyncReport]:
        """Ingest files and folders; folders also drop documents whose file is gone."""
        paths = list(paths)
        extensions = list(self.settings.ingest.extensions)
        if self.settings.ingest.tika_url:  # folders then include what only Tika parses
            extensions += TIKA_EXTENSIONS
        found = list(walk(paths, extensions))
        outcomes: list[FileOutcome] = []
        report = SyncReport()
        for i, (path, supported) in enumerate(found, start=1):
            if supported:
                outcomes.append(self.ingestor.ingest(path, tags=tags))
            else:
                outcomes.append(
                    FileOutcome(
                        str(path),
                        "skipped",
                        f"extension {path.suffix!r} not in RAGLINE_INGEST__EXTENSIONS",
                    )
                )
            if progress is not None:
                progress(path)
            if i % sync_every == 0:
                self._merge(report, self.sync())
        outcomes.extend(self._drop_vanished([p for p in paths if p.is_dir()]))
        self._merge(report, self.sync())
        for o in outcomes:
            self.metrics.observe_ingest(o.status, o.chunks, o.pages)
        return outcomes, report

    def _drop_vanished(self, folders: list[Path]) -> list[FileOutcome]:
        out = []
        prefixes = [f.resolve().as_uri().rstrip("/") + "/" for f in folders]
        for doc in self.stores.metadata.documents():
            if any(doc.source.startswith(p) for p in prefixes):
                path = path_from_uri(doc.source)
                if path is not None and not path.exists() and self.delete(doc.doc_id):
                    out.append(
                        FileOutcome(str(path), "deleted", "file no longer exists", doc.doc_id)
                    )
        return out

    @staticmethod
    def _merge(into: SyncReport, more: SyncReport) -> None:
        for k, v in more.applied.items():
            into.applied[k] = into.applied.get(k, 0) + v
        into.errors.update(more.errors)
        into.promoted.extend(more.promoted)

    def sync(self) -> SyncReport:
        return self.applier.run()

    def delete(self, doc_id: str) -> bool:
        deleted = self.stores.metadata.delete_document(doc_id, self.stores.derived)
        if deleted:
            self.sync()
        return deleted

    def check(self) -> list[StoreDivergence]:
        return check(self.stores.metadata, self.stores.derived)

    def repair(self) -> list[StoreDivergence]:
        self.sync()
        return repair(self.stores.metadata, self.stores.derived)

    # -- queries --------------------------------------------------------------------
    async def asearch(
        self,
        question: str,
        principal: Principal,
        where: QueryFilter | None = None,
        task: str = "qa",
        top_k: int | None = None,
    ) -> SearchResult:
        result = await self.pipeline.search(question, principal, where, task, top_k)
        took = retrieval_ms(result.timings_ms)
        self.latencies.observe(took)
        self.metrics.observe_search(result.timings_ms, took)
        self.metrics.observe_sources(result.outcomes)
        return result

    async def aask(
        self,
        question: str,
        principal: Principal,
        where: QueryFilter | None = None,
        task: str = "qa",
        top_k: int | None = None,
    ) -> Answer:
        started = time.perf_counter()
        result = await self.asearch(question, principal, where, task, top_k)
        trace_id = uuid.uuid4().hex
        paused = self.llm is not None and self.llm_paused.on
        answerer = self.extractive if paused else self.answerer
        answer = await answerer.aanswer(
            question, result.hits, result.covered, result.route, result.timings_ms, trace_id
        )
        warnings = list(result.warnings)  # why a source failed or the material did not cover
        if paused:
            warnings.append(f"LLM generation is paused by an alert ({self.llm_paused.reason}); "
                            "showing the extractive answer")
        if warnings:
            answer = replace(answer, warnings=(*warnings, *answer.warnings))
        # (source failures were counted by the search itself)
        self.metrics.observe_answer(answer, (), time.perf_counter() - started)
        payload = self.audit_payload(answer)
        self.metrics.observe_generation(
            answer, payload["sentences"], payload["verified_sentences"], answer.route.intent
        )
        self.stores.metadata.log_query(
            trace_id, principal.user, question, json.dumps(payload, default=str)
        )
        return answer

    def ops_state(self) -> OpsState:
        """What /metrics reads at each scrape: jobs by state, freshness, breakers."""
        meta = self.stores.metadata
        jobs = meta.job_counts()
        oldest = meta.oldest_unsearchable()
        now = datetime.now(UTC).replace(tzinfo=None)
        lag = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
        breakers = {name: b.state for name, b in self.pipeline.breakers.items()}
        return OpsState(jobs, lag, breakers)

    def audit_payload(self, answer: Answer) -> dict[str, Any]:
        """What the query audit log keeps of one answer: enough to say, per cited passage,
        where the conclusion came from (monitoring/audit.py joins the document's version,
        uploader and processing lineage at export time; versions are immutable)."""
        chunks = {h.chunk.content_id: h.chunk for h in answer.hits}
        cited = []
        for c in answer.citations:
            row = asdict(c)
            chunk = chunks.get(c.content_id)
            if chunk is not None:
                row.update(
                    doc_id=chunk.doc_id,
                    version=chunk.version,
                    section_path=list(chunk.section_path),
                    kind=chunk.kind,
                )
            cited.append(row)
        sentences, verified = (
            completeness(answer.text, [c.label for c in answer.citations])
            if answer.covered
            else (0, 0)
        )
        return {
            "route": asdict(answer.route),
            "covered": answer.covered,
            "mode": answer.mode,
            "model": self.settings.llm.model if answer.mode == "llm" else "",
            "hits": [h.chunk.content_id for h in answer.hits],
            "citations": [c.content_id for c in answer.citations],
            "cited": cited,
            "removed_labels": list(answer.removed_labels),
            "timings_ms": answer.timings_ms,
            "sentences": sentences,
            "verified_sentences": verified,
            "rerank": {
                "weights": asdict(self.pipeline_reranker.weights),
                "cross_encoder": self.settings.retrieval.reranker_path or "",
            },
            "degraded": self.fast_path.on,
        }

    def search(self, question: str, principal: Principal, **kw: Any) -> SearchResult:
        return asyncio.run(self.asearch(question, principal, **kw))

    def ask(self, question: str, principal: Principal, **kw: Any) -> Answer:
        return asyncio.run(self.aask(question, principal, **kw))

    def close(self) -> None:
        if self._ingestor is not None:
            self._ingestor.close()
        self._executor.shutdown(wait=False)
        self.stores.close()
