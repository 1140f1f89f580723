"""The scale corpus and `ragline bench scale` on a small hand-made source."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.settings import Settings
from ragline.app import Ragline
from ragline.bench.scale import run_scale
from ragline.bench.scale_corpus import PLANT_EVERY, ScaleCorpus
from ragline.bench.scale_vectors import VectorCache


def _paragraphs(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for p in range(n):
        context = "".join(f"第{p}段第{s}句讲述编号{p * 10 + s}的事情。" for s in range(6))
        out.append(
            {
                "context": context,
                "qas": [
                    {
                        "id": f"q{p}",
                        "question": f"编号{p * 10 + 3}的事情在哪一句？",
                        "answers": [{"text": f"编号{p * 10 + 3}的事情"}],
                    }
                ],
            }
        )
    return out


def test_corpus_is_seeded_prefix_stable_and_plants_each_answer_once() -> None:
    corpus = ScaleCorpus(_paragraphs(40), ["An English block. It has two sentences."], questions=5)
    again = ScaleCorpus(_paragraphs(40), ["An English block. It has two sentences."], questions=5)
    assert corpus.fingerprint == again.fingerprint
    assert [c.text for c in corpus.chunks(300)] == [c.text for c in again.chunks(300)]
    assert corpus.chunk(123).text == again.chunk(123).text  # random access = sequential
    assert len(corpus.questions) == 5
    assert [q.chunk for q in corpus.questions] == [j * PLANT_EVERY for j in range(5)]
    texts = [c.text for c in corpus.chunks(2000)]
    for q in corpus.questions:
        assert q.answers[0] in texts[q.chunk]
        # the planted paragraph is out of the filler pool: its answer occurs once
        assert sum(q.answers[0] in t for t in texts) == 1
    assert corpus.questions_within(41) == corpus.questions[:3]
    other = ScaleCorpus(_paragraphs(40), seed=14, questions=5)
    assert other.fingerprint != corpus.fingerprint


def test_bench_scale_measures_recall_and_the_approximate_index(tmp_path: Path) -> None:
    corpus = ScaleCorpus(_paragraphs(60), questions=8)
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        model, dim = rag.embedder.model, rag.embedder.dim
        cache = VectorCache(tmp_path / "vectors", corpus, model, dim, block=100)
        result = run_scale(
            rag,
            corpus,
            400,
            cache,
            tmp_path,
            max_embed=200,
            max_questions=8,
            approx="ivf",
            nprobe=64,
            say=lambda _m: None,
        )
    finally:
        rag.close()
    assert result["vectors"]["real"] == 200 and result["vectors"]["derived"] == 200
    assert cache.cached(1000) == 200  # whole blocks: only the embedded ones
    assert result["ingest"]["chunks"] == 400 and not result["ingest"]["sync_errors"]
    assert result["pipeline"]["questions"] == 8
    assert result["pipeline"]["recall@10"] >= 0.75  # planted chunks are found
    dense = result["dense"]
    assert dense["all"]["recall@10_vs_exact"] >= 0.95
    assert dense["acl"]["queries"] == dense["all"]["queries"] > 0
    vectors = cache.load(0, 200)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_bench_scale_command_runs_dense_only(tmp_path: Path) -> None:
    """The command itself, end to end on a small data folder (it once failed before any
    work: a name used in the command was never imported)."""
    import json

    from typer.testing import CliRunner

    from ragline.cli import app as cli

    data = tmp_path / "shared"
    (data / "cmrc2018").mkdir(parents=True)
    (data / "docs").mkdir()
    (data / "docs" / "note.md").write_text("# Note\n\nAn English block. It has two sentences.\n")
    for name in ("train.json", "trial.json"):
        squad = {"data": [{"title": "t", "paragraphs": _paragraphs(30)}]}
        (data / "cmrc2018" / name).write_text(json.dumps(squad, ensure_ascii=False))
    out = tmp_path / "scale.json"
    result = CliRunner().invoke(
        cli,
        [
            "bench",
            "scale",
            "--chunks",
            "120",
            "--dense-only",
            "--max-embed",
            "20",
            "--questions",
            "3",
            "--data",
            str(data),
            "--vectors",
            str(tmp_path / "vectors"),
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    run = json.loads(out.read_text())["runs"][0]
    assert run["chunks"] == 120 and run["vectors"]["real"] == 20
    assert run["dense"]["all"]["recall@10_vs_exact"] > 0
