"""The LLM path through the whole app: RAGLINE_LLM_BASE_URL set, a real OpenAI-compatible
HTTP server on 127.0.0.1 (started here), citations checked against what was retrieved."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.settings import Settings
from core.types import Principal
from ragline.app import Ragline

LABEL = re.compile(r"\[Doc[0-9a-f]{6}_p\d+\]")
FAKE = "[Docffffff_p9]"


class _Handler(BaseHTTPRequestHandler):
    """Answers with the first source label it was shown, plus one it was not."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]  # the sources; the system prompt has examples
        self.server.prompts.append(prompt)  # type: ignore[attr-defined]
        shown = LABEL.findall(prompt)
        text = f"The merger budget is 42 million yuan. {shown[0]} Confirmed in {FAKE}."
        reply = {"choices": [{"message": {"role": "assistant", "content": text}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def llm_url() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.prompts = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.prompts  # type: ignore[attr-defined]
    server.shutdown()


def test_llm_answer_keeps_retrieved_labels_and_drops_invented_ones(
    tmp_path: Path, llm_url: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, prompts = llm_url
    monkeypatch.setenv("RAGLINE_LLM_BASE_URL", url)
    monkeypatch.setenv("RAGLINE_CONFIG_FILE", str(tmp_path / "none.toml"))
    doc = tmp_path / "docs" / "budget.md"
    doc.parent.mkdir()
    doc.write_text("# Budget\n\nThe zephyrine merger budget is 42 million yuan.\n", "utf-8")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        rag.ingest([doc.parent])
        answer = rag.ask("What is the zephyrine merger budget?", Principal("amy"))
    finally:
        rag.close()
    assert answer.mode == "llm" and answer.covered, answer.warnings
    assert "zephyrine merger budget is 42 million" in prompts[0]  # the sources reached the LLM
    assert answer.removed_labels == (FAKE,)
    assert FAKE not in answer.text
    assert [c.source for c in answer.citations] == [doc.resolve().as_uri()]
    assert answer.citations[0].label in answer.text
