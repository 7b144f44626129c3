"""Benchmarks of the Coulomb-chain study (closed form, exact-segment integrator, regime map).

Each benchmark times its baseline in the same run and records the ratio with ``ratio_to``:

* closed form, 5DOF chain, 2000 r1 x 10 beta, exact amplitudes of every mass: compiled kernel vs
  its NumPy twin (goal: under 0.2 s);
* one continuous-regime point integrated from rest to steady state: compiled exact-segment
  integrator vs the solve_ivp (DOP853) event-driven baseline (goal: ratio >= 50);
* numeric regime map of the 2DOF chain: a 4 x 2 map is timed (the full 100 x 50 map is
  extrapolated per point into ``extra_info``; goal under 2 minutes), baseline the NumPy twin on
  the same map.
"""

from __future__ import annotations

import numpy as np

from fesub import _backend
from fesub.coulomb import ChainModel, steady_state
from fesub.coulomb.simulate import numeric_regime_map, simulate, simulate_scipy

U2 = ChainModel.uniform(2)
U5 = ChainModel.uniform(5)


def _closed_form(backend="auto"):
    r = np.linspace(0.1, 2.5, 2000)
    beta = np.linspace(0.0, 0.9, 10)
    with _backend.use(backend):
        return steady_state(U5, "wall:0", 0, r, beta)


def test_bench_closed_form_5dof(benchmark, ratio_to):
    res = benchmark(_closed_form)
    assert res.X.shape == (10, 2000, 5)
    ratio_to("numpy_twin", _closed_form, "python", rounds=1)


def test_bench_integrator_vs_solve_ivp(benchmark, ratio_to):
    # 2DOF unit chain, contact and load on mass 1, r1 = 0.45, beta = 0.3: continuous, settles
    # from rest in ~110 periods
    res = benchmark(simulate, U2, "wall:0", 0, 0.45, 0.3)
    assert res.converged
    ratio_to("solve_ivp_DOP853", simulate_scipy, U2, "wall:0", 0, 0.45, 0.3, rounds=1)


_PARAMS = {"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:0", "load": 0, "mu": 1.0}


def _map(nr, nb, backend="auto"):
    with _backend.use(backend):
        return numeric_regime_map(_PARAMS, np.linspace(0.05, 2.5, nr), np.linspace(0.02, 1.2, nb),
                                  progress=False)


def test_bench_regime_map_2dof(benchmark, ratio_to):
    mp = benchmark.pedantic(_map, args=(4, 2), rounds=3, iterations=1)
    assert mp.regime.shape == (2, 4)
    stats = getattr(benchmark, "stats", None)
    if stats is not None and not getattr(benchmark, "disabled", False):
        benchmark.extra_info["extrapolated_100x50_s"] = 5000.0 / 8.0 * stats.stats.median
    ratio_to("numpy_twin", _map, 4, 2, "python", rounds=1)
