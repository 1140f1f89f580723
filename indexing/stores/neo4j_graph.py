"""Graph store on Neo4j (production), same contract and scoring as the SQLite one.

Nodes (every one carries `ns`, a namespace, so several deployments, benches or tests share
one Community database, which has a single database; `uid` = namespace-qualified key):
  (:Document)-[:HAS_VERSION]->(:Version)-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(:Entity)
  (:Chunk)-[:IN_SECTION]->(:Section)   (:Chunk)-[:NEXT]->(:Chunk)
  (:Version)-[:SUPERSEDES]->(:Version)
Sections belong to the document (keyed by section path), so the chunks of successive
versions meet in the same Section: that is the version history of a clause. When a version
is superseded its chunks are not dropped but relabelled `Revision` (no MENTIONS/NEXT, so
search and content_ids() ignore them); deleting a document removes everything of it.

Search mirrors SqliteGraphStore: hop 1 = chunks mentioning a query entity (ACL applied),
weighted by entity rarity; hop 2 = NEXT neighbours of the best seeds and chunks sharing a
reasonably rare entity with them, down-weighted; each query entity counts once per chunk by
its best path; the full filter applies to every candidate before top-k.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from neo4j import Driver, GraphDatabase, ManagedTransaction
from neo4j.exceptions import ClientError, DriverError, Neo4jError

from core.errors import StoreError
from core.types import Chunk, QueryFilter, ScoredId
from indexing.entities import normalize_entity
from indexing.protocols import IndexedChunk
from indexing.stores.budget import rarest_within
from indexing.stores.sqlite_graph import BUDGET_FROM, MENTIONS_BUDGET, chunk_entities

_SCHEMA = [
    "CREATE CONSTRAINT ragline_chunk_uid IF NOT EXISTS FOR (n:Chunk) REQUIRE n.uid IS UNIQUE",
    "CREATE CONSTRAINT ragline_entity_uid IF NOT EXISTS FOR (n:Entity) REQUIRE n.uid IS UNIQUE",
    "CREATE CONSTRAINT ragline_doc_uid IF NOT EXISTS FOR (n:Document) REQUIRE n.uid IS UNIQUE",
    "CREATE CONSTRAINT ragline_version_uid IF NOT EXISTS FOR (n:Version) REQUIRE n.uid IS UNIQUE",
    "CREATE CONSTRAINT ragline_section_uid IF NOT EXISTS FOR (n:Section) REQUIRE n.uid IS UNIQUE",
    "CREATE INDEX ragline_revision_uid IF NOT EXISTS FOR (n:Revision) ON (n.uid)",
    "CREATE INDEX ragline_chunk_seq IF NOT EXISTS FOR (n:Chunk) ON (n.ns, n.doc_id, n.version)",
    "CREATE INDEX ragline_chunk_ns IF NOT EXISTS FOR (n:Chunk) ON (n.ns)",
    "CREATE INDEX ragline_entity_ns IF NOT EXISTS FOR (n:Entity) ON (n.ns)",
    "CREATE INDEX ragline_section_ns IF NOT EXISTS FOR (n:Section) ON (n.ns, n.doc_id)",
]
_LABELS = ("Chunk", "Revision", "Entity", "Section", "Version", "Document")

_INSERT = """
UNWIND $rows AS r
MERGE (d:Document {uid: $ns + '|' + r.doc_id}) ON CREATE SET d.ns = $ns, d.doc_id = r.doc_id
MERGE (v:Version {uid: $ns + '|' + r.doc_id + '|' + r.version})
  ON CREATE SET v.ns = $ns, v.doc_id = r.doc_id, v.version = r.version, v.seq = $now
MERGE (d)-[:HAS_VERSION]->(v)
CREATE (c:Chunk {uid: $ns + '|' + r.content_id, ns: $ns, content_id: r.content_id,
  doc_id: r.doc_id, version: r.version, ordinal: r.ordinal, public: r.public, acl: r.acl,
  doc_type: r.doc_type, department: r.department, modified: r.modified, text: r.text,
  section: r.section, entities: r.entities})
