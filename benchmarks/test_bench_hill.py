"""Hill's method: cost of the stability of one harmonic-balance point against the Newton solve
that computed it (same run, same point): the Duffing oscillator (Nh = 9, quadratic Hill
problem only) and the Jenkins oscillator (Nh = 7, with the Newton refinement on the exact
memory of the stick intervals)."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.hbm.contact import Jenkins
from fesub.hbm.cubic import Cubic
from fesub.hbm.forced import solve_at
from fesub.hbm.stability import floquet
from fesub.hbm.system import ContactElement, HBSystem

CASES = {
    # name: (law, nh, force (N), frequency (rad/s)); m = 1 kg, c = 0.02 N s/m, k = 1 N/m
    "duffing": (lambda: Cubic(0.1), 9, 0.05, 1.1),
    "jenkins": (lambda: Jenkins(1.0, 0.1, 1.0), 7, 0.3, 1.2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bench_hill_point_vs_newton(benchmark, ratio_to, goal, case):
    law, nh, F, w = CASES[case]
    sy = HBSystem(np.eye(1), 0.02 * np.eye(1), np.eye(1), nh,
                  [ContactElement(law(), np.eye(1), case)])
    Q = solve_at(sy, w, F)
    benchmark(floquet, sy, Q, w)
    # baseline: the Newton solve of the same point from a 1 % perturbed start (what a
    # continuation corrector does per point)
    r = ratio_to("newton_solve", solve_at, sy, w, F, Q0=1.01 * Q, rounds=5)
    benchmark.extra_info["nh"] = nh
    benchmark.extra_info["hill_size"] = 2 * (2 * nh + 1)
    if r is not None:
        # goal: the stability of a point costs at most two Newton solves of it
        goal("ratio_newton_solve", 0.5, value=r, higher=True)
