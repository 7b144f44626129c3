"""Compiled batch integrator (both backends), basins and bifurcation sweeps (spec 3.1-3.5, 4.2)."""

from __future__ import annotations

import json
import math
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from numpy.testing import assert_allclose

import fesub
from fesub import _backend
from fesub.errors import ParameterError
from fesub.nonsmooth import (P_REF, TwoMassFreePlay, basin_point, basins, batch_parallel,
                             batch_periodic, bifurcation_diagram, bifurcation_point, flow,
                             periodic_orbit)

X0 = np.array([[0.2, 0, 0.2, 0], [-0.2, 0, -0.2, 0], [0, 0, 0, 0], [1.5, 0, -1.5, 0],
               [0.3, 0.1, -0.2, 0.0], [0.049, 0.0, 0.0, 0.0]])


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_backends_agree(backend, law):
    r = batch_periodic(P_REF, X0, 1.15, law=law, n_transient=3, n_record=3, steps_per_period=100)
    # the other backend, explicitly
    other = "python" if backend == "compiled" else "compiled"
    if other == "compiled" and not _backend.compiled_available("freeplay"):
        pytest.skip("compiled freeplay kernel not built")
    with _backend.use(other):
        q = batch_periodic(P_REF, X0, 1.15, law=law, n_transient=3, n_record=3,
                           steps_per_period=100)
    # same operations in the same order: agreement to round-off (1e-12 absolute on O(1) states)
    assert_allclose(r.strobe, q.strobe, rtol=0, atol=1e-12)
    assert_allclose(r.x1_max, q.x1_max, atol=1e-12)
    assert_allclose(r.sections, q.sections, atol=1e-12, equal_nan=True)
    assert np.array_equal(r.nsec, q.nsec) and np.array_equal(r.nswitch, q.nswitch)
    if law == "exact":
        assert r.nswitch.sum() > 0


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_early_exit_backends_and_labels(backend, law):
    # early end of the transient: both backends stop each trajectory at the same period
    rng = np.random.default_rng(0)
    X = np.zeros((12, 4))
    X[:, [0, 2]] = rng.uniform(-0.5, 0.5, size=(12, 2))
    kw = dict(law=law, n_transient=150, n_record=4, steps_per_period=50, early_exit_tol=1e-8)
    r = batch_periodic(P_REF, X, 1.15, **kw)
    assert np.all(r.n_used < 150) and np.all(r.n_used > 8)
    if backend == "compiled":
        with _backend.use("python"):
            q = batch_periodic(P_REF, X, 1.15, **kw)
        assert np.array_equal(r.n_used, q.n_used)
        assert_allclose(r.strobe, q.strobe, rtol=0, atol=1e-12)
    # the attractor reached is the one of the full protocol (max/min x1 to 1e-6)
    full = batch_periodic(P_REF, X, 1.15, law=law, n_transient=150, n_record=4,
                          steps_per_period=50)
    assert np.max(np.abs(full.x1_max - r.x1_max)) < 1e-6
    assert np.max(np.abs(full.x1_min - r.x1_min)) < 1e-6


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_batch_matches_adaptive_reference_after_50_periods(law):
    # acceptance: |batch - solve_ivp| < 1e-6 on the stroboscopic state after 50 periods
    # (W = 1.3; 400 RK4 steps per period; adaptive DOP853 at rtol 1e-12, event-driven if exact)
    W = 1.3
    ics = X0[[0, 2, 4]]
    sys = TwoMassFreePlay(P_REF, law)
    ref = np.array([flow(sys, z, 0.0, 50 * 2 * math.pi / W, W, rtol=1e-12, atol=1e-13).z
                    for z in ics])
    r = batch_periodic(P_REF, ics, W, law=law, n_transient=0, n_record=50, steps_per_period=400)
    err = np.max(np.abs(r.strobe[:, -1] - ref))
    assert err < 1e-6
    if law == "exact":
        # fourth order: halving the step divides the error by ~16 (accept > 8)
        r2 = batch_periodic(P_REF, ics, W, law=law, n_transient=0, n_record=50,
                            steps_per_period=200)
        assert np.max(np.abs(r2.strobe[:, -1] - ref)) > 8 * err


def test_section_points_are_extrema():
    # the section x1' = 0 points of a converged periodic orbit are its max and min of x1
    W = 1.3
    sys = TwoMassFreePlay(P_REF, "exact")
    o = periodic_orbit(sys, batch_periodic(P_REF, X0[2:3], W, n_transient=150, n_record=1).strobe[0, -1], W)
    r = batch_periodic(P_REF, o.z0[None], W, n_transient=0, n_record=2, steps_per_period=400)
    sec = r.sections[0, :r.nsec[0]]
    assert r.nsec[0] == 4  # a symmetric period-1 orbit: one max and one min per period
    # Hermite-interpolated extremum at 400 steps/period: error ~ (h/T)^3 scale ~1e-7
    assert abs(np.max(sec[:, 0]) - o.x1_max) < 1e-6 and abs(np.min(sec[:, 0]) - o.x1_min) < 1e-6
    assert set(sec[:, 4]) == {-1.0, 1.0}
    assert abs(r.x1_max[0] - o.x1_max) < 1e-6


