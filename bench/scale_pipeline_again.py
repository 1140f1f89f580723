"""The planted questions of `ragline bench scale` through the whole pipeline again, on a
data dir an earlier run filled (copy it before that run ends: its temporary folder is
removed), with this tree's code: to measure a query-path change at 1M without re-ingesting.

    PYTHONPATH=. .venv/bin/python bench/scale_pipeline_again.py --data-dir D --chunks 1000000 \
        --data ../shared/data --json bench/results/scale_1m_pipeline_session12.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.settings import Settings
from ragline.app import Ragline
from ragline.bench.scale import pipeline_queries
from ragline.bench.scale_corpus import default_corpus


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True, help="shared data (cmrc2018/, docs/)")
    ap.add_argument("--chunks", type=int, required=True, help="the size that run ingested")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    corpus = default_corpus(args.data, 13)
    questions = corpus.questions_within(args.chunks)[: args.questions]
    rag = Ragline(Settings(data_dir=args.data_dir))
    try:
        pipeline_queries(rag, corpus, questions[:20], args.chunks)  # warm caches and models
        out = pipeline_queries(rag, corpus, questions, args.chunks)
    finally:
        rag.close()
    print(json.dumps(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
