"""A scripted OpenAI-compatible chat server for the agent tests (imported by name).

Real HTTP on 127.0.0.1 in a thread. Each test queues the assistant messages to replay,
in order: tool calls (arguments sent verbatim, malformed ones included), plain text, or a
function of the request (to cite a label the tools really returned). Every request body
is kept for the test to inspect.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Message = dict[str, Any]
Script = Message | Callable[[dict[str, Any]], Message]
LABEL = re.compile(r"\[Doc[0-9a-f]{6}_p\d+\]")


def calls(*pairs: tuple[str, Any]) -> Message:
    """An assistant message calling tools; a str argument is sent exactly as written."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for i, (name, args) in enumerate(pairs)
        ],
    }


def text(content: str) -> Message:
    return {"role": "assistant", "content": content}


def tool_labels(body: dict[str, Any]) -> list[str]:
    """Labels in the tool results of a request, in order."""
    found: list[str] = []
    for m in body["messages"]:
        if m.get("role") == "tool":
            found += [x for x in LABEL.findall(m["content"]) if x not in found]
    return found


@dataclass
class ScriptedLLM:
    url: str = ""
    script: list[Script] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def queue(self, *items: Script) -> None:
        with self.lock:
            self.script.extend(items)

    def reply_to(self, body: dict[str, Any]) -> Message | None:
        with self.lock:
            self.requests.append(body)
            item = self.script.pop(0) if self.script else None
        return item(body) if callable(item) else item


def _handler(llm: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            message = llm.reply_to(body)
            if message is None:
                status, payload = 500, {"error": {"message": "script exhausted"}}
            else:
                status = 200
                payload = {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                        }
                    ],
                }
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def scripted_llm() -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(llm))
    server.daemon_threads = True
    llm.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield llm
    finally:
        server.shutdown()
        server.server_close()
