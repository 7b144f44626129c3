"""Continuation of periodic orbits in W (fesub.continuation), bifurcation tests, backbones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from fesub.errors import ParameterError
from fesub.nonsmooth import P_REF, TwoMassFreePlay, batch_periodic, floquet_test_functions
from fesub.nonsmooth.branches import (branch_summary, continue_orbit, event_multipliers,
                                      orbit_backbone)
from fesub.nonsmooth.orbits import orbit_from_ic


@pytest.fixture(scope="module")
def fold_ns_branch():
    # asymmetric orbit 'a' at W = 1.15 continued upwards: NS then fold near W = 1.1572
    sys = TwoMassFreePlay(P_REF, "exact")
    o = orbit_from_ic(sys, [0.2, 0, 0.2, 0], 1.15)
    return continue_orbit(sys, o.z0, 1.15, (1.0, 1.3), ds=0.03, ds_max=0.03, max_steps=9,
                          progress=False)


@pytest.mark.slow
def test_branch_points_are_periodic_orbits(fold_ns_branch):
    br, prob = fold_ns_branch
    assert len(br.lam) >= 8
    # independent check: the fixed-step batch RK4 (2000 steps per period, event splitting) maps
    # each branch point onto itself after one period; RK4 error at this step ~1e-12
    for z, W in zip(br.x[::3], br.lam[::3]):
        r = batch_periodic(P_REF, z[None], W, law="exact", n_transient=0, n_record=1,
                           steps_per_period=2000)
        assert np.max(np.abs(r.strobe[0, -1] - z)) < 1e-8


@pytest.mark.slow
def test_fold_and_neimark_sacker_located(fold_ns_branch):
    br, _ = fold_ns_branch
    kinds = [e.kind for e in br.events]
    assert "fold" in kinds and "NS" in kinds and "stability" in kinds
    fold = next(e for e in br.events if e.kind == "fold")
    # at a fold of the shooting problem one multiplier is +1 (the tangent test knows nothing of
    # multipliers: independent); 1e-4 = accuracy of the located arclength point
    assert np.min(np.abs(event_multipliers(fold) - 1.0)) < 1e-4
    ns = next(e for e in br.events if e.kind == "NS")
    lam = event_multipliers(ns)
    cpx = lam[np.abs(lam.imag) > 1e-6]
    assert cpx.size >= 2 and np.min(np.abs(np.abs(cpx) - 1.0)) < 1e-4
    st = next(e for e in br.events if e.kind == "stability")
    assert abs(st.lam - ns.lam) < 1e-5  # the orbit loses stability at the NS point
    # the false NS (neutral saddle: real lam_i lam_j = 1) is recognised as such
    for e in br.events:
        if e.kind == "NS-neutral-saddle":
            assert np.all(np.abs(event_multipliers(e).imag) < 1e-9)


@pytest.mark.slow
def test_stability_flags_match_multipliers(fold_ns_branch):
    br, prob = fold_ns_branch
    s = branch_summary(br, prob)
    assert np.array_equal(s["stable"], s["max_multiplier"] < 1.0)
    assert np.array_equal(br.stable, s["stable"])
    assert s["stable"][0] and not s["stable"][-1]


def test_branch_reaches_table_orbit_at_range_end():
    # continue the symmetric orbit from W = 1.3 to the bound W = 1.5: the end point is the
    # table orbit of spec 4.2 (max x1 = 0.0935622, computed there by direct shooting)
    sys = TwoMassFreePlay(P_REF, "exact")
    o = orbit_from_ic(sys, [0, 0, 0, 0], 1.3)
    br, prob = continue_orbit(sys, o.z0, 1.3, (1.0, 1.5), ds=0.08, ds_max=0.08, max_steps=20,
                              progress=False,
                              detect=())
    assert br.stop_reason == "lam_range" and abs(br.lam[-1] - 1.5) < 1e-12
    end = prob.orbit(br.x[-1], br.lam[-1])
    assert abs(end.x1_max - 0.0935622) < 1e-7


def test_floquet_test_functions_closed_form():
    # M with known multipliers: PD, NS, LP are the products of spec 3.4 (independent of eig)
    rng = np.random.default_rng(3)
    V = rng.normal(size=(4, 4))
    lam = np.array([-1.0, 0.5, 0.3, 2.0])
    M = V @ np.diag(lam) @ np.linalg.inv(V)
    t = floquet_test_functions(M)
    assert abs(t["PD"]) < 1e-10 and abs(t["LP"] - np.prod(lam - 1)) < 1e-10
    assert abs(t["PD"] - np.linalg.det(M + np.eye(4))) < 1e-10
    R = np.array([[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]])
    M2 = np.zeros((4, 4))
    M2[:2, :2] = R
    M2[2:, 2:] = np.diag([0.5, 0.2])
    assert abs(floquet_test_functions(M2)["NS"]) < 1e-12  # complex pair on the unit circle


def test_backbone_linear_limit_and_duffing_closed_form():
    # below the gap the in-phase NNM is x1 = x2 (r = 0): a single Duffing oscillator
    # x'' + k x + mu x^3 = 0 whose period is 4 int_0^A dx / sqrt(2 (V(A) - V(x))) (quadrature)
    sys = TwoMassFreePlay(P_REF, "exact")
    bb = orbit_backbone(sys, 1, (0.005, 0.045), ds=0.01, ds_max=0.01)
    assert abs(bb.frequency[0] - 1.0) < 1e-4  # wn1 = 1 at small amplitude (cubic shift 4e-6)
    k, mu = P_REF.k, P_REF.mu
    for A, x2, w in zip(bb.A[::2], bb.x2[::2], bb.frequency[::2]):
        V = lambda x: k * x * x / 2 + mu * x ** 4 / 4  # noqa: E731
        # substitution x = A sin(th) removes the endpoint singularity
        T = 4 * integrate.quad(lambda th: A * math.cos(th) / math.sqrt(2 * (V(A) - V(A * math.sin(th)))),
                               0, math.pi / 2, epsabs=1e-13, limit=200)[0]
        assert abs(x2 - A) < 1e-9
        assert abs(w - 2 * math.pi / T) < 1e-8


def test_backbone_mode2_linear_frequency():
    sys = TwoMassFreePlay(P_REF, "smooth")
    bb = orbit_backbone(sys, 2, (0.005, 0.02), ds=0.01, ds_max=0.01)
    assert abs(bb.frequency[0] - math.sqrt(1.6)) < 1e-3  # wn2 = sqrt((k + 2 kd)/m) = 1.265
    assert np.all(np.abs(bb.x2 + bb.A) < 1e-3)  # anti-phase


def test_bad_input_continuation():
    sys = TwoMassFreePlay(P_REF, "exact")
    with pytest.raises(ParameterError, match="W_range"):
        continue_orbit(sys, np.zeros(4), 1.0, (1.5, 1.2))
    with pytest.raises(ParameterError, match="test function"):
        continue_orbit(sys, np.zeros(4), 1.0, (0.5, 1.2), detect=("XX",))
    with pytest.raises(ParameterError, match="A_range"):
        orbit_backbone(sys, 1, (0.1, 0.2))
    with pytest.raises(ParameterError, match="mode"):
        orbit_backbone(sys, 3)


@pytest.mark.slow
def test_symmetry_breaking_branch_point():
    # the symmetric orbit (x1_max = -x1_min) loses stability going down in W through a real
    # multiplier +1 without a fold: a symmetry-breaking branch point (BP test det(M - I))
    sys = TwoMassFreePlay(P_REF, "exact")
    o = orbit_from_ic(sys, [0, 0, 0, 0], 1.3)
    br, prob = continue_orbit(sys, o.z0, 1.3, (1.25, 1.4), direction=-1, ds=0.03, ds_max=0.03,
                              progress=False)
    bps = [e for e in br.events if e.kind == "BP"]
    assert len(bps) == 1 and not any(e.kind == "fold" for e in br.events)
    lam = event_multipliers(bps[0])
    assert np.min(np.abs(lam - 1.0)) < 1e-4  # located to the arclength tolerance
    orb = prob.orbit(bps[0].x, bps[0].lam)
    # still on the symmetric branch: R_z is singular at a BP, so the corrected point is only
    # pinned to ~sqrt(tol) along the symmetry-breaking null direction (1e-6 vs amplitude 0.088)
    assert abs(orb.x1_max + orb.x1_min) < 1e-6
    assert br.stable[0] and not br.stable[-1]


@pytest.mark.slow
def test_period_doubling_of_period4_orbit():
    # the period-4 orbit reached from (0.2, 0, 0.2, 0) at W = 1.12 (400 transient periods) has a
    # multiplier -1.045; continued upwards, it crosses -1 (PD test det(M + I) changes sign)
    sys = TwoMassFreePlay(P_REF, "exact")
    o = orbit_from_ic(sys, [0.2, 0, 0.2, 0], 1.12, 4, n_transient=400)
    assert np.min(np.abs(o.floquet + 1.0)) < 0.1
    br, prob = continue_orbit(sys, o.z0, 1.12, (1.10, 1.14), n_periods=4, ds=0.003,
                              ds_max=0.005, max_steps=3, detect=("PD",), progress=False)
    pds = [e for e in br.events if e.kind == "PD"]
    assert len(pds) == 1 and 1.12 < pds[0].lam < 1.121
    lam = event_multipliers(pds[0])
    # independent of the test function: eig of the monodromy at the located point
    assert np.min(np.abs(lam + 1.0)) < 1e-4


def test_switching_at_the_symmetry_breaking_point_gives_mirror_image_asymmetric_orbits():
    # the other family through the branch point is asymmetric, and its two halves are images of
    # each other under the system's symmetry (x -> -x with half a period's shift: x1_max of one
    # is -x1_min of the other at the same W); each state returns to itself after one period
    # under the independent fixed-step batch integrator
    from fesub.nonsmooth import switch_orbit

    sys = TwoMassFreePlay(P_REF, "exact")
    o = orbit_from_ic(sys, [0, 0, 0, 0], 1.3)
    br, prob = continue_orbit(sys, o.z0, 1.3, (1.25, 1.4), direction=-1, ds=0.03, ds_max=0.03,
                              progress=False)
    (bp,) = [e for e in br.events if e.kind == "BP"]
    halves = [switch_orbit(prob, bp, (1.2, 1.4), side=s, ds=0.02, ds_max=0.02, max_steps=4)
              for s in (+1, -1)]
    W = [h.lam[-1] for h in halves]
    orbits = [prob.orbit(h.x[-1], h.lam[-1]) for h in halves]
    for orb in orbits:
        assert abs(orb.x1_max + orb.x1_min) > 1e-3  # asymmetric (symmetric branch: < 1e-6)
    # the second half's last orbit, corrected by shooting at the first half's last W
    other = orbit_from_ic(sys, halves[1].x[-1], W[0], n_transient=0)
    # mirror images, to the shooting tolerance of the orbits (1e-8 on states of 0.1)
    assert orbits[0].x1_max == pytest.approx(-other.x1_min, abs=1e-6)
    for h in halves:
        r = batch_periodic(P_REF, h.x[-1:], h.lam[-1], law="exact", n_transient=0, n_record=1,
                           steps_per_period=4000)
        # the batch integrator's fixed step (T/4000) with exact switching: 1e-5 on O(0.1) states
        assert np.abs(r.strobe[0, -1] - h.x[-1]).max() < 1e-5
