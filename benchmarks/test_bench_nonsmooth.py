"""Benchmarks of the free-play batch integrator and basins (fesub.nonsmooth).

* basin on a local process pool of 2 workers vs the same basin serially; the time is
  extrapolated linearly to the 200 x 200 grid (cost is proportional to the number of cells;
  goal under 60 s), and one real 200 x 200 basin per law is timed as well (``*_full_grid``);
* compiled batch RK4 vs SciPy solve_ivp (DOP853; event-driven for the exact law), per trajectory,
  same trajectories and periods;
* compiled kernel vs its NumPy twin.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from fesub import _backend
from fesub.nonsmooth import P_REF, TwoMassFreePlay, basins, batch_periodic, flow

pytestmark = pytest.mark.skipif(not _backend.compiled_available("freeplay"),
                                reason="compiled freeplay kernel not built")

N_SIDE = 30  # benchmarked grid side; extrapolated to 200 x 200
BASIN_KW = dict(x1_range=(-1.5, 1.5), x2_range=(-1.5, 1.5), shape=(N_SIDE, N_SIDE),
                n_transient=150, n_record=4, steps_per_period=200, progress=False)


def _basins_2_workers(law, **kw):
    """Basin at W = 1.3 on a fresh pool of 2 processes (its start-up is part of the time)."""
    with ProcessPoolExecutor(max_workers=2) as ex:
        return basins(P_REF, 1.3, law=law, executor=ex, **kw)


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_bench_basin_parallel(benchmark, ratio_to, goal, law):
    res = benchmark.pedantic(_basins_2_workers, args=(law,), kwargs=BASIN_KW,
                             rounds=2, iterations=1)
    assert res.labels.shape == (N_SIDE, N_SIDE)
    ratio_to("serial", basins, P_REF, 1.3, law=law, executor="serial", rounds=1, **BASIN_KW)
    stats = getattr(benchmark, "stats", None)
    if stats is not None and not getattr(benchmark, "disabled", False):
        benchmark.extra_info["workers"] = 2
        goal("extrapolated_200x200_s", 60.0, value=stats.stats.median * (200 / N_SIDE) ** 2)


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_bench_basin_full_grid(benchmark, ratio_to, goal, law):
    """The spec's 200 x 200 basin at W = 1.3 on 2 workers, timed once (a 30 x 30 one under
    ``--benchmark-disable``); baseline the same basin serially on a 20 x 20 sub-grid, per cell."""
    n = N_SIDE if benchmark.disabled else 200
    kw = dict(BASIN_KW, shape=(n, n))
    res = benchmark.pedantic(_basins_2_workers, args=(law,), kwargs=kw,
                             rounds=1, iterations=1)
    assert res.labels.shape == (n, n)
    r = ratio_to("serial_20x20", basins, P_REF, 1.3, law=law, executor="serial", rounds=1,
                 **dict(BASIN_KW, shape=(20, 20)))
    if r is not None:
        benchmark.extra_info["ratio_serial_per_cell"] = r * (n / 20) ** 2
    goal("median_s", 60.0)


@pytest.fixture(scope="module")
def warm_pool():
    """Two worker processes, started once and warmed by a 2 x 2 basin (one tile each)."""
    with ProcessPoolExecutor(max_workers=2) as ex:
        basins(P_REF, 1.3, law="exact", executor=ex, **dict(BASIN_KW, shape=(2, 2)))
        yield ex


def test_bench_basin_early_exit(benchmark, ratio_to, warm_pool):
    """The same basin with the transient ended once the stroboscopic state repeats within 1e-9,
    against the full transient, both on the same two warm workers: the ratio is the early
    exit's saving. A pool started per call adds a fixed cost to both (0.35-0.75 s for a 2 x 2
    basin on one 2-core machine, against 1.1-1.6 s for the whole 30 x 30 one), which diluted
    the ratio to 1.2-1.3 there against 1.6 serially."""
    res = benchmark.pedantic(basins, args=(P_REF, 1.3),
                             kwargs=dict(law="exact", executor=warm_pool, early_exit_tol=1e-9,
                                         **BASIN_KW), rounds=2, iterations=1)
    full = basins(P_REF, 1.3, law="exact", executor="serial", **BASIN_KW)
    assert res.agreement(full) == 1.0
    ratio_to("full_transient_parallel", basins, P_REF, 1.3, law="exact", executor=warm_pool,
             rounds=1, **BASIN_KW)
    stats = getattr(benchmark, "stats", None)
    if stats is not None and not getattr(benchmark, "disabled", False):
        benchmark.extra_info["extrapolated_200x200_s"] = stats.stats.median * (200 / N_SIDE) ** 2


def _scipy_trajectories(law, ics, W, n_periods):
    sys = TwoMassFreePlay(P_REF, law)
    T = 2 * math.pi / W
    return [flow(sys, z, 0.0, n_periods * T, W, rtol=1e-9, atol=1e-9).z for z in ics]


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_bench_batch_vs_solve_ivp(benchmark, ratio_to, goal, law):
    # same 4 trajectories, 50 periods each: ratio = solve_ivp time / batch time (per trajectory)
    ics = np.array([[0.2, 0, 0.2, 0], [-0.2, 0, 0.2, 0], [1.0, 0, -1.0, 0], [0.0, 0, 0.1, 0]])
    W, n = 1.3, 50
    r = benchmark(batch_periodic, P_REF, ics, W, law=law, n_transient=0, n_record=n,
                  steps_per_period=200, nsec_max=0)
    assert np.all(np.isfinite(r.strobe))
    r = ratio_to("solve_ivp", _scipy_trajectories, law, ics, W, n, rounds=1)
    goal("ratio_solve_ivp", 100.0, value=r, higher=True)


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_bench_kernel_vs_numpy_twin(benchmark, ratio_to, law):
    rng = np.random.default_rng(0)
    X0 = np.zeros((64, 4))
    X0[:, [0, 2]] = rng.uniform(-0.5, 0.5, size=(64, 2))
    kw = dict(law=law, n_transient=0, n_record=5, steps_per_period=200, nsec_max=0)
    with _backend.use("compiled"):
        benchmark(batch_periodic, P_REF, X0, 1.15, **kw)

    def twin():
        with _backend.use("python"):
            return batch_periodic(P_REF, X0, 1.15, **kw)

    ratio_to("numpy_twin", twin, rounds=1)
