"""jieba's part-of-speech Viterbi decoder (`jieba.posseg.viterbi`), the same path found
with less work.

jieba tags a run of characters its dictionary does not cut into known words with an HMM
over 256 (position, tag) states. Its decoder scores, for every state of a character, every
state of the character before, although a state follows only a few: "M-a" and "E-a" only
"B-a" and "M-a". Those other pairs score minus infinity and never win. Here each state
reads only the states that can precede it, and the best is chosen as jieba chooses it (the
higher score, then the greater state on a tie), with the same floating-point sums, so the
path is the one jieba finds. It was most of the answer step's tagging of candidate
sentences (0.6 ms a run).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

State = tuple[str, str]

MIN_FLOAT = -3.14e100  # jieba's score for a character a state never emits


class PosViterbi:
    """Decodes like jieba.posseg.viterbi(obs, states, start_p, trans_p, emit_p)."""

    def __init__(
        self,
        states: Mapping[str, Sequence[State]],
        start_p: Mapping[State, float],
        trans_p: Mapping[State, Mapping[State, float]],
        emit_p: Mapping[State, Mapping[str, float]],
    ) -> None:
        self._states, self._start, self._trans, self._emit = states, start_p, trans_p, emit_p
        self._all = tuple(trans_p)
        into: dict[State, list[tuple[State, float]]] = {}
        for before, nexts in trans_p.items():
            for after, p in nexts.items():
                into.setdefault(after, []).append((before, p))
        self._into = {y: tuple(pairs) for y, pairs in into.items()}

    def __call__(self, obs: str) -> tuple[float, list[State]]:
        start, trans, emit, states = self._start, self._trans, self._emit, self._states
        score = {
            y: start[y] + emit[y].get(obs[0], MIN_FLOAT) for y in states.get(obs[0], self._all)
        }
        paths: list[dict[State, State]] = [{}]
        for ch in obs[1:]:
            prev = {y0: v for y0, v in score.items() if trans[y0]}
            score, back = self._step(set(states.get(ch, self._all)), ch, prev)
            if not score:  # no state of this character can follow: jieba's fallback
                score, back = self._step({y for y0 in prev for y in trans[y0]}, ch, prev)
            paths.append(back)
        prob, state = max((v, y) for y, v in score.items())
        route: list[State] = [state] * len(obs)
        for i in range(len(obs) - 1, 0, -1):
            route[i] = state
            state = paths[i][state]
        route[0] = state
        return prob, route

    def _step(
        self, states: set[State], ch: str, prev: dict[State, float]
    ) -> tuple[dict[State, float], dict[State, State]]:
        """Each of `states` that some state of prev can precede: its best score at ch,
        and the state before it."""
        score: dict[State, float] = {}
        back: dict[State, State] = {}
        for y in states:
            best, arg = self._best(y, ch, prev)
            if arg is not None:
                score[y], back[y] = best, arg
        return score, back

    def _best(self, y: State, ch: str, prev: dict[State, float]) -> tuple[float, State | None]:
        """The best score of state y at character ch and the state before it, among those
        in prev that can precede y (jieba scores the others minus infinity: they never
        win); (.., None) when none can."""
        em = self._emit[y].get(ch, MIN_FLOAT)
        best, arg = MIN_FLOAT, None
        into = self._into.get(y, ())
        if len(prev) < len(into):
            trans = self._trans
            pairs = [(y0, v, trans[y0].get(y)) for y0, v in prev.items()]
        else:
            pairs = [(y0, prev[y0], p) for y0, p in into if y0 in prev]
        for y0, v, p in pairs:
            if p is not None:
                prob = v + p + em
                if arg is None or prob > best or (prob == best and y0 > arg):
                    best, arg = prob, y0
        return best, arg
