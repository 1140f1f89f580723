"""The `ragline` command line: `commands` (ingest, search, ask, documents, check/repair,
serve, bench), with the gateway's (`gateway`) and monitoring's (`monitoring`) commands
registered on it."""

from ragline.cli.commands import app, main

__all__ = ["app", "main"]
