"""Locust scenarios of an agent platform against a running `ragline serve`.

Run by `ragline bench load` (which starts the server, Locust and collects the numbers), or
by hand:

    RAGLINE_LOAD_KEY=KEY RAGLINE_LOAD_QUESTIONS=q.txt RAGLINE_LOAD_SCENARIO=mixed \\
        locust -f ragline/bench/locustfile.py --headless -u 200 -r 50 -t 60s \\
        --host http://127.0.0.1:8080

RAGLINE_LOAD_CLIENT=requests uses Locust's HttpUser instead of FastHttpUser.
RAGLINE_LOAD_RETRY_AFTER=honour makes an agent refused with 429 wait the Retry-After
seconds before its next call, as a well-behaved client does; the default (ignore) retries
at once, the worst case for the server.

Scenarios (RAGLINE_LOAD_SCENARIO):
- search: agents retrieving passages (/v1/search), closed loop;
- ask: agents asking for cited answers (/v1/ask), closed loop;
- mixed: 70 % search, 25 % ask, 5 % uploads of small new documents;
- open: every simulated agent asks every RAGLINE_LOAD_PERIOD_S seconds (default 2) whatever
  the latency (a call slower than the period starts the next one at once), each on its
  own random phase: the arrival pattern of many independent agents.

A 429 is recorded under its own name ("search 429", ...) as a success: backpressure is the
server doing its job; the harness reports how fast it came. Anything else non-2xx is a
failure. This module runs inside Locust's gevent-patched process only; Ragline never
imports it.
"""

from __future__ import annotations

import itertools
import os
import random
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

from locust import FastHttpUser, HttpUser, between, task

from ragline.bench.pacing import first_call, next_call

_SCENARIO = os.environ.get("RAGLINE_LOAD_SCENARIO", "search")
_KEY = os.environ.get("RAGLINE_LOAD_KEY", "")
_PERIOD = float(os.environ.get("RAGLINE_LOAD_PERIOD_S", "2"))
_QUESTIONS_FILE = os.environ.get("RAGLINE_LOAD_QUESTIONS", "")
_HONOUR_RETRY_AFTER = os.environ.get("RAGLINE_LOAD_RETRY_AFTER", "ignore") == "honour"
# fast: geventhttpclient (FastHttpUser), a fraction of the CPU per request of requests
# (HttpUser), so the load generator takes less of the cores it shares with the server.
_CLIENT = FastHttpUser if os.environ.get("RAGLINE_LOAD_CLIENT", "fast") == "fast" else HttpUser


def _questions() -> list[str]:
    if _QUESTIONS_FILE and Path(_QUESTIONS_FILE).is_file():
        lines = Path(_QUESTIONS_FILE).read_text(encoding="utf-8").splitlines()
        found = [q.strip() for q in lines if q.strip()]
        if found:
            return found
    return ["What does the document say about access control?"]


def _multipart(filename: str, content: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body with one `file` field, built by hand: FastHttpUser's
    client has no `files=`."""
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{filename}"\r\nContent-Type: text/markdown\r\n\r\n'
    ).encode()
    return head + content + f"\r\n--{boundary}--\r\n".encode(), (
        f"multipart/form-data; boundary={boundary}"
    )


def _own_schedule(agent: Agent) -> float:
    """Seconds until the agent's next call on its own schedule (ragline.bench.pacing)."""
    now = time.perf_counter()
    agent._next_call = next_call(agent._next_call, _PERIOD, now)
    return agent._next_call - now


class Agent(_CLIENT):  # type: ignore[valid-type,misc]
    """One agent session. Questions are dealt round-robin from a shuffled list, so
    concurrent agents ask distinct questions."""

    wait_time = _own_schedule if _SCENARIO == "open" else between(0, 0)
    _deck = itertools.cycle(random.Random(7).sample(_questions(), len(_questions())))

    # Sent with each request: the two clients keep default headers in different places.
    _auth: ClassVar[dict[str, str]] = {"X-API-Key": _KEY}

    _next_call = 0.0  # open: when this agent calls next (perf_counter)

    def on_start(self) -> None:
        """Open loop: each agent starts at its own moment within the first period, as
        independent agents do, and keeps that phase (`_own_schedule`)."""
        if _SCENARIO == "open":
            self._next_call = first_call(time.perf_counter(), _PERIOD, random.random())
            time.sleep(max(0.0, self._next_call - time.perf_counter()))

    def _post(self, endpoint: str, name: str, payload: dict[str, Any]) -> None:
        with self.client.post(
            endpoint, json=payload, name=name, catch_response=True, headers=self._auth
        ) as r:
            if r.status_code == 429:
                r.request_meta["name"] = f"{name} 429"
                r.success()
            elif r.status_code != 200:
                r.failure(f"HTTP {r.status_code}")
        self._back_off(r)

    def _back_off(self, r: Any) -> None:
        """After a 429, wait what Retry-After says (outside the timed request), when the
        run honours it. gevent patches `time.sleep`: other agents go on meanwhile."""
        if _HONOUR_RETRY_AFTER and r.status_code == 429:
            try:
                time.sleep(max(0.0, float(r.headers.get("Retry-After") or 1)))
            except ValueError:
                time.sleep(1.0)

    def _search(self) -> None:
        self._post("/v1/search", "search", {"question": next(self._deck), "top_k": 5})

    def _ask(self) -> None:
        self._post("/v1/ask", "ask", {"question": next(self._deck)})

    def _upload(self) -> None:
        note = f"# Load note {uuid.uuid4().hex}\n\nA short note written by the load test.\n"
        body, content_type = _multipart(f"load-{uuid.uuid4().hex[:8]}.md", note.encode())
        with self.client.post(
            "/v1/documents",
            name="upload",
            catch_response=True,
            data=body,
            headers={**self._auth, "Content-Type": content_type},
        ) as r:
            if r.status_code == 429:
                r.request_meta["name"] = "upload 429"
                r.success()
            elif r.status_code != 202:
                r.failure(f"HTTP {r.status_code}")
        self._back_off(r)

    @task
    def step(self) -> None:
        if _SCENARIO == "ask":
            self._ask()
        elif _SCENARIO == "mixed":
            roll = random.random()
            if roll < 0.70:
                self._search()
            elif roll < 0.95:
                self._ask()
            else:
                self._upload()
        else:  # search, open
            self._search()
