"""Permission fuzz (issue 14, "keep the probes"): thousands of (principal, query) pairs
generated from the indexed text — titles, identifiers, phrases, citation labels, doc and
content ids, source keys, and mixtures of a hidden document's words with a visible one's —
sent through every read door: /v1/search, /v1/ask, /v1/chat/completions, /v1/documents
(and /meta), /v1/jobs, and the MCP tools. Not one response may reveal a document the
principal may not see; documents it may see stay reachable (no over-blocking). Then the
write-side probes on the same data. Runs on the embedded profile and on the production
one (PostgreSQL, Elasticsearch, Neo4j; skipped with the reason when they are not up).

Visibility is computed here from the ACL rule in README ("Permissions"), not with the
code under test. A marker (id, label, identifier, codename, source key) that the caller
itself put into the question is not a leak when echoed; every other one is.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from core.ids import doc_handle
from core.settings import ApiKey, ApiSettings, BackendSettings, Settings
from core.types import Principal
from ragline.api import create_app
from ragline.api.context import ApiContext
from ragline.mcp.server import create_mcp_server

PAIRS = int(os.environ.get("RAGLINE_FUZZ_PAIRS", "2000"))
SEED = 1414

# key -> (user, roles, tags, can_write)
PRINCIPALS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], bool]] = {
    "k-carol": ("carol", ("manager", "hr"), ("alpha", "beta", "finance"), True),  # the uploader
    "k-dave": ("dave", (), (), True),  # public only, but may write
    "k-ann": ("ann", (), ("alpha",), True),
    "k-bob": ("bob", (), ("beta",), False),
    "k-fred": ("fred", ("analyst",), ("finance",), False),
    "k-hugo": ("hugo", ("hr",), (), False),
    "k-mia": ("mia", ("manager",), (), False),
    # Near misses: case, whitespace, a role named like a tag, a user named like a role.
    "k-eve": ("eve", ("alpha", "HR"), ("Alpha", "alpha ", "finance,beta", "role:"), True),
    "k-hr": ("role:hr", (), (), False),
}

ACLS: list[tuple[str, ...]] = [
    (),
    ("alpha",),
    ("beta",),
    ("finance",),
    ("role:hr",),
    ("role:manager",),
    ("user:carol",),
    ("alpha", "finance"),
]

SYLLABLES = ["vor", "lax", "quen", "trid", "mo", "zel", "bra", "nix", "ul", "fen", "dro", "kai"]
TOPICS = ["budget", "launch date", "salary band", "supplier", "incident", "quota", "password"]


def _codename(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()


@dataclass
class Doc:
    key: str
    acl: tuple[str, ...]
    title: str
    codename: str
    identifier: str
    text: str
    doc_id: str = ""
    job_id: str = ""
    content_ids: list[str] = field(default_factory=list)

    def markers(self) -> list[str]:
        return [
            self.doc_id,
            f"Doc{doc_handle(self.doc_id)}",
            f"upload:{self.key}",
            self.codename,
            self.identifier,
            self.job_id,
            *self.content_ids,
        ]


def _corpus(rng: random.Random) -> list[Doc]:
    docs: list[Doc] = []
    seen: set[str] = set()
    for i in range(24):
        acl = ACLS[i % len(ACLS)]
        codename = _codename(rng)
        while codename in seen:
            codename = _codename(rng)
        seen.add(codename)
        topic = rng.choice(TOPICS)
        identifier = f"{codename[:2].upper()}-{rng.randint(1000, 9999)}.{i}"
        amount = rng.randint(10, 999)
        title = f"{codename} {topic} memo"
        text = (
            f"# {title}\n\n"
            f"The {topic} of project {codename} is {amount} thousand euros, "
            f"filed under reference {identifier}.\n\n"
            f"## Details\n\n"
            f"Project {codename} reports to the steering board every quarter. "
            f"The {topic} was approved on {rng.randint(1, 28)} March; "
            f"questions about {identifier} go to the {rng.choice(['finance', 'legal', 'it'])} "
            f"desk.\n"
        )
        docs.append(
            Doc(f"fuzz-{i:02d}-{codename.lower()}.md", acl, title, codename, identifier, text)
        )
    return docs


def _tokens(user: str, roles: tuple[str, ...], tags: tuple[str, ...]) -> set[str]:
    return set(tags) | {f"role:{r}" for r in roles} | {f"user:{user}"}


def _visible(key: str, doc: Doc) -> bool:
    user, roles, tags, _ = PRINCIPALS[key]
    return not doc.acl or bool(set(doc.acl) & _tokens(user, roles, tags))


# -- the two profiles --------------------------------------------------------------------


def _server(var: str) -> str:
    url = os.environ.get(var, "")
    if not url:
        pytest.skip(f'{var} is not set: run `eval "$(deploy/local/env.sh)"`')
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), 2).close()
    except OSError:
        pytest.skip(f"server at {var}={url} is unreachable: `deploy/local/services up`")
    return url


def _keys() -> list[ApiKey]:
    return [
        ApiKey(key=k, user=u, roles=list(r), tags=list(t), can_write=w)
        for k, (u, r, t, w) in PRINCIPALS.items()
    ]


@pytest.fixture(
    scope="module",
    params=["embedded", pytest.param("production", marks=pytest.mark.integration)],
)
def settings(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Settings]:
    root = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    api = ApiSettings(keys=_keys(), max_top_k=20)
    if request.param == "embedded":
        yield Settings(data_dir=root, api=api)
        return
    from indexing.migrate import scratch_database
    from indexing.stores.elastic_keyword import ElasticKeywordIndex
    from indexing.stores.neo4j_graph import Neo4jGraphStore

    es_url = _server("RAGLINE_TEST_ES_URL")
    neo_url = _server("RAGLINE_TEST_NEO4J_URL")
    pg_url = _server("RAGLINE_TEST_PG_URL")
    user = os.environ.get("RAGLINE_TEST_NEO4J_USER", "neo4j")
    password = os.environ.get("RAGLINE_TEST_NEO4J_PASSWORD", "")
    suffix = os.urandom(5).hex()
    alias, ns = f"ragline-fuzz-{suffix}", f"fuzz{suffix}"
    with ExitStack() as stack:
        metadata_url = stack.enter_context(scratch_database(pg_url))
        yield Settings(
            profile="production",
            data_dir=root,
            metadata_url=metadata_url,
            api=api,
            backends=BackendSettings(
                keyword="elasticsearch",
                es_url=es_url,
                es_index=alias,
                graph="neo4j",
                neo4j_url=neo_url,
                neo4j_user=user,
                neo4j_password=password,
                neo4j_namespace=ns,
                dense_dir=str(root / "dense"),
            ),
        )
        es = ElasticKeywordIndex(es_url, alias)
        es.drop()
        es.close()
        neo = Neo4jGraphStore(neo_url, user, password, namespace=ns)
        neo.drop()
        neo.close()


@dataclass
class World:
    client: TestClient
    ctx: ApiContext
    docs: list[Doc]


def _h(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


@pytest.fixture(scope="module")
def world(settings: Settings) -> Iterator[World]:
    docs = _corpus(random.Random(SEED))
    app = create_app(settings, cache_ttl_s=300)
    with TestClient(app, raise_server_exceptions=False) as client:
        for doc in docs:
            form: dict[str, Any] = {"acl_tags": ",".join(doc.acl)} if doc.acl else {}
            r = client.post(
                "/v1/documents",
                headers=_h("k-carol"),
                files={"file": (doc.key, doc.text.encode())},
                data={**form, "batch_id": "fuzz"},
            )
            assert r.status_code == 202, r.text
            doc.doc_id, doc.job_id = r.json()["doc_id"], r.json()["job_id"]
        ctx: ApiContext = client.app.state.ctx  # type: ignore[attr-defined]
        deadline = time.monotonic() + 300
        for doc in docs:
            while (job := ctx.rag.stores.metadata.job(doc.job_id)) and job.state != "searchable":
                assert job.state != "failed" and time.monotonic() < deadline, job
                time.sleep(0.05)
            version = ctx.rag.stores.metadata.current_version(doc.doc_id)
            assert version
            doc.content_ids = ctx.rag.stores.metadata.version_content_ids(doc.doc_id, version)
        yield World(client, ctx, docs)


# -- the fuzz ------------------------------------------------------------------------------


def _queries(rng: random.Random, hidden: Doc, other: Doc) -> str:
    words = hidden.text.split()
    start = rng.randrange(0, max(1, len(words) - 6))
    phrase = " ".join(words[start : start + rng.randint(3, 6)])
    topic = hidden.title.split(" ", 1)[1].removesuffix(" memo")
    choices = [
        hidden.title,
        hidden.identifier,
        phrase,
        f"What is the {topic} of project {hidden.codename}?",
        f"Doc{doc_handle(hidden.doc_id)}_p1 {topic}",
        f"[Doc{doc_handle(hidden.doc_id)}_p1] {hidden.codename}",
        hidden.doc_id,
        rng.choice(hidden.content_ids) if hidden.content_ids else hidden.doc_id,
        f"upload:{hidden.key}",
        f"{hidden.identifier} {other.codename} {topic}",
        f"{other.title} {hidden.codename}",
        f"reference {hidden.identifier} desk",
        f"{topic} {hidden.codename.lower()} euros",
    ]
    return rng.choice(choices)


def _leaks(key: str, response: str, question: str, docs: list[Doc]) -> list[str]:
    """Markers of documents `key` may not see that appear in `response` and were not
    supplied by the caller in `question`."""
    asked = question.lower()
    found = []
    low = response.lower()
    for doc in docs:
        if _visible(key, doc):
            continue
        for marker in doc.markers():
            m = marker.lower()
            if m and m in low and m not in asked:
                found.append(f"{doc.key}: {marker}")
    return found


async def _mcp(server: Any, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """(is_error, the whole result as JSON)."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        result = await server.call_tool(tool, args)
    except ToolError as exc:  # in-process calls raise what a client gets as is_error
        return True, str(exc)
    return bool(result.is_error), str(result.model_dump_json())


