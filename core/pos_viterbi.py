"""jieba's part-of-speech Viterbi decoder (`jieba.posseg.viterbi`), the same path found
with less work.

jieba tags a run of characters its dictionary does not cut into known words with an HMM
over 256 (position, tag) states. Its decoder scores, for every state of a character, every
state of the character before, one dictionary look-up at a time, although a state follows
only a few: "M-a" and "E-a" only "B-a" and "M-a". Here the transitions are one 256 x 256
matrix (minus infinity where jieba's look-up finds none: such a pair never wins), and each
character scores the states it can take against the states before it in one array sum.
The sums are jieba's, in its order ((score before + transition) + emission, in floating
point), and the best is chosen as jieba chooses it (the higher score, then the greater
state on a tie), so the path and its score are the ones jieba finds. Decoding was most of
the answer step's tagging of candidate sentences (~100 us a run in Python's dictionaries,
~40 us here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

State = tuple[str, str]

MIN_FLOAT = -3.14e100  # jieba's score for a character a state never emits

_Ints = npt.NDArray[np.intp]
_Floats = npt.NDArray[np.float64]


class PosViterbi:
    """Decodes like jieba.posseg.viterbi(obs, states, start_p, trans_p, emit_p)."""

    def __init__(
        self,
        states: Mapping[str, Sequence[State]],
        start_p: Mapping[State, float],
        trans_p: Mapping[State, Mapping[State, float]],
        emit_p: Mapping[State, Mapping[str, float]],
    ) -> None:
        # States by index in their own order: the greater index is the greater state.
        self._names: tuple[State, ...] = tuple(sorted(trans_p))
        index = {s: i for i, s in enumerate(self._names)}
        self._trans = np.full((len(self._names), len(self._names)), -np.inf)
        for before, nexts in trans_p.items():
            for after, p in nexts.items():
                self._trans[index[before], index[after]] = p
        self._leads = np.array([bool(trans_p[s]) for s in self._names])  # some state follows
        self._start = np.array([start_p[s] for s in self._names])
        self._every: _Ints = np.arange(len(self._names))
        self._of_char = {
            ch: np.array(sorted(index[s] for s in own), dtype=np.intp) for ch, own in states.items()
        }
        self._emit_p = emit_p
        self._emissions: dict[str, _Floats] = {}  # per character, over its own states

    def __call__(self, obs: str) -> tuple[float, list[State]]:
        here = self._of_char.get(obs[0], self._every)
        score = self._start[here] + self._emission(obs[0], here)
        steps: list[tuple[_Ints, _Ints]] = []  # per later character: its states, their best before
        for ch in obs[1:]:
            leads = self._leads[here]
            before, prev = here[leads], score[leads]
            here = self._of_char.get(ch, self._every)
            trans = self._trans[np.ix_(before, here)]
            if not np.isfinite(trans).any():
                # No state of this character can follow: jieba's fallback, every state that
                # can follow one before.
                here = np.flatnonzero(np.isfinite(self._trans[before]).any(axis=0))
                trans = self._trans[np.ix_(before, here)]
            total = (prev[:, None] + trans) + self._emission(ch, here)[None, :]
            reached = np.isfinite(total).any(axis=0)
            here, total = here[reached], total[:, reached]
            # The best state before each: the last of the highest (the greater on a tie).
            best = len(before) - 1 - total[::-1].argmax(axis=0)
            score = total[best, np.arange(len(here))]
            steps.append((here, before[best]))
        top = score.max()
        state = int(here[np.flatnonzero(score == top)[-1]])
        route = [state]
        for states, best_before in reversed(steps):
            state = int(best_before[np.searchsorted(states, state)])
            route.append(state)
        return float(top), [self._names[s] for s in reversed(route)]

    def route(self, obs: str) -> tuple[State, ...]:
        """The best path's states alone (what jieba's tagger reads)."""
        return tuple(self(obs)[1])

    def _emission(self, ch: str, states: _Ints) -> _Floats:
        """The emission scores of `ch` by `states`: remembered for the character's own
        states (a few of 256), looked up for others (a character jieba has no states for,
        the fallback)."""
        own = states is self._of_char.get(ch)
        found = self._emissions.get(ch) if own else None
        if found is None:
            found = np.array([self._emit_p[self._names[i]].get(ch, MIN_FLOAT) for i in states])
            if own:
                self._emissions[ch] = found
        return found
