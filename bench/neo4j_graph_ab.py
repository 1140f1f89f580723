"""Neo4j graph search: an older tree's store against this tree's (with and without the
mentions budget), alternating per question on one namespace filled by
`bench/neo4j_graph_fill.py`, with no ACL (as `bench scale` asks) or with --acl.

    git worktree add /tmp/old REF
    python bench/neo4j_graph_fill.py ab-graph 1000000
    python bench/neo4j_graph_ab.py ab-graph 1000000 /tmp/old [--acl]

Needs RAGLINE_BACKENDS__NEO4J_URL / _USER / _PASSWORD; drop the namespace afterwards
(`Neo4jGraphStore(...).drop()`).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

from core.settings import Settings
from core.types import Principal, QueryFilter
from indexing.entities import query_entities
from indexing.stores.neo4j_graph import Neo4jGraphStore
from ragline.bench.common import percentile
from ragline.bench.scale_corpus import default_corpus


def _old_store_class(tree: Path) -> Any:
    spec = importlib.util.spec_from_file_location(
        "old_neo4j_graph", tree / "indexing" / "stores" / "neo4j_graph.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Neo4jGraphStore


def main() -> None:
    ns, n, old_tree = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    acl = "--acl" in sys.argv[4:]
    b = Settings().backends
    login = (b.neo4j_url, b.neo4j_user, b.neo4j_password)
    stores = {
        "old": _old_store_class(old_tree)(*login, namespace=ns),
        "new_unbudgeted": Neo4jGraphStore(*login, namespace=ns, budget_from=10**12),
        "new": Neo4jGraphStore(*login, namespace=ns),
    }
    finance = Principal(user="ann", tags=frozenset({"finance"}))
    where = QueryFilter.for_principal(finance) if acl else QueryFilter(access_tokens=None)
    questions = default_corpus(Path("../shared/data")).questions_within(n)[:200]
    ms: dict[str, list[float]] = {k: [] for k in stores}
    top: dict[str, list[list[str]]] = {k: [] for k in stores}
    order = list(stores)
    for i, q in enumerate(questions):
        entities = list(dict.fromkeys(query_entities(q.text)))
        if not entities:
            continue
        for name in order if i % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            hits = stores[name].search(entities, 50, where)
            ms[name].append((time.perf_counter() - t0) * 1000)
            top[name].append([h.content_id for h in hits[:10]])
    out: dict[str, Any] = {}
    for name, values in ms.items():
        pairs = list(zip(top["old"], top[name], strict=True))
        out[name] = {
            "n": len(values),
            "p50_ms": round(percentile(values, 50), 1),
            "p95_ms": round(percentile(values, 95), 1),
            "max_ms": round(max(values), 1),
            "same_top10_as_old": round(sum(a == c for a, c in pairs) / len(pairs), 3),
            "top10_overlap_with_old": round(
                sum(len(set(a) & set(c)) / len(a) if a else 1.0 for a, c in pairs) / len(pairs),
                3,
            ),
        }
    print(json.dumps({"chunks": n, "acl": acl, "variants": out}))


if __name__ == "__main__":
    main()
