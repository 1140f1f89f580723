"""A seeded scale corpus of real text: any number of chunks, with questions whose answer
chunk is known, so recall can be measured at 10k, 100k or 1M chunks.

The text is the shared CMRC 2018 paragraphs (train + trial) and the shared documents,
recombined at sentence level: every chunk is one or two runs of consecutive sentences
taken from random paragraphs or documents. Nothing is invented, but most chunks are
collages, not passages a person wrote.

Questions: up to `questions` CMRC questions, one per paragraph, whose answer text sits in
one sentence of that paragraph. Question j's chunk (the "planted" chunk) is the answer
sentence with its neighbours, in the paragraph's order, at position `j * PLANT_EVERY`.
Planted paragraphs are kept out of the filler pool, so the answer context occurs once.

Chunk i depends only on (seed, i): a corpus of N chunks is the first N chunks of every
larger one, so embeddings cached for one size serve the others, and the planted
questions asked at a size are those whose chunk is below it.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.text import has_han, split_sentences

GENERATOR = 1  # bump when the recombination changes: cached embeddings are keyed by it
PLANT_EVERY = 20  # one planted chunk every 20 chunks: 500 questions fit in 10k chunks
DOC_CHUNKS = 50  # chunks per synthetic document
MAX_CHARS = 260  # chunks are cut at a sentence boundary around this length
MIN_CHARS = 40  # shorter collages get another run of sentences
_ENDS = "。！？!?.；;"


@dataclass(frozen=True, slots=True)
class ScaleQuestion:
    qid: str
    text: str
    answers: tuple[str, ...]
    chunk: int  # index of the planted chunk


@dataclass(frozen=True, slots=True)
class ScaleChunk:
    index: int
    doc: int  # index // DOC_CHUNKS
    text: str


def _join(sentences: Sequence[str]) -> str:
    """Sentences as one text, each ended (Chinese ones with 。, others with a full stop)."""
    out = []
    for s in sentences:
        if s[-1] not in _ENDS:
            s += "。" if has_han(s) else "."
        out.append(s if has_han(s) else s + " ")
    return "".join(out).strip()


def _runs(text: str) -> list[str]:
    return [s for s in split_sentences(text) if len(s) >= 4]


def load_cmrc(paths: Sequence[Path]) -> list[dict[str, object]]:
    """CMRC/SQuAD-format paragraphs: [{"context": str, "qas": [...]}, ...]."""
    out: list[dict[str, object]] = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        for article in data["data"]:
            out.extend(article["paragraphs"])
    return out


def document_paragraphs(folder: Path) -> list[str]:
    """Text of the shared documents (every format the native parsers read), one string
    per block, so runs of sentences stay within a block."""
    from core.settings import Settings
    from ingestion.parse import MB, ParseOptions, parse_file
    from ragline.ingest import walk

    settings = Settings()
    options = ParseOptions.from_settings(settings.ingest, settings.ingest_limits)
    texts: list[str] = []
    for path, supported in sorted(walk([folder], settings.ingest.extensions)):
        if not supported:
            continue
        parsed = parse_file(
            path,
            max_bytes=int(settings.ingest.max_file_mb * MB),
            timeout_s=settings.ingest.parse_timeout_s,
            isolate=False,
            options=options,
        )
        texts.extend(b.text for b in parsed.blocks if b.kind in ("paragraph", "list"))
    return texts


class ScaleCorpus:
    """Chunks and questions of the scale corpus; see the module docstring."""

    def __init__(
        self,
        cmrc: Sequence[dict[str, object]],
        documents: Sequence[str] = (),
        *,
        seed: int = 13,
        questions: int = 500,
    ) -> None:
        self.seed = seed
        rng = random.Random(seed)
        candidates: list[tuple[int, ScaleQuestion, list[str]]] = []
        used: set[int] = set()
        order = list(range(len(cmrc)))
        rng.shuffle(order)
        for p in order:
            if len(candidates) >= questions:
                break
            para = cmrc[p]
            sentences = _runs(str(para["context"]))
            for qa in para.get("qas", []):  # type: ignore[attr-defined]
                golds = tuple(a["text"] for a in qa.get("answers", []) if a.get("text"))
                holders = [i for i, s in enumerate(sentences) if golds and golds[0] in s]
                if len(holders) != 1:
                    continue
                at = holders[0]
                window = sentences[max(0, at - 1) : at + 2]
                q = ScaleQuestion(str(qa["id"]), qa["question"], golds, 0)
                candidates.append((p, q, window))
                used.add(p)
                break
        self.questions = [
            ScaleQuestion(q.qid, q.text, q.answers, j * PLANT_EVERY)
            for j, (_, q, _) in enumerate(candidates)
        ]
        self._planted = {j * PLANT_EVERY: w for j, (_, _, w) in enumerate(candidates)}
        pool = [_runs(str(p["context"])) for i, p in enumerate(cmrc) if i not in used]
        pool += [_runs(t) for t in documents]
        self._pool = [s for s in pool if s]
        self.sources = len(self._pool)
        self.sentences = sum(len(s) for s in self._pool)
        digest = hashlib.sha256()
        for sentences in self._pool:
            digest.update("\x1f".join(sentences).encode("utf-8"))
        for w in self._planted.values():
            digest.update("\x1e".join(w).encode("utf-8"))
        self.fingerprint = f"{seed}-g{GENERATOR}-{digest.hexdigest()[:12]}"

    def _filler(self, i: int) -> str:
        rng = random.Random(f"{self.seed}:{i}")
        parts: list[str] = []
        size = 0
        runs = rng.choice((1, 2, 2))
        while runs > 0 or (size < MIN_CHARS and len(parts) < 8):
            runs -= 1
            sentences = self._pool[rng.randrange(len(self._pool))]
            start = rng.randrange(len(sentences))
            for s in sentences[start : start + rng.randint(1, 3)]:
                if parts and size + len(s) > MAX_CHARS:
                    return _join(parts)
                parts.append(s)
                size += len(s)
        return _join(parts)

    def chunk(self, i: int) -> ScaleChunk:
        planted = self._planted.get(i)
        text = _join(planted) if planted is not None else self._filler(i)
        return ScaleChunk(i, i // DOC_CHUNKS, text)

    def chunks(self, n: int, start: int = 0) -> Iterator[ScaleChunk]:
        for i in range(start, n):
            yield self.chunk(i)

    def questions_within(self, n: int) -> list[ScaleQuestion]:
        return [q for q in self.questions if q.chunk < n]


def default_corpus(
    data: Path, seed: int = 13, questions: int = 500, with_documents: bool = True
) -> ScaleCorpus:
    """The corpus over `data` (the shared data folder: cmrc2018/ and docs/)."""
    cmrc = load_cmrc([data / "cmrc2018" / "train.json", data / "cmrc2018" / "trial.json"])
    docs = document_paragraphs(data / "docs") if with_documents else []
    return ScaleCorpus(cmrc, docs, seed=seed, questions=questions)
