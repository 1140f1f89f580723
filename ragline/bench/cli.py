"""`ragline bench ...` commands. Each runs in a fresh data directory unless told otherwise,
so numbers never depend on what was indexed before."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from core.settings import Settings
from ragline.app import Ragline
from ragline.bench.common import write_json

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks that print their numbers.")

JsonOut = Annotated[Path | None, typer.Option("--json", help="Also write the result here.")]
Work = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Reuse this data dir (default: a fresh temporary one)."),
]


def _run_in(workdir: Path | None, run: Callable[[Ragline, Path], dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragline-bench-") as tmp:
        root = workdir or Path(tmp)
        rag = Ragline(Settings(data_dir=root / "data"))
        try:
            return run(rag, root)
        finally:
            rag.close()


@bench_app.command("squad")
def squad(
    file: Annotated[Path, typer.Argument(exists=True, help="SQuAD-format JSON.")],
    corpus: Annotated[
        list[Path] | None,
        typer.Option("--corpus", exists=True, help="Extra paragraphs (SQuAD JSON)."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
    json_out: JsonOut = None,
    data_dir: Work = None,
) -> None:
    """recall@1/5, mrr@10, answer_contains and latency: pipeline vs BM25 alone."""
    from ragline.bench.squad import run_squad

    result = _run_in(data_dir, lambda rag, root: run_squad(rag, file, corpus or [], limit, root))
    write_json(json_out, result)


@bench_app.command("docs")
def docs(
    docs_dir: Annotated[Path, typer.Option("--docs", exists=True, file_okay=False)],
    questions: Annotated[Path, typer.Option("--questions", exists=True, dir_okay=False)],
    json_out: JsonOut = None,
    data_dir: Work = None,
) -> None:
    """hit@5, answer_contains, citation_page_accuracy, negatives_refused on real documents."""
    from ragline.bench.docs import run_docs

    result = _run_in(data_dir, lambda rag, root: run_docs(rag, docs_dir, questions))
    write_json(json_out, result)
