"""The knowledge gateway's connectors: SQL row templates, HTTP status sources and the
memory store, each behind a Protocol (`connectors.protocols`), one module per kind."""
