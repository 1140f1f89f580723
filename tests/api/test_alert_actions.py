"""The four golden signals driven over their thresholds by real traffic through the API
(real stores, in-process task runner), each automatic action asserted, then its reversal
once the signal recovers; every step in GET /v1/alerts and on the webhooks.

Thresholds and windows are shrunk per test (a rules file written here) so a test takes
seconds; the scheduler's ticks are called directly instead of waiting for the interval."""

from __future__ import annotations

import json
import queue
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.settings import ApiKey, LLMSettings, MonitoringSettings, Settings, Webhook
from ragline.api import create_app
from tests.api.conftest import ALICE, api_settings, upload, wait_job

AUDITOR = {"X-API-Key": "audit-key"}  # a key with the auditor role (see _settings)

DOC = (
    "# Zephyrine merger\n\n"
    "The zephyrine merger budget is 42 million yuan.\n\n"
    "The zephyrine merger was approved by the board in March.\n\n"
    "The zephyrine plant in Harbin employs 300 engineers.\n"
)


class Receiver:
    """A stdlib HTTP server on 127.0.0.1 recording every POSTed JSON body by path."""

    def __init__(self, reply: Any = None) -> None:
        self.bodies: queue.Queue[tuple[str, Any]] = queue.Queue()
        receiver = self
        self.reply = reply

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer = receiver.answer(self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str, body: Any) -> Any:
        self.bodies.put((path, body))
        return {"errcode": 0} if self.reply is None else self.reply(body)

    def drain(self) -> list[tuple[str, Any]]:
        out = []
        while not self.bodies.empty():
            out.append(self.bodies.get_nowait())
        return out

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _rules(path: Path, body: str) -> str:
    path.write_text(body, encoding="utf-8")
    return str(path)


def _settings(tmp_path: Path, rules: str, hooks: Receiver | None = None, **extra: Any) -> Settings:
    base = api_settings(tmp_path / "data")
    webhooks = (
        [
            Webhook(url=f"{hooks.url}/{fmt}", format=fmt)
            for fmt in ("generic", "wecom", "feishu", "slack")
        ]
        if hooks
        else []
    )
    monitoring = MonitoringSettings(
        alert_rules=_rules(tmp_path / "rules.toml", rules),
        interval_s=3600,  # one tick at start; the test ticks itself
        webhooks=webhooks,
        public_url="https://ragline.example.com",
    )
    api = base.api.model_copy(
        update={"keys": [*base.api.keys, ApiKey(key="audit-key", user="aud", roles=["auditor"])]}
    )
    return base.model_copy(update={"monitoring": monitoring, "api": api, **extra})


def _ready(client: TestClient, name: str = "zephyrine.md", body: str = DOC) -> str:
    up = upload(client, name, body.encode(), ALICE)
    assert wait_job(client, up["job_id"], ALICE)["state"] == "searchable"
    return str(up["doc_id"])


def _alerts(client: TestClient, headers: dict[str, str] = ALICE) -> dict[str, Any]:
    r = client.get("/v1/alerts", headers=headers)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _events(client: TestClient, alert: str) -> list[str]:
    return [e["event"] for e in reversed(_alerts(client)["events"]) if e["alert"] == alert]


def _tick(client: TestClient) -> list[str]:
    return [a.name for a in client.app.state.alerts.tick()]  # type: ignore[attr-defined]


def _sources(view: dict[str, Any]) -> list[str]:
    return [s["name"] for s in view["route"]["sources"]]


