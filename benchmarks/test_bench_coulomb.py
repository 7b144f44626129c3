"""Benchmarks of the Coulomb-chain study (closed form, exact-segment integrator, regime map).

Each benchmark times its baseline in the same run and records the ratio with ``ratio_to``:

* closed form, 5DOF chain, 2000 r1 x 10 beta, exact amplitudes of every mass: compiled kernel vs
  its NumPy twin (goal: under 0.2 s);
* one continuous-regime point integrated from rest to steady state: compiled exact-segment
  integrator vs the solve_ivp (DOP853) event-driven baseline (goal: ratio >= 50);
* numeric regime map of the 2DOF chain on the full 100 x 50 (r1, beta) grid (goal: under 2
  minutes; under ``--benchmark-disable`` every 10th r1 and beta only), baseline the NumPy twin on
  that 10 x 5 sub-grid, scaled per point.
"""

from __future__ import annotations

import numpy as np

from fesub import _backend
from fesub.coulomb import ChainModel, steady_state
from fesub.coulomb.integrate import simulate_chain, simulate_chain_scipy
from fesub.coulomb.numeric_map import numeric_regime_map

U2 = ChainModel.uniform(2)
U5 = ChainModel.uniform(5)


def _closed_form(backend="auto"):
    r = np.linspace(0.1, 2.5, 2000)
    beta = np.linspace(0.0, 0.9, 10)
    with _backend.use(backend):
        return steady_state(U5, "wall:0", 0, r, beta)


def test_bench_closed_form_5dof(benchmark, ratio_to, goal):
    res = benchmark(_closed_form)
    assert res.X.shape == (10, 2000, 5)
    benchmark.extra_info["backend"] = _backend.active("coulomb")
    goal("median_s", 0.2)
    ratio_to("numpy_twin", _closed_form, "python", rounds=1)


def test_bench_integrator_vs_solve_ivp(benchmark, ratio_to, goal):
    # 2DOF unit chain, contact and load on mass 1, r1 = 0.45, beta = 0.3: continuous, settles
    # from rest in ~110 periods
    res = benchmark(simulate_chain, U2, "wall:0", 0, 0.45, 0.3)
    assert res.converged
    r = ratio_to("solve_ivp_DOP853", simulate_chain_scipy, U2, "wall:0", 0, 0.45, 0.3, rounds=1)
    benchmark.extra_info["backend"] = _backend.active("coulomb")
    goal("ratio_solve_ivp_DOP853", 50.0, value=r, higher=True)


_PARAMS = {"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:0", "load": 0, "mu": 1.0}


R1 = np.linspace(0.05, 2.5, 100)
BETA = np.linspace(0.02, 1.2, 50)
SUB = (slice(5, None, 10), slice(5, None, 10))   # a 10 x 5 sub-grid spread over the whole map


def _map(r1, beta, backend="auto"):
    with _backend.use(backend):
        return numeric_regime_map(_PARAMS, r1, beta, progress=False)


def test_bench_regime_map_2dof(benchmark, ratio_to, goal):
    r1, beta = (R1[SUB[0]], BETA[SUB[1]]) if benchmark.disabled else (R1, BETA)
    mp = benchmark.pedantic(_map, args=(r1, beta), rounds=1, iterations=1)
    assert mp.regime.shape == (beta.size, r1.size)
    benchmark.extra_info.update(backend=_backend.active("coulomb"), n_points=int(r1.size * beta.size),
                                regime_counts={int(k): int(v) for k, v in
                                               zip(*np.unique(mp.regime, return_counts=True))})
    goal("median_s", 120.0)
    n_sub = R1[SUB[0]].size * BETA[SUB[1]].size
    r = ratio_to("numpy_twin_subgrid", _map, R1[SUB[0]], BETA[SUB[1]], "python", rounds=1)
    if r is not None:
        benchmark.extra_info["ratio_numpy_twin_per_point"] = r * r1.size * beta.size / n_sub
