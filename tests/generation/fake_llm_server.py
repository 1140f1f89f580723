"""A tiny OpenAI-compatible chat completions server, for tests (imported by name).

Real HTTP on 127.0.0.1 in a thread: the client is tested over the wire, not against a
mock. Each test queues the replies it wants, then reads back the requests received.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    raw_body: str | None = None  # sent as-is instead of a chat completion


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    peer: tuple[str, int] = ("", 0)  # the client's address: one per connection


@dataclass
class FakeLLMServer:
    url: str = ""
    replies: list[Reply] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def queue(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self) -> Reply:
        with self.lock:
            return self.replies.pop(0) if self.replies else Reply(status=599, raw_body="no reply")


def handler_for(fake: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as vLLM: clients may reuse connections

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with fake.lock:
                fake.received.append(
                    Received(self.path, dict(self.headers.items()), body, self.client_address)
                )
            reply = fake.next_reply()
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.raw_body is not None:
                payload = reply.raw_body.encode()
            else:
                payload = json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": "stop",
                            }
                        ],
                    }
                ).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test): nothing to answer

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output clean

    return Handler
