"""Exploratory: BM25-only English analysis variants (Porter2, an S-stemmer, stop-word lists)
over the chunks of an ingested docs data dir, by swapping core.text.stem and its stop words.

    .venv/bin/python bench/english_bm25_variants.py D ../shared/data/docs Q1.jsonl [Q2.jsonl ...]
"""

import json
import sys
import tempfile
from pathlib import Path

import core.text as T
from core.ids import path_from_uri
from core.settings import Settings
from core.types import QueryFilter
from indexing.stores.sql_metadata import SqlMetadataStore
from indexing.stores.sqlite_keyword import SqliteKeywordIndex
from ragline.bench.common import rank_metrics

root, docs = Path(sys.argv[1]), Path(sys.argv[2])
qfiles = [Path(p) for p in sys.argv[3:]]
meta = SqlMetadataStore(Settings(data_dir=root / "data").resolved_metadata_url)
items = meta.items(sorted(meta.serving_ids()))
by_file = {
    str(path_from_uri(d.source).resolve().relative_to(docs.resolve())): d.doc_id
    for d in meta.documents()
    if d.source.startswith("file://")
}
chunks = {i.chunk.content_id: i.chunk for i in items}
porter = T.stem


def s_stem(w):
    if not w.isascii() or not w.isalpha() or len(w) < 4:
        return w
    if w.endswith("ies") and not w.endswith(("eies", "aies")):
        return w[:-3] + "y"
    if w.endswith("es") and not w.endswith(("aes", "ees", "oes")):
        return w[:-1]
    if w.endswith("s") and not w.endswith(("us", "ss")):
        return w[:-1]
    return w


stops_full = T.KEYWORD_STOPWORDS
variants = {
    "plain": dict(english=False),
    "porter2 + full stops": dict(english=True, stem=porter, stops=stops_full),
    "s-stemmer + full stops": dict(english=True, stem=s_stem, stops=stops_full),
    "porter2 + small stops": dict(english=True, stem=porter, stops=T.STOPWORDS),
    "no stem + full stops": dict(english=True, stem=lambda w: w, stops=stops_full),
}
for qf in qfiles:
    questions = [json.loads(x) for x in qf.read_text().splitlines() if x.strip()]
    questions = [q for q in questions if q.get("file")]
    print(qf.name, len(questions))
    for name, v in variants.items():
        if v["english"]:
            T.stem = v["stem"]
            T.KEYWORD_STOPWORDS = v["stops"]
        with tempfile.TemporaryDirectory() as tmp:
            index = SqliteKeywordIndex(Path(tmp) / "kw.db", english_analysis=v["english"])
            index.upsert(items)
            rows = []
            for q in questions:
                gold, want = by_file.get(q["file"], ""), "".join(q["answer"].split()).lower()
                ids = [s.content_id for s in index.search(q["question"], 50, QueryFilter())]
                rank = next(
                    (
                        i
                        for i, cid in enumerate(ids, 1)
                        if chunks[cid].doc_id == gold
                        and want in "".join(chunks[cid].text.split()).lower()
                    ),
                    None,
                )
                rows.append(rank_metrics(rank))
            index.close()
        T.stem = porter
        T.KEYWORD_STOPWORDS = stops_full
        print(
            " ",
            name,
            {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]},
            flush=True,
        )