@dataclass(frozen=True)
class Probe:
    key: str
    endpoint: str
    target: Doc
    question: str


def _probes(rng: random.Random, docs: list[Doc]) -> list[Probe]:
    # Weights: the id lookups are cheap, the retrieval doors cost ~0.1 s of CPU each.
    endpoints = [
        *["search"] * 5,
        *["ask"] * 2,
        "chat",
        *["mcp_search"] * 2,
        "mcp_ask",
        *["document"] * 3,
        *["meta"] * 2,
        *["job"] * 2,
        "mcp_meta",
    ]
    keys = [k for k in PRINCIPALS if k != "k-carol"]
    out = []
    for _ in range(PAIRS):
        key = rng.choice(keys)
        hidden_docs = [d for d in docs if not _visible(key, d)]
        seen_docs = [d for d in docs if _visible(key, d)]
        target = rng.choice(hidden_docs if hidden_docs and rng.random() < 0.75 else docs)
        question = _queries(rng, target, rng.choice(seen_docs))
        out.append(Probe(key, rng.choice(endpoints), target, question))
    return out


class Prober:
    """Runs probes; one per thread (its own event loop for the MCP tools)."""

    def __init__(self, world: World, mcp: dict[str, Any]) -> None:
        self.world = world
        self.mcp = mcp
        self.local = threading.local()

    def _tool(self, key: str, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        loop = getattr(self.local, "loop", None)
        if loop is None:
            loop = self.local.loop = asyncio.new_event_loop()
        return loop.run_until_complete(_mcp(self.mcp[key], tool, args))

    def run(self, p: Probe) -> tuple[list[str], list[str]]:
        """(leaks, misses) of one probe."""
        client, docs, h = self.world.client, self.world.docs, _h(p.key)
        question, leaks, misses = p.question, [], []
        if p.endpoint in ("search", "ask"):
            r = client.post(f"/v1/{p.endpoint}", headers=h, json={"question": question})
            assert r.status_code == 200, (p, r.text[:300])
            body = r.text
        elif p.endpoint == "chat":
            messages = [{"role": "user", "content": question}]
            r = client.post("/v1/chat/completions", headers=h, json={"messages": messages})
            assert r.status_code == 200, (p, r.text[:300])
            body = r.text
        elif p.endpoint in ("mcp_search", "mcp_ask"):
            tool = p.endpoint.removeprefix("mcp_")
            error, body = self._tool(p.key, tool, {"question": question})
            assert not error, (p, body[:300])
        else:
            ident = p.target.job_id if p.endpoint == "job" else p.target.doc_id
            if p.endpoint == "mcp_meta":
                error, body = self._tool(p.key, "get_document_meta", {"doc_id": ident})
                ok = not error
            else:
                path = {
                    "document": f"/v1/documents/{ident}",
                    "meta": f"/v1/documents/{ident}/meta",
                    "job": f"/v1/jobs/{ident}",
                }[p.endpoint]
                r = client.get(path, headers=h)
                assert r.status_code in (200, 404), r.text
                ok, body = r.status_code == 200, r.text
            if ok != _visible(p.key, p.target):
                (leaks if ok else misses).append(f"{p.key} {p.endpoint} {p.target.key}: {ok}")
            question = ident  # the caller supplied the id: its echo is no leak
        leaks += [
            f"{p.key} {p.endpoint} {question!r} -> {x}" for x in _leaks(p.key, body, question, docs)
        ]
        return leaks, misses


def test_no_response_reveals_a_hidden_document(world: World) -> None:
    docs = world.docs
    mcp = {
        key: create_mcp_server(
            world.ctx.rag, Principal(user=u, roles=frozenset(r), tags=frozenset(t), can_write=w)
        )
        for key, (u, r, t, w) in PRINCIPALS.items()
    }
    probes = _probes(random.Random(SEED + 1), docs)
    prober = Prober(world, mcp)
    leaks: list[str] = []
    misses: list[str] = []
    # A few at a time, as concurrent agents would call: also what keeps this test's wall
    # time in bounds on a busy machine.
    with ThreadPoolExecutor(max_workers=4) as pool:
        for found, missed in pool.map(prober.run, probes):
            leaks += found
            misses += missed
    # Listings, once per principal: jobs of the uploader's batch, MCP's document list.
    for key in PRINCIPALS:
        if key == "k-carol":
            continue
        r = world.client.get("/v1/jobs", headers=_h(key), params={"batch_id": "fuzz"})
        _, listing = prober._tool(key, "list_documents", {"limit": 200})
        leaks += [f"{key} listings -> {x}" for x in _leaks(key, r.text + listing, "", docs)]
        listed = {j["doc_id"] for j in r.json()["jobs"]}
        assert listed == {d.doc_id for d in docs if _visible(key, d)}, key
    counts = Counter(p.endpoint for p in probes)
    assert len(probes) >= PAIRS and len(counts) == 9, counts
    assert not leaks, leaks[:20]
    assert not misses, misses[:20]


def _wait(meta: Any, job_id: str) -> Any:
    deadline = time.monotonic() + 120
    while (job := meta.job(job_id)) and job.state not in ("searchable", "failed", "deleted"):
        assert time.monotonic() < deadline, job
        time.sleep(0.05)
    return job


def _normalised(value: Any, key: str, doc_id: str, job_id: str) -> Any:
    """`value` with the upload key, the ids it yields and timestamps replaced."""
    if isinstance(value, dict):
        return {
            k: "<time>" if k.endswith("_at") else _normalised(v, key, doc_id, job_id)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalised(v, key, doc_id, job_id) for v in value]
    if isinstance(value, str):
        for real, mark in ((key, "<key>"), (Path(key).stem, "<stem>"), (doc_id, "<doc>")):
            value = value.replace(real, mark)
        return value.replace(doc_handle(doc_id), "<handle>").replace(job_id, "<job>")
    return value


def test_write_side_probes(world: World) -> None:
    """The issue's write-side findings, on this profile's stores."""
    client, meta = world.client, world.ctx.rag.stores.metadata
    secret = next(d for d in world.docs if d.acl == ("alpha",))
    # 1. takeover: dave (writer, no tags) replaces / re-tags / deletes alpha's document.
    # Each upload lands in a document of dave's own at that key; alpha's is untouched.
    own = set()
    for body, form in ((b"# x\n\nowned\n", {}), (secret.text.encode(), {"acl_tags": ""})):
        r = client.post(
            "/v1/documents",
            headers=_h("k-dave"),
            files={"file": (secret.key, body)},
            data=form,
        )
        assert r.status_code == 202, r.text
        own.add(r.json()["doc_id"])
        _wait(meta, r.json()["job_id"])
    assert secret.doc_id not in own and len(own) == 1
    assert client.delete(f"/v1/documents/{secret.doc_id}", headers=_h("k-dave")).status_code == 404
    doc = meta.document(secret.doc_id)
    assert doc is not None and doc.acl_tags == frozenset({"alpha"})
    assert [v.status for v in meta.versions(secret.doc_id)] == ["current"]
    # 2. no existence or content oracle: an upload to the hidden document's key (its
    # exact bytes, or others) is answered as one to a key nobody uses, field for field
    # but the key itself and the ids derived from it.
    beta = next(d for d in world.docs if d.acl == ("beta",))
    assert not _visible("k-eve", beta)
    fresh_key = f"never-used-{beta.key}"
    for body in (beta.text.encode(), b"# guess\n\nguess\n"):
        answers = []
        for key in (beta.key, fresh_key):
            r = client.post("/v1/documents", headers=_h("k-eve"), files={"file": (key, body)})
            job = _wait(meta, r.json()["job_id"])
            got = client.get(f"/v1/documents/{r.json()['doc_id']}", headers=_h("k-eve"))
            answers.append(
                _normalised(
                    [r.status_code, r.json(), job.state, job.reason, got.json()],
                    key,
                    r.json()["doc_id"],
                    r.json()["job_id"],
                )
            )
        assert answers[0] == answers[1]
        assert answers[0][0] == 202
    assert beta.doc_id not in str(answers)
    assert [v.status for v in meta.versions(beta.doc_id)] == ["current"]
    # 3. a re-tag with the same bytes tightens at once and reaches the stores.
    public = next(d for d in world.docs if not d.acl)
    q = {"question": f"{public.identifier} {public.codename}"}

    def found(key: str) -> bool:
        hits = client.post("/v1/search", headers=_h(key), json=q).json()["hits"]
        return any(h["content_id"] in public.content_ids for h in hits)

    assert found("k-dave")
    r = client.post(
        "/v1/documents",
        headers=_h("k-ann"),
        files={"file": (public.key, public.text.encode())},
        data={"acl_tags": "alpha"},
    )
    assert r.status_code == 202 and r.json()["state"] == "indexing", r.text
    assert not found("k-dave")
    deadline = time.monotonic() + 120
    while (job := meta.job(r.json()["job_id"])) and job.state != "searchable":
        assert job.state != "failed" and time.monotonic() < deadline, job
        time.sleep(0.05)
    stores = world.ctx.rag.stores
    from core.types import QueryFilter

    dave = QueryFilter(access_tokens=frozenset({"user:dave"}))
    hits = stores.keyword.search(f"{public.identifier} {public.codename}", 20, dave)
    assert not set(public.content_ids) & {h.content_id for h in hits}
    ann = QueryFilter(access_tokens=frozenset({"alpha"}))
    hits = stores.keyword.search(f"{public.identifier} {public.codename}", 20, ann)
    assert set(public.content_ids) & {h.content_id for h in hits}
    hits = stores.graph.search([public.identifier], 20, dave)
    assert not set(public.content_ids) & {h.content_id for h in hits}
    assert found("k-ann") and not found("k-dave")
