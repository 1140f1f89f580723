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
from pathlib import Path
from typing import Any

from core.ids import doc_id_for, path_from_uri
from core.settings import Settings
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
from monitoring.metrics import Metrics
from ragline.ingest import DocumentIngestor, FileOutcome, defer_large, walk
from ragline.writes import WriteDenied, authorize_write
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
        self.pipeline = SearchPipeline(
            self.router,
            {"keyword": self._keyword, "dense": self._dense, "graph": self._graph},
            self.stores.metadata.serving,
            SignalReranker(),
            self._executor,
            settings.retrieval.breaker_failures,
            settings.retrieval.breaker_cooldown_s,
        )
        self.llm = OpenAICompatibleClient(settings.llm) if settings.llm.base_url else None
        self.metrics = Metrics()
        self.answerer = AnswerGenerator(self.llm, settings.retrieval.answer_sentences)
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
        tags: Iterable[str] | None = None,
        progress: Any = None,
        sync_every: int = 200,
        principal: Principal | None = None,
    ) -> tuple[list[FileOutcome], SyncReport]:
        """Ingest files and folders; folders also drop documents whose file is gone.

        `tags` None keeps each existing document's ACL (new ones get the folder rules'
        tags only); a list, even empty, replaces it. A change of ACL with the same bytes
        is a metadata update, in every store before this returns. `principal` None is the
        operator; otherwise each write (and removal) is checked as for the API."""
        paths = list(paths)
        extensions = list(self.settings.ingest.extensions)
        if self.settings.ingest.tika_url:  # folders then include what only Tika parses
            extensions += TIKA_EXTENSIONS
        found = list(walk(paths, extensions))
        # Large files go last (smallest first), and what came before them is made
        # searchable before they start: one huge file does not hold back the batch.
        # Outcomes are reported in the order the files were found.
        order, deferred = defer_large(
            [p for p, _ in found], self.settings.ingest_limits.defer_files_over_mb
        )
        by_index: dict[int, FileOutcome] = {}
        report = SyncReport()
        for n, i in enumerate(order, start=1):
            path, supported = found[i]
            if supported:
                by_index[i] = self.ingestor.ingest(path, tags=tags, principal=principal)
            else:
                by_index[i] = FileOutcome(
                    str(path),
                    "skipped",
                    f"extension {path.suffix!r} not in RAGLINE_INGEST__EXTENSIONS",
                )
            if progress is not None:
                progress(path)
            if n % sync_every == 0 or (deferred and n == len(order) - deferred):
                self._merge(report, self.sync())
        outcomes = [by_index[i] for i in range(len(found))]
        outcomes.extend(self._drop_vanished([p for p in paths if p.is_dir()], principal))
        self._merge(report, self.sync())
        self.metrics.observe_files(o.status for o in outcomes)
        return outcomes, report

    def check_write(
        self, principal: Principal | None, source: str, tags: Iterable[str] | None
    ) -> None:
        """Raise WriteDenied unless `principal` may write the document `source` with ACL
        `tags` (None: keep its tags): before an upload's bytes are even stored."""
        doc = self.stores.metadata.document(doc_id_for(source))
        authorize_write(principal, doc, None if tags is None else list(tags), source)

    def ingest_known(
        self, path: Path, source: str, version: str, **write: Any
    ) -> FileOutcome | None:
        """When the document `source` already holds `version` (the hash of `path`'s
        bytes), apply the write now and return its outcome: nothing to parse, at most a
        metadata update, whose new ACL the truth serves from this call on (the derived
        stores follow on the next sync). None when the bytes are new: they must be parsed,
        which is a task's work. `write` are DocumentIngestor.ingest's keywords."""
        doc_id = doc_id_for(source)
        self.check_write(write.get("principal"), source, write.get("tags"))
        if not self.stores.metadata.has_version(doc_id, version):
            return None
        return self.ingestor.ingest(path, source=source, **write)

    def _drop_vanished(
        self, folders: list[Path], principal: Principal | None
    ) -> list[FileOutcome]:
        out = []
        prefixes = [f.resolve().as_uri().rstrip("/") + "/" for f in folders]
        for doc in self.stores.metadata.documents():
            if any(doc.source.startswith(p) for p in prefixes):
                path = path_from_uri(doc.source)
                if path is None or path.exists():
                    continue
                try:
                    authorize_write(principal, doc, None, doc.source)
                except WriteDenied as exc:
                    out.append(FileOutcome(str(path), "failed", str(exc), doc.doc_id))
                    continue
                if self.delete(doc.doc_id):
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
        into.relabelled.update(more.relabelled)

    def sync(self) -> SyncReport:
        return self.applier.run()

    def delete(self, doc_id: str, principal: Principal | None = None) -> bool:
        """Remove a document everywhere. With a principal, a document it may not see is
        answered like an unknown one (False) and one it may see but not write raises
        WriteDenied."""
        doc = self.stores.metadata.document(doc_id)
        if doc is None or (principal is not None and not principal.can_see(doc.acl_tags)):
            return False
        authorize_write(principal, doc, None, doc_id)
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
        answer = await self.answerer.aanswer(
            question, result.hits, result.covered, result.route, result.timings_ms, trace_id
        )
        if result.warnings:  # why a source failed or the material was judged not to cover
            answer = replace(answer, warnings=(*result.warnings, *answer.warnings))
        self.metrics.observe_answer(answer, result.outcomes, time.perf_counter() - started)
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
                },
                default=str,
            ),
        )
        return answer

    def search(self, question: str, principal: Principal, **kw: Any) -> SearchResult:
        return asyncio.run(self.asearch(question, principal, **kw))

    def ask(self, question: str, principal: Principal, **kw: Any) -> Answer:
        return asyncio.run(self.aask(question, principal, **kw))

    def close(self) -> None:
        if self._ingestor is not None:
            self._ingestor.close()
        self._executor.shutdown(wait=False)
        self.stores.close()
