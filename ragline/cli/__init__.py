"""The `ragline` command line: `commands` (ingest, search, ask, documents, check/repair,
inspect, grpc, bench), with the serving (`service`: serve, worker, jobs), gateway
(`gateway`) and monitoring (`monitoring`) commands registered on it; `common` holds what
they share (plain-text consoles, options, opening the application)."""

from ragline.cli.commands import app, main

__all__ = ["app", "main"]
