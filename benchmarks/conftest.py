"""Shared helpers for the benchmarks.

The machine that runs them is shared and noisy, so every benchmark times its baseline (NumPy twin,
SciPy solver, finite-difference variant, serial loop) in the same run and records the ratio
``baseline median / benchmarked median`` in ``extra_info``. Ratios survive a noisy machine far better
than absolute times when a run is compared with a saved one (``--benchmark-compare``).

Use the ``ratio_to`` fixture::

    def test_fast_thing(benchmark, ratio_to):
        result = benchmark(fast, x)
        ratio_to("numpy_twin", slow, x, rounds=3)
"""

from __future__ import annotations

import statistics
import time

import pytest


def median_time(fn, *args, rounds: int = 3, **kwargs) -> float:
    """Median wall time (s) of ``rounds`` calls of ``fn(*args, **kwargs)``."""
    times = []
    for _ in range(max(1, rounds)):
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@pytest.fixture
def ratio_to(benchmark, request):
    """Time a baseline in the same run and store ``ratio_<label>`` in ``extra_info``.

    Call it after ``benchmark(...)``. With ``--benchmark-disable`` the baseline still runs once
    (so it cannot rot) and no ratio is recorded.
    """

    def _ratio(label: str, fn, *args, rounds: int = 3, **kwargs) -> float | None:
        if getattr(benchmark, "disabled", False):
            rounds = 1            # nothing is timed: one run proves the baseline still works
        base = median_time(fn, *args, rounds=rounds, **kwargs)
        benchmark.extra_info[f"baseline_{label}_median_s"] = base
        stats = getattr(benchmark, "stats", None)
        if stats is None or getattr(benchmark, "disabled", False):
            return None
        med = stats.stats.median
        r = base / med if med > 0 else float("inf")
        benchmark.extra_info[f"ratio_{label}"] = r
        benchmark.extra_info["median_s"] = med
        return r

    return _ratio



def bench_median(benchmark) -> float | None:
    """Median (s) of the benchmarked call, or None under ``--benchmark-disable``."""
    stats = getattr(benchmark, "stats", None)
    if stats is None or getattr(benchmark, "disabled", False):
        return None
    return stats.stats.median


@pytest.fixture
def goal(benchmark):
    """Record a performance goal next to the measured value (never asserted).

    ``goal("median_s", 0.5)`` stores the benchmark's median as ``median_s`` with ``goal_median_s``
    and ``meets_goal_median_s`` in ``extra_info``; ``goal("speedup", 1.6, value=s, higher=True)``
    records another measured value (ratios, speed-ups, extrapolated times). Under
    ``--benchmark-disable`` nothing is recorded (no timing is meaningful then).
    """

    def _goal(name: str, target: float, value: float | None = None, higher: bool = False) -> None:
        if getattr(benchmark, "disabled", False):
            return
        if value is None:
            value = bench_median(benchmark)
        if value is None:
            return
        benchmark.extra_info[name] = value
        benchmark.extra_info[f"goal_{name}"] = target
        benchmark.extra_info[f"meets_goal_{name}"] = bool(value >= target if higher
                                                          else value <= target)

    return _goal
