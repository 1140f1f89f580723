"""The faster part-of-speech decoder finds jieba's own path, score and tie-breaks included."""

from __future__ import annotations

import random

import jieba.posseg
from jieba.posseg import char_state_tab_P, emit_P, start_P, trans_P

from core.pos_viterbi import PosViterbi


def _runs(n: int) -> list[str]:
    """Runs of Han characters as jieba's tagger hands them to the HMM: common characters,
    rare ones (few or no states of their own: the decoder's fallback) and ones it has
    never seen, 1 to 12 long."""
    rng = random.Random(7)
    known = sorted(char_state_tab_P)
    rare = [c for c in known if len(char_state_tab_P[c]) <= 2]
    unseen = [chr(c) for c in range(0x4E00, 0x9FA5) if chr(c) not in char_state_tab_P][:500]
    pools = [known, rare, unseen]
    return [
        "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 12))) for _ in range(n)
    ]


def test_same_path_and_score_as_jieba() -> None:
    decode = PosViterbi(char_state_tab_P, start_P, trans_P, emit_P)
    runs = [*_runs(600), "张天霖", "蒂亚戈蒙泰罗", "西贡商信银行", "的"]
    for run in runs:
        assert decode(run) == jieba.posseg.viterbi(
            run, char_state_tab_P, start_P, trans_P, emit_P
        ), run


def test_the_fallback_is_exercised() -> None:
    """Some run has a known character none of whose states can follow the state before
    (jieba then takes every state that can follow): the test above covers that branch."""
    decode = PosViterbi(char_state_tab_P, start_P, trans_P, emit_P)
    fallbacks = 0
    for run in _runs(600):
        _, route = decode(run)
        fallbacks += sum(
            ch in char_state_tab_P and state not in char_state_tab_P[ch]
            for ch, state in zip(run, route, strict=True)
        )
    assert fallbacks > 0
