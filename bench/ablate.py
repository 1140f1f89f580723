"""On/off ablations of the business signals (issue 9), in one process over one index.

Ingests once (or reuses --data-dir), then runs every question through the search pipeline
once per variant, switching one signal off at a time, with BM25 alone (the same keyword
index) alongside. SQuAD mode ranks documents (a document's chunks count once); docs mode
ranks passages: the first chunk of the gold file that contains the answer.

    # SQuAD-format (CMRC): gold = the question's own paragraph
    .venv/bin/python bench/ablate.py squad ../shared/data/cmrc2018/trial.json --json out.json
    # Question sets over real documents (bench/questions/*.jsonl): gold = the file
    .venv/bin/python bench/ablate.py docs --docs ../shared/data/docs \
        --questions bench/questions/synonyms_qa.jsonl --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.settings import FusionSettings, Settings
from core.types import Chunk, QueryFilter
from fusion.trust import TrustPolicy
from ragline.app import Ragline
from ragline.bench.common import OPERATOR, percentile, rank_metrics
from ragline.bench.squad import load_squad, write_corpus

Variant = Callable[[Ragline], None]


def _fusion(rag: Ragline, **changes: Any) -> None:
    fusion = FusionSettings.model_validate({**rag.settings.fusion.model_dump(), **changes})
    rag.reranker.fusion = fusion
    rag.reranker.policy = TrustPolicy(fusion)


def without_timeouts(rag: Ragline) -> None:
    """Quality, not latency, is measured here: on a loaded machine a source timing out
    would change results at random, so every source gets a minute."""
    rag.router.rules = tuple(
        replace(rule, sources=tuple(replace(s, timeout_s=60.0) for s in rule.sources))
        for rule in rag.router.rules
    )


def variants(rag: Ragline) -> dict[str, Variant]:
    synonyms = rag.pipeline._synonyms
    base = rag.settings.fusion
    rules = rag.router.rules

    def reset(r: Ragline) -> None:
        r.reranker.fusion = base
        r.reranker.policy = TrustPolicy(base)
        r.pipeline._synonyms = synonyms
        r.router.rules = rules

    def dense_weight(weight: float) -> Variant:
        def apply(r: Ragline) -> None:
            reset(r)
            r.router.rules = tuple(
                replace(
                    rule,
                    sources=tuple(
                        replace(s, weight=weight) if s.name == "dense" else s for s in rule.sources
                    ),
                )
                for rule in rules
            )

        return apply

    def only(**changes: Any) -> Variant:
        def apply(r: Ragline) -> None:
            reset(r)
            _fusion(r, **changes)

        return apply

    def no_synonyms(r: Ragline) -> None:
        reset(r)
        r.pipeline._synonyms = None

    off = FusionSettings(
        base=1.0, timeliness_weight=0.0, trust_weight=0.0, coverage_weight=0.0,
        rrf_trust_share=0.0, order_versions=False,
    )  # fmt: skip
    return {
        "all on": reset,
        "formula off (relevance only)": only(
            **{
                k: getattr(off, k)
                for k in (
                    "base",
                    "timeliness_weight",
                    "trust_weight",
                    "coverage_weight",
                    "rrf_trust_share",
                    "order_versions",
                )
            }
        ),
        "timeliness off": only(use_timeliness=False),
        "trust off": only(use_trust=False),
        "version ordering off": only(order_versions=False),
        "synonyms off": no_synonyms,
        "dense weight 1.0 (peer of keyword)": dense_weight(1.0),
        "dense weight 0.25": dense_weight(0.25),
    }


Question = tuple[str, str, str]  # text, gold doc_id, answer ("" = the document is the gold)


def _norm(text: str) -> str:
    return "".join(text.split()).lower()


def _rank(chunks: list[Chunk], gold: str, answer: str) -> int | None:
    """Documents ranked (each counts once) when there is no answer string; otherwise
    passages: the first chunk of the gold document that contains the answer."""
    if not answer:
        ranking = list(dict.fromkeys(c.doc_id for c in chunks))
        return ranking.index(gold) + 1 if gold in ranking else None
    want = _norm(answer)
    for i, c in enumerate(chunks, start=1):
        if c.doc_id == gold and want in _norm(c.text):
            return i
    return None


def evaluate(
    rag: Ragline, questions: list[Question], ingest_s: float, only: list[str] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(questions), "ingest_s": round(ingest_s, 1)}
    where = QueryFilter.for_principal(OPERATOR)

    def summary(ranks: list[int | None], lat: list[float]) -> dict[str, float]:
        rows = [rank_metrics(r) for r in ranks]
        res = {k: round(sum(r[k] for r in rows) / max(len(rows), 1), 4) for k in rows[0]}
        res["latency_ms_p50"] = round(percentile(lat, 50), 1)
        return res

    ranks: list[int | None] = []
    lat: list[float] = []
    serving = rag.stores.metadata.serving
    for text, gold, answer in questions:
        t = time.perf_counter()
        ids = [s.content_id for s in rag.stores.keyword.search(text, 50, where)]
        served = serving(ids)
        lat.append((time.perf_counter() - t) * 1000)
        ranks.append(_rank([served[i] for i in ids if i in served], gold, answer))
    out["bm25 alone"] = summary(ranks, lat)

    async def run() -> tuple[list[int | None], list[float]]:
        ranks: list[int | None] = []
        lat: list[float] = []
        for text, gold, answer in questions:
            t = time.perf_counter()
            res = await rag.asearch(text, OPERATOR, top_k=50 if answer else 10)
            lat.append((time.perf_counter() - t) * 1000)
            ranks.append(_rank([h.chunk for h in res.hits], gold, answer))
        return ranks, lat

    for name, apply in variants(rag).items():
        if only and name not in only:
            continue
        apply(rag)
        out[name] = summary(*asyncio.run(run()))
        print(name, out[name], flush=True)
    variants(rag)["all on"](rag)
    return out


def squad_questions(
    rag: Ragline, root: Path, file: Path, corpus: list[Path], limit: int | None
) -> tuple[list[Question], float]:
    paragraphs, questions = load_squad(file)
    for extra in corpus:
        more, _ = load_squad(extra)
        for k, v in more.items():
            paragraphs.setdefault(k, v)
    files = write_corpus(paragraphs, root / "corpus")
    t0 = time.perf_counter()
    outcomes, _ = rag.ingest([root / "corpus"])
    key_doc = {files[str(Path(o.path).resolve())]: o.doc_id for o in outcomes if o.doc_id}
    qs = [(q.text, key_doc.get(q.paragraph, ""), "") for q in questions[: limit or None]]
    return qs, time.perf_counter() - t0


def docs_questions(rag: Ragline, docs: Path, questions_file: Path) -> tuple[list[Question], float]:
    t0 = time.perf_counter()
    outcomes, _ = rag.ingest([docs])
    by_file = {
        str(Path(o.path).resolve().relative_to(docs.resolve())): o.doc_id
        for o in outcomes
        if o.doc_id
    }
    qs = []
    for line in questions_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            if q.get("file"):
                qs.append((q["question"], by_file.get(q["file"], ""), q["answer"]))
    return qs, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["squad", "docs"])
    ap.add_argument("file", type=Path, nargs="?")
    ap.add_argument("--corpus", type=Path, action="append", default=[])
    ap.add_argument("--docs", type=Path)
    ap.add_argument("--questions", type=Path)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--data-dir", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--variants", help="Comma-separated variant names (default: all).")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data_dir or Path(tmp)
        rag = Ragline(Settings(data_dir=root / "data"))
        try:
            if args.mode == "squad":
                qs, ingest_s = squad_questions(rag, root, args.file, args.corpus, args.limit)
            else:
                qs, ingest_s = docs_questions(rag, args.docs, args.questions)
            without_timeouts(rag)
            chosen = [v.strip() for v in args.variants.split(",")] if args.variants else None
            result = evaluate(rag, qs, ingest_s, chosen)
        finally:
            rag.close()
    text = json.dumps(result, ensure_ascii=False, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
