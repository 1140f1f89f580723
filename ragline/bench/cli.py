"""`ragline bench ...` commands. Each runs in a fresh data directory unless told otherwise,
so numbers never depend on what was indexed before."""

from __future__ import annotations

import contextlib
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

if TYPE_CHECKING:  # imported where used: `ragline --help` must not load the stores
    from core.settings import Settings
    from ragline.app import Ragline

bench_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, help="Benchmarks that print their numbers."
)

JsonOut = Annotated[Path | None, typer.Option("--json", help="Also write the result here.")]
Work = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Reuse this data dir (default: a fresh temporary one)."),
]


Profile = Annotated[
    Literal["embedded", "production"],
    typer.Option(
        "--profile",
        help="production: PostgreSQL, Elasticsearch and Neo4j from RAGLINE_METADATA_URL and "
        "RAGLINE_BACKENDS__*; a scratch database, index and graph namespace per run.",
    ),
]


@contextlib.contextmanager
def _settings(root: Path, profile: str) -> Iterator[Settings]:
    from core.settings import Settings

    if profile != "production":
        yield Settings(data_dir=root / "data")
        return
    from indexing.migrate import scratch_database

    base = Settings()
    if not base.metadata_url.startswith("postgresql"):
        raise typer.BadParameter("--profile production needs RAGLINE_METADATA_URL=postgresql...")
    run = uuid.uuid4().hex[:10]
    backends = base.backends.model_copy(
        update={
            "keyword": "elasticsearch",
            "graph": "neo4j",
            "es_index": f"ragline-bench-{run}",
            "es_dense_index": f"ragline-bench-vec-{run}",
            "neo4j_namespace": f"bench-{run}",
        }
    )
    with scratch_database(base.metadata_url, prefix="ragline_bench") as url:
        yield base.model_copy(
            update={
                "profile": "production",
                "data_dir": root / "data",
                "metadata_url": url,
                "backends": backends,
            }
        )


def _run_in(
    workdir: Path | None,
    run: Callable[[Ragline, Path], dict[str, Any]],
    profile: str = "embedded",
) -> dict[str, Any]:
    from ragline.app import Ragline

    with (
        tempfile.TemporaryDirectory(prefix="ragline-bench-") as tmp,
        _settings(workdir or Path(tmp), profile) as settings,
    ):
        root = workdir or Path(tmp)
        rag = Ragline(settings)
        try:
            result = run(rag, root)
            result["profile"] = profile
            return result
        finally:
            for store in (rag.stores.keyword, rag.stores.graph, rag.stores.dense):
                drop = getattr(store, "drop", None)  # this run's index / namespace
                if profile == "production" and drop is not None:
                    drop()
            rag.close()


def write_json(path: Path | None, result: dict[str, Any]) -> None:
    from ragline.bench.common import write_json as write

    write(path, result)


def write_json_quiet(path: Path, result: dict[str, Any]) -> None:
    from ragline.bench.common import write_json_quiet as write

    write(path, result)


Negatives = Annotated[
    bool,
    typer.Option(
        "--negatives/--no-negatives",
        help="Also ask each answerable question with its answer's documents hidden "
        "(the right reply is 'not covered').",
    ),
]


