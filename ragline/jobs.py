"""Job states and their plain-data views: what the CLI, the API and the workers share.

A job is one asynchronous task (an upload's ingestion, a delete, a reindex). Its row in
the metadata store is the one place its progress lives, so a caller can poll it from any
process and a failure is never lost with the worker that hit it.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Any, Final

from indexing.protocols import JobRecord

QUEUED: Final = "queued"
PARSING: Final = "parsing"
INDEXING: Final = "indexing"
SEARCHABLE: Final = "searchable"
FAILED: Final = "failed"
DELETED: Final = "deleted"
DONE: Final = "done"  # a sync or reindex that finished (no single document to search)
# An upload overtaken by a newer upload of the same document, accepted after it: it is
# not indexed (the newest accepted upload is the one that stays current). Not a failure.
SUPERSEDED: Final = "superseded"

# States a job never leaves: pollers stop here.
TERMINAL: Final = frozenset({SEARCHABLE, FAILED, DELETED, DONE, SUPERSEDED})
# The states before those: a job on its way (an upload's bytes still needed, a task a
# stopped process did not finish).
UNFINISHED: Final = (QUEUED, PARSING, INDEXING)


def new_job_id() -> str:
    return uuid.uuid4().hex


def job_view(job: JobRecord) -> dict[str, Any]:
    return {
        "job_id": job.job_id,
        "kind": job.kind,
        "state": job.state,
        "done": job.state in TERMINAL,
        "reason": job.reason,
        "doc_id": job.doc_id,
        "version": job.version,
        "batch_id": job.batch_id,
        "source": job.source,
        "attempts": job.attempts,
        "created_at": job.created_at.isoformat() if job.created_at else None,
        "updated_at": job.updated_at.isoformat() if job.updated_at else None,
    }


def batch_view(batch_id: str, jobs: Iterable[JobRecord]) -> dict[str, Any]:
    """A batch's progress: counts per state and whether every job is finished."""
    jobs = list(jobs)
    counts = Counter(j.state for j in jobs)
    return {
        "batch_id": batch_id,
        "total": len(jobs),
        "states": dict(sorted(counts.items())),
        "done": all(j.state in TERMINAL for j in jobs),
        "jobs": [job_view(j) for j in jobs],
    }


def newer_upload(jobs: Iterable[JobRecord], job: JobRecord) -> JobRecord | None:
    """A write of `job`'s document accepted after it (an upload not failed, or a delete;
    among `jobs`, that document's): the newest accepted write is the one that stands."""
    if job.created_at is None:
        return None
    for other in jobs:
        if (
            other.job_id != job.job_id
            and other.created_at is not None
            and other.created_at > job.created_at
            and (
                other.kind == "delete"
                or (other.kind == "ingest" and other.state not in (FAILED, DELETED, SUPERSEDED))
            )
        ):
            return other
    return None
