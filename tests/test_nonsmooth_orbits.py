"""Periodic orbits, monodromy and Floquet multipliers (spec 1.2-1.4, table 4.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.integrate import solve_ivp

from fesub.errors import ConvergenceError, ParameterError
from fesub.nonsmooth import (P_REF, TwoMassFreePlay, flow, periodic_orbit, poincare_map,
                             radius_of_influence_closed_form)
from fesub.nonsmooth.orbits import orbit_from_ic

# spec 4.2: (W, p, guess, max x1 exact, min x1 exact, peak sigmoid, ratio, max|lam| exact, sigmoid, nsw)
TABLE = [
    (0.80, 1, [0.2, 0, 0.2, 0], 0.0980194, -0.0980194, 0.0980396, 4.00, 0.69627, 0.69628, 4),
    (1.15, 1, [0.2, 0, 0.2, 0], 0.0754968, -0.1084934, 0.1084656, 4.65, 0.78022, 0.78025, 6),
    (1.15, 1, [-0.2, 0, -0.2, 0], 0.0999393, -0.1061997, 0.1062170, 4.00, 0.76228, 0.76228, 4),
    (1.30, 1, [0, 0, 0, 0], 0.0884306, -0.0884306, 0.0884516, 4.00, 0.79918, 0.79918, 4),
    (1.50, 1, [0.2, 0, 0.2, 0], 0.0935622, -0.0935622, 0.0935792, 4.00, 0.82340, 0.82341, 4),
    (1.50, 3, [0.2, 0, -0.2, 0], 0.1127400, -0.1127400, 0.1127863, 3.99, 0.56900, 0.56908, 4),
    (1.80, 1, [0, 0, 0, 0], 0.1043731, -0.1043731, 0.1043852, 4.00, 0.85744, 0.85744, 4),
    (4.00, 1, [0, 0, 0, 0], 0.0136032, -0.0136032, 0.0136032, None, 0.96149, 0.96149, 0),
]
R_I = radius_of_influence_closed_form(1500.0)[0]


@pytest.fixture(scope="module", params=range(len(TABLE)), ids=lambda i: f"W{TABLE[i][0]}-p{TABLE[i][1]}-{i}")
def row(request):
    W, p, guess, *_ = TABLE[request.param]
    ex = orbit_from_ic(TwoMassFreePlay(P_REF, "exact"), guess, W, p)
    s1 = periodic_orbit(TwoMassFreePlay(P_REF, "smooth"), ex.z0, W, p)
    s2 = periodic_orbit(TwoMassFreePlay(P_REF.replace(delta=3000.0), "smooth"), ex.z0, W, p)
    return TABLE[request.param], ex, s1, s2


def test_exact_orbit_matches_reference(row):
    (W, p, _, xmax, xmin, _, _, lam_e, _, nsw), ex, _, _ = row
    assert ex.residual < 1e-10
    # reference values printed with 7 decimals: 1e-7 covers the rounding
    assert abs(ex.x1_max - xmax) < 1e-7 and abs(ex.x1_min - xmin) < 1e-7
    assert abs(ex.max_multiplier - lam_e) < 1e-5  # printed with 5 decimals
    assert ex.stable  # all orbits of the table are stable
    # the table's nsw counts switches per forcing period; an orbit of period p spans p of them
    assert ex.n_switch == nsw * p
    if p > 1:
        _check_switches_by_event_driven_run(ex, W, p, nsw)


def _check_switches_by_event_driven_run(ex, W, p, nsw):
    """Count the crossings of x1 = +-a over one orbit period with a plain SciPy integration of
    Eq. 2 (the 4-D non-autonomous form written out here, DOP853 with event location), started on
    the package's orbit; nsw crossings in each forcing period, and the orbit closes."""
    q = P_REF

    def fp(x1):
        return q.kp * (x1 - q.a) if x1 > q.a else (q.kp * (x1 + q.a) if x1 < -q.a else 0.0)

    def rhs(t, z):
        x1, y1, x2, y2 = z
        r, rv = x2 - x1, y2 - y1
        a1 = (q.Q1 * math.cos(W * t) - q.c * y1 - q.k * x1 - q.mu * x1 ** 3 + q.kd * r + q.mud * r ** 3
              + q.cd * rv - fp(x1)) / q.m
        a2 = (q.Q2 * math.cos(W * t) - q.c * y2 - q.k * x2 - q.mu * x2 ** 3 - q.kd * r - q.mud * r ** 3
              - q.cd * rv) / q.m
        return [y1, a1, y2, a2]

    T0 = 2 * math.pi / W
    assert ex.T == pytest.approx(p * T0, rel=1e-14)
    # max_step 0.05, a tenth of the closest two crossings (0.59 apart, measured): no pair of
    # crossings can hide inside one step and go uncounted
    sol = solve_ivp(rhs, (0.0, ex.T), ex.z0, method="DOP853", rtol=1e-11, atol=1e-12, max_step=0.05,
                    events=[lambda t, z: z[0] - q.a, lambda t, z: z[0] + q.a])
    t_sw = np.sort(np.concatenate(sol.t_events))
    assert np.histogram(t_sw, bins=p, range=(0.0, ex.T))[0].tolist() == [nsw] * p
    # shooting residual < 1e-10 plus DOP853 at rtol 1e-11 over p periods (measured 1.1e-11)
    assert np.abs(sol.y[:, -1] - ex.z0).max() < 1e-8


