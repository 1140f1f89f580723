"""`ragline bench query`: the CPU meter and the summaries it prints."""

from __future__ import annotations

import threading
import time

from ragline.bench.query import compare, side_result
from ragline.bench.query_runner import Meter


def test_the_meter_counts_cpu_inside_wrapped_calls_only() -> None:
    meter = Meter()

    def busy(seconds: float) -> int:
        end = time.thread_time() + seconds
        n = 0
        while time.thread_time() < end:
            n += 1
        return n

    wrapped = meter.wrap("keyword", busy)
    assert wrapped(0.02) > 0
    busy(0.02)  # not wrapped: not counted
    worker = threading.Thread(target=meter.wrap("dense", busy), args=(0.02,))
    worker.start()
    worker.join()
    spent = meter.take()
    assert 15 <= spent["keyword"] < 35
    assert 15 <= spent["dense"] < 35  # counted on the thread that ran it
    assert meter.take() == {}


def _row(set_name: str, cpu: float, stores: float) -> dict[str, object]:
    return {
        "set": set_name,
        "cpu_ms": cpu,
        "stores_ms": stores,
        "around_ms": cpu - stores,
        "wall_ms": cpu,
        "stores": {"keyword": stores},
        "stages": {"rerank": 1.0},
    }


def test_ratios_compare_the_two_sides_per_set() -> None:
    before = side_result([_row("zh", 30, 10), _row("en", 20, 10)])
    after = side_result([_row("zh", 15, 10), _row("en", 15, 10)])
    ratio = compare(before, after)
    assert ratio["zh"]["around_ms"]["ratio_p50"] == 4.0  # 20 -> 5
    assert ratio["en"]["around_ms"]["ratio_p50"] == 2.0  # 10 -> 5
    assert after["summary"]["questions"] == 2
