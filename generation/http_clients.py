"""HTTP clients for the LLM servers: one TLS context for the process, and one pooled
`httpx.AsyncClient` per event loop.

A new httpx client builds its TLS context by default, loading the CA bundle: ~20 ms of CPU
each time, even for a plain-HTTP server. The asynchronous calls made a client per call, so
every LLM answer paid that on the event loop's thread, plus a new connection (a TCP and,
to an HTTPS server, a TLS handshake). Now the context is built once, and each loop keeps
one client whose connections are reused. A client is tied to the loop it first ran on,
and a process may run several loops one after the other (`asyncio.run` makes a new one
each time), hence one per loop.
"""

from __future__ import annotations

import asyncio
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: a process with no LLM never loads httpx (nor ssl)
    import ssl

    import httpx


@lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """httpx's default verification (certifi's CA bundle, or SSL_CERT_FILE / SSL_CERT_DIR),
    built once. Read-only once built, so every client shares it."""
    import httpx

    return httpx.create_ssl_context()


class LoopClients:
    """`client()`: the running loop's `httpx.AsyncClient` with these keyword arguments,
    made on first use. Clients of loops that have closed are dropped when another is made
    (their connections cannot be closed from another loop). `aclose()` closes the running
    loop's client; `close()` drops them all."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        self._lock = threading.Lock()

    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is not None:
            return client
        import httpx

        with self._lock:
            for gone in [other for other in self._clients if other.is_closed()]:
                del self._clients[gone]
            client = self._clients.get(loop)
            if client is None:
                client = httpx.AsyncClient(verify=tls_context(), **self._kwargs)
                self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        with self._lock:
            client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def close(self) -> None:
        with self._lock:
            self._clients.clear()
