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
    stages = result["pipeline"]["stages_ms"]  # where the time goes, per source too
    assert {"retrieve", "rerank", "source_keyword", "source_dense"} <= set(stages)
    assert all(s["p95_ms"] >= s["p50_ms"] >= 0 for s in stages.values())
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


class _Served:
    """A served dense index answering from exact search's ranking, rank `pick` (0-based)
    by rank: an ANN index that breaks a tie otherwise, or one that misses."""

    def __init__(self, exact: object, pick: list[int]) -> None:
        self.exact, self.pick = exact, pick

    def search(self, vector: np.ndarray, k: int, where: object) -> list[object]:
        hits = self.exact.search(vector, max(self.pick) + 1, where)  # type: ignore[attr-defined]
        return [hits[i] for i in self.pick]


def test_dense_recall_counts_a_tied_copy_but_the_id_share_does_not(tmp_path: Path) -> None:
    """Recall against exact search counts a returned chunk whose exact score reaches the
    10th (the scale corpus repeats sentences, so copies tie); `recall@10_ids` is the
    strict share of exact's own ids. A chunk scoring below the 10th counts in neither."""
    from indexing.protocols import IndexedChunk
    from indexing.stores.faiss_dense import FaissDenseIndex
    from ragline.bench.scale import _chunks_of, dense_compare

    corpus = ScaleCorpus(_paragraphs(40), questions=3)
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        n, dim = 210, rag.embedder.dim
        rng = np.random.default_rng(0)
        unique = rng.normal(size=(n // 3, dim)).astype(np.float32)
        unique /= np.linalg.norm(unique, axis=1, keepdims=True)
        vectors = np.concatenate([unique] * 3)  # three chunks hold each vector
        chunks = [c for d in range(n // 10) for c in _chunks_of(corpus, d, n, False)[1]]
        assert len(chunks) == n
        exact = FaissDenseIndex(tmp_path / "served", dim, rag.embedder.model)
        exact.upsert([IndexedChunk(c, vectors[i]) for i, c in enumerate(chunks)])

        def run(pick: list[int]) -> dict[str, float]:
            out = dense_compare(
                rag,
                corpus,
                vectors,
                corpus.questions,
                "exact",
                0,
                tmp_path / "run",
                lambda _m: None,
                served=_Served(exact, pick),  # type: ignore[arg-type]
            )
            return out["all"]  # type: ignore[no-any-return]

        # Ranks 10-12 (1-based) are the three copies of the 4th vector: the 11th ties.
        tied = run([*range(9), 10])
        assert tied["tied_at_10"] == tied["queries"] > 0
        assert tied["recall@10_vs_exact"] == 1.0
        assert tied["recall@10_ids"] == 0.9
        below = run(list(range(12, 22)))  # the 5th vector on: all below the 10th
        assert below["recall@10_vs_exact"] == below["recall@10_ids"] == 0.0
    finally:
        rag.close()
