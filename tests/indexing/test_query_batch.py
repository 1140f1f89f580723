"""QueryBatcher: concurrent questions share model calls; a lone one is embedded at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from indexing.query_batch import QueryBatcher


def _vector(text: str) -> np.ndarray:
    return np.array([len(text), ord(text[0])], dtype=np.float32)


class GatedModel:
    """Embeds by a pure function of the text; the first call blocks until released, so
    callers pile up behind it the way concurrent requests do behind a busy encoder."""

    def __init__(self, fail_on: str = "") -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[str]] = []
        self._fail_on = fail_on

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.gate.wait(5)
        if self._fail_on in texts:
            raise RuntimeError(f"model failed on {self._fail_on}")
        return np.stack([_vector(t) for t in texts])


def _run(batcher: QueryBatcher, text: str, out: dict[str, object]) -> None:
    try:
        out[text] = batcher.embed(text)
    except RuntimeError as exc:
        out[text] = exc


def _wait_queued(batcher: QueryBatcher, n: int) -> None:
    deadline = time.monotonic() + 5
    while len(batcher._batcher.queue) < n:
        assert time.monotonic() < deadline, "callers did not queue"
        time.sleep(0.001)


def _pile_up(model: GatedModel, batcher: QueryBatcher, texts: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    first = threading.Thread(target=_run, args=(batcher, texts[0], out))
    first.start()
    assert model.entered.wait(5)
    rest = [threading.Thread(target=_run, args=(batcher, t, out)) for t in texts[1:]]
    for t in rest:
        t.start()
    _wait_queued(batcher, len(texts) - 1)
    model.gate.set()
    for t in [first, *rest]:
        t.join(5)
    return out


def test_a_lone_caller_is_embedded_at_once_in_its_own_call() -> None:
    model = GatedModel()
    model.gate.set()
    batcher = QueryBatcher(model)
    for text in ("alpha", "beta", "gamma"):
        assert np.array_equal(batcher.embed(text), _vector(text))
    assert model.batches == [["alpha"], ["beta"], ["gamma"]]


def test_callers_waiting_behind_a_busy_encoder_share_the_next_call() -> None:
    model = GatedModel()
    batcher = QueryBatcher(model, max_batch=32)
    texts = ["first", "b", "cc", "ddd", "eeee", "fffff"]
    out = _pile_up(model, batcher, texts)
    assert model.batches[0] == ["first"]
    assert sorted(model.batches[1]) == sorted(texts[1:])  # five questions, one call
    assert len(model.batches) == 2
    for text in texts:  # each caller got its own question's vector
        assert np.array_equal(out[text], _vector(text))
    assert (batcher.calls, batcher.texts) == (2, 6)


def test_a_long_queue_is_cut_into_calls_of_max_batch_in_arrival_order() -> None:
    model = GatedModel()
    batcher = QueryBatcher(model, max_batch=4)
    texts = ["x0", *[f"q{i}" for i in range(10)]]
    out = _pile_up(model, batcher, texts)
    assert [len(b) for b in model.batches] == [1, 4, 4, 2]
    assert all(np.array_equal(out[t], _vector(t)) for t in texts)


def test_a_failed_call_fails_only_its_own_callers() -> None:
    model = GatedModel(fail_on="bad")
    batcher = QueryBatcher(model)
    out = _pile_up(model, batcher, ["first", "bad", "good"])
    assert isinstance(out["bad"], RuntimeError)
    assert isinstance(out["good"], RuntimeError)  # it shared the failed call
    assert np.array_equal(out["first"], _vector("first"))  # an earlier call is unaffected
    assert np.array_equal(batcher.embed("later"), _vector("later"))  # and it recovers


def test_use_vectors_are_the_same_embedded_together_or_alone() -> None:
    from indexing.embedders import UseEmbedder

    alone = UseEmbedder(query_batch=1)
    together = UseEmbedder(query_batch=32)
    questions = ["鸭子是什么动物?", "What is zero trust?", "个人信息保护法何时施行", "PDP"]
    expected = {q: alone.embed_query(q) for q in questions}
    batch = together._embed_queries(questions)
    for i, q in enumerate(questions):
        assert float(np.abs(batch[i] - expected[q]).max()) < 1e-5
    got: dict[str, np.ndarray] = {}

    def ask(q: str) -> None:
        got[q] = together.embed_query(q)

    threads = [threading.Thread(target=ask, args=(q,)) for q in questions * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for q in questions:
        assert float(np.abs(got[q] - expected[q]).max()) < 1e-5


@pytest.mark.parametrize("bad", [0, -3])
def test_max_batch_below_one_means_one(bad: int) -> None:
    model = GatedModel()
    model.gate.set()
    assert QueryBatcher(model, max_batch=bad)._batcher.max_batch == 1


class CountingModel:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.stack([_vector(t) for t in texts])


def test_a_question_asked_again_is_not_embedded_again() -> None:
    model = CountingModel()
    batcher = QueryBatcher(model, remember=2)
    first = batcher.embed("which port")
    first[0] = -1.0  # the caller's copy: what is remembered stays as the model gave it
    again = batcher.embed("which port")
    assert model.batches == [["which port"]]
    assert np.array_equal(again, _vector("which port"))
    batcher.embed("b")
    batcher.embed("c")  # "which port" is the least recently used of three: forgotten
    batcher.embed("which port")
    assert model.batches[-1] == ["which port"]


def test_remember_zero_embeds_every_time() -> None:
    model = CountingModel()
    batcher = QueryBatcher(model, remember=0)
    batcher.embed("x")
    batcher.embed("x")
    assert model.batches == [["x"], ["x"]]


def test_a_requests_few_sentences_share_the_query_calls_with_the_same_vectors() -> None:
    from indexing.embedders import _SHARED_CALL_TEXTS, UseEmbedder

    shared = UseEmbedder()
    own = UseEmbedder()
    sentences = ["鸭子是一种水禽。", "Zero trust removes implicit trust.", "个人信息处理者应当"]
    many = [f"{s} {i}" for i in range(_SHARED_CALL_TEXTS + 1) for s in sentences[:1]]
    few = shared.embed_passages(sentences)
    assert shared._queries.texts == len(sentences)  # through the batcher's calls
    shared.embed_passages(many)
    assert shared._queries.texts == len(sentences)  # an ingest batch keeps its own path
    # The same vectors as the ingest path (batches sorted by length) gives them.
    reference = own.embed_passages([*sentences, *many])[: len(sentences)]
    assert float(np.abs(few - reference).max()) < 1e-5
    assert np.allclose(np.linalg.norm(few, axis=1), 1.0, atol=1e-5)
