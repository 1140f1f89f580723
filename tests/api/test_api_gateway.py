"""The gateway over a real HTTP server (uvicorn on a free port): rows, live status from the
sample ticket service and from Ragline's own jobs API, /v1/ask answering from rows and
status with inline labels, traces for operators, and memory kept apart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from connectors.config import PACKAGED_SAMPLE
from connectors.sample.database import load_sample
from connectors.sample.status_service import StatusService
from core.settings import ApiKey, ApiSettings, GatewaySettings, MonitoringSettings, Settings
from ragline.api import create_app
from ragline.bench.processes import free_port
from tests.served import serving

OPS = {"X-API-Key": "ops-key"}  # operator: every template, traces, may write
WEST = {"X-API-Key": "west-key"}  # sales in the West region
INTERN = {"X-API-Key": "intern-key"}  # no gateway role at all
SUPPORT = {"X-API-Key": "support-key"}  # support: tickets, may not write
SALES_NO_REGION = {"X-API-Key": "sales-key"}  # sales without a region attribute


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("gw-api")
    load_sample(f"sqlite:///{data / 'sample.db'}")
    tickets = StatusService().start()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    mp = pytest.MonkeyPatch()
    mp.setenv("RAGLINE_SAMPLE_STATUS_URL", tickets.url)
    mp.setenv("RAGLINE_SELF_URL", url)  # the jobs source is this very server
    mp.setenv("RAGLINE_SELF_API_KEY", "ops-key")
    settings = Settings(
        data_dir=data,
        api=ApiSettings(
            keys=[
                ApiKey(key="ops-key", user="olga", roles=["operator"], can_write=True),
                ApiKey(key="west-key", user="wes", roles=["sales"], attributes={"region": "West"}),
                ApiKey(key="intern-key", user="ivy", roles=["intern"]),
                ApiKey(key="support-key", user="sue", roles=["support"]),
                ApiKey(key="sales-key", user="sam", roles=["sales"]),
            ]
        ),
        gateway=GatewaySettings(sources=str(PACKAGED_SAMPLE)),
        monitoring=MonitoringSettings(interval_s=0),
    )
    with serving(create_app(settings), port=port, lifespan="auto"):
        yield url
    tickets.stop()
    mp.undo()


def post(server: str, path: str, headers: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    return httpx.post(server + path, headers=headers, json=body, timeout=120)


def test_ask_answers_from_rows_with_inline_labels_and_a_complete_trace(server: str) -> None:
    r = post(server, "/v1/ask", OPS, {"question": "How many permit checks did Kentucky have?"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["knowledge"]["answered_by"] == "rows"
    assert body["knowledge"]["template"] == "checks_for_state"
    assert "264,140 [DB_checks_for_state_1]" in body["answer"]
    (block,) = body["blocks"]
    assert set(block) >= {
        "source_id",
        "source_kind",
        "content",
        "confidence",
        "permission_tags",
        "accessed_at",
        "freshness",
        "label",
    }
    assert block["content"]["columns"] == ["state", "region", "measure", "checks"]
    assert block["freshness"]["stale"] is False
    trace = httpx.get(f"{server}/v1/trace/{body['trace_id']}", headers=OPS).json()
    events = [e["event"] for e in trace["events"]]
    assert events == ["route", "permission", "params", "source_ok", "rows", "answer"]
    assert trace["principal"] == "olga" and trace["question"].startswith("How many permit")
    (audit,) = trace["audit"]
    assert audit["template"] == "checks_for_state" and audit["row_count"] == 1
    assert audit["params"] == {"state": "Kentucky", "metric": "permit", "region": None}
    assert httpx.get(f"{server}/v1/trace/{body['trace_id']}", headers=WEST).status_code == 403
    assert httpx.get(f"{server}/v1/trace/{'0' * 32}", headers=OPS).status_code == 404


def test_a_rows_or_status_answer_has_a_confidence_a_reason_and_a_model(server: str) -> None:
    """The fields a document answer always has: confidence, a reason when not covered, and
    a model object (tier "none": the answer is the source's values, no LLM wrote it)."""
    bodies = [
        post(server, "/v1/ask", key, {"question": q}).json()
        for key, q in (
            (OPS, "How many tickets were opened in June 2023?"),
            (OPS, "How many tickets were opened in May 2019?"),
            (SUPPORT, "What is the status of ticket #99999?"),
        )
    ]
    assert [b["knowledge"]["answered_by"] for b in bodies] == ["rows", "rows", "status"]
    assert [(b["covered"], b["confidence"], b["reason"]) for b in bodies] == [
        (True, 1.0, ""),
        (False, 1.0, "no rows match month=2019-05"),
        (False, 1.0, "tickets: nothing found for ticket_id=99999"),
    ]
    for body in bodies:
        assert set(body["model"]) == {"tier", "model", "reason"}
        assert body["model"]["tier"] == "none" and body["model"]["reason"]

    def chat(question: str) -> str:
        body = {"model": "ragline", "messages": [{"role": "user", "content": question}]}
        r = httpx.post(server + "/v1/chat/completions", headers=OPS, json=body, timeout=120)
        return str(r.json()["choices"][0]["message"]["content"])

    # A chat client that reads only the message is told why, as for documents ...
    content = chat("How many tickets were opened in May 2019?")
    assert content.endswith("Note: no rows match month=2019-05"), content
    # ... and a covered one lists its block's label where a client resolves it.
    content = chat("How many tickets were opened in June 2023?")
    sources = content.split("Sources:")[1]
    assert "[DB_tickets_opened_1]" in sources and "month=2023-06" in sources, content


def test_ask_answers_live_ticket_status(server: str) -> None:
    r = post(server, "/v1/ask", SUPPORT, {"question": "What is the status of ticket #645?"})
    body = r.json()
    assert body["knowledge"]["answered_by"] == "status", body
    assert "state: closed" in body["answer"] and "[API_tickets_1]" in body["answer"]
    assert body["blocks"][0]["content"]["title"] == "KeyError: 3224"


def test_rows_endpoint_binds_region_and_refuses_roles_and_values(server: str) -> None:
    r = post(server, "/v1/rows", WEST, {"template": "top_states", "params": {"n": 20}})
    assert r.status_code == 200, r.text
    rows = r.json()["blocks"][0]["content"]["rows"]
    assert len(rows) == 13 and {row[1] for row in rows} == {"West"}
    # A template the key may not use is answered exactly like one that does not exist.
    r = post(server, "/v1/rows", INTERN, {"template": "top_states"})
    assert r.status_code == 422 and r.json()["error"]["details"]["trace_id"]
    assert r.json()["error"]["message"] == "no template 'top_states'; known: []"
    r = post(
        server,
        "/v1/rows",
        WEST,
        {"template": "cash_flow_line", "params": {"line_item": "sold", "fiscal_year": 2009}},
    )
    assert r.status_code == 422
    # A bound attribute the key lacks is still refused as such (the template is its own).
    r = post(server, "/v1/rows", SALES_NO_REGION, {"template": "top_states"})
    assert r.status_code == 403 and "region" in r.json()["error"]["message"]
    r = post(
        server,
        "/v1/rows",
        OPS,
        {"template": "checks_for_state", "params": {"state": "Ohio' OR 1=1; --"}},
    )
    assert r.status_code == 422 and "not one of" in r.json()["error"]["message"]
    r = post(server, "/v1/rows", OPS, {"question": "How many tickets were opened in June 2023?"})
    assert r.json()["blocks"][0]["content"]["rows"] == [["2023-06", 31]]
    assert post(server, "/v1/rows", OPS, {}).status_code == 422


def test_lookup_status_of_an_ingestion_job_through_the_jobs_api(server: str) -> None:
    up = httpx.post(
        f"{server}/v1/documents",
        headers=OPS,
        files={"file": ("gw-note.md", b"# Gateway\n\nThe gateway answers from rows.\n")},
        timeout=60,
    )
    assert up.status_code == 202, up.text
    job_id = up.json()["job_id"]
    r = post(server, "/v1/status", OPS, {"source": "jobs", "params": {"job_id": job_id}})
    assert r.status_code == 200, r.text
    (block,) = r.json()["blocks"]
    assert block["content"]["job_id"] == job_id and block["label"] == "[API_jobs_1]"
    assert block["content"]["state"] in {"queued", "parsing", "indexing", "searchable"}
    r = post(server, "/v1/ask", OPS, {"question": f"What state is job {job_id} in?"})
    assert r.json()["knowledge"]["source_id"] == "jobs"
    hidden = post(server, "/v1/status", SUPPORT, {"source": "jobs", "params": {"job_id": job_id}})
    assert hidden.status_code == 422
    assert hidden.json()["error"]["message"] == "no status source 'jobs'; known: ['tickets']"


def test_memory_is_written_by_writers_only_and_never_cited(server: str) -> None:
    r = post(server, "/v1/memory", SUPPORT, {"text": "prefers answers in German"})
    assert r.status_code == 403
    r = post(
        server, "/v1/memory", OPS, {"text": "prefers tables", "kind": "preference", "key": "format"}
    )
    assert r.status_code == 200 and r.json()["stored"]["text"] == "prefers tables"
    assert "remembered preference" in r.json()["message"]
    mem = httpx.get(f"{server}/v1/memory", headers=OPS).json()
    assert mem["authoritative"] is False
    (item,) = mem["memory"]
    assert item["source_kind"] == "memory" and item["label"] == "" and not item["authoritative"]
    assert httpx.get(f"{server}/v1/memory", headers=WEST).json()["memory"] == []
    ask = post(server, "/v1/ask", OPS, {"question": "What format does olga prefer?"}).json()
    assert all(b["source_kind"] != "memory" for b in ask["blocks"])
    assert "prefers tables" not in ask["answer"]


def test_catalogue_lists_only_what_the_key_may_use(server: str) -> None:
    west = httpx.get(f"{server}/v1/gateway/catalogue", headers=WEST).json()
    names = {t["name"] for t in west["templates"]}
    assert "top_states" in names and "cash_flow_line" not in names
    top = next(t for t in west["templates"] if t["name"] == "top_states")
    assert top["params"]["region"]["bound_to"] == "region"
    assert httpx.get(f"{server}/v1/gateway/catalogue", headers=INTERN).json() == {
        "templates": [],
        "status_sources": [],
    }


def test_cached_answers_are_per_attribute_set() -> None:
    """Two keys of one user with different regions must not share cached rows."""
    from core.types import Principal
    from ragline.query_cache import cache_key

    west = Principal("u", roles=frozenset({"sales"}), attributes=(("region", "West"),))
    south = Principal("u", roles=frozenset({"sales"}), attributes=(("region", "South"),))
    assert cache_key(west, "ask", "q", {}) != cache_key(south, "ask", "q", {})
