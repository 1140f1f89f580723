"""Open-loop agents of `ragline bench load` keep their own phases: arrivals at the server
stay spread over the period, whatever the latencies, instead of falling into step."""

from __future__ import annotations

import random
from collections import Counter

from ragline.bench.pacing import first_call, next_call

PERIOD = 2.0
AGENTS = 200


def _arrivals(schedule: str, seed: int = 3) -> list[float]:
    """Call times of 200 agents spawned at once (Locust at `-r` = users spawned them
    within ~0.1 s), each call taking 0-1.5 s (a tenth of them 2-3 s, slower than the
    period), for 20 s."""
    rng = random.Random(seed)
    times: list[float] = []
    for _ in range(AGENTS):
        spawned = rng.random() / 10
        call = first_call(spawned, PERIOD, rng.random())  # after on_start's random delay
        first = True
        while call < 20.0:
            times.append(call)
            took = rng.uniform(2.0, 3.0) if rng.random() < 0.1 else rng.uniform(0.0, 1.5)
            done = call + took
            if schedule == "own":
                call = next_call(call, PERIOD, done)
            else:  # Locust's constant_pacing: the first wait counts from the spawn
                call = max(done, (spawned if first else call) + PERIOD)
            first = False
    return times


def _busiest_window(times: list[float]) -> int:
    """Most calls in one 100 ms window after the first two periods."""
    return max(Counter(int(t * 10) for t in times if t >= 2 * PERIOD).values())


def test_agents_on_their_own_schedule_arrive_spread_out() -> None:
    times = _arrivals("own")
    mean = AGENTS / PERIOD / 10  # calls per 100 ms
    assert _busiest_window(times) <= 3 * mean


def test_the_measure_catches_agents_in_step() -> None:
    """Constant pacing's first wait puts every agent's second call one period after its
    spawn: the same measure then sees bursts."""
    assert _busiest_window(_arrivals("constant_pacing")) > 5 * AGENTS / PERIOD / 10


def test_a_slow_call_starts_the_next_at_once_without_catching_up() -> None:
    assert next_call(10.0, PERIOD, now=10.5) == 12.0
    assert next_call(10.0, PERIOD, now=15.0) == 15.0  # late: at once, then every period
    assert next_call(15.0, PERIOD, now=15.2) == 17.0
    assert first_call(3.0, PERIOD, 0.25) == 3.5
