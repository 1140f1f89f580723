"""Passage embedding in a child process, for ingest batches:
`python -m indexing.embed_worker R W` serves `embed_passages` calls over two pipes.

Why a process and not threads: a CPU embedder (USE in numpy, e5 through ctypes) gives the
interpreter lock back at every array operation and needs it again for the next one. While
ingest's own thread runs Python (staging, keyword tokenising, the sync), each of those
hand-backs waits for that thread's turn to end (the interpreter's switch interval, 5 ms):
measured here, USE embedded 209 passages/s on two threads alone and 8 with one busy Python
thread beside it. In its own process the embedder has its own interpreter lock and a core
of its own while ingest's thread works.

The child builds the embedder from the same `EmbedderSettings`, so the vectors are the
ones the in-process embedder gives. A call the child cannot answer (it crashed, did not
start) is answered in-process, and later calls too, with a warning in the log: slower,
never lost. An error raised by the embedder itself is raised to the caller, as in-process.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from core.child import start_child
from core.settings import EmbedderSettings
from indexing.embedders import Embedder

log = logging.getLogger("ragline.embedder")

_START_TIMEOUT_S = 120.0
_CALL_TIMEOUT_S = 3600.0  # one call; ingest's own per-file limit is checked between slices


class EmbedWorker:
    """`embed_passages` in a child process (started on first use or by `start`; a
    forked copy of this object starts its own). Thread-safe: calls take turns."""

    def __init__(self, settings: EmbedderSettings, local: Embedder) -> None:
        self._settings = settings
        self._local = local  # the in-process embedder: the fallback
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: Connection | None = None
        self._inp: Connection | None = None
        self._pid = 0  # the process that started the child
        self._ready = False
        self._broken = ""

    @property
    def in_process(self) -> bool:
        """True once calls are answered in-process (the child failed)."""
        return bool(self._broken)

    def start(self) -> None:
        """Start the child now (it loads the model meanwhile); no wait."""
        with self._lock:
            self._spawn_locked()

    def _spawn_locked(self) -> None:
        if self._broken or (self._proc is not None and self._pid == os.getpid()):
            return
        try:
            child = start_child("indexing.embed_worker")
        except OSError as exc:
            self._broken = f"could not start: {exc}"
            log.warning("embedding in-process: the embed worker %s", self._broken)
            return
        self._proc, self._out, self._inp = child.proc, child.out, child.inp
        self._pid = os.getpid()
        self._ready = False
        self._out.send(self._settings.model_dump(mode="json"))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self._spawn_locked()
            if not self._broken:
                try:
                    reply = self._call_locked(list(texts))
                except (EOFError, OSError, TimeoutError) as exc:
                    self._fail_locked(f"{type(exc).__name__}: {exc}")
                else:
                    status, payload = reply
                    if status == "ok":
                        answered: np.ndarray = payload
                        return answered
                    kind, message = payload
                    raise RuntimeError(f"{kind}: {message}")
        vectors = self._local.embed_passages(texts)
        return vectors

    def _call_locked(self, texts: list[str]) -> tuple[str, Any]:
        assert self._out is not None and self._inp is not None
        if not self._ready:
            if not self._inp.poll(_START_TIMEOUT_S):
                raise TimeoutError("the embed worker did not start in time")
            status, payload = self._inp.recv()
            if status != "ready":
                kind, message = payload
                raise OSError(f"the embed worker could not load the model: {kind}: {message}")
            self._ready = True
        self._out.send(texts)
        if not self._inp.poll(_CALL_TIMEOUT_S):
            raise TimeoutError("the embed worker did not answer")
        reply: tuple[str, Any] = self._inp.recv()
        return reply

    def _fail_locked(self, why: str) -> None:
        self._broken = why
        log.warning("embedding in-process from now on: the embed worker failed (%s)", why)
        self._stop_locked()

    def _stop_locked(self) -> None:
        proc, self._proc = self._proc, None
        for conn in (self._out, self._inp):
            if conn is not None:
                conn.close()
        self._out = self._inp = None
        if proc is None or self._pid != os.getpid():
            return  # a forked copy does not own its parent's child
        try:
            proc.wait(5)  # its input closed: it exits
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def close(self) -> None:
        with self._lock:
            self._stop_locked()


def serve(inp: Connection, out: Connection) -> None:
    """Body of the child: build the embedder, say "ready", answer until input closes."""
    from indexing.embedders import make_embedder

    try:
        settings = EmbedderSettings.model_validate(inp.recv())
        embedder = make_embedder(settings)
        embedder.load()
    except BaseException as exc:  # the parent says why and embeds in-process
        out.send(("error", (type(exc).__name__, str(exc)[:300])))
        return
    out.send(("ready", None))
    while True:
        try:
            texts = inp.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            reply: tuple[str, Any] = ("ok", embedder.embed_passages(texts))
        except Exception as exc:
            reply = ("error", (type(exc).__name__, str(exc)[:300]))
        out.send(reply)


if __name__ == "__main__":
    serve(
        Connection(int(sys.argv[1]), writable=False),
        Connection(int(sys.argv[2]), readable=False),
    )
