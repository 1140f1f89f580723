"""`ragline bench squad`: retrieval and answer quality on SQuAD-format data (CMRC 2018 is),
for the full pipeline and for BM25 alone over the same index, in the same run.

With `negatives` on, every question is asked a second time with the answer taken away: a
filter hides its own paragraph and every paragraph that holds one of its gold answers, so
what retrieval finds is the rest of the corpus, often the same article's other paragraphs
(the same names, not the answer). The right reply is "not covered"; `removed_answer`
reports how often it is, and how the confidence lines up over both kinds of question. Any
SQuAD-format file makes such near-miss negatives, in any language, without writing one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import InvalidRequest
from core.types import QueryFilter
from ragline.app import Ragline
from ragline.bench.common import (
    OPERATOR,
    AnswerHider,
    calibration_of,
    contains_answer,
    covered_calibration,
    doc_ranking,
    percentile,
    rank_metrics,
    removed_report,
)
from ragline.bench.support import sentence_support


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    answers: tuple[str, ...]
    paragraph: str  # key of the question's own paragraph


def load_squad(path: Path) -> tuple[dict[str, tuple[str, str]], list[Question]]:
    """Paragraphs keyed by content hash (title, context) and the questions."""
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs: dict[str, tuple[str, str]] = {}
    questions: list[Question] = []
    for article in data["data"]:
        title = article.get("title", "")
        for para in article["paragraphs"]:
            context = para["context"]
            key = hashlib.sha256(context.encode("utf-8")).hexdigest()[:16]
            paragraphs.setdefault(key, (title, context))
            for qa in para.get("qas", []):
                golds = tuple(a["text"] for a in qa.get("answers", []) if a.get("text"))
                questions.append(Question(str(qa["id"]), qa["question"], golds, key))
    return paragraphs, questions


def write_corpus(paragraphs: dict[str, tuple[str, str]], folder: Path) -> dict[str, str]:
    """One text file per paragraph; returns file path -> paragraph key."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for key, (_title, context) in paragraphs.items():
        path = folder / f"{key}.txt"
        if not path.exists():
            path.write_text(context, encoding="utf-8")
        out[str(path.resolve())] = key
    return out


def _rank(ranking: list[str], gold_doc: str) -> int | None:
    return ranking.index(gold_doc) + 1 if gold_doc in ranking else None


def run_squad(
    rag: Ragline,
    file: Path,
    corpus: list[Path],
    limit: int | None,
    workdir: Path,
    negatives: bool = True,
) -> dict[str, Any]:
    paragraphs, questions = load_squad(file)
    for extra in corpus:
        more, _ = load_squad(extra)
        for k, v in more.items():
            paragraphs.setdefault(k, v)
    if limit:
        questions = questions[:limit]
    files = write_corpus(paragraphs, workdir / "corpus")
    t0 = time.perf_counter()
    outcomes, report = rag.ingest([workdir / "corpus"])
    ingest_s = time.perf_counter() - t0
    failed = [o for o in outcomes if o.status == "failed"]
    # doc_id of each paragraph key, from what was ingested
    key_doc = {files[str(Path(o.path).resolve())]: o.doc_id for o in outcomes if o.doc_id}

    pipe: dict[str, list[float]] = {
        "recall@1": [],
        "recall@5": [],
        "mrr@10": [],
        "answer_contains": [],
        "latency": [],
    }
    bm25: dict[str, list[float]] = {"recall@1": [], "recall@5": [], "mrr@10": [], "latency": []}
    keyword = rag.stores.keyword
    serving = rag.stores.metadata.serving
    where = QueryFilter.for_principal(OPERATOR)
    support = [0, 0]  # supported answer sentences, answer sentences
    # (confidence, covered, right) of each answer; every question is answerable, so a
    # refusal is wrong
    answered: list[tuple[float, bool, bool]] = []
    texts = {key_doc[k]: text for k, (_title, text) in paragraphs.items() if k in key_doc}
    hidden = AnswerHider(texts) if negatives else None
    removed: list[tuple[float, bool]] = []  # (confidence, refused) with the answer taken away
    invalid: list[str] = []  # ids of the questions the service refused as invalid (blank)

    async def run_all() -> None:
        for q in questions:
            gold = key_doc.get(q.paragraph, "")
            t = time.perf_counter()
            try:
                answer = await rag.aask(q.text, OPERATOR, top_k=10)
            except InvalidRequest:
                # A blank question (CMRC trial has two) is refused before any search:
                # a miss on every measure, as its gold answer says it is answerable.
                invalid.append(q.qid)
                for m in (pipe, bm25):
                    for k, v in rank_metrics(None).items():
                        m[k].append(v)
                pipe["answer_contains"].append(0.0)
                continue
            pipe["latency"].append((time.perf_counter() - t) * 1000)
            for k, v in rank_metrics(_rank(doc_ranking(answer.hits), gold)).items():
                pipe[k].append(v)
            right = contains_answer(answer.text, q.answers)
            pipe["answer_contains"].append(float(right))
            answered.append((answer.confidence, answer.covered, right))
            supported, sentences = sentence_support(answer)
            support[0] += supported
            support[1] += sentences

            t = time.perf_counter()
            ids = [s.content_id for s in keyword.search(q.text, 50, where)]
            chunks = serving(ids)
            ranking = list(dict.fromkeys(chunks[i].doc_id for i in ids if i in chunks))
            bm25["latency"].append((time.perf_counter() - t) * 1000)
            for k, v in rank_metrics(_rank(ranking, gold)).items():
                bm25[k].append(v)
            if hidden is not None:
                own = key_doc.get(q.paragraph, "")
                if (away := await hidden.ask(rag, q.text, q.answers, own, top_k=10)) is not None:
                    removed.append(away)

    asyncio.run(run_all())

    def summary(m: dict[str, list[float]]) -> dict[str, Any]:
        out: dict[str, Any] = {
            k: round(sum(v) / len(v), 4) if v else 0.0 for k, v in m.items() if k != "latency"
        }
        out["latency_ms_p50"] = round(percentile(m["latency"], 50), 2)
        out["latency_ms_p95"] = round(percentile(m["latency"], 95), 2)
        out["questions"] = len(questions)
        out["corpus_size"] = len(paragraphs)
        return out

    pipeline = summary(pipe)
    pipeline["citation_support"] = round(support[0] / support[1], 4) if support[1] else None
    covered = sum(c for _, c, _ in answered)
    pipeline["covered"] = round(covered / len(questions), 4) if questions else None
    pipeline["invalid_questions"] = invalid
    confidence = [(c, answered_covered and right) for c, answered_covered, right in answered]
    return {
        "pipeline": pipeline,
        "confidence": calibration_of(confidence),
        "confidence_covered": covered_calibration(answered, removed),
        **({"removed_answer": removed_report(removed, confidence)} if negatives else {}),
        "bm25": summary(bm25),
        "ingest": {
            "seconds": round(ingest_s, 1),
            "documents": len(paragraphs),
            "failed": len(failed),
            "sync_errors": report.errors,
        },
    }