def test_smooth_orbit_error_and_delta_convergence(row):
    (W, p, _, _, _, peak_s, ratio, lam_e, lam_s, nsw), ex, s1, s2 = row
    assert abs(s1.peak - peak_s) < 1e-7  # reference peak, 7 decimals
    assert abs(s1.max_multiplier - lam_s) < 1e-5
    # spec 4.3 acceptance: stability flags agree, max |lam| within 1e-3
    assert s1.stable == ex.stable and abs(s1.max_multiplier - ex.max_multiplier) < 1e-3
    d1, d2 = s1.peak - ex.peak, s2.peak - ex.peak
    if nsw == 0:
        assert abs(d1) < 1e-9  # no contact: the laws differ by ~e^-75 in the gap
        return
    assert abs(d1) <= R_I  # spec 4.3: the amplitude error stays within the radius of influence
    # error ~ delta^-2: doubling delta divides it by about 4 (acceptance: ratio in [3, 5])
    r = d1 / d2
    assert 3.0 <= r <= 5.0
    assert abs(r - ratio) < 0.02  # reference ratios printed with 2 decimals


DELTA_PEAK = [2.01e-5, -2.79e-5, 1.73e-5, 2.09e-5, 1.70e-5, 4.63e-5, 1.21e-5, 0.0]


def test_sigmoid_peak_difference_and_sign(row):
    # P10: the sigmoid amplitude is larger for 6 of the 7 contact orbits; the asymmetric
    # multi-contact orbit at W = 1.15 is the counter-example (spec 4.2). Delta printed with 3
    # significant digits -> 5e-8 absolute.
    (W, p, *_), ex, s1, _ = row
    d = s1.peak - ex.peak
    ref = DELTA_PEAK[TABLE.index(row[0])]
    assert abs(d - ref) < 5e-8
    assert np.sign(round(d, 9)) == np.sign(ref)
    # spec 4.2: stability (max |lam|) of the two laws agrees to 1e-4
    assert abs(s1.max_multiplier - ex.max_multiplier) < 1e-4


