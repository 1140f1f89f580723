"""English analysis on/off for the keyword index alone (BM25 over the same chunks).

Builds two SQLite FTS5 indexes from the chunks of an ingested data directory (see
bench/ablate.py): one with the English analysis (stems, possessives, hyphenation, stop
words), one with the plain tokens used before; ranks the answer-bearing passage of every
question of a question set.

    .venv/bin/python bench/english_bm25.py --data-dir /tmp/abl_docs \
        --docs ../shared/data/docs --questions bench/questions/english_qa.jsonl
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from core.ids import path_from_uri
from core.settings import Settings
from core.types import QueryFilter
from indexing.stores.sql_metadata import SqlMetadataStore
from indexing.stores.sqlite_keyword import SqliteKeywordIndex
from ragline.bench.common import rank_metrics


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--docs", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    args = ap.parse_args()
    meta = SqlMetadataStore(Settings(data_dir=args.data_dir / "data").resolved_metadata_url)
    items = meta.items(sorted(meta.serving_ids()))
    by_file = {
        str(path_from_uri(d.source).resolve().relative_to(args.docs.resolve())): d.doc_id
        for d in meta.documents()
        if d.source.startswith("file://")
    }
    chunks = {i.chunk.content_id: i.chunk for i in items}
    questions = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    out: dict[str, Any] = {"questions": len(questions), "chunks": len(items)}
    for name, english in (("english analysis", True), ("plain tokens (before)", False)):
        with tempfile.TemporaryDirectory() as tmp:
            index = SqliteKeywordIndex(Path(tmp) / "kw.db", english_analysis=english)
            index.upsert(items)
            rows = []
            for q in questions:
                gold, want = by_file.get(q["file"], ""), "".join(q["answer"].split()).lower()
                ids = [s.content_id for s in index.search(q["question"], 50, QueryFilter())]
                rank = next(
                    (
                        i
                        for i, cid in enumerate(ids, start=1)
                        if chunks[cid].doc_id == gold
                        and want in "".join(chunks[cid].text.split()).lower()
                    ),
                    None,
                )
                rows.append(rank_metrics(rank))
            index.close()
        out[name] = {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