# ---- basins at W = 1.15 (spec 4.2) ---------------------------------------------------------------

REF_FRACTIONS = {  # (max x1, min x1) of the attractor -> fraction (exact law, smooth law) in %
    "a": ((0.0755, -0.1085), 28.7, 28.5), "A": ((0.1085, -0.0755), 24.0, 24.5),
    "b": ((0.0999, -0.1062), 21.8, 22.5), "B": ((0.1062, -0.0999), 25.5, 24.5)}


def _named_fractions(res):
    out = {}
    for name, ((M, m), *_) in REF_FRACTIONS.items():
        sel = (np.abs(res.x1_max - M) < 1e-3) & (np.abs(res.x1_min - m) < 1e-3) & (res.period == 1)
        out[name] = 100 * float(np.mean(sel))
    return out


@pytest.fixture(scope="module")
def basin_pair():
    if not _backend.compiled_available("freeplay"):
        pytest.skip("the 20 x 20 basin needs the compiled kernel (NumPy twin ~60 s)")
    kw = dict(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(20, 20), n_transient=150,
              n_record=4, steps_per_period=200, period_tol=1e-6)
    with _backend.use("compiled"):
        return (basins(P_REF, 1.15, law="exact", progress=False, **kw),
                basins(P_REF, 1.15, law="smooth", progress=False, **kw))


def test_basin_fractions_match_reference(basin_pair):
    ex, sm = basin_pair
    fe, fs = _named_fractions(ex), _named_fractions(sm)
    for name, (_, ref_e, ref_s) in REF_FRACTIONS.items():
        # same discretisation as the reference: fractions within 1.5 points (6 of 400 cells,
        # allowing thin boundary bands to round differently; the reference prints 0.1 %)
        assert abs(fe[name] - ref_e) < 1.5, (name, fe[name])
        assert abs(fs[name] - ref_s) < 1.5, (name, fs[name])
        assert fe[name] > 10 and fs[name] > 10  # spec 4.3: each basin > 10 %
        assert abs(fe[name] - fs[name]) < 3.0   # spec 4.3: laws agree to 3 points
    assert ex.unclassified < 0.05 and sm.unclassified < 0.05
    assert len(ex.attractors) == 4 and len(sm.attractors) == 4
    # spec 4.3: >= 90 % of cells agree between laws (reference: 98.2 %)
    assert ex.agreement(sm) >= 0.90
    assert abs(ex.agreement(sm) - 0.982) < 0.015


def test_basin_early_exit_same_attractors(basin_pair):
    ex, _ = basin_pair
    fast = basins(P_REF, 1.15, law="exact", shape=(20, 20), early_exit_tol=1e-9,
                  executor="serial", progress=False)
    assert fast.agreement(ex) == 1.0  # same attractor in every cell
    assert fast.options["mean_transient_periods"] < 150


@pytest.mark.slow
@pytest.mark.parametrize("cell, name", [((-0.5, -0.5), "a"), ((0.026, -0.342), "B"),
                                        ((-0.132, 0.132), "A"), ((0.5, 0.5), "A")])
def test_basin_spot_cells_vs_adaptive_event_driven(basin_pair, cell, name):
    ex, _ = basin_pair
    i = int(np.argmin(np.abs(ex.x1 - cell[0])))
    j = int(np.argmin(np.abs(ex.x2 - cell[1])))
    (M, m) = REF_FRACTIONS[name][0]
    assert abs(ex.x1_max[i, j] - M) < 1e-3 and abs(ex.x1_min[i, j] - m) < 1e-3
    # independent: adaptive event-driven DOP853 from the same cell, 150 periods, then shooting
    W = 1.15
    sys = TwoMassFreePlay(P_REF, "exact")
    z = flow(sys, [ex.x1[i], 0, ex.x2[j], 0], 0.0, 150 * 2 * math.pi / W, W).z
    o = periodic_orbit(sys, z, W)
    assert abs(o.x1_max - M) < 1e-3 and abs(o.x1_min - m) < 1e-3


def test_basin_executor_independent_and_saveable(tmp_path):
    kw = dict(shape=(4, 3), n_transient=20, n_record=2, steps_per_period=100, progress=False)
    s = basins(P_REF, 1.15, executor="serial", **kw)
    with ThreadPoolExecutor(2) as ex:
        t = basins(P_REF, 1.15, executor=ex, **kw)
    assert np.array_equal(s.labels, t.labels) and np.array_equal(s.x1_max, t.x1_max)
    path = s.save(tmp_path / "basin")
    back = type(s).load(path)
    assert np.array_equal(back.labels, s.labels) and back.W == s.W
    assert path.name == "basin.nc" and fesub.load(path).law == "exact"