def _fd_monodromy(sys, z, W, n, h=1e-5):
    M = np.zeros((4, 4))
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        Pp = poincare_map(sys, z + e, W, n, variational=False, rtol=1e-12, atol=1e-13)[0]
        Pm = poincare_map(sys, z - e, W, n, variational=False, rtol=1e-12, atol=1e-13)[0]
        M[:, j] = (Pp - Pm) / (2 * h)
    return M


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_monodromy_and_multipliers_vs_finite_differences(law):
    # W = 1.15 asymmetric orbit: 6 switches per period (exact law), saltation = identity
    sys = TwoMassFreePlay(P_REF, law)
    o = orbit_from_ic(sys, [0.2, 0, 0.2, 0], 1.15)
    M_fd = _fd_monodromy(sys, o.z0, 1.15, 1)
    # central differences: truncation ~h^2 = 1e-10, round-off ~rtol/h = 1e-7 -> 1e-6 relative
    assert np.max(np.abs(o.monodromy - M_fd)) < 1e-6 * np.max(np.abs(M_fd))
    lam_fd = np.linalg.eigvals(M_fd)
    lam_fd = lam_fd[np.argsort(-np.abs(lam_fd), kind="stable")]
    assert np.max(np.abs(np.sort_complex(lam_fd) - np.sort_complex(o.floquet))) < 1e-6
    # dP/dW from the sensitivity equations (including the moving end time) vs central differences
    _, _, dPdW, _ = poincare_map(sys, o.z0, 1.15, 1, sens_W=True, rtol=1e-12, atol=1e-13)
    hW = 1e-5
    Pp = poincare_map(sys, o.z0, 1.15 + hW, 1, variational=False, rtol=1e-12, atol=1e-13)[0]
    Pm = poincare_map(sys, o.z0, 1.15 - hW, 1, variational=False, rtol=1e-12, atol=1e-13)[0]
    assert_allclose(dPdW, (Pp - Pm) / (2 * hW), rtol=0, atol=1e-6 * np.max(np.abs(dPdW)))


def test_mirror_orbit_and_four_coexisting_orbits():
    # if X(t) solves, -X(t + T/2) does: the mirror of the asymmetric orbit is a distinct orbit
    sys = TwoMassFreePlay(P_REF, "exact")
    W = 1.15
    T = 2 * math.pi / W
    found = []
    for g in ([0.2, 0, 0.2, 0], [-0.2, 0, -0.2, 0]):
        o = orbit_from_ic(sys, g, W)
        zh = flow(sys, o.z0, 0.0, T / 2, W, rtol=1e-12, atol=1e-13).z
        mo = periodic_orbit(sys, -zh, W)  # -X(T/2) is the mirror orbit's state at t = 0
        assert mo.residual < 1e-10
        assert abs(mo.x1_max + o.x1_min) < 1e-9 and abs(mo.x1_min + o.x1_max) < 1e-9
        assert abs(mo.max_multiplier - o.max_multiplier) < 1e-8  # same stability
        found += [(o.x1_max, o.x1_min), (mo.x1_max, mo.x1_min)]
    assert len({(round(a, 6), round(b, 6)) for a, b in found}) == 4


