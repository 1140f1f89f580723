from dataclasses import dataclass

from core.types import Answer, Route, SourceSpec
from monitoring.metrics import Metrics


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str


def _answer(covered: bool, removed: tuple[str, ...] = ()) -> Answer:
    route = Route("hybrid", (SourceSpec("keyword", 1, 1, 5),), "r")
    return Answer("q", "a", covered, "extractive", (), (), route, {}, "t", removed)


def test_metrics_count_answers_failures_and_files() -> None:
    m = Metrics()
    m.observe_answer(_answer(True), [Outcome("keyword", "ok"), Outcome("dense", "timeout")], 0.03)
    m.observe_answer(_answer(False, ("[Docabcdef_p9]",)), [Outcome("dense", "open")], 0.2)
    m.observe_files(["indexed", "failed", "indexed"])
    text = m.exposition().decode()
    assert 'ragline_queries_total{covered="true",kind="extractive"} 1.0' in text
    assert 'ragline_queries_total{covered="false",kind="extractive"} 1.0' in text
    assert 'ragline_source_failures_total{source="dense",status="timeout"} 1.0' in text
    assert 'ragline_source_failures_total{source="dense",status="open"} 1.0' in text
    assert "ragline_removed_citations_total 1.0" in text
    assert 'ragline_ingested_files_total{status="indexed"} 2.0' in text
    assert 'ragline_query_seconds_count{kind="extractive"} 2.0' in text
    # Each instance has its own registry: nothing leaks between apps or tests.
    assert "ragline_queries_total{" not in Metrics().exposition().decode()


def test_generate_and_the_sentence_embeddings_inside_it_are_stages() -> None:
    m = Metrics()
    route = Route("hybrid", (SourceSpec("keyword", 1, 1, 5),), "r")
    timed = Answer("q", "a", True, "extractive", (), (), route, {"generate": 20.0}, "t")
    m.observe_generation(timed, 1, 1, "general")
    timings = {"generate": 20.0, "embed_sentences": 12.0}
    embedded = Answer("q", "a", True, "extractive", (), (), route, timings, "t")
    m.observe_generation(embedded, 1, 1, "general")
    text = m.exposition().decode()
    assert 'ragline_stage_seconds_count{stage="generate"} 2.0' in text
    assert 'ragline_stage_seconds_count{stage="embed_sentences"} 1.0' in text
    assert 'ragline_stage_seconds_sum{stage="embed_sentences"} 0.012' in text


def test_the_job_gauge_knows_every_job_state() -> None:
    """monitoring cannot import the app layer, so it lists the job states itself: a state
    added to ragline.jobs without it would never be counted."""
    from monitoring.metrics import JOB_STATES
    from ragline import jobs

    states = {*jobs.UNFINISHED, *jobs.TERMINAL}
    assert states <= set(JOB_STATES), states - set(JOB_STATES)
    # The stalled-jobs alert's list of unfinished states, likewise.
    from monitoring.alert_source import UNFINISHED_JOBS

    assert set(UNFINISHED_JOBS) == set(jobs.UNFINISHED)
