"""A real uvicorn server on 127.0.0.1, in a thread, for tests that speak HTTP to it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from ragline.bench.processes import free_port


@contextmanager
def serving(app: Any, port: int = 0, **options: Any) -> Iterator[tuple[uvicorn.Server, str]]:
    """Serve `app` (with uvicorn.Config `options`) until the block ends; yields the server
    and its base URL once it is listening. `port` 0 takes a free one."""
    port = port or free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, **{"log_level": "warning", "lifespan": "on", **options}
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield server, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