def test_latency_degrades_routing_to_keyword_only_and_restores_it(
    tmp_path: Path, hooks: Receiver
) -> None:
    rules = """
[[rule]]
name = "retrieval_latency_p95"
kind = "retrieval_latency"
quantile = 0.95
window_s = 5
min_queries = 3
threshold = 500
action = "degrade_routing"
fix = "/v1/alerts"
"""
    with TestClient(create_app(_settings(tmp_path, rules, hooks))) as client:
        _ready(client)
        rag = client.app.state.ctx.rag  # type: ignore[attr-defined]
        dense_calls = []
        real_search = rag.stores.dense.search

        def slow_search(*args: Any, **kw: Any) -> Any:  # a dense store under load
            dense_calls.append(1)
            time.sleep(0.8)  # well over the 500 ms threshold, under the 2 s timeout
            return real_search(*args, **kw)

        rag.stores.dense.search = slow_search
        hooks.drain()
        for i in range(3):
            r = client.post("/v1/search", json={"question": f"zephyrine budget {i}"}, headers=ALICE)
            assert r.status_code == 200 and "dense" in _sources(r.json())
        assert len(dense_calls) == 3
        assert _tick(client) == ["retrieval_latency_p95"]
        assert rag.fast_path.on
        state = _alerts(client)
        assert [a["action"] for a in state["actions"]] == ["degrade_routing"]
        assert state["switches"][0]["on"] is True

        # Degraded: the fast path (keyword only), quick, and says so.
        r = client.post("/v1/search", json={"question": "zephyrine plant engineers"}, headers=ALICE)
        view = r.json()
        assert _sources(view) == ["keyword"] and len(dense_calls) == 3
        assert view["hits"] and "Harbin" in view["hits"][0]["text"]
        assert any("degraded to keyword only" in w for w in view["warnings"])

        # Every webhook got the firing once, in its own format, with the fix link.
        got = dict(hooks.drain())
        assert set(got) == {"/generic", "/wecom", "/feishu", "/slack"}
        (generic,) = got["/generic"]["alerts"]
        assert (generic["status"], generic["name"]) == ("firing", "retrieval_latency_p95")
        assert generic["fix_url"] == "https://ragline.example.com/v1/alerts"
        assert "keyword-only" in generic["action_taken"]
        assert got["/wecom"]["msgtype"] == "text"
        assert "FIRING" in got["/wecom"]["text"]["content"]
        assert "Fix: https://ragline.example.com/v1/alerts" in got["/feishu"]["content"]["text"]
        assert "retrieval_latency_p95" in got["/slack"]["text"]

        # Still slow samples in the window: it keeps firing, nothing re-sent.
        assert _tick(client) == ["retrieval_latency_p95"]
        assert hooks.drain() == []

        # The slow searches leave the window; fast ones replace them: recovered.
        time.sleep(5.1)
        for i in range(3):
            client.post("/v1/search", json={"question": f"zephyrine board {i}"}, headers=ALICE)
        assert _tick(client) == []
        assert not rag.fast_path.on and _alerts(client)["actions"] == []
        r = client.post("/v1/search", json={"question": "zephyrine March"}, headers=ALICE)
        assert "dense" in _sources(r.json()) and len(dense_calls) == 4
        assert _events(client, "retrieval_latency_p95") == [
            "firing",
            "action",
            "notified",
            "notified",
            "notified",
            "notified",
            "action_reverted",
            "recovered",
            "notified",
            "notified",
            "notified",
            "notified",
        ]
        resolved = dict(hooks.drain())["/generic"]["alerts"][0]
        assert (resolved["status"], resolved["action_taken"]) == ("resolved", "routing restored")
        metrics = client.get("/metrics").text
        assert 'ragline_alert_action_active{action="degrade_routing"} 0.0' in metrics


def test_low_hit_rate_opens_reindex_jobs_for_the_documents_behind_the_misses(
    tmp_path: Path,
) -> None:
    rules = """
[[rule]]
name = "hit_rate"
kind = "hit_rate"
below = true
window_s = 3600
min_queries = 4
threshold = 0.75
action = "reindex_misses"
fix = "/v1/ops/reindex"
"""
    with TestClient(create_app(_settings(tmp_path, rules))) as client:
        doc_id = _ready(client)
        other = _ready(client, "weather.md", "# Weather\n\nRain in Harbin is common in July.\n")
        misses = [
            "zephyrine dividend policy for shareholders abroad",
            "zephyrine pension scheme contribution rates",
            "zephyrine software licence audit findings",
        ]
        for q in misses:
            a = client.post("/v1/ask", json={"question": q}, headers=ALICE).json()
            assert a["covered"] is False and a["hits"], a
            assert a["hits"][0]["source"] == "upload:zephyrine.md"
        a = client.post("/v1/ask", json={"question": "zephyrine merger budget"}, headers=ALICE)
        assert a.json()["covered"] is True
        assert _tick(client) == ["hit_rate"]  # 1 of 4 covered
        meta = client.app.state.ctx.rag.stores.metadata  # type: ignore[attr-defined]
        jobs = [j for j in meta.jobs(limit=100) if j.kind == "reindex"]
        assert [(j.doc_id, j.owner) for j in jobs] == [(doc_id, "alert:hit_rate")]
        assert other not in {j.doc_id for j in jobs}
        client.app.state.ctx.runner.drain()  # type: ignore[attr-defined]
        assert meta.job(jobs[0].job_id).state == "done"
        (action,) = _alerts(client, AUDITOR)["actions"]
        assert action["action"] == "reindex_misses" and jobs[0].job_id[:12] in action["detail"]
        # The jobs name the documents reindexed, which a reader may not see.
        (action,) = _alerts(client)["actions"]
        assert action["action"] == "reindex_misses" and action["detail"] == ""
        acted = [e for e in _alerts(client)["events"] if e["event"] == "action"]
        assert acted and all("zephyrine" not in e["message"] for e in acted)
        told = [e for e in _alerts(client, AUDITOR)["events"] if e["event"] == "action"]
        assert any("zephyrine" in e["message"] for e in told)
        # Still firing: no second round of jobs.
        assert _tick(client) == ["hit_rate"]
        assert len([j for j in meta.jobs(limit=100) if j.kind == "reindex"]) == 1

        covered = [
            "zephyrine merger budget in yuan",
            "who approved the zephyrine merger",
            "when was the zephyrine merger approved",
            "zephyrine plant Harbin engineers",
            "how many engineers at the zephyrine plant",
            "zephyrine board approval March",
            "zephyrine merger budget million",
            "rain in Harbin July",
        ]
        for q in covered:
            a = client.post("/v1/ask", json={"question": q}, headers=ALICE).json()
            assert a["covered"] is True, (q, a["warnings"])
        assert _tick(client) == []  # 9 of 12 covered = 75 %
        assert _events(client, "hit_rate") == ["firing", "action", "action_reverted", "recovered"]
        assert _alerts(client)["actions"] == []
        # Which passages and traces were behind the misses is for auditors only.
        assert all(e["detail"] == {} for e in _alerts(client)["events"])
        firing = next(e for e in meta.alert_events() if e.event == "firing")
        assert firing.detail["content_ids"] and len(firing.detail["missed_traces"]) == 3


