"""Offline probe: does a sentence-level dense signal (max cosine between the question and
a passage's sentences) rank the right CMRC paragraph better than the passage-level vector?

Reads the rows written by bench/cmrc_candidates.py (same --data-dir), embeds every served
chunk's sentences once with the configured embedder, then reports document-level R@1 /
MRR@10 for: sentence-dense alone over the whole corpus, passage-dense alone, and the
pipeline's candidates re-ordered by relevance + w * sentence max-sim for a few w.

    .venv/bin/python bench/sentence_dense_probe.py --rows rows.jsonl --data-dir D
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from core.settings import Settings
from core.text import split_sentences
from ragline.app import Ragline


def doc_rank(order: list[str], gold: str) -> int | None:
    docs = list(dict.fromkeys(order))[:10]
    return docs.index(gold) + 1 if gold in docs else None


def report(name: str, got: list[int | None]) -> None:
    n = len(got) or 1
    r1 = sum(r == 1 for r in got) / n
    mrr = sum(1 / r for r in got if r) / n
    print(f"{name:55s} R@1 {r1:.4f}  MRR@10 {mrr:.4f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, required=True)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--cache", type=Path, help="npz of sentence vectors (written if missing)")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = [
        json.loads(x) for x in args.rows.read_text(encoding="utf-8").splitlines()
    ]
    rag = Ragline(Settings(data_dir=args.data_dir / "data"))
    meta = rag.stores.metadata
    ids = sorted(meta.serving_ids())
    chunks = meta.serving(ids)
    emb = rag.embedder
    owner: list[int] = []
    sents: list[str] = []
    for i, cid in enumerate(ids):
        for s in split_sentences(chunks[cid].text) or [chunks[cid].text]:
            owner.append(i)
            sents.append(s)
    print(f"{len(ids)} chunks, {len(sents)} sentences", flush=True)
    if args.cache and args.cache.exists():
        data = np.load(args.cache)
        svec, pvec = data["s"], data["p"]
    else:
        svec = emb.embed_passages(sents)
        pvec = emb.embed_passages([chunks[c].text for c in ids])
        if args.cache:
            np.savez(args.cache, s=svec, p=pvec)
    own = np.asarray(owner)
    doc_of = [chunks[c].doc_id for c in ids]
    index = {c: i for i, c in enumerate(ids)}
    qvec = np.vstack([emb.embed_query(r["q"]) for r in rows])
    ssim = qvec @ svec.T  # questions x sentences
    psim = qvec @ pvec.T
    maxsim = np.full((len(rows), len(ids)), -1.0, dtype=np.float32)
    for qi in range(len(rows)):
        np.maximum.at(maxsim[qi], own, ssim[qi])
    dense_s, dense_p = [], []
    for qi, r in enumerate(rows):
        dense_s.append(doc_rank([doc_of[j] for j in np.argsort(-maxsim[qi])[:50]], r["gold"]))
        dense_p.append(doc_rank([doc_of[j] for j in np.argsort(-psim[qi])[:50]], r["gold"]))
    report("passage dense alone", dense_p)
    report("sentence max-sim dense alone", dense_s)
    pipeline = [doc_rank([h[0] for h in r["hits"]], r["gold"]) for r in rows]
    report("pipeline (relevance only)", pipeline)
    for mode in ("raw", "minmax", "rank"):
        for w in (0.1, 0.2, 0.3, 0.5, 0.8, 1.2):
            got = []
            for qi, r in enumerate(rows):
                hits = r["hits"]
                ms = np.array([maxsim[qi, index[h[5]]] if h[5] in index else 0.0 for h in hits])
                rel = np.array([h[1] for h in hits])
                if mode == "minmax" and len(ms) and ms.max() > ms.min():
                    ms = (ms - ms.min()) / (ms.max() - ms.min())
                if mode == "rank":
                    order = np.argsort(-ms)
                    rk = np.empty(len(ms))
                    rk[order] = np.arange(1, len(ms) + 1)
                    ms = 1.0 / (1.0 + rk)
                score = rel + w * ms
                got.append(doc_rank([hits[j][0] for j in np.argsort(-score)], r["gold"]))
            report(f"relevance + {w} x sentence max-sim ({mode})", got)
    rag.close()


if __name__ == "__main__":
    main()
