"""Wiring: build every component from Settings once, hand them to each other, close them.

No layer reads settings or the environment itself; this is the one place that does.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.config import load_gateway_config
from connectors.gateway import Gateway
from connectors.records import GatewayRecords, MemoryItem, Trace, TraceRecord
from connectors.router import Decision, match_status, match_templates
from core.blocks import ContentBlock, Freshness, GatewayResult, params_text
from core.errors import InvalidRequest, NotFound, RaglineError
from core.ids import doc_id_for, path_from_uri, scoped_doc_id, source_uri
from core.settings import Settings
from core.switches import Switch
from core.text import keyword_query_terms, load_dictionaries, query_terms, tagged_words
from core.times import naive_utc
from core.types import Answer, Document, Hit, ModelUse, Principal, QueryFilter, Route, ScoredId
from fusion.conflicts import ConflictDetector, with_conflicts
from fusion.pipeline import SearchPipeline, SearchResult
from fusion.rerank import FlagCrossEncoder, SignalReranker
from fusion.retrieve import Retriever
from generation.agent.chat import ToolChatClient
from generation.answer import AnswerGenerator
from generation.blocks import compose
from generation.confidence import calibration_for
from generation.conversation import Focus, Turn
from generation.llm import LLMError, OpenAICompatibleClient
from generation.model_router import ModelRouter
from indexing.embedders import Embedder, MemoisedSimilarity, make_embedder, similarity
from indexing.entities import query_entities
from indexing.factory import Stores, open_stores
from indexing.protocols import IngestRecord
from indexing.stores.sql_metadata import make_engine
from indexing.stores.sql_originals import SqlOriginals
from indexing.sync import OutboxApplier, StoreDivergence, SyncReport, check, repair
from monitoring.audit import uploaders
from monitoring.completeness import completeness
from monitoring.gaps import best_coverage, gap_key, near_misses, normalise
from monitoring.latency_window import LatencyWindow
from monitoring.metrics import Metrics, OpsState
from ragline.agent import AgentReply, chat_focus, run_agent
from ragline.limits import check_gateway
from ragline.threads import answer_pool_size, limit_blas, lowered, retrieve_pool_size
from ragline.uploads import Uploads, release, shares_uploads, sweep, upload_dir
from ragline.writes import UploadTarget, WriteDenied, authorize_write, upload_target
from routing.instruction import InstructionBuilder, TaskContext
from routing.intent import Intent
from routing.router import Router
from routing.synonyms import SynonymDictionary

if TYPE_CHECKING:  # imported where used: `ragline --help` stays light
    from ragline.ingest import DocumentIngestor, FileOutcome

log = logging.getLogger("ragline")
MEMORY_KINDS = ("note", "preference")
UPLOAD_ID_SECRET = "upload-doc-ids"  # deployment secret keying writers' upload doc ids
CONSOLE_SECRET = "web-console-csrf"  # deployment secret keying the console's CSRF tokens


class NotAllowed(RaglineError):
    """The principal may not do this (write memory, read traces)."""


@dataclass(frozen=True, slots=True)
class _Documents:
    """What an ask from documents has before its answer is composed."""

    result: SearchResult
    choice: ModelUse
    paused: bool  # the LLM was chosen, and paused by an alert
    reply: str | LLMError | None  # the LLM's reply; None: extractive (or a refusal)
    started: float  # when generation started, for the "generate" stage


def retrieval_ms(timings_ms: dict[str, float]) -> float:
    """Route to rerank: the sequential stages of a search (per-source timings run in
    parallel inside "retrieve")."""
    return sum(v for k, v in timings_ms.items() if not k.startswith("source_"))


class Ragline:
    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        # `embedder`: one made for these settings already (the CLI loads its model while
        # the query path imports).
        self.embedder: Embedder = embedder or make_embedder(settings.embedder)
        self.stores: Stores = open_stores(settings, self.embedder)
        # After the stores: FAISS's libraries are loaded now, so the limit reaches them too
        # (OpenMP's in this thread only: FAISS sets its own in each thread that calls it).
        log.debug("BLAS/OpenMP threads: %s", limit_blas(settings.threads))
        self.applier = OutboxApplier(
            self.stores.metadata,
            self.stores.derived,
            group_chunks=settings.backends.sync_group_chunks,
        )
        # Re-entrant in this process (a sync inside an ingest inside a task); the store's
        # lock excludes the other processes and hosts.
        self._writing = threading.RLock()
        self._writing_depth = 0
        rules = settings.retrieval.routing_rules
        self.router = Router(Path(rules) if rules else None)
        # Store calls block; the pool lets the sources of a request (and of concurrent
        # requests) run together, sized per core (settings.threads.retrieve).
        self._executor = ThreadPoolExecutor(
            max_workers=retrieve_pool_size(settings.threads),
            thread_name_prefix="retrieve",
            initializer=lowered(settings.threads),
        )
        # Answers are composed here, as many at once as this process has cores
        # (settings.threads.answer): CPU in Python, which more threads would only make
        # wait for the GIL, and the event loop with them.
        self._answering = ThreadPoolExecutor(
            max_workers=answer_pool_size(settings.threads),
            thread_name_prefix="answer",
            initializer=lowered(settings.threads),
        )
        self.llm = OpenAICompatibleClient(settings.llm) if settings.llm.base_url else None
        syn = settings.synonyms
        self.synonyms = (
            SynonymDictionary(Path(syn.path) if syn.path else None, syn.max_expansions)
            if syn.enabled
            else None
        )
        ins = settings.instruction
        self.instructions = InstructionBuilder(
            self._llm_complete if self.llm is not None and ins.use_llm else None,
            ins.cache_size,
            ins.llm_timeout_s,
        )
        # With a model directory the passages are scored by it too; a path that holds none
        # (or no FlagEmbedding to load it) is refused here, naming the setting.
        model = settings.retrieval.reranker_path
        self.reranker = SignalReranker(
            fusion=settings.fusion, cross_encoder=FlagCrossEncoder(model) if model else None
        )
        self.conflicts = ConflictDetector(self.reranker.policy)
        # Operational switches the alert actions flip and the query path reads.
        self.fast_path = Switch("degrade_routing")
        self.llm_paused = Switch("pause_llm")
        self.latencies = LatencyWindow(settings.monitoring.latency_samples)
        self.pipeline = SearchPipeline(
            self.router,
            {"keyword": self._keyword, "dense": self._dense, "graph": self._graph},
            self.stores.metadata.serving,
            self.reranker,
            self._executor,
            settings.retrieval.breaker_failures,
            settings.retrieval.breaker_cooldown_s,
            fast_path=self.fast_path,
            fast_source=settings.monitoring.fast_path,
            instructions=self.instructions,
            synonyms=self.synonyms,
            frequencies=(
                self.stores.keyword.document_frequencies if settings.fusion.use_rare_terms else None
            ),
        )
        self.metrics = Metrics()
        self.metrics.watch_state(self.ops_state)
        answerer = functools.partial(
            AnswerGenerator,
            max_sentences=settings.retrieval.answer_sentences,
            similarity=(
                MemoisedSimilarity(self.embedder, settings.embedder.sentence_cache)
                if settings.embedder.sentence_cache
                else functools.partial(similarity, self.embedder)
            ),
            semantic_candidates=settings.retrieval.answer_semantic_candidates,
            semantic_window=settings.retrieval.answer_semantic_window,
            min_confidence=settings.retrieval.answer_min_confidence,
            calibration=calibration_for(self.embedder.model),
        )
        self.answerer = answerer(self.llm)
        # Model routing: one answerer per configured endpoint, "none" = extractive.
        self.models = ModelRouter(settings.models, settings.llm)
        self._answerers: dict[str, AnswerGenerator] = {"none": answerer(None)}
        for tier, endpoint in self.models.endpoints.items():
            client = self.llm if tier == "default" else OpenAICompatibleClient(endpoint)
            self._answerers[tier] = answerer(client)
        # What is served while LLM generation is paused by the citation-completeness alert.
        self.extractive = self._answerers["none"]
        # The agent loop's tool-calling clients, one per endpoint (pooled connections).
        self.tool_chats = {t: ToolChatClient(e) for t, e in self.models.endpoints.items()}
        self._ingestor: DocumentIngestor | None = None
        self._upload_secret: str | None = None
        gw = settings.gateway
        engine = getattr(self.stores.metadata, "engine", None)
        self.uploads = Uploads(
            upload_dir(settings),
            SqlOriginals(engine) if engine is not None and shares_uploads(settings) else None,
        )
        self.records = GatewayRecords(
            engine or make_engine(settings.resolved_metadata_url),
            getattr(self.stores.metadata, "writes", None),
        )
        llm = self.llm if gw.router == "llm" else None
        self.gateway = Gateway(
            load_gateway_config(gw.sources),
            settings.data_dir,
            self.records,
            breaker_failures=gw.breaker_failures,
            breaker_cooldown_s=gw.breaker_cooldown_s,
            llm=(lambda messages: llm.chat(messages)) if llm is not None else None,
        )

    async def _llm_complete(self, prompt: str) -> str:
        assert self.llm is not None
        return await self.llm.achat([{"role": "user", "content": prompt}], max_tokens=256)

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
            # Imported here: a query-only process (and `ragline ask`) never loads the parsers.
            from ingestion.pii import PiiMasker
            from ragline.ingest import DocumentIngestor

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
        progress: Callable[[FileOutcome, int, int], None] | None = None,
        sync_every: int = 200,
        principal: Principal | None = None,
    ) -> tuple[list[FileOutcome], SyncReport]:
        """Ingest files and folders; folders also drop documents whose file is gone.

        `tags` None keeps each existing document's ACL (new ones get the folder rules'
        tags only); a list, even empty, replaces it. A change of ACL with the same bytes
        is a metadata update, in every store before this returns. `principal` None is the
        operator; otherwise each write (and removal) is checked as for the API.
        `progress` is called with each file's outcome as it is done, in the order the files
        were found, with the number done so far and the number found."""
        from ingestion.parse import TIKA_EXTENSIONS
        from ragline.ingest import FileOutcome, defer_large, same_files, unreadable, walk

        paths = list(paths)
        extensions = list(self.settings.ingest.extensions)
        if self.settings.ingest.tika_url:  # folders then include what only Tika parses
            extensions += TIKA_EXTENSIONS
        cannot_read: list[FileOutcome] = []  # folders (or files) the walk could not read
        found = list(walk(paths, extensions, lambda p, e: cannot_read.append(unreadable(p, e))))
        twins = same_files(found)
        found = [(p, known and i not in twins) for i, (p, known) in enumerate(found)]
        # Large files go last (smallest first), and what came before them is made
        # searchable before they start: one huge file does not hold back the batch.
        # Outcomes are reported in the order the files were found.
        order, deferred = defer_large(
            [p for p, _ in found], self.settings.ingest_limits.defer_files_over_mb
        )
        by_index: dict[int, FileOutcome] = {}
        reported: list[int] = []  # the files reported to `progress`, in that order
        report = SyncReport()
        # Files go in groups of consecutive ones, the supported ones ingested together (the
        # passages of small files embedded in one call); a group ends before the deferred
        # large files. Within a group, what is staged is synced every `sync_every` files,
        # while the embedder works on the next passages.
        group: list[int] = []
        synced_at = 0  # files of this group done at the last sync

        def sync_due(done: int) -> None:
            nonlocal synced_at
            if done - synced_at >= sync_every:
                self._merge(report, self.sync())
                synced_at = done

        def ingest_group() -> None:
            nonlocal synced_at
            synced_at = 0
            supported = [k for k, i in enumerate(group) if found[i][1]]  # group positions
            for i in group:
                path, known = found[i]
                if i in twins:
                    by_index[i] = FileOutcome(str(path), "skipped", f"the same file as {twins[i]}")
                elif not known:
                    by_index[i] = FileOutcome(
                        str(path),
                        "skipped",
                        f"extension {path.suffix!r} not in RAGLINE_INGEST__EXTENSIONS",
                    )
            shown = 0  # the group's files before this position have been reported
            done = 0  # supported files of the group ingested so far

            def show(upto: int) -> None:
                nonlocal shown
                if progress is not None:
                    for i in group[shown:upto]:
                        reported.append(i)
                        progress(by_index[i], len(reported), len(found))
                shown = max(shown, upto)

            def one_done(outcome: FileOutcome) -> None:  # the next supported file, in order
                nonlocal done
                by_index[group[supported[done]]] = outcome
                show(supported[done] + 1)
                done += 1

            outcomes = self.ingestor.ingest_batch(
                [found[group[k]][0] for k in supported],
                tags=tags,
                principal=principal,
                progress=one_done,
                between=sync_due,
            )
            by_index.update(zip((group[k] for k in supported), outcomes, strict=True))
            show(len(group))  # skipped files after the last supported one
            group.clear()

        for n, i in enumerate(order, start=1):
            group.append(i)
            # Large files are deferred: what came before is searchable before they start.
            synced = bool(deferred) and n == len(order) - deferred
            if synced or n == len(order):
                ingest_group()
            if synced:
                self._merge(report, self.sync())
        outcomes = [by_index[i] for i in range(len(found))] + cannot_read
        # (os.path.isdir: a folder that cannot even be looked at was reported by walk.)
        outcomes.extend(self._drop_vanished([p for p in paths if os.path.isdir(p)], principal))
        self._merge(report, self.sync())
        for o in outcomes:
            self.metrics.observe_ingest(o.status, o.chunks, o.pages)
        return outcomes, report

    def upload_target(self, principal: Principal | None, source: str) -> UploadTarget:
        """The document an upload of `source` writes (`ragline.writes.upload_target`):
        found among the documents `principal` may see at that key, else a new id that
        does not depend on documents it may not see. The same lookups run either way."""
        meta = self.stores.metadata
        if self._upload_secret is None:  # made once per deployment, never changes
            self._upload_secret = meta.deployment_secret(UPLOAD_ID_SECRET)
        scope = principal.user if principal is not None else ""
        own_id = scoped_doc_id(self._upload_secret, source, scope)
        at_key = meta.documents_at(source)
        own_taken = meta.document(own_id) is not None
        return upload_target(principal, source, at_key, own_id, own_taken)

    def console_secret(self) -> bytes:
        """The key of the web console's CSRF tokens: one per deployment, so that a token
        fetched from one serving process (or replica) is good at every other."""
        return self.stores.metadata.deployment_secret(CONSOLE_SECRET).encode("ascii")

    def check_write(
        self,
        principal: Principal | None,
        source: str,
        tags: Iterable[str] | None,
        doc_id: str | None = None,
    ) -> None:
        """Raise WriteDenied unless `principal` may write the document `doc_id` (default:
        the one of `source`) with ACL `tags` (None: keep its tags): before an upload's
        bytes are even stored."""
        doc = self.stores.metadata.document(doc_id or doc_id_for(source))
        authorize_write(principal, doc, None if tags is None else list(tags), source)

    def ingest_known(
        self, path: Path, source: str, version: str, doc_id: str | None = None, **write: Any
    ) -> FileOutcome | None:
        """When the document `doc_id` (default: the one of `source`) already holds
        `version` (the hash of `path`'s bytes), apply the write now and return its
        outcome: nothing to parse, at most a metadata update, whose new ACL the truth
        serves from this call on (the derived stores follow on the next sync). None when
        the bytes are new: they must be parsed, which is a task's work. `write` are
        DocumentIngestor.ingest's keywords."""
        doc_id = doc_id or doc_id_for(source)
        self.check_write(write.get("principal"), source, write.get("tags"), doc_id)
        if not self.stores.metadata.has_version(doc_id, version):
            return None
        return self.ingestor.ingest(path, source=source, doc_id=doc_id, **write)

    def _drop_vanished(self, folders: list[Path], principal: Principal | None) -> list[FileOutcome]:
        """Delete the documents under `folders` whose file is gone. Only a file proven gone
        counts: one that cannot be looked at (a folder on its way is unreadable) may well
        be there, so its document is kept, with a line that says why."""
        from ragline.ingest import FileOutcome

        out = []
        prefixes = [source_uri(f).rstrip("/") + "/" for f in folders]
        for doc in self.stores.metadata.documents():
            if any(doc.source.startswith(p) for p in prefixes):
                path = path_from_uri(doc.source)
                if path is None:
                    continue
                try:
                    path.stat()
                    continue  # still there
                except (FileNotFoundError, NotADirectoryError):
                    pass  # gone
                except OSError as exc:
                    why = f"cannot tell whether it still exists ({exc.strerror or exc}): kept"
                    out.append(FileOutcome(str(path), "skipped", why, doc.doc_id))
                    continue
                try:
                    authorize_write(principal, doc, None, doc.source)
                except WriteDenied as exc:
                    out.append(FileOutcome(str(path), "failed", str(exc), doc.doc_id))
                    continue
                if self.delete(doc.doc_id, reason="file no longer exists"):
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

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Exclusive write access to the derived stores for this deployment: the
        metadata store's writer lock (across processes and hosts), taken once per
        outermost use; the dense index is first reloaded from what another process may
        have flushed (a FAISS file is rewritten whole from this process's copy)."""
        with self._writing:
            if self._writing_depth:
                self._writing_depth += 1
                try:
                    yield
                finally:
                    self._writing_depth -= 1
                return
            with self.stores.metadata.writer_lock():
                refresh = getattr(self.stores.dense, "refresh", None)
                if callable(refresh):
                    refresh()
                self._writing_depth = 1
                try:
                    yield
                finally:
                    self._writing_depth = 0

    def sync(self) -> SyncReport:
        """Apply the outbox to every derived store (under the writer lock) and promote
        what is complete."""
        with self.writing():
            report = self.applier.run()
        if report.promoted and self.settings.gaps.enabled:
            self.recheck_gaps({v.doc_id for v in report.promoted})
        return report

    # -- knowledge gaps ---------------------------------------------------------------
    def _record_gap(self, question: str, principal: Principal, answer: Answer) -> None:
        cfg = self.settings.gaps
        coverage = best_coverage(answer.hits)
        if answer.covered and coverage >= cfg.low_coverage:
            return
        kind = "not_covered" if not answer.covered else "low_coverage"
        reason = (
            "not covered"
            if not answer.covered
            else f"low coverage ({coverage:.2f} < {cfg.low_coverage:.2f})"
        )
        norm = normalise(question)
        self.stores.metadata.record_gap(
            gap_key(norm),
            norm,
            question,
            sorted(principal.roles),
            near_misses(answer.hits, cfg.near_misses),
            reason,
            coverage,
        )
        self.metrics.knowledge_gaps.labels(reason=kind).inc()

    def recheck_gaps(self, new_docs: set[str]) -> list[str]:
        """Re-ask open gaps after an ingest; close those now answered, with a citation or
        top passage from one of `new_docs`. Returns the closed keys."""
        cfg = self.settings.gaps
        operator = Principal(user="ragline-gaps", superuser=True)

        async def run() -> list[str]:
            closed = []
            for gap in self.stores.metadata.gaps(status="open", limit=cfg.recheck_limit):
                result = await self.pipeline.search(gap.question, operator)
                if not result.covered or best_coverage(result.hits) < cfg.low_coverage:
                    continue
                answer = await self.answerer.aanswer(
                    gap.question, result.hits, result.covered, result.route, {}, "gap-recheck"
                )
                cited = {c.content_id for c in answer.citations}
                docs = [h.chunk.doc_id for h in result.hits if h.chunk.content_id in cited]
                docs = docs or [h.chunk.doc_id for h in result.hits[:1]]
                answered_by = next((d for d in docs if d in new_docs), None)
                if answer.covered and answered_by:
                    self.stores.metadata.close_gap(gap.key, answered_by)
                    self.metrics.gaps_closed.inc()
                    closed.append(gap.key)
            return closed

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(run())
        with ThreadPoolExecutor(1) as pool:  # called from inside an event loop
            return pool.submit(asyncio.run, run()).result()

    def delete(self, doc_id: str, principal: Principal | None = None, reason: str = "") -> bool:
        """Remove a document everywhere. With a principal, a document it may not see is
        answered like an unknown one (False) and one it may see but not write raises
        WriteDenied."""
        doc = self.stores.metadata.document(doc_id)
        if doc is None or (principal is not None and not principal.can_see(doc.acl_tags)):
            return False
        authorize_write(principal, doc, None, doc_id)
        deleted = self.unserve(doc, principal, reason)
        if deleted:
            self.sync()
            self.release_document(doc_id)
        return deleted

    def unserve(self, doc: Document, principal: Principal | None, reason: str = "") -> bool:
        """Mark a document deleted in the truth (nothing of it is served from then on; the
        derived stores converge at the next sync), and say so in the ingest log with who
        did it. False when it was deleted already."""
        meta = self.stores.metadata
        version = meta.current_version(doc.doc_id) or ""
        deleted = meta.delete_document(doc.doc_id, self.stores.derived)
        if deleted:
            who = f"by {principal.user}" if principal is not None else "by the operator"
            meta.record_ingest(
                IngestRecord(
                    doc.source,
                    "deleted",
                    f"{reason} ({who})" if reason else f"deleted {who}",
                    doc.doc_id,
                    version,
                    naive_utc(datetime.now(UTC)),
                )
            )
        return deleted

    def release_document(self, doc_id: str) -> int:
        """After a delete, here or by another process: this host's and the shared store's
        copies of every version's uploaded bytes that nothing else needs."""
        return self.release_originals({v.version for v in self.stores.metadata.versions(doc_id)})

    def release_originals(
        self,
        versions: Collection[str],
        accepted_before: datetime | None = None,
        except_job: str = "",
    ) -> int:
        """Remove the uploaded bytes of these versions that no live document and no job on
        its way needs (after a delete, a failed ingestion); see `ragline.uploads.release`."""
        return release(self.uploads, self.stores.metadata, versions, accepted_before, except_job)

    def sweep_originals(self) -> int:
        """Remove every uploaded original nothing needs (`ragline repair`)."""
        return sweep(self.uploads, self.stores.metadata)

    def check(self) -> list[StoreDivergence]:
        return check(self.stores.metadata, self.stores.derived)

    def repair(self) -> list[StoreDivergence]:
        with self.writing():
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
        context: TaskContext | None = None,
    ) -> SearchResult:
        _require_question(question, context)
        result = await self.pipeline.search(question, principal, where, task, top_k, context)
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
        context: TaskContext | None = None,
    ) -> Answer:
        """A cited answer from the kind of source the question needs: rows, live status or
        documents (routing by knowledge type; the decision is in `answer.knowledge`)."""
        _require_question(question, context)
        started = time.perf_counter()
        trace = self._new_trace(principal, "ask", question)
        decision = self.gateway.route(question, principal)
        trace.add("route", **decision.as_dict())
        answer: Answer | None = None
        fallback_warnings: list[str] = []
        if decision.kind in ("rows", "status"):
            answer, fallback_warnings = await self._ask_gateway(
                question, principal, decision, trace, where, task, top_k
            )
        if answer is not None:
            return await self._compose(
                functools.partial(self._finish_ask, principal, question, answer, trace, started)
            )
        # From documents: the search and the LLM's reply (when one is used) on the event loop,
        # then one worker thread composes and checks the answer and writes its audit record.
        documents = await self._ask_documents(
            question, principal, where, task, top_k, trace, context
        )
        knowledge = {
            **decision.as_dict(),
            "answered_by": "documents",
            **({"fallback": fallback_warnings} if fallback_warnings else {}),
        }
        return await self._compose(
            functools.partial(
                self._answer_documents,
                principal,
                question,
                documents,
                fallback_warnings,
                knowledge,
                trace,
                started,
            )
        )

    async def _compose(self, work: Callable[[], Answer]) -> Answer:
        """`work` (an answer's composition, checks and audit record) in the answer pool."""
        return await asyncio.get_running_loop().run_in_executor(self._answering, work)

    async def _ask_gateway(
        self,
        question: str,
        principal: Principal,
        decision: Decision,
        trace: Trace,
        where: QueryFilter | None,
        task: str,
        top_k: int | None,
    ) -> tuple[Answer | None, list[str]]:
        """Rows or status for the question; None (and why) when documents must answer."""
        t0 = time.perf_counter()
        if decision.kind == "rows":
            result = await self.query_rows(
                principal, decision.template, decision.params, trace=trace
            )
        else:
            result = await self.lookup_status(
                principal, decision.source_id, decision.params, trace=trace
            )
        route = Route(strategy="gateway", sources=(), rule=decision.rule, intent=decision.kind)
        knowledge = {**decision.as_dict(), "answered_by": decision.kind}
        model = self._gateway_model(decision.kind)
        if result.status == "empty" and not result.blocks:  # the source says: no such record
            self.metrics.observe_model(model.tier, model.model)
            return Answer(
                question=question,
                text=f"{result.message}.",
                covered=False,
                mode=decision.kind,
                citations=(),
                hits=(),
                route=route,
                timings_ms={},
                trace_id=trace.trace_id,
                # The source itself said it has no such record: as sure as its answers.
                confidence=1.0,
                reason=result.message,
                knowledge=knowledge,
                model=model,
            ), []
        if result.status not in ("ok", "empty") or not result.blocks:
            why = (
                f"{decision.kind} source {result.source_id or decision.source_id}: "
                f"{result.status} ({result.message})"
            )
            trace.add("fallback_documents", reason=why)
            return None, [why]
        block = result.blocks[0]
        if block.freshness.stale:
            # A fresher source that covers the question wins over stale rows or status.
            docs = await self.asearch(question, principal, where, task, top_k)
            if docs.covered:
                why = f"{block.source_id} is past its freshness window: {block.freshness.note()}"
                trace.add("skip_stale", source_id=block.source_id, reason=why)
                return None, [why]
        text = compose(result.blocks)
        warnings = tuple(n for b in result.blocks if (n := b.freshness.note()))
        ran = result.detail.get("params")
        if isinstance(ran, dict):
            # What ran, not what was asked: a parameter bound to the caller's own attribute
            # (its region) replaces the one the question named, and the answer says so.
            knowledge["params"] = ran
            bound = result.detail.get("bound", ())
            warnings += tuple(
                f"answered for {name}={ran[name]}, the one this key may read, not {asked}"
                for name, asked in decision.params.items()
                if name in bound and str(ran[name]).casefold() != str(asked).casefold()
            )
        ms = (time.perf_counter() - t0) * 1000
        covered = result.status == "ok"
        self.metrics.observe_model(model.tier, model.model)
        answer = Answer(
            question=question,
            text=text,
            covered=covered,
            mode=decision.kind,
            citations=(),
            hits=(),
            route=route,
            timings_ms={f"source_{block.source_id}": ms},
            trace_id=trace.trace_id,
            warnings=warnings,
            # The blocks' own confidence: 1.0 from a source within its freshness window,
            # lower for a stale one (connectors/gateway.py).
            confidence=min(b.confidence for b in result.blocks),
            reason="" if covered else self._not_covered_reason(result),
            blocks=result.blocks,
            knowledge=knowledge,
            model=model,
        )
        return answer, []

    @staticmethod
    def _gateway_model(kind: str) -> ModelUse:
        """A rows or status answer is the source's values with their labels: no LLM writes
        it, so its model is tier "none" (extractive), as a document answer without one."""
        return ModelUse("none", "", f"answered from {kind}: the source's values, no LLM")

    @staticmethod
    def _not_covered_reason(result: GatewayResult) -> str:
        """Why rows that came back do not answer (the only uncovered result with blocks: a
        status source that has no such record returns none, and says so itself): the
        parameters that ran, the caller's bound attributes included, matched nothing."""
        return f"no rows match {params_text(result.detail.get('params', {}), given_only=True)}"

    async def _ask_documents(
        self,
        question: str,
        principal: Principal,
        where: QueryFilter | None,
        task: str,
        top_k: int | None,
        trace: Trace,
        context: TaskContext | None = None,
    ) -> _Documents:
        """The search, the model chosen for the answer and its reply (None: extractive)."""
        result = await self.asearch(question, principal, where, task, top_k, context)
        trace.add(
            "documents",
            hits=len(result.hits),
            covered=result.covered,
            rule=result.route.rule,
            timings_ms={k: round(v, 2) for k, v in result.timings_ms.items()},
            warnings=result.warnings,
        )
        # A task context may have supplied or rewritten the question.
        choice = self.models.choose(result.question, task, result.route.intent)
        # The citation-completeness alert pauses LLM generation: extractive until it recovers.
        paused = choice.tier != "none" and self.llm_paused.on
        if paused:
            choice = ModelUse("none", "", f"LLM paused by an alert ({self.llm_paused.reason})")
        started = time.perf_counter()
        reply = await self._answerers[choice.tier].reply(
            result.question, result.hits, result.covered
        )
        return _Documents(result, choice, paused, reply, started)

    def _answer_documents(
        self,
        principal: Principal,
        question: str,
        documents: _Documents,
        fallback_warnings: Sequence[str],
        knowledge: dict[str, Any],
        trace: Trace,
        started: float,
    ) -> Answer:
        """The answer from the documents: composed and cited, then the conflicts between its
        sources and the cited blocks (their own stage in the timings), then `_finish_ask`
        (the audit record and the knowledge gap, under the question asked); in one worker
        thread."""
        result, choice = documents.result, documents.choice
        answer = self._answerers[choice.tier].complete(
            result.question,
            result.hits,
            result.covered,
            result.route,
            documents.reply,
            result.timings_ms,
            trace.trace_id,
            documents.started,
        )
        answer = replace(answer, model=choice)
        after_started = time.perf_counter()
        warnings = list(result.warnings)  # why a source failed or the material did not cover
        if documents.paused:
            warnings.append(
                f"LLM generation is paused by an alert ({self.llm_paused.reason}); "
                "showing the extractive answer"
            )
        if self.settings.fusion.detect_conflicts and answer.covered:
            answer = with_conflicts(answer, self.conflicts.detect(result.question, result.hits))
        self.metrics.observe_model(choice.tier, choice.model)
        cited = {c.content_id for c in answer.citations}
        blocks = tuple(self.document_block(h) for h in result.hits if h.chunk.content_id in cited)
        stale = [f"{b.label} {b.freshness.note()}" for b in blocks if b.freshness.stale]
        checks_ms = (time.perf_counter() - after_started) * 1000
        # (source failures were counted by the search itself)
        answer = replace(
            answer,
            blocks=blocks,
            warnings=(*fallback_warnings, *warnings, *answer.warnings, *stale),
            timings_ms={**answer.timings_ms, "checks": checks_ms},
            knowledge=knowledge,
        )
        return self._finish_ask(principal, question, answer, trace, started)

    def _finish_ask(
        self, principal: Principal, question: str, answer: Answer, trace: Trace, started: float
    ) -> Answer:
        """The answer's trace, metrics, audit record and knowledge gap, all written before
        the answer is returned (with their time as the "audit" stage)."""
        finish_started = time.perf_counter()
        trace.add(
            "answer",
            kind=answer.knowledge.get("answered_by"),
            covered=answer.covered,
            labels=[b.label for b in answer.blocks][:20],
        )
        self.metrics.observe_answer(answer, (), time.perf_counter() - started)
        self.metrics.observe_gateway(answer.knowledge.get("answered_by", "documents"))
        payload = self.audit_payload(answer)
        self.metrics.observe_generation(
            answer, payload["sentences"], payload["verified_sentences"], answer.route.intent
        )
        self.stores.metadata.log_query(
            trace.trace_id, principal.user, question, json.dumps(payload, default=str)
        )
        self.records.save_trace(trace)
        if self.settings.gaps.enabled and answer.knowledge.get("answered_by") == "documents":
            self._record_gap(question, principal, answer)
        log.info(
            "ask [trace %s] %s answered by %s",
            trace.trace_id,
            principal.user,
            answer.knowledge.get("answered_by"),
        )
        audit_ms = (time.perf_counter() - finish_started) * 1000
        return replace(answer, timings_ms={**answer.timings_ms, "audit": audit_ms})

    # -- knowledge gateway: the four operations agents call ---------------------------------
    def _new_trace(self, principal: Principal, operation: str, question: str = "") -> Trace:
        return Trace(uuid.uuid4().hex, principal.user, operation, question)

    def document_block(self, hit: Hit) -> ContentBlock:
        c = hit.chunk
        window = self.gateway.config.documents.freshness_window_s
        age = None
        if c.modified is not None:
            age = (date.today() - c.modified).days * 86400.0
        return ContentBlock(
            source_id=c.doc_id,
            source_kind="document",
            content=c.text,
            confidence=round(hit.signals.get("coverage", min(1.0, hit.score)), 4),
            permission_tags=tuple(sorted(c.acl_tags)) or ("public",),
            accessed_at=datetime.now(UTC),
            freshness=Freshness.of(age, window),
            label=c.label,
            title=c.title,
            locator={
                "content_id": c.content_id,
                "source": c.source,
                "page_start": c.page_start,
                "page_end": c.page_end,
                "line_start": c.line_start,
                "line_end": c.line_end,
            },
        )

    async def query_text(
        self,
        question: str,
        principal: Principal,
        *,
        top_k: int | None = None,
        where: QueryFilter | None = None,
        trace: Trace | None = None,
    ) -> GatewayResult:
        """Document passages as content blocks ([DocX_pY] labels), best first."""
        own = trace is None
        trace = trace or self._new_trace(principal, "query_text", question)
        result = await self.asearch(question, principal, where, "qa", top_k)
        blocks = tuple(self.document_block(h) for h in result.hits)
        trace.add(
            "documents",
            hits=len(blocks),
            covered=result.covered,
            rule=result.route.rule,
            timings_ms={k: round(v, 2) for k, v in result.timings_ms.items()},
        )
        if own:
            await asyncio.to_thread(self.records.save_trace, trace)
        return GatewayResult(
            trace.trace_id,
            "query_text",
            "ok" if blocks else "empty",
            blocks,
            "; ".join(result.warnings),
            "documents",
            {"covered": result.covered, "route": asdict(result.route)},
        )

    async def query_rows(
        self,
        principal: Principal,
        template: str = "",
        params: dict[str, Any] | None = None,
        *,
        question: str = "",
        trace: Trace | None = None,
    ) -> GatewayResult:
        """Rows from a declared SQL template. Name the template and its parameters, or give
        a `question` and the rules pick the template and read the parameters from it."""
        params = dict(params or {})
        own = trace is None
        if own:  # a door's request (an ask's own route has its question checked already)
            check_gateway(template, params, question)
        trace = trace or self._new_trace(principal, "query_rows", question)
        if not template and question:
            matches = [
                m
                for m in match_templates(question, self.gateway.config, principal)
                if not m.missing
            ]
            trace.add(
                "template_match",
                candidates=[
                    {"template": m.template.name, "score": round(m.score, 2)} for m in matches[:5]
                ],
            )
            if not matches:
                result = GatewayResult(
                    trace.trace_id,
                    "query_rows",
                    "no_match",
                    message="no template matches the question; templates: "
                    + ", ".join(self.gateway.config.usable_templates(principal)),
                )
                if own:
                    await asyncio.to_thread(self.records.save_trace, trace)
                return result
            template, params = matches[0].template.name, {**matches[0].params, **params}
        result = await asyncio.to_thread(
            self.gateway.query_rows, principal, template, params, trace
        )
        self.metrics.observe_gateway_call("rows", result.source_id or "-", result.status)
        if own:
            await asyncio.to_thread(self.records.save_trace, trace)
        return result

    async def lookup_status(
        self,
        principal: Principal,
        source: str = "",
        params: dict[str, Any] | None = None,
        *,
        question: str = "",
        trace: Trace | None = None,
    ) -> GatewayResult:
        """Live state from a declared HTTP status source (e.g. `tickets`, `jobs`). Name the
        source and its parameters, or give a `question` naming an identifier."""
        params = dict(params or {})
        own = trace is None
        if own:  # a door's request (an ask's own route has its question checked already)
            check_gateway(source, params, question)
        trace = trace or self._new_trace(principal, "lookup_status", question)
        if not source and question:
            found = match_status(question, self.gateway.config, principal)
            if not found:
                result = GatewayResult(
                    trace.trace_id,
                    "lookup_status",
                    "no_match",
                    message="the question names no identifier a status source knows",
                )
                if own:
                    await asyncio.to_thread(self.records.save_trace, trace)
                return result
            source, params = found[0][0].id, {**found[0][1], **params}
        result = await asyncio.to_thread(
            self.gateway.lookup_status, principal, source, params, trace
        )
        self.metrics.observe_gateway_call("status", result.source_id or "-", result.status)
        if own:
            await asyncio.to_thread(self.records.save_trace, trace)
        return result

    def get_document_meta(self, doc_id: str, principal: Principal) -> dict[str, Any] | None:
        """Title, source, dates, pages and every version of a document the principal may
        see; None for one it may not see or that does not exist (indistinguishable)."""
        doc = self.visible_document(doc_id, principal)
        if doc is None:
            return None
        versions = self._versions(doc_id)
        current = next((v for v in versions if v["status"] == "current"), None)
        return {
            "doc_id": doc.doc_id,
            "title": doc.title,
            "source": doc.source,
            "doc_type": doc.doc_type,
            "department": doc.department,
            "modified": doc.modified.isoformat() if doc.modified else None,
            "pages": current["pages"] if current else 0,
            "current_version": current["version"] if current else None,
            "versions": versions,
        }

    def document_lineage(self, doc_id: str, principal: Principal) -> dict[str, Any] | None:
        """Every version of a document the principal may see, with its times (UTC, "Z"),
        who uploaded it and its processing lineage; None as `get_document_meta`."""
        doc = self.visible_document(doc_id, principal)
        if doc is None:
            return None
        meta = self.stores.metadata
        uploads = uploaders(meta.jobs(doc_id=doc_id, limit=1000))
        versions = [
            {
                **v,
                "staged_at": f"{v['staged_at']}Z" if v["staged_at"] else None,
                "searchable_at": f"{v['searchable_at']}Z" if v["searchable_at"] else None,
                "uploaded_by": uploads.get(v["version"], ""),
                "lineage": meta.version_lineage(doc_id, v["version"]),
            }
            for v in self._versions(doc_id)
        ]
        return {"doc_id": doc_id, "title": doc.title, "source": doc.source, "versions": versions}

    def visible_document(self, doc_id: str, principal: Principal) -> Document | None:
        """The document, unless it does not exist or the principal may not see it (the
        same answer for both; a hidden one's denial is counted)."""
        doc = self.stores.metadata.document(doc_id)
        if doc is None:
            return None
        if not principal.can_see(doc.acl_tags):
            self.metrics.acl_denials.labels(endpoint="/v1/documents", reason="hidden").inc()
            return None
        return doc

    def sees_documents(self, principal: Principal) -> Callable[[str], bool]:
        """Whether `principal` may see a document (one that exists), memoised for one
        listing, which asks about the same documents again and again (audit rows, gap near
        misses, jobs). A listing leaves out what it may not show: no denial is counted."""
        meta = self.stores.metadata

        @functools.cache
        def sees(doc_id: str) -> bool:
            doc = meta.document(doc_id)
            return doc is not None and principal.can_see(doc.acl_tags)

        return sees

    def require_document(self, doc_id: str, principal: Principal) -> Document:
        """`visible_document`, or NotFound: "no document ID" for a hidden one and a missing
        one alike."""
        doc = self.visible_document(doc_id, principal)
        if doc is None:
            raise NotFound(f"no document {doc_id}")
        return doc

    def _versions(self, doc_id: str) -> list[dict[str, Any]]:
        """A document's versions: status, chunks, pages, when staged and made searchable
        (ISO 8601, UTC without an offset)."""
        meta = self.stores.metadata
        times = meta.version_times(doc_id)
        out = []
        for v in meta.versions(doc_id):
            staged, promoted = times.get(v.version, (None, None))
            out.append(
                {
                    "version": v.version,
                    "status": v.status,
                    "chunks": v.chunk_count,
                    "pages": v.page_count,
                    "staged_at": staged.isoformat() if staged else None,
                    "searchable_at": promoted.isoformat() if promoted else None,
                }
            )
        return out

    def gateway_catalogue(self, principal: Principal) -> dict[str, Any]:
        return self.gateway.catalogue(principal)

    # -- memory: apart from knowledge, never cited -----------------------------------------
    def remember(
        self, principal: Principal, text: str, kind: str = "note", key: str = ""
    ) -> MemoryItem:
        """Keep a note or preference for this principal. Needs a key with write permission;
        returns exactly what was stored."""
        if not (principal.can_write or principal.superuser):
            raise NotAllowed("remembering needs a key with can_write")
        if kind not in MEMORY_KINDS:
            raise NotAllowed(f"kind must be one of {MEMORY_KINDS}")
        text = text.strip()
        if not text or len(text) > 4000:
            raise NotAllowed("a memory is 1..4000 characters of text")
        return self.records.remember(principal.user, kind, key.strip()[:128], text)

    def recall(self, principal: Principal, limit: int = 50) -> list[ContentBlock]:
        """This principal's notes as memory blocks: labelled, not authoritative, no label."""
        return [
            ContentBlock(
                source_id=f"memory:{m.id}",
                source_kind="memory",
                content=m.text,
                confidence=0.0,
                permission_tags=(f"user:{m.owner}",),
                accessed_at=datetime.now(UTC),
                freshness=Freshness(0.0),
                label="",
                title=f"{m.kind}{': ' + m.key if m.key else ''} (memory, not a source)",
                authoritative=False,
                locator={
                    "id": m.id,
                    "kind": m.kind,
                    "key": m.key,
                    "created_at": m.created_at.isoformat(),
                },
            )
            for m in self.records.recall(principal.user, limit)
        ]

    def trace(self, trace_id: str, principal: Principal) -> TraceRecord | None:
        """What one request did, for operators (roles in gateway.trace_roles)."""
        roles = set(self.settings.gateway.trace_roles)
        if not (principal.superuser or principal.roles & roles):
            raise NotAllowed(f"traces are for the roles {sorted(roles)}")
        return self.records.trace(trace_id)

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
            "model": (answer.model.model if answer.model else "") if answer.mode == "llm" else "",
            "model_tier": answer.model.tier if answer.model else "none",
            "knowledge": answer.knowledge,
            "blocks": [b.label for b in answer.blocks],
            "hits": [h.chunk.content_id for h in answer.hits],
            "citations": [c.content_id for c in answer.citations],
            "cited": cited,
            "removed_labels": list(answer.removed_labels),
            "conflicts": len(answer.conflicts),
            "timings_ms": answer.timings_ms,
            "sentences": sentences,
            "verified_sentences": verified,
            "rerank": {
                "weights": asdict(self.reranker.weights),
                "cross_encoder": self.reranker.cross_encoder_name,
            },
            "degraded": self.fast_path.on,
        }

    def search(self, question: str, principal: Principal, **kw: Any) -> SearchResult:
        return asyncio.run(self.asearch(question, principal, **kw))

    def ask(self, question: str, principal: Principal, **kw: Any) -> Answer:
        return asyncio.run(self.aask(question, principal, **kw))

    def warm_up(self) -> None:
        """Load now what the first query would otherwise load: the embedder, jieba's
        dictionaries whole (words, tags and IDF: a process that serves many questions then
        loads nothing per cut), the stemmer. A server calls this at start, so no agent's
        first question pays for it."""
        self.embedder.load()
        load_dictionaries()
        for text in ("预热 warm up", "Warm Up the English keywords"):
            query_terms(text)
            keyword_query_terms(text)
            query_entities(text)
        tagged_words("预热")

    def _llm_clients(self) -> list[OpenAICompatibleClient]:
        clients = {id(a.llm): a.llm for a in self._answerers.values() if a.llm is not None}
        if self.llm is not None:
            clients[id(self.llm)] = self.llm
        return list(clients.values())

    async def close_llm_connections(self) -> None:
        """Close the LLM connections pooled for the running event loop (a server's, as it
        shuts down)."""
        for client in self._llm_clients():
            await client.aclose()
        for chat in self.tool_chats.values():
            await chat.aclose()

    def close(self) -> None:
        for client in self._llm_clients():
            client.close()
        self.gateway.close()
        if self._ingestor is not None:
            self._ingestor.close()
        self._executor.shutdown(wait=False)
        self._answering.shutdown(wait=False)
        self.stores.close()


def _require_question(question: str, context: TaskContext | None) -> None:
    """A query needs a question, or a task context that names entities to look up (every
    surface: the command line, MCP and the HTTP and gRPC APIs say the same)."""
    if (context or TaskContext()).leaves_nothing_to_search(question):
        raise InvalidRequest("question is empty")
