"""The automatic actions of the golden-signal alerts, over the application's switches and
task runner. Each `apply` says in plain text what it did; each `revert` undoes it (or says
why there is nothing to undo) when the signal recovers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.switches import Switch
from indexing.protocols import JobRecord, MetadataStore
from monitoring.alerts import Alert
from ragline.jobs import FAILED, QUEUED, new_job_id

# runner.submit(task, job_id, **kwargs)
Submit = Callable[..., None]


class SwitchAction:
    """Flip a switch the query path reads (degrade routing, pause the LLM): this
    process's own, so every serving process applies it."""

    per_process = True

    def __init__(self, name: str, switch: Switch, on_text: str, off_text: str) -> None:
        self.name = name
        self._switch = switch
        self._on_text = on_text
        self._off_text = off_text

    def apply(self, alert: Alert) -> str:
        self._switch.turn_on(f"{alert.name}: {alert.message}")
        return self._on_text

    def revert(self, alert: Alert) -> str:
        self._switch.turn_off()
        return self._off_text


class _JobAction:
    per_process = False  # a job for the deployment: opened by the leading process only

    def __init__(self, metadata: MetadataStore, submit: Submit) -> None:
        self._meta = metadata
        self._submit = submit
        self._jobs: dict[tuple[str, str], list[str]] = {}  # alert key -> job ids opened

    def _open(self, alert: Alert, kind: str, task: str, **kw: Any) -> JobRecord:
        job = self._meta.create_job(
            JobRecord(
                job_id=new_job_id(),
                kind=kind,
                state=QUEUED,
                doc_id=str(kw.get("doc_id", "")),
                source=str(kw.get("source", "")),
                owner=f"alert:{alert.name}",
                reason=f"opened by the {alert.name} alert",
            )
        )
        try:
            self._submit(task, job.job_id, **{k: v for k, v in kw.items() if k != "doc_id"})
        except Exception as exc:
            self._meta.update_job(job.job_id, FAILED, f"could not queue it: {exc}")
            raise
        self._jobs.setdefault(alert.key, []).append(job.job_id)
        return job

    def revert(self, alert: Alert) -> str:
        ids = self._jobs.pop(alert.key, [])
        if not ids:
            return "nothing to undo"
        states = []
        for job_id in ids:
            job = self._meta.job(job_id)
            state = job.state if job else "unknown"
            states.append(f"{job_id[:12]} {state}")
        # A job still running is left to finish: it is idempotent and harmless.
        return "recovered; jobs opened by the alert: " + ", ".join(states)


class ReindexMisses(_JobAction):
    """Hit rate dropped: reindex (re-chunk from the source where it is a file) the
    documents whose passages came back for the questions that were not covered."""

    name = "reindex_misses"

    def __init__(self, metadata: MetadataStore, submit: Submit, max_docs: int = 20) -> None:
        super().__init__(metadata, submit)
        self._max_docs = max_docs

    def apply(self, alert: Alert) -> str:
        content_ids = [str(c) for c in alert.detail.get("content_ids", [])]
        chunks = self._meta.serving(content_ids)
        docs = list(dict.fromkeys((c.doc_id, c.source) for c in chunks.values()))
        if not docs:
            return "no document came back for the missed questions: nothing to reindex"
        opened = [
            self._open(alert, "reindex", "reindex", doc_id=doc_id, source=source)
            for doc_id, source in docs[: self._max_docs]
        ]
        return f"opened {len(opened)} reindex job(s): " + ", ".join(
            f"{j.job_id[:12]} ({j.source})" for j in opened
        )


class IncrementalSync(_JobAction):
    """Index freshness lags: apply the outbox now (promote what every store has)."""

    name = "incremental_sync"

    def apply(self, alert: Alert) -> str:
        job = self._open(alert, "sync", "sync")
        return f"triggered incremental sync job {job.job_id[:12]}"
