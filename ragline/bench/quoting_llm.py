"""A stand-in LLM server for `ragline bench query --quoting-llm`: OpenAI-compatible chat
completions on 127.0.0.1 that answer at once with the first sentence of the first source in
the prompt, cited with that source's label.

What it is for: the production ask path writes its answers with an LLM, and the work of
that path on our side (the prompt, the HTTP call, the citation checks, the answerability
check of what was cited) was never measured, only the extractive one. A real LLM on this
machine would take seconds per answer and its CPU would compete with the measured
process; this answers in well under a millisecond, with a reply the citation checks accept,
so what is measured is Ragline's side. It is not a model: the answers' quality means
nothing here.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

# A source in the prompt: "[label] (title, page N)" then its text (generation/prompt.py).
_SOURCE = re.compile(r"^(\[[^\]\n]+\]) \([^\n]*\)\n(.+?)(?=\n\n\[|\Z)", re.S | re.M)
_SENTENCE = re.compile(r"[^。！？.!?\n]{8,}[。！？.!?]")


def quoting_reply(prompt: str) -> str:
    """The first sentence (or the first 120 characters) of the prompt's first source,
    followed by its label."""
    source = _SOURCE.search(prompt)
    if source is None:
        return "The sources do not say."
    label, text = source.group(1), source.group(2)
    sentence = _SENTENCE.search(text)
    quoted = sentence.group(0) if sentence else text[:120]
    return f"{quoted.strip()} {label}"


def _handler() -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as vLLM

        def setup(self) -> None:
            super().setup()
            # Headers and body are two writes: without this, Nagle's algorithm holds the
            # body until the client's delayed ACK (~40 ms a call).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            body: dict[str, Any] = json.loads(
                self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}"
            )
            messages = body.get("messages") or [{}]
            content = quoting_reply(str(messages[-1].get("content", "")))
            payload = json.dumps(
                {
                    "id": "quoting",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


class QuotingLLM:
    """`with QuotingLLM() as url:` the server runs in a thread of this process, at `url`
    (an OpenAI-style base URL)."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )

    def __enter__(self) -> str:
        self._thread.start()
        return self.url

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