@bench_app.command("squad")
def squad(
    file: Annotated[Path, typer.Argument(exists=True, help="SQuAD-format JSON.")],
    corpus: Annotated[
        list[Path] | None,
        typer.Option("--corpus", exists=True, help="Extra paragraphs (SQuAD JSON)."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
    negatives: Negatives = True,
    json_out: JsonOut = None,
    data_dir: Work = None,
    profile: Profile = "embedded",
) -> None:
    """recall@1/5, mrr@10, answer_contains and latency: pipeline vs BM25 alone; refusals
    with the answer taken away."""
    from ragline.bench.squad import run_squad

    result = _run_in(
        data_dir,
        lambda rag, root: run_squad(rag, file, corpus or [], limit, root, negatives),
        profile,
    )
    write_json(json_out, result)


@bench_app.command("docs")
def docs(
    docs_dir: Annotated[Path, typer.Option("--docs", exists=True, file_okay=False)],
    questions: Annotated[
        list[Path],
        typer.Option(
            "--questions",
            exists=True,
            dir_okay=False,
            help="Question file (JSON lines); repeat for more. The first is `pipeline`.",
        ),
    ],
    negatives: Negatives = True,
    json_out: JsonOut = None,
    data_dir: Work = None,
    profile: Profile = "embedded",
) -> None:
    """hit@5, answer_contains, citation_page_accuracy, citation_support, negatives_refused
    on real documents; near-miss refusals and their twins apart; refusals with the answer
    taken away."""
    from ragline.bench.docs import run_docs

    result = _run_in(
        data_dir, lambda rag, root: run_docs(rag, docs_dir, questions, negatives), profile
    )
    write_json(json_out, result)
    near = result.get("near_miss") or {}
    if near:
        typer.echo(
            f"near-miss: refused {near['refused']} of {near['negatives']} negatives; "
            f"twins answer_contains {near['twins_answer_contains']} ({near['twins']})",
            err=True,
        )


@bench_app.command("ingest")
def ingest(
    docs_dir: Annotated[Path | None, typer.Option("--docs", exists=True, file_okay=False)] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Keep each file's best.")] = 1,
    end_to_end: Annotated[
        bool,
        typer.Option(
            "--end-to-end",
            help="Ingest into fresh data dirs (embedding and every store included), "
            "against one-file-at-a-time ingest in the same run.",
        ),
    ] = False,
    squad: Annotated[
        Path | None,
        typer.Option(
            "--squad",
            exists=True,
            dir_okay=False,
            help="With --end-to-end: also ingest this SQuAD/CMRC file's paragraphs, one file each.",
        ),
    ] = None,
    paragraphs: Annotated[
        int, typer.Option("--paragraphs", min=0, help="With --squad: the first N (0 = all).")
    ] = 0,
    json_out: JsonOut = None,
) -> None:
    """pages/s and chunks/s per format for parse + PII mask + chunk on one core (no
    embedding, no stores; target >= 20 text-PDF pages/s); with --end-to-end, the whole
    ingest (targets >= 100 chunks/s, >= 40 PDF pages/s)."""
    from core.settings import Settings

    if end_to_end:
        from ragline.bench.ingest_e2e import run_end_to_end

        if docs_dir is None and squad is None:
            raise typer.BadParameter("give --docs, --squad or both")
        result = run_end_to_end(docs_dir, squad, paragraphs, Settings())
        write_json(json_out, result)
        typer.echo(
            f"end to end: {result['candidate']['chunks_per_s']} chunks/s against "
            f"{result['baseline']['chunks_per_s']} one file at a time "
            f"({result['ratio_chunks_per_s']}x)",
            err=True,
        )
        return
    from ragline.bench.ingest import run_ingest_bench

    if docs_dir is None:
        raise typer.BadParameter("--docs is required")
    write_json(json_out, run_ingest_bench(docs_dir, Settings(), repeat))


@bench_app.command("freshness")
def freshness(
    docs_dir: Annotated[Path, typer.Option("--docs", exists=True, file_okay=False)],
    redis_url: Annotated[
        str, typer.Option("--redis-url", help="Broker, see deploy/local/env.sh.")
    ] = "redis://127.0.0.1:56379/0",
    concurrency: Annotated[int, typer.Option(min=1, help="Uploads in flight.")] = 1,
    json_out: JsonOut = None,
) -> None:
    """Upload -> searchable seconds (p50/p95) through `ragline serve` + one worker on Redis."""
    from ragline.bench.freshness import run_freshness

    write_json(json_out, run_freshness(docs_dir, redis_url, concurrency))


@bench_app.command("load")
def load(
    docs_dir: Annotated[Path, typer.Option("--docs", exists=True, file_okay=False)],
    questions: Annotated[
        Path,
        typer.Option(
            "--questions",
            exists=True,
            dir_okay=False,
            help="JSONL with `question`, SQuAD JSON, or one question per line.",
        ),
    ],
    scenario: Annotated[
        Literal["search", "ask", "mixed", "open"], typer.Option("--scenario")
    ] = "search",
    users: Annotated[str, typer.Option("--users", help="Client counts, comma-separated.")] = (
        "1,10,50,200"
    ),
    duration: Annotated[int, typer.Option("--duration", min=5, help="Seconds per point.")] = 20,
    workers: Annotated[int, typer.Option("--workers", min=0, help="0 = one per core.")] = 0,
    max_in_flight: Annotated[int, typer.Option("--max-in-flight", min=0)] = 32,
    period: Annotated[
        float, typer.Option("--period", help="open: seconds between one agent's calls.")
    ] = 2.0,
    baseline: Annotated[
        bool, typer.Option("--baseline/--no-baseline", help="Also measure 1 process, no bound.")
    ] = True,
    baseline_env: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline-env",
            help="NAME=VALUE the baseline server alone runs with (repeatable), e.g. "
            "RAGLINE_EMBEDDER__QUERY_BATCH=1 to measure without a feature.",
        ),
    ] = None,
    client: Annotated[
        Literal["fast", "requests"],
        typer.Option(
            "--client",
            help="Locust's HTTP client: fast (FastHttpUser, geventhttpclient) leaves the "
            "shared cores to the server; requests (HttpUser) is what earlier runs used.",
        ),
    ] = "fast",
    retry_after: Annotated[
        Literal["ignore", "honour"],
        typer.Option(
            "--retry-after",
            help="ignore: a refused agent calls again at once (the worst case); honour: it "
            "waits the Retry-After seconds first, as a well-behaved client does.",
        ),
    ] = "ignore",
    json_out: JsonOut = None,
    profile: Profile = "embedded",
) -> None:
    """req/s, p50/p95 and 429s through `ragline serve` under Locust: candidate (N processes,
    in-flight bound) vs baseline (one process, unbounded) in the same run."""
    from core.cores import cores
    from ragline.bench.load import ServerConfig, run_load

    counts = [int(u) for u in users.split(",") if u.strip()]
    candidate = ServerConfig("candidate", workers or cores(), max_in_flight)
    pairs = [e.split("=", 1) for e in baseline_env or []]
    if any(len(p) != 2 or not p[0] for p in pairs):
        raise typer.BadParameter("expected NAME=VALUE", param_hint="--baseline-env")
    env = tuple((p[0], p[1]) for p in pairs)
    base = ServerConfig("baseline", 1, 0, env) if baseline else None
    with (
        tempfile.TemporaryDirectory(prefix="ragline-bench-") as tmp,
        _settings(Path(tmp), profile) as settings,
    ):
        result = run_load(
            settings,
            docs_dir,
            questions,
            scenario,
            counts,
            duration,
            candidate,
            base,
            period,
            client,
            retry_after,
        )
        result["profile"] = profile
    write_json(json_out, result)


