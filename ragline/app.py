"""Wiring: build every component from Settings once, hand them to each other, close them.

No layer reads settings or the environment itself; this is the one place that does.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from core.ids import path_from_uri
from core.settings import Settings
from core.types import Answer, Principal, QueryFilter, ScoredId
from fusion.pipeline import SearchPipeline, SearchResult
from fusion.rerank import SignalReranker
from fusion.retrieve import Retriever
from generation.answer import AnswerGenerator
from generation.conversation import Focus, Turn
from generation.llm import OpenAICompatibleClient
from generation.model_router import ModelRouter
from indexing.embedders import Embedder, make_embedder
from indexing.entities import query_entities
from indexing.factory import Stores, open_stores
from indexing.sync import OutboxApplier, StoreDivergence, SyncReport, check, repair
from ingestion.parse import TIKA_EXTENSIONS
from ingestion.pii import PiiMasker
from monitoring.metrics import Metrics
from ragline.agent import AgentReply, chat_focus, run_agent
from ragline.ingest import DocumentIngestor, FileOutcome, walk
from routing.intent import Intent
from routing.router import Router


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
        self.reranker = SignalReranker()
        self.pipeline = SearchPipeline(
            self.router,
            {"keyword": self._keyword, "dense": self._dense, "graph": self._graph},
            self.stores.metadata.serving,
            self.reranker,
            self._executor,
            settings.retrieval.breaker_failures,
            settings.retrieval.breaker_cooldown_s,
        )
        self.llm = OpenAICompatibleClient(settings.llm) if settings.llm.base_url else None
        self.metrics = Metrics()
        self.answerer = AnswerGenerator(self.llm, settings.retrieval.answer_sentences)
        # Model routing: one answerer per configured endpoint, "none" = extractive.
        self.models = ModelRouter(settings.models, settings.llm)
        self._answerers: dict[str, AnswerGenerator] = {
            "none": AnswerGenerator(None, settings.retrieval.answer_sentences)
        }
        for tier, endpoint in self.models.endpoints.items():
            client = self.llm if tier == "default" else OpenAICompatibleClient(endpoint)
            self._answerers[tier] = AnswerGenerator(client, settings.retrieval.answer_sentences)
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
        self.metrics.observe_files(o.status for o in outcomes)
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
        return await self.pipeline.search(question, principal, where, task, top_k)

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
        choice = self.models.choose(question, task, result.route.intent)
        answer = await self._answerers[choice.tier].aanswer(
            question, result.hits, result.covered, result.route, result.timings_ms, trace_id
        )
        answer = replace(answer, model=choice)
        if result.warnings:  # why a source failed or the material was judged not to cover
            answer = replace(answer, warnings=(*result.warnings, *answer.warnings))
        self.metrics.observe_answer(answer, result.outcomes, time.perf_counter() - started)
        self.metrics.observe_model(choice.tier, choice.model)
        self.stores.metadata.log_query(
            trace_id,
            principal.user,
            question,
            json.dumps(
                {
                    "route": asdict(result.route),
                    "covered": answer.covered,
                    "mode": answer.mode,
                    "hits": [h.chunk.content_id for h in result.hits],
                    "citations": [c.content_id for c in answer.citations],
                    "removed_labels": list(answer.removed_labels),
                    "timings_ms": answer.timings_ms,
                    "model": asdict(choice),
                },
                default=str,
            ),
        )
        return answer

    def answerer_for(self, tier: str) -> AnswerGenerator:
        """The answerer of a model routing tier ("none" = extractive)."""
        return self._answerers[tier]

    async def achat(
        self,
        turns: Sequence[Turn],
        principal: Principal,
        where: QueryFilter | None = None,
        task: str = "qa",
        top_k: int | None = None,
    ) -> tuple[Answer, Focus]:
        """Answer the last user turn of a conversation: retrieval runs on that turn plus
        its focus carried over from earlier turns, never on the whole history."""
        focus = await chat_focus(self, turns)
        answer = await self.aask(focus.query, principal, where, task, top_k)
        return answer, focus

    async def aagent(
        self,
        turns: Sequence[Turn],
        principal: Principal,
        where: QueryFilter | None = None,
        task: str = "agent",
    ) -> AgentReply:
        """The tool-calling loop against the configured LLM (extractive without one)."""
        return await run_agent(self, turns, principal, where, task)

    def search(self, question: str, principal: Principal, **kw: Any) -> SearchResult:
        return asyncio.run(self.asearch(question, principal, **kw))

    def ask(self, question: str, principal: Principal, **kw: Any) -> Answer:
        return asyncio.run(self.aask(question, principal, **kw))

    def close(self) -> None:
        if self._ingestor is not None:
            self._ingestor.close()
        self._executor.shutdown(wait=False)
        self.stores.close()