@pytest.mark.slow
def test_basin_process_pool_matches_serial():
    kw = dict(shape=(6, 5), n_transient=20, n_record=2, steps_per_period=100, progress=False)
    s = basins(P_REF, 1.2, executor="serial", **kw)
    p = basins(P_REF, 1.2, executor=None, **kw)  # default local ProcessPoolExecutor
    assert np.array_equal(s.labels, p.labels) and np.array_equal(s.x1_max, p.x1_max)


# ---- bifurcation sweeps (spec 4.2, 300 transient periods, 400 steps per period) -----------------

SWEEP = dict(n_transient=300, steps_per_period=400, n_points=40, pmax=9, progress=False,
             executor="serial")


def test_sweep_period3_and_period1():
    if not _backend.compiled_available("freeplay"):
        pytest.skip("compiled kernel needed for the 300-period sweep")
    r = bifurcation_diagram(P_REF, [1.45, 1.65], law="exact", **SWEEP)
    assert np.all(r.period[0] == 3)  # W = 1.45: symmetric period-3 orbit from all 6 ICs
    peak = np.maximum(r.x1_max, -r.x1_min)
    assert np.all(np.abs(peak[0] - 0.122) < 5e-4)  # printed with 3 decimals
    assert np.all(np.abs(r.x1_max[0] + r.x1_min[0]) < 1e-6)  # symmetric
    assert np.all(r.period[1] == 1) and np.all(np.abs(peak[1] - 0.098) < 5e-4)


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_sweep_period4_pair_and_nonperiodic(law):
    if not _backend.compiled_available("freeplay"):
        pytest.skip("compiled kernel needed for the 300-period sweep")
    r = bifurcation_diagram(P_REF, [1.10, 0.95, 1.00], law=law, **SWEEP)
    p4 = r.period[0] == 4
    assert p4.all()
    sig = {(round(M, 3), round(m, 3)) for M, m in zip(r.x1_max[0], r.x1_min[0])}
    assert sig == {(0.116, -0.084), (0.084, -0.116)}  # a mirror pair (printed to 3 decimals)
    assert np.all(r.period[1:] == 0)  # no period <= 9 at W = 0.95 and 1.00
    peak = np.maximum(r.x1_max[1:], -r.x1_min[1:])
    assert np.all((peak > 0.105) & (peak < 0.12))  # "about 0.11 - 0.115"


def test_sweep_points_pure_and_picklable():
    d = bifurcation_point({"law": "exact", "n_transient": 20, "n_points": 10}, 1.3)
    json.dumps(d)
    assert len(d["section_x1"]) == 6 and all(len(s) == 10 for s in d["section_x1"])
    pickle.dumps(bifurcation_point) and pickle.dumps(basin_point)
    b = basin_point({"W": 1.15, "n_transient": 150}, (0.5, 0.5))
    json.dumps(b)
    assert b["period"] == 1 and abs(b["x1_max"] - 0.1085) < 1e-3  # cell (0.5, 0.5) -> A
    with pytest.raises(ParameterError, match="W"):
        basin_point({}, (0.1, 0.1))
    with pytest.raises(ParameterError, match="unknown"):
        basin_point({"W": 1.0, "bogus": 1}, (0.1, 0.1))


def test_follow_mode_runs():
    r = bifurcation_diagram(P_REF, [1.3, 1.35], ics=X0[:2], mode="follow", n_transient=20,
                            n_points=8, progress=False)
    assert r.section.shape == (2, 2, 8) and np.all(np.isfinite(r.section))


@pytest.mark.parametrize("kw, match", [
    (dict(shape=(0, 5)), "empty"), (dict(shape=(5, 0)), "empty"),
    (dict(x1_range=(0.5, -0.5)), "lo < hi"), (dict(law="fuzzy"), "law"),
    (dict(steps_per_period=2), "steps_per_period"), (dict(n_record=0), "n_record")])
def test_bad_input_basins(kw, match):
    with pytest.raises(ParameterError, match=match):
        basins(P_REF, 1.15, executor="serial", progress=False, **kw)


def test_bad_input_batch():
    with pytest.raises(ParameterError, match="empty"):
        batch_periodic(P_REF, np.zeros((0, 4)), 1.0)
    with pytest.raises(ParameterError, match="shape"):
        batch_periodic(P_REF, np.zeros((3, 3)), 1.0)
    with pytest.raises(ParameterError, match="W"):
        batch_periodic(P_REF, np.zeros((3, 4)), [1.0, -1.0, 1.0])
    with pytest.raises(ParameterError, match="finite"):
        batch_periodic(P_REF, np.full((1, 4), np.nan), 1.0)
    with pytest.raises(ParameterError, match="a \\(half-gap\\)"):
        batch_periodic({"a": 0.0}, np.zeros((1, 4)), 1.0)
    with pytest.raises(ParameterError, match="delta"):
        batch_periodic({"delta": -1.0}, np.zeros((1, 4)), 1.0, law="smooth")
    with pytest.raises(ParameterError, match="executor"):
        batch_parallel(P_REF, np.zeros((2, 4)), 1.0, executor=42)
    with pytest.raises(ParameterError, match="W_values"):
        bifurcation_diagram(P_REF, [], progress=False)