CREATE (v)-[:HAS_CHUNK]->(c)
FOREACH (_ IN CASE WHEN r.section = '' THEN [] ELSE [1] END |
  MERGE (s:Section {uid: $ns + '|' + r.doc_id + '|' + r.section})
    ON CREATE SET s.ns = $ns, s.doc_id = r.doc_id, s.path = r.section
  MERGE (c)-[:IN_SECTION]->(s))
WITH c, r
UNWIND range(0, size(r.entities) - 1) AS pos
MERGE (e:Entity {uid: $ns + '|' + r.entities[pos]})
  ON CREATE SET e.ns = $ns, e.name = r.entities[pos]
CREATE (c)-[:MENTIONS {pos: pos}]->(e)
"""

# NEXT is an edge, so it is (re)linked on both sides of every chunk written: chunks of a
# version may arrive in any order or be replaced one by one.
_LINK = """
UNWIND $uids AS u
MATCH (c:Chunk {uid: u})
CALL (c) {
  MATCH (n:Chunk {ns: c.ns, doc_id: c.doc_id, version: c.version}) WHERE n.ordinal = c.ordinal + 1
  MERGE (c)-[:NEXT]->(n)
}
CALL (c) {
  MATCH (p:Chunk {ns: c.ns, doc_id: c.doc_id, version: c.version}) WHERE p.ordinal = c.ordinal - 1
  MERGE (p)-[:NEXT]->(c)
}
"""

# A version written again after it had lost its live chunks (a reverted file) is the
# newest one again.
_RESEQUENCE = """
UNWIND $versions AS vu
MATCH (v:Version {uid: vu}) WHERE NOT EXISTS { (v)-[:HAS_CHUNK]->(:Chunk) }
SET v.seq = $now
"""

_SUPERSEDE = """
UNWIND $versions AS vu
MATCH (d:Document)-[:HAS_VERSION]->(v:Version {uid: vu})
WHERE NOT EXISTS { (v)-[:SUPERSEDES]->() }
MATCH (d)-[:HAS_VERSION]->(o:Version) WHERE o <> v AND o.seq < v.seq
WITH v, o ORDER BY o.seq DESC
WITH v, collect(o)[0] AS prev
MERGE (v)-[:SUPERSEDES]->(prev)
"""

# A chunk whose version has a newer version with live chunks was superseded: keep it as a
# Revision for clause history. Any other deleted chunk is gone for good.
_ARCHIVE = """
MATCH (c:Chunk) WHERE c.uid IN $uids AND EXISTS {
  (c)<-[:HAS_CHUNK]-(:Version)<-[:SUPERSEDES]-(:Version)-[:HAS_CHUNK]->(n:Chunk)
  WHERE NOT n.uid IN $uids }
OPTIONAL MATCH (c)-[r:MENTIONS|NEXT]-()
DELETE r
WITH DISTINCT c
REMOVE c:Chunk SET c:Revision
"""

_CLEANUP = """
UNWIND $docs AS du
MATCH (d:Document {uid: du})
WHERE NOT EXISTS { (d)-[:HAS_VERSION]->(:Version)-[:HAS_CHUNK]->(:Chunk) }
OPTIONAL MATCH (d)-[:HAS_VERSION]->(v:Version)
OPTIONAL MATCH (v)-[:HAS_CHUNK]->(r)
OPTIONAL MATCH (s:Section {ns: d.ns, doc_id: d.doc_id})
DETACH DELETE r, v, s, d
"""

# A change of ACL or other document metadata with the same chunks: properties only.
_UPDATE_META = """
UNWIND $rows AS r
MATCH (c:Chunk {uid: r.uid})
SET c.public = r.public, c.acl = r.acl, c.doc_type = r.doc_type,
    c.department = r.department, c.modified = r.modified
