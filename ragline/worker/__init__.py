"""Asynchronous ingestion: task functions, the TaskRunner port and its two adapters
(in-process threads for the embedded default, Celery on Redis for production)."""

DEFAULT_QUEUE = "ragline"  # Celery queue; its events channel is "<queue>:events"