LABEL = re.compile(r"\[Doc[0-9a-z]+_p\d+[^\]]*\]")


class FakeLLM:
    """An OpenAI-compatible server: cites one shown label, then adds sentences without
    labels while `sloppy` is set (the completeness problem the alert catches)."""

    def __init__(self) -> None:
        self.sloppy = True
        self.calls = 0
        self.receiver = Receiver(reply=self.reply)
        self.url = self.receiver.url + "/v1"

    def reply(self, body: Any) -> Any:
        self.calls += 1
        label = LABEL.findall(body["messages"][-1]["content"])[0]
        text = f"The zephyrine merger budget is 42 million yuan. {label}"
        if self.sloppy:
            text += " It was a record for the region. Analysts were surprised by it."
        return {"choices": [{"message": {"role": "assistant", "content": text}}]}


def test_incomplete_citations_pause_the_llm_and_it_resumes(tmp_path: Path) -> None:
    rules = """
[[rule]]
name = "citation_completeness"
kind = "citation_completeness"
below = true
window_s = 2
min_queries = 2
threshold = 0.95
action = "pause_llm"
"""
    llm = FakeLLM()
    try:
        settings = _settings(tmp_path, rules, llm=LLMSettings(base_url=llm.url, timeout_s=10))
        with TestClient(create_app(settings)) as client:
            _ready(client)
            for q in ("zephyrine merger budget", "what budget had the zephyrine merger"):
                a = client.post("/v1/ask", json={"question": q}, headers=ALICE).json()
                assert a["mode"] == "llm" and a["covered"], a["warnings"]
            assert _tick(client) == ["citation_completeness"]  # 2 of 6 sentences labelled
            rag = client.app.state.ctx.rag  # type: ignore[attr-defined]
            assert rag.llm_paused.on
            calls = llm.calls
            a = client.post("/v1/ask", json={"question": "zephyrine budget yuan"}, headers=ALICE)
            paused = a.json()
            assert paused["mode"] == "extractive" and llm.calls == calls
            assert any("LLM generation is paused" in w for w in paused["warnings"])
            assert "42 million" in paused["answer"]

            llm.sloppy = False  # the model is fixed meanwhile
            time.sleep(2.1)  # the sloppy answers leave the window
            assert _tick(client) == []
            assert not rag.llm_paused.on
            a = client.post("/v1/ask", json={"question": "zephyrine merger yuan"}, headers=ALICE)
            assert a.json()["mode"] == "llm" and llm.calls == calls + 1
            assert _events(client, "citation_completeness") == [
                "firing",
                "action",
                "action_reverted",
                "recovered",
            ]
    finally:
        llm.receiver.close()


def test_stale_index_triggers_an_incremental_sync(tmp_path: Path) -> None:
    rules = """
[[rule]]
name = "index_freshness"
kind = "index_freshness"
threshold = 1
action = "incremental_sync"
fix = "/v1/ops/sync"
"""
    with TestClient(create_app(_settings(tmp_path, rules))) as client:
        _ready(client)
        rag = client.app.state.ctx.rag  # type: ignore[attr-defined]
        # A batch ingest staged a new file but its sync has not run (the CLI syncs every
        # N files; a worker may have died between staging and applying).
        path = tmp_path / "late.md"
        path.write_text("# Late\n\nThe quokkanite contract ends in 2031.\n", encoding="utf-8")
        outcome = rag.ingestor.ingest(path)
        assert outcome.status == "indexed"
        assert rag.stores.metadata.current_version(outcome.doc_id) is None
        assert _tick(client) == []  # just staged: fresh enough
        time.sleep(1.2)
        assert _tick(client) == ["index_freshness"]
        client.app.state.ctx.runner.drain()  # type: ignore[attr-defined]
        assert rag.stores.metadata.current_version(outcome.doc_id) == outcome.version
        r = client.post("/v1/search", json={"question": "quokkanite contract"}, headers=ALICE)
        assert "2031" in r.json()["hits"][0]["text"]
        assert _tick(client) == []
        sync_jobs = [j for j in rag.stores.metadata.jobs(limit=50) if j.kind == "sync"]
        assert [(j.owner, j.state) for j in sync_jobs] == [("alert:index_freshness", "done")]
        assert _events(client, "index_freshness") == [
            "firing",
            "action",
            "action_reverted",
            "recovered",
        ]