"""


# Candidates admitted through the filter per round trip (at least 4k), best first.
_ADMIT_BATCH = 200
# How long a search reuses the namespace's chunk count (the idf's N) before counting again.
_COUNT_TTL_S = 30.0


def _best_first(scored: tuple[float, str]) -> tuple[float, str]:
    return (-scored[0], scored[1])


def _acl(where: QueryFilter, alias: str) -> str:
    if where.access_tokens is None:
        return "true"
    return f"({alias}.public OR any(t IN {alias}.acl WHERE t IN $tokens))"


def _filter(where: QueryFilter, params: dict[str, Any]) -> str:
    """`where` as Cypher on alias `c` (reference semantics: QueryFilter.admits)."""
    parts = [_acl(where, "c")]
    params["tokens"] = sorted(where.access_tokens or ())
    for prop, values in (
        ("doc_type", where.doc_types),
        ("doc_id", where.doc_ids),
        ("department", where.departments),
    ):
        if values:
            parts.append(f"c.{prop} IN ${prop}s")
            params[f"{prop}s"] = sorted(values)
    # ISO dates compare as strings; a null date fails both comparisons.
    if where.modified_from:
        parts.append("c.modified >= $modified_from")
        params["modified_from"] = where.modified_from.isoformat()
    if where.modified_to:
        parts.append("c.modified <= $modified_to")
        params["modified_to"] = where.modified_to.isoformat()
    return " AND ".join(parts)


class Neo4jGraphStore:
    """Entity graph over chunks in Neo4j. `hop2_weight`, `bridge_df` and `seeds` mean what
    they mean for SqliteGraphStore."""

    name = "graph"

    def __init__(
        self,
        url: str,
        user: str = "neo4j",
        password: str = "",
        *,
        namespace: str = "ragline",
        hop2_weight: float = 0.5,
        bridge_df: int = 50,
        seeds: int = 50,
        timeout_s: float = 10.0,
        mentions_budget: int = MENTIONS_BUDGET,
        budget_from: int = BUDGET_FROM,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", namespace):
            raise StoreError(f"invalid Neo4j namespace {namespace!r}")
        self.ns = namespace
        self._budget, self._budget_from = mentions_budget, budget_from
        self._count: tuple[int, float] = (-1, 0.0)  # chunks in the namespace, when counted
        self._hop2 = hop2_weight
        self._bridge_df = bridge_df
        self._seeds = seeds
        self._driver: Driver = GraphDatabase.driver(
            url,
            auth=(user, password),
            connection_timeout=timeout_s,
            max_transaction_retry_time=timeout_s,
            # "unknown label" notices on an empty namespace are noise, not problems.
            notifications_min_severity="OFF",
        )
        self._run_schema()

    # ---- plumbing ----------------------------------------------------------------------

    def _write_tx(self, work: Any, **kw: Any) -> Any:
        self._count = (-1, 0.0)  # this instance's writes show at its next search
        try:
            with self._driver.session() as session:
                return session.execute_write(work, **kw)
        except (DriverError, Neo4jError, OSError) as exc:
            raise StoreError(f"neo4j unavailable: {type(exc).__name__}: {exc}") from exc

    def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return tx.run(query, ns=self.ns, **params).data()

        try:
            with self._driver.session() as session:
                return session.execute_read(work)
        except (DriverError, Neo4jError, OSError) as exc:
            raise StoreError(f"neo4j unavailable: {type(exc).__name__}: {exc}") from exc

    def _run_schema(self) -> None:
        try:
            with self._driver.session() as session:
                for statement in _SCHEMA:
                    try:
                        session.run(statement).consume()
                    except ClientError as exc:  # another process created it meanwhile
                        if "EquivalentSchemaRuleAlreadyExists" not in (exc.code or ""):
                            raise
        except (DriverError, Neo4jError, OSError) as exc:
            raise StoreError(f"neo4j unavailable: {type(exc).__name__}: {exc}") from exc

    def _uid(self, content_id: str) -> str:
        return f"{self.ns}|{content_id}"

    # ---- writes ------------------------------------------------------------------------

    @staticmethod
    def _row(chunk: Chunk) -> dict[str, Any]:
        return {
            "content_id": chunk.content_id,
            "doc_id": chunk.doc_id,
            "version": chunk.version,
            "ordinal": chunk.ordinal,
            "public": not chunk.acl_tags,
            "acl": sorted(chunk.acl_tags),
            "doc_type": chunk.doc_type,
            "department": chunk.department,
            "modified": chunk.modified.isoformat() if chunk.modified else None,
            "text": chunk.text,
            "section": " / ".join(chunk.section_path),
            "entities": chunk_entities(chunk),
        }

    def _remove(self, tx: ManagedTransaction, uids: list[str], archive: bool) -> None:
        docs = tx.run(
            "MATCH (c:Chunk) WHERE c.uid IN $uids RETURN DISTINCT $ns + '|' + c.doc_id AS d",
            uids=uids,
            ns=self.ns,
        ).value()
        ents = tx.run(
            "MATCH (c:Chunk)-[:MENTIONS]->(e) WHERE c.uid IN $uids RETURN DISTINCT e.uid",
            uids=uids,
        ).value()
        if archive:
            tx.run(_ARCHIVE, uids=uids).consume()
        tx.run(
            "MATCH (c) WHERE (c:Chunk OR c:Revision) AND c.uid IN $uids DETACH DELETE c"
            if not archive
            else "MATCH (c:Chunk) WHERE c.uid IN $uids DETACH DELETE c",
            uids=uids,
        ).consume()
        tx.run(
            "MATCH (e:Entity) WHERE e.uid IN $ents AND NOT EXISTS { (e)<-[:MENTIONS]-() } DELETE e",
            ents=ents,
        ).consume()
        if archive:
            tx.run(_CLEANUP, docs=docs).consume()

    def upsert(self, items: Sequence[IndexedChunk]) -> None:
        latest = {item.chunk.content_id: item.chunk for item in items}
        if not latest:
            return
        # Extraction runs outside the transaction: it is the slow part.
        rows = [self._row(chunk) for chunk in latest.values()]
        uids = [self._uid(c) for c in latest]
        versions = sorted({f"{self.ns}|{c.doc_id}|{c.version}" for c in latest.values()})

        def work(tx: ManagedTransaction) -> None:
            # Replace by content_id (an archived copy of the same id goes too): idempotent.
            self._remove(tx, uids, archive=False)
            now = time.time_ns()
            tx.run(_RESEQUENCE, versions=versions, now=now).consume()
            tx.run(_INSERT, rows=rows, ns=self.ns, now=now).consume()
            tx.run(_LINK, uids=uids).consume()
            tx.run(_SUPERSEDE, versions=versions).consume()

        self._write_tx(work)

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        rows = [
            {
                "uid": self._uid(c.content_id),
                "public": not c.acl_tags,
                "acl": sorted(c.acl_tags),
                "doc_type": c.doc_type,
                "department": c.department,
                "modified": c.modified.isoformat() if c.modified else None,
            }
            for c in {c.content_id: c for c in chunks}.values()
        ]
        if rows:
            self._write_tx(lambda tx: tx.run(_UPDATE_META, rows=rows).consume())

    def delete(self, content_ids: Sequence[str]) -> None:
        uids = [self._uid(c) for c in dict.fromkeys(content_ids)]
        if uids:
            self._write_tx(lambda tx: self._remove(tx, uids, archive=True))

    def drop(self) -> None:
        """Delete every node of this namespace (tests, benches); constraints stay."""
        self._count = (-1, 0.0)
        try:
            with self._driver.session() as session:
                for label in _LABELS:
                    session.run(
                        f"MATCH (n:{label} {{ns: $ns}}) CALL (n) {{ DETACH DELETE n }}"
                        " IN TRANSACTIONS OF 5000 ROWS",
                        ns=self.ns,
                    ).consume()
        except (DriverError, Neo4jError, OSError) as exc:
            raise StoreError(f"neo4j unavailable: {type(exc).__name__}: {exc}") from exc

    def flush(self) -> None:
        """Every write is a committed transaction already."""

    def close(self) -> None:
        self._driver.close()

    # ---- reads -------------------------------------------------------------------------

    def content_ids(self) -> set[str]:
        rows = self._read("MATCH (c:Chunk {ns: $ns}) RETURN c.content_id AS cid")
        return {r["cid"] for r in rows}

    @staticmethod
    def _signature(public: Any, acl: Any, doc_type: Any, department: Any, modified: Any) -> str:
        return json.dumps([bool(public), sorted(acl or []), doc_type, department, modified])

    def metadata_signature(self, chunk: Chunk) -> str:
        return self._signature(
            not chunk.acl_tags,
            list(chunk.acl_tags),
            chunk.doc_type,
            chunk.department,
            chunk.modified.isoformat() if chunk.modified else None,
        )

    def held_metadata(self) -> dict[str, str]:
        rows = self._read(
            "MATCH (c:Chunk {ns: $ns}) RETURN c.content_id AS cid, c.public AS public,"
            " c.acl AS acl, c.doc_type AS doc_type, c.department AS department,"
            " c.modified AS modified"
        )
        return {
            r["cid"]: self._signature(
                r["public"], r["acl"], r["doc_type"], r["department"], r["modified"]
            )
            for r in rows
        }

    def entities_of(self, content_id: str) -> list[str]:
        rows = self._read(
            "MATCH (c:Chunk {uid: $uid})-[m:MENTIONS]->(e) RETURN e.name AS name ORDER BY m.pos",
            uid=self._uid(content_id),
        )
        return [r["name"] for r in rows]

    def clause_history(self, doc_id: str, clause: str) -> list[tuple[str, list[str]]]:
        """Each version of the document (oldest first, superseded ones included) with the
        text of its chunks whose section path, entities or text mention `clause`."""
        needle = clause.strip().lower()
        if not needle:
            return []
        rows = self._read(
            "MATCH (:Document {uid: $doc})-[:HAS_VERSION]->(v:Version)-[:HAS_CHUNK]->(c)"
            " WHERE (c:Chunk OR c:Revision) AND (toLower(c.section) CONTAINS $needle"
            " OR $entity IN c.entities OR toLower(c.text) CONTAINS $needle)"
            " RETURN v.version AS version, v.seq AS seq, c.ordinal AS ordinal, c.text AS text"
            " ORDER BY seq, ordinal",
            doc=f"{self.ns}|{doc_id}",
            needle=needle,
            entity=normalize_entity(clause),
        )
        history: dict[str, list[str]] = {}
        for r in rows:
            history.setdefault(r["version"], []).append(r["text"])
        return list(history.items())

    def version_chain(self, doc_id: str) -> list[str]:
        """The document's versions, newest first, following SUPERSEDES."""
        rows = self._read(
            "MATCH (:Document {uid: $doc})-[:HAS_VERSION]->(v:Version)"
            " RETURN v.version AS version ORDER BY v.seq DESC",
            doc=f"{self.ns}|{doc_id}",
        )
        return [r["version"] for r in rows]

    def search(self, entities: Sequence[str], k: int, where: QueryFilter) -> list[ScoredId]:
        names = list(dict.fromkeys(n for n in map(normalize_entity, entities) if n))
        if not names or k <= 0:
            return []
        quids = [f"{self.ns}|{n}" for n in names]
        found = self._read(
            "MATCH (e:Entity) WHERE e.uid IN $quids"
            " WITH e, COUNT { (e)<-[:MENTIONS]-() } AS df WHERE df > 0"
            " RETURN e.uid AS uid, df",
            quids=quids,
        )
        if not found:
            return []
        total = self._chunk_count()
        if total >= self._budget_from:  # as the SQLite graph: hop 1 reads every mention
            kept = rarest_within({r["uid"]: r["df"] for r in found}, self._budget)
            found = [r for r in found if r["uid"] in kept]
        # idf-like rarity: an entity few chunks mention says more about a chunk.
        weight = {r["uid"]: math.log(1.0 + total / r["df"]) for r in found}
        params: dict[str, Any] = {}
        acl = _acl(where, "c")
        params["tokens"] = sorted(where.access_tokens or ())
        direct = self._read(
            f"MATCH (e:Entity)<-[:MENTIONS]-(c:Chunk) WHERE e.uid IN $found AND {acl}"
            " RETURN c.content_id AS cid, e.uid AS eid",
            found=sorted(weight),
            **params,
        )
        hit: dict[str, dict[str, float]] = defaultdict(dict)  # chunk -> entity -> weight
        for r in direct:
            hit[r["cid"]][r["eid"]] = weight[r["eid"]]
        seeds = sorted(hit, key=lambda c: (-sum(hit[c].values()), c))[: self._seeds]
        reach: dict[str, dict[str, float]] = defaultdict(dict)
        for cid, ents in hit.items():
            reach[cid].update(ents)
        pairs = self._read(
            "MATCH (s:Chunk)-[:NEXT]-(n:Chunk) WHERE s.uid IN $seeds"
            " RETURN s.content_id AS src, n.content_id AS dst"
            " UNION ALL "
            "MATCH (s:Chunk)-[:MENTIONS]->(b:Entity) WHERE s.uid IN $seeds AND NOT b.uid IN $quids"
            " WITH s, b, COUNT { (b)<-[:MENTIONS]-() } AS df"
            " WHERE df >= 2 AND df <= $bridge_df"
            " MATCH (b)<-[:MENTIONS]-(m:Chunk) WHERE m <> s"
            " RETURN s.content_id AS src, m.content_id AS dst",
            seeds=[self._uid(s) for s in seeds],
            quids=quids,
            bridge_df=self._bridge_df,
        )
        for r in pairs:
            for eid, w in hit[r["src"]].items():
                best = reach[r["dst"]]
                best[eid] = max(best.get(eid, 0.0), w * self._hop2)
        # The filter, on the best-scored candidates first: a large graph reaches thousands
        # of chunks, and only the top k admitted ones are returned.
        ranked = sorted(((sum(r.values()), cid) for cid, r in reach.items()), key=_best_first)
        params = {}
        match = f"MATCH (c:Chunk) WHERE c.uid IN $cands AND {_filter(where, params)}"
        scored: list[tuple[float, str]] = []
        step = max(4 * k, _ADMIT_BATCH)
        for start in range(0, len(ranked), step):
            batch = ranked[start : start + step]
            admitted = {
                r["cid"]
                for r in self._read(
                    f"{match} RETURN c.content_id AS cid",
                    cands=[self._uid(cid) for _, cid in batch],
                    **params,
                )
            }
            scored += [sc for sc in batch if sc[1] in admitted]
            if len(scored) >= k:
                break
        return [ScoredId(cid, float(score)) for score, cid in scored[:k]]

    def _chunk_count(self) -> int:
        """This namespace's chunk count, for the entities' idf: counted at most every
        `_COUNT_TTL_S` (a scan of the namespace, ~25-50 ms at 1M chunks) and after this
        instance's own writes; another process's writes show within that time."""
        now = time.monotonic()
        held, at = self._count
        if held < 0 or now - at > _COUNT_TTL_S:
            held = self._read("MATCH (c:Chunk {ns: $ns}) RETURN count(c) AS n")[0]["n"]
            self._count = (held, now)
        return held
