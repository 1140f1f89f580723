"""When an open-loop agent of `ragline bench load` calls next: on its own schedule, one
period after its last scheduled call, whatever the latency.

Not Locust's constant_pacing: it counts the time since the agent was spawned, a random
start delay included, as the first call's run time, so every agent's second call came one
period after its spawn. Locust spawns all agents within a second, so they fell back into
step: arrivals came as one burst per period (200 agents every 2 s: ~160 within 80 ms, then
~1.5 s with none), and a bounded server refused most of each burst while it sat idle
between them (bench/RESULTS.md, session 24).
"""

from __future__ import annotations


def first_call(spawned: float, period: float, phase: float) -> float:
    """The agent's first call: `phase` (0..1) of a period after it was spawned."""
    return spawned + phase * period


def next_call(previous: float, period: float, now: float) -> float:
    """One period after the previous scheduled call; at once (`now`) when that moment
    has passed, as after a call slower than the period, without calls to catch up."""
    return max(previous + period, now)
