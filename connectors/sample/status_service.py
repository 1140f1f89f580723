"""A small real HTTP status service over the sample tickets (closed Langchain-ChatGLM
issues): `GET /tickets/{number}` -> {"ticket": {...}, "checked_at": ISO time}.

Started by the tests and the benchmark on a free port (`StatusService().start()`), or by
hand with `ragline gateway status-service`. `delay_s` makes it slow on purpose (breaker
tests); `token` makes it require `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from connectors.sample.database import ticket_rows


class StatusService:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, token: str = "") -> None:
        self.tickets: dict[int, dict[str, Any]] = {t["ticket_id"]: t for t in ticket_rows()}
        self.delay_s = 0.0
        self.fail_with = 0  # answer every request with this HTTP status (0 = normal)
        self.requests = 0
        self.token = token
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                service.requests += 1
                if service.delay_s:
                    time.sleep(service.delay_s)
                if service.fail_with:
                    return self._send(service.fail_with, {"error": "failing on purpose"})
                if service.token and self.headers.get("Authorization") != f"Bearer {service.token}":
                    return self._send(401, {"error": "missing or wrong token"})
                parts = self.path.strip("/").split("/")
                if len(parts) == 2 and parts[0] == "tickets" and parts[1].isdigit():
                    ticket = service.tickets.get(int(parts[1]))
                    if ticket is None:
                        return self._send(404, {"error": f"no ticket {parts[1]}"})
                    body = {
                        "ticket": {
                            "number": ticket["ticket_id"],
                            "title": ticket["title"],
                            "state": ticket["state"],
                            "opened": ticket["opened"].isoformat(),
                        },
                        "checked_at": datetime.now(UTC).isoformat(),
                    }
                    return self._send(200, body)
                if parts == ["healthz"]:
                    return self._send(200, {"ok": True})
                return self._send(404, {"error": "unknown path"})

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body, ensure_ascii=False, default=_iso).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> StatusService:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value)
