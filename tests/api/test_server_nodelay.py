"""`serve --workers N` hands its workers a listening socket whose `proto` is 0, and
asyncio then leaves Nagle's algorithm on for every accepted connection: a response written
as headers then body waited ~40 ms for the client's delayed ACK. The protocol sets
TCP_NODELAY itself."""

from __future__ import annotations

import asyncio
import socket

from ragline.api.server import _no_delay


class _Grab(asyncio.Protocol):
    def __init__(self, seen: asyncio.Future[tuple[int, int]]) -> None:
        self._seen = seen

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        sock = transport.get_extra_info("socket")
        before = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        _no_delay(transport)
        after = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        self._seen.set_result((before, after))
        transport.close()


async def _accept_one() -> tuple[int, int]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, like uvicorn's
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    loop = asyncio.get_running_loop()
    seen: asyncio.Future[tuple[int, int]] = loop.create_future()
    server = await loop.create_server(lambda: _Grab(seen), sock=listener)
    try:
        _, writer = await asyncio.open_connection(*listener.getsockname())
        result = await asyncio.wait_for(seen, 5)
        writer.close()
        return result
    finally:
        server.close()


def test_connections_accepted_from_a_proto_0_socket_get_tcp_nodelay() -> None:
    before, after = asyncio.run(_accept_one())
    assert before == 0  # what asyncio leaves: the cause of the 40 ms stalls
    assert after != 0