@bench_app.command("scale")
def scale(
    chunks: Annotated[
        str, typer.Option("--chunks", help="Corpus sizes, comma-separated (e.g. 10000,100000).")
    ] = "10000",
    data: Annotated[
        Path | None,
        typer.Option(
            "--data", exists=True, file_okay=False, help="Shared data (cmrc2018/, docs/)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 13,
    questions: Annotated[
        int, typer.Option("--questions", min=1, help="Planted questions asked at most.")
    ] = 200,
    max_embed: Annotated[
        int | None,
        typer.Option(
            "--max-embed",
            min=0,
            help="Embed at most this many uncached chunks; the rest get derived vectors "
            "(reported). Default: embed all.",
        ),
    ] = None,
    vectors: Annotated[
        Path, typer.Option("--vectors", help="Embedding cache, reused across runs and sizes.")
    ] = Path(".ragline-bench/scale-vectors"),
    approx: Annotated[
        Literal["ivf", "hnsw"], typer.Option("--approx", help="Approximate index measured.")
    ] = "ivf",
    nprobe: Annotated[
        int | None, typer.Option("--nprobe", min=0, help="IVF probes; 0 = automatic.")
    ] = None,
    sweep: Annotated[
        str, typer.Option("--sweep-nprobe", help="Also measure these probe counts (1,2,...).")
    ] = "",
    dense_only: Annotated[
        bool,
        typer.Option(
            "--dense-only", help="Only the dense index: exact vs approximate (no stores)."
        ),
    ] = False,
    json_out: JsonOut = None,
    profile: Profile = "embedded",
) -> None:
    """Ingest rate, disk, memory, pipeline recall@10 and p50/p95 at N scale-corpus chunks;
    the approximate dense index against exact search (baseline) in the same run."""
    from core.settings import Settings
    from ragline.bench.hostile_corpus import find_shared_docs
    from ragline.bench.scale import run_scale
    from ragline.bench.scale_corpus import default_corpus
    from ragline.bench.scale_vectors import VectorCache

    shared_docs = find_shared_docs(Path.cwd()) or find_shared_docs(Path(__file__).resolve())
    root = data or (shared_docs.parent if shared_docs else None)
    if root is None or not (root / "cmrc2018").is_dir():
        raise typer.BadParameter("no shared data (cmrc2018/, docs/) found: pass --data")
    say = lambda m: typer.echo(m, err=True)  # noqa: E731
    corpus = default_corpus(root, seed)
    say(
        f"scale corpus {corpus.fingerprint}: {corpus.sentences:,} sentences, "
        f"{len(corpus.questions)} planted questions"
    )
    base = Settings()
    cache = VectorCache(vectors, corpus, *_embedder_id(base))
    probes = base.backends.dense_nprobe if nprobe is None else nprobe
    extra = tuple(int(p) for p in sweep.split(",") if p.strip())
    results = []
    for n in [int(c) for c in chunks.split(",") if c.strip()]:
        say(f"--- {n:,} chunks ({profile})")

        def one(rag: Ragline, root: Path, n: int = n) -> dict[str, Any]:
            return run_scale(
                rag,
                corpus,
                n,
                cache,
                root,
                max_embed=n if max_embed is None else max_embed,
                max_questions=questions,
                approx=approx,
                nprobe=probes,
                say=say,
                dense_only=dense_only,
                sweep=extra,
            )

        results.append(_run_in(None, one, profile))
        if json_out is not None:  # after every size: a long run keeps what it measured
            write_json_quiet(json_out, {"profile": profile, "runs": results})
    write_json(json_out, {"profile": profile, "runs": results})


def _embedder_id(settings: Settings) -> tuple[str, int]:
    from indexing.embedders import make_embedder

    embedder = make_embedder(settings.embedder)  # the model loads lazily: cheap
    return embedder.model, embedder.dim


@bench_app.command("hostile")
def hostile(
    files: Annotated[
        int, typer.Option("--files", min=0, help="Mutated copies of the shared documents.")
    ] = 300,
    seed: Annotated[int, typer.Option("--seed")] = 14,
    scale: Annotated[
        float,
        typer.Option("--scale", min=0.01, help="Size of the huge crafted files (1: as probed)."),
    ] = 1.0,
    docs_dir: Annotated[
        Path | None,
        typer.Option("--docs", exists=True, file_okay=False, help="Default: shared/data/docs."),
    ] = None,
    parse_only: Annotated[
        bool,
        typer.Option("--parse-only", help="Only parse the corpus: worker peak memory, times."),
    ] = False,
    json_out: JsonOut = None,
    data_dir: Work = None,
) -> None:
    """Hostile corpus: every file failed with a reason or indexed with chunks, no crash or
    hang, workers under the memory cap, stores in agreement, good documents still answer.
    Exits 1 when any of that does not hold."""
    from ragline.bench.hostile import parse_only as run_parse_only
    from ragline.bench.hostile import run_hostile
    from ragline.bench.hostile_corpus import find_shared_docs, source_documents

    found = docs_dir or find_shared_docs(Path.cwd()) or find_shared_docs(Path(__file__).resolve())
    if found is None:
        raise typer.BadParameter("no shared/data/docs found: pass --docs")
    sources = source_documents(found)
    if parse_only:
        result = _run_in(
            data_dir, lambda rag, root: run_parse_only(rag, root, sources, files, seed, scale)
        )
    else:
        result = _run_in(
            data_dir,
            lambda rag, root: run_hostile(rag, root, sources, sources, files, seed, scale),
        )
    detail = result.pop("files_detail")
    write_json(None, result)
    if json_out is not None:
        write_json_quiet(json_out, {**result, "files_detail": detail})
    if not result["ok"]:
        raise typer.Exit(1)


@bench_app.command("gateway")
def gateway(
    docs_dir: Annotated[
        Path, typer.Option("--docs", exists=True, file_okay=False, help="Documents to ingest.")
    ] = Path("examples"),
    questions: Annotated[
        Path | None, typer.Option("--questions", exists=True, dir_okay=False)
    ] = None,
    json_out: JsonOut = None,
    data_dir: Work = None,
) -> None:
    """Routing accuracy, answer accuracy and p95 latency per source kind (documents, rows,
    status) on labelled mixed questions; baseline: documents only, same run."""
    from ragline.bench.gateway import QUESTIONS, run_gateway

    with tempfile.TemporaryDirectory(prefix="ragline-bench-") as tmp:
        result = run_gateway(data_dir or Path(tmp), docs_dir, questions or QUESTIONS)
    write_json(json_out, result)


@bench_app.command("agent")
def agent(
    docs_dir: Annotated[Path, typer.Option("--docs", exists=True, file_okay=False)],
    questions: Annotated[
        list[Path], typer.Option("--questions", exists=True, dir_okay=False, help="Repeatable.")
    ],
    llm_url: Annotated[
        str, typer.Option("--llm-url", help="Also answer with this OpenAI-compatible LLM.")
    ] = "",
    llm_model: Annotated[str, typer.Option("--llm-model")] = "smollm2-135m-instruct",
    llm_sample: Annotated[
        int | None,
        typer.Option("--llm-sample", min=1, help="Answer only N questions, spread evenly."),
    ] = None,
    json_out: JsonOut = None,
    data_dir: Work = None,
) -> None:
    """The search tool's "not in the material" threshold (answerable vs not), and with
    --llm-url the LLM's answers against the extractive ones on the same passages."""
    from core.settings import LLMSettings
    from ragline.bench.agent import run_agent_bench

    llm = (
        LLMSettings(base_url=llm_url, model=llm_model, timeout_s=300, max_tokens=200)
        if llm_url
        else None
    )
    result = _run_in(
        data_dir, lambda rag, root: run_agent_bench(rag, docs_dir, questions, llm, llm_sample)
    )
    write_json(json_out, result)


@bench_app.command("startup")
def startup(
    docs_dir: Annotated[
        Path | None, typer.Option("--docs", exists=True, file_okay=False, help="Ingest these.")
    ] = None,
    question: Annotated[
        list[str] | None,
        typer.Option("--question", help="Asked and searched (repeatable)."),
    ] = None,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Cold starts per command.")] = 5,
    baseline_ref: Annotated[
        str | None,
        typer.Option("--baseline-ref", help="Also run this git ref's code, same run."),
    ] = None,
    json_out: JsonOut = None,
    data_dir: Work = None,
) -> None:
    """`ragline ask` / `ragline search` from a cold shell: wall time, and the time to the
    first model call (target <= 1 s); with --baseline-ref, ratios from one run."""
    from ragline.bench.startup import print_table, run_startup_bench

    questions = question or ["个人信息处理者应当保证什么？", "What is a policy enforcement point?"]
    with tempfile.TemporaryDirectory(prefix="ragline-bench-") as tmp:
        root = data_dir or Path(tmp) / "data"
        if docs_dir:
            _ingest_for_query(root, docs_dir, [], Path(tmp))
        result = run_startup_bench(root, questions, runs, baseline_ref)
    print_table(result)
    write_json(json_out, result)


@bench_app.command("query")
def query(
    questions: Annotated[
        list[Path],
        typer.Option(
            "--questions",
            exists=True,
            dir_okay=False,
            help="JSON lines with `question`, or SQuAD JSON (repeatable; one set each).",
        ),
    ],
    docs_dir: Annotated[
        Path | None, typer.Option("--docs", exists=True, file_okay=False, help="Ingest these.")
    ] = None,
    squad: Annotated[
        list[Path] | None,
        typer.Option("--squad", exists=True, dir_okay=False, help="Ingest its paragraphs."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Per question set.")] = None,
    warmup: Annotated[int, typer.Option("--warmup", min=0, help="Per set, not measured.")] = 5,
    mode: Annotated[Literal["ask", "search"], typer.Option("--mode")] = "ask",
    baseline_ref: Annotated[
        str | None,
        typer.Option("--baseline-ref", help="Also run this git ref's code, same index, same run."),
    ] = None,
    quoting_llm: Annotated[
        bool,
        typer.Option(
            "--quoting-llm",
            help="Answer through an instant stand-in LLM server that quotes the first source "
            "(the LLM-written ask path, without an LLM's CPU on this machine).",
        ),
    ] = False,
    json_out: JsonOut = None,
    data_dir: Work = None,
) -> None:
    """CPU per query and the part of it around the stores and models (target <= 3 ms),
    per stage; with --baseline-ref, before/after ratios from one run."""
    from contextlib import nullcontext

    from ragline.bench.query import load_questions, print_table, run_query_bench
    from ragline.bench.quoting_llm import QuotingLLM

    sets = [load_questions(q, limit + warmup if limit else None) for q in questions]
    with tempfile.TemporaryDirectory(prefix="ragline-bench-") as tmp:
        root = data_dir or Path(tmp) / "data"
        if docs_dir or squad:
            _ingest_for_query(root, docs_dir, squad or [], Path(tmp))
        with QuotingLLM() if quoting_llm else nullcontext("") as llm_url:
            result = run_query_bench(root, sets, mode, warmup, baseline_ref, llm_url)
    print_table(result)
    write_json(json_out, result)


def _ingest_for_query(root: Path, docs_dir: Path | None, squad: list[Path], tmp: Path) -> None:
    from core.settings import Settings
    from ragline.app import Ragline
    from ragline.bench.squad import load_squad, write_corpus

    folders = [docs_dir] if docs_dir else []
    for file in squad:
        paragraphs, _ = load_squad(file)
        write_corpus(paragraphs, tmp / "corpus" / file.stem)
        folders.append(tmp / "corpus" / file.stem)
    rag = Ragline(Settings(data_dir=root))
    try:
        rag.ingest(folders)
    finally:
        rag.close()
