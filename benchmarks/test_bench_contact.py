"""Benchmarks of the sliding-contact transient, the contact search and the eigenvalue loci.

Each compares with a baseline timed in the same run (NumPy twin, brute-force search, exact dense
eigen-solver) and records the ratio in extra_info.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np
import pytest

from fesub import _backend
from fesub.contact import simulate
from fesub.contact.analyses import eigen
from fesub.contact.geometry import find_segment, find_segment_brute
from fesub.models import beam_on_beam as bb
from fesub.parallel import single_thread_blas


@pytest.fixture(scope="module")
def system():
    return bb.contact_system(bb.build())


def test_transient_compiled_vs_numpy_twin(benchmark, goal, system):
    """mu = 0.3, 0.05 s simulated (about 2e5 steps): the contact engine's compiled kernel vs its
    NumPy twin, per step of the march.

    Five rounds of each, alternated (a twin round before each compiled round, so that both sides
    see the same load of a shared machine); the twin runs a 100x shorter piece (the first 2050 of
    the same steps, about 0.25 s). The goal is the ratio of the medians of the march's own time
    per step (``wall_time / steps`` of the result: the time-stepping loop, without simulate's
    setup, which is the same code for both backends and does not grow with the steps); the ratio
    of the whole calls (setup included, the twin's scaled by 100) is recorded beside it. Both
    sides run with one BLAS thread: the march is one thread, and OpenBLAS workers left spinning by
    the setup's LAPACK calls take a core from it on a two-core machine (0.68 against 0.41 us per
    step, measured at load 6).
    """
    duration = 1e-3 if benchmark.disabled else 0.05
    per_step = {"compiled": [], "python": []}
    whole = {"compiled": [], "python": []}

    def run(backend, d):
        t0 = time.perf_counter()
        with single_thread_blas(), _backend.use(backend):
            res = simulate(system, mu=0.3, duration=d, vx=0.03)
        whole[backend].append(time.perf_counter() - t0)
        per_step[backend].append(res.wall_time / res.steps)
        return res

    def twin_round():  # not timed by the benchmark: the baseline, before each compiled round
        run("python", duration / 100)

    res = benchmark.pedantic(run, args=("compiled", duration), setup=twin_round,
                             rounds=1 if benchmark.disabled else 5, iterations=1)
    compiled = statistics.median(per_step["compiled"])
    benchmark.extra_info.update(steps=res.steps, steps_per_second=1.0 / compiled)
    if benchmark.disabled:
        return
    twin = statistics.median(per_step["python"])
    benchmark.extra_info.update(
        us_per_step_compiled=1e6 * compiled, us_per_step_numpy_twin=1e6 * twin,
        baseline_numpy_twin_x100_median_s=statistics.median(whole["python"]),
        ratio_numpy_twin_whole_call=100 * statistics.median(whole["python"]) / statistics.median(whole["compiled"]),
        load_average=os.getloadavg())
    goal("ratio_numpy_twin_per_step", 250.0, value=twin / compiled, higher=True)
    # one core: the march is one nogil loop, and the tests/CI run with one BLAS thread
    goal("extrapolated_full_run_s", 10.0, value=3.13 / duration * res.steps * compiled)


def test_local_vs_brute_force_search(benchmark, ratio_to):
    """Local walk from the last segment vs a full scan on a polyline of 1e5 segments."""
    n = 100_000
    x = np.linspace(0.0, 1.0, n + 1)
    pos = np.column_stack([x, 1e-3 * np.sin(40 * x)])
    segs = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    pts = [(xi, 0.01) for xi in np.linspace(0.1, 0.9, 200)]
    start = [int(p[0] * n) - 2 for p in pts]

    def local():
        return [find_segment(pos, segs, p, s)[0] for p, s in zip(pts, start)]

    found = benchmark(local)
    ratio_to("brute_force", lambda: [find_segment_brute(pos, segs, p)[0] for p in pts], rounds=1)
    assert found == [find_segment_brute(pos, segs, p)[0] for p in pts]


def test_eigenvalue_loci_200_positions(benchmark, ratio_to, goal, system):
    """Loci over 200 contact positions, 20 eigenvalues, coupled-mode Ritz basis (120 modes),
    against the exact dense state-space eigen-solver (timed on 5 positions, scaled)."""
    n_pos = 3 if benchmark.disabled else 200
    n_sub = 1 if benchmark.disabled else 5
    pos = np.linspace(0.006, 0.098, n_pos)
    loci = benchmark.pedantic(eigen.eigenvalue_loci, args=(system, pos, 0.3, 20), kwargs={"n_basis": 120},
                              rounds=1, iterations=1)
    assert loci.lam.shape == (n_pos, 20)
    r = ratio_to("exact_dense_subset", eigen.eigenvalue_loci, system, pos[:n_sub], 0.3, 20, rounds=1)
    if r is not None:
        benchmark.extra_info["ratio_exact_dense"] = r * n_pos / n_sub
    goal("median_s", 20.0)
