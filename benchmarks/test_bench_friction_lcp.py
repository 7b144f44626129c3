"""Benchmarks of the per-step friction-contact kernel (projected Gauss-Seidel).

n = 200 coordinates, m = 1, 10, 50, 200 constraints, J dense. Each call is the one of a time step:
warm-started from the previous step's impulses, on constraint values moved by a small increment,
and runs a fixed number of sweeps (tol < 0) so that the cost per constraint per sweep is
comparable across m. Baseline in the same run: the NumPy twin. Goals: the per-constraint cost
flat in m (a sweep is O(m n): cost(200)/cost(1) per constraint <= 2), and the compiled kernel at
least 50x the twin.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend

N = 200
SWEEPS = 20
SIZES = (1, 10, 50, 200)


def step_problem(m, seed=0):
    """A step's problem and its warm start: impulses of the previous step (converged on values
    0.1 % away). mu = 0.3; about half of the constraints closed."""
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((2 * m, N)) / np.sqrt(N)
    w = rng.uniform(0.5, 2.0, N)
    b_prev = 1e-3 * rng.standard_normal(2 * m)
    mu = np.full(m, 0.3)
    lam_prev = np.zeros(2 * m)
    _backend.kernels("friction_lcp").solve(J, w, b_prev, mu, lam_prev, np.zeros(N), 1e-15, 10_000,
                                           np.zeros(3))
    b = b_prev + 1e-6 * rng.standard_normal(2 * m)
    return J, w, b, mu, lam_prev


def caller(m, backend):
    """A call of the kernel on ``backend`` for m constraints: SWEEPS sweeps from the warm start."""
    J, w, b, mu, lam_prev = step_problem(m)
    with _backend.use(backend):
        solve = _backend.kernels("friction_lcp").solve
    lam, z, status = np.empty(2 * m), np.empty(N), np.empty(3)

    def call():
        lam[:] = lam_prev
        solve(J, w, b, mu, lam, z, -1.0, SWEEPS, status)
        return status

    return call


def _need_compiled():
    if not _backend.compiled_available("friction_lcp"):
        pytest.skip("compiled friction_lcp not built")


@pytest.mark.parametrize("m", SIZES)
def test_friction_lcp_compiled_vs_twin(benchmark, ratio_to, goal, m):
    """Per call: compiled kernel, and the NumPy twin on the same call as baseline."""
    _need_compiled()
    st = benchmark(caller(m, "compiled"))
    assert st[0] == SWEEPS
    r = ratio_to("numpy_twin", caller(m, "python"), rounds=3 if m < 200 else 1)
    if r is not None:
        med = benchmark.stats.stats.median
        benchmark.extra_info.update(m=m, n=N, sweeps=SWEEPS,
                                    ns_per_constraint_per_sweep=1e9 * med / (m * SWEEPS))
        goal("ratio_numpy_twin", 50.0, value=r, higher=True)


def test_friction_lcp_per_constraint_cost_growth(benchmark, ratio_to, goal):
    """Cost per constraint per sweep for every m, timed in the same run (compiled), and its
    growth cost(200) / cost(1): a sweep is linear in m, so the ratio should stay near 1 (the
    fixed cost of a call inflates m = 1)."""
    _need_compiled()
    big = max(SIZES)
    benchmark(caller(big, "compiled"))
    for m in SIZES[:-1]:  # each smaller size timed in the same run (many rounds: a call is short)
        ratio_to(f"m{m}", caller(m, "compiled"), rounds=max(21, 4001 // m))
    if benchmark.disabled:
        return
    per = {m: benchmark.extra_info[f"baseline_m{m}_median_s"] / (m * SWEEPS) for m in SIZES[:-1]}
    per[big] = benchmark.stats.stats.median / (big * SWEEPS)
    for m, t in per.items():
        benchmark.extra_info[f"ns_per_constraint_per_sweep_m{m}"] = 1e9 * t
    goal("per_constraint_cost_ratio_200_vs_1", 2.0, value=per[big] / per[min(SIZES)])
