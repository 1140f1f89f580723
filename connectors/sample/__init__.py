"""A real sample business database and status service for the gateway's demo, tests and
benchmark (sources and licences: connectors/sample/SOURCES.md)."""