def test_autonomous_form_matches_forced_form():
    # 6-D form with the (u, v) oscillator on its circle gives the same orbit (spec 1.3)
    sys = TwoMassFreePlay(P_REF, "smooth")
    W = 1.3
    o = orbit_from_ic(sys, [0, 0, 0, 0], W)
    T = 2 * math.pi / W
    sol = solve_ivp(lambda t, y: sys.rhs6(t, y, W), (0, T), np.r_[o.z0, 1.0, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-13)
    assert np.max(np.abs(sol.y[:4, -1] - o.z0)) < 1e-8  # closes after one period
    assert abs(sol.y[4, -1] - 1) < 1e-10 and abs(sol.y[5, -1]) < 1e-10  # u = cos, v = -sin


def test_modal_form_equals_physical_form():
    # Eq. 11 derived independently: map random states and compare accelerations
    rng = np.random.default_rng(0)
    for law in ("exact", "smooth"):
        sys = TwoMassFreePlay(P_REF.replace(Q2=0.07, cd=0.0), law)  # modal form assumes cd only in mode 2
        for _ in range(20):
            q = rng.normal(scale=0.1, size=4)
            t = rng.uniform(0, 5)
            x = np.array([q[0] + q[2], q[1] + q[3], q[0] - q[2], q[1] - q[3]])
            f = sys.rhs(t, x, 1.2)
            dq = sys.modal_rhs(t, q, 1.2)
            assert_allclose([dq[1] + dq[3], dq[1] - dq[3]], [f[1], f[3]], atol=1e-13)


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_jacobian_vs_finite_differences(law):
    sys = TwoMassFreePlay(P_REF, law)
    rng = np.random.default_rng(1)
    for _ in range(20):
        z = rng.normal(scale=0.1, size=4)
        if sys.exact and abs(abs(z[0]) - P_REF.a) < 1e-3:
            continue
        reg = sys.region(z[0]) if sys.exact else None
        J = sys.jac(0.3, z, 1.2, region=reg)
        h = 1e-7
        Jfd = np.column_stack([(sys.rhs(0.3, z + h * e, 1.2, region=reg)
                                - sys.rhs(0.3, z - h * e, 1.2, region=reg)) / (2 * h)
                               for e in np.eye(4)])
        assert_allclose(J, Jfd, atol=1e-6)  # FD error ~ h^2 * f''' + eps/h ~ 1e-9; kp = 10 scale


def test_event_driven_switches_exact_and_restart_consistent():
    sys = TwoMassFreePlay(P_REF, "exact")
    fr = flow(sys, [0.2, 0, 0.2, 0], 0.0, 20.0, 1.15, rtol=1e-10, atol=1e-10)
    assert fr.switches and all(abs(abs(b) - P_REF.a) == 0 for _, b, _ in fr.switches)
    # splitting the interval at an arbitrary time gives the same end state (restart consistency)
    f1 = flow(sys, [0.2, 0, 0.2, 0], 0.0, 7.3, 1.15, rtol=1e-11, atol=1e-12)
    f2 = flow(sys, f1.z, 7.3, 20.0, 1.15, rtol=1e-11, atol=1e-12)
    f0 = flow(sys, [0.2, 0, 0.2, 0], 0.0, 20.0, 1.15, rtol=1e-11, atol=1e-12)
    assert np.max(np.abs(f2.z - f0.z)) < 1e-8


def test_fig17_test_point_event_path_converged():
    # P8 test point (1.5, 0, -1.5, 0) at W = 1.3: at rtol = atol = 1e-9 (the spec default, max
    # step 0.08 as in the paper) the event path agrees with 1e-11 over 20 periods (no missed
    # events). The paper's failure at 1e-6 is an ode45 property and needs Table 2: not asserted.
    sys = TwoMassFreePlay(P_REF, "exact")
    z0 = [1.5, 0, -1.5, 0]
    W = 1.3
    T = 2 * math.pi / W
    a = flow(sys, z0, 0, 20 * T, W, rtol=1e-9, atol=1e-9, max_step=0.08)
    b = flow(sys, z0, 0, 20 * T, W, rtol=1e-11, atol=1e-11, max_step=0.08)
    assert len(a.switches) == len(b.switches)
    assert np.max(np.abs(a.z - b.z)) < 1e-6  # global error of a 1e-9 run over 20 periods


def test_bad_input_orbits():
    sys = TwoMassFreePlay(P_REF, "exact")
    with pytest.raises(ParameterError, match="W"):
        periodic_orbit(sys, [0, 0, 0, 0], -1.0)
    with pytest.raises(ParameterError, match="n_periods"):
        periodic_orbit(sys, [0, 0, 0, 0], 1.0, 0)
    with pytest.raises(ParameterError, match="shape"):
        periodic_orbit(sys, [0, 0, 0], 1.0)
    with pytest.raises(ParameterError, match="law"):
        TwoMassFreePlay(P_REF, "fuzzy")
    with pytest.raises(ConvergenceError):
        periodic_orbit(sys, [3.0, 0, -3.0, 0], 1.15, max_iter=2)
