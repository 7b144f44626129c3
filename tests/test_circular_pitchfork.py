"""The disc at its pitchfork F = -F_P, its neighbours, and the horizon of the stopping runs.

At ``F = -F_P`` the stop direction ``(-1, 0, 0)`` is non-hyperbolic: the slip direction reaches
it only algebraically while the slip speed falls to zero in finite time. The stop times of
``fesub`` are checked against an independent integration written here from the paper: the disc's
equations (13)/(126) in physical time with the uniform-pressure closed forms (59)-(60) and their
series, by :func:`scipy.integrate.solve_ivp` with a terminal event on the slip speed. The
horizon of a run must lie beyond its stop (the stop-time bound from the slip energy must hold).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import ellipe, ellipk

from fesub.circular import (ExactCircularFriction, HarmonicFriction, LinearEllipsoidalFriction,
                            ReducedContactSystem)

# the disc of the paper's Sect. 7.4 (eq. 126): mu g = m = R = 1, uniform pressure,
# rho = kappa = 2R/3, j = 1/2, so x_o' = -(C w1 - F, C w2, (8/9) S w3)
R = 1.0
RHO = 2.0 / 3.0
B = RHO * RHO / 0.5              # rho kappa/(j Rbar^2) = 8/9
F_P = 1.0 - B * 3.0 / 8.0 * R / RHO   # |A C(0) - b S(0)|, S(0) = 3R/(8 rho): 1/2 (row 22)
#: relative slip speed |x_o|/|x0| at which the reference run ends and adds r/|R*|: the
#: remaining time is ~1e-10 |x0|/0.5 and its extrapolation error far below that
R_END = 1e-10


# ------------------------------------------------------------------ the paper's closed forms
def _profile(eps):
    """Uniform-pressure ``(Q_eps, T_eps)`` at one slip-spin ratio: (59)-(60) with complete
    elliptic integrals of parameter ``eps^2`` (``eps <= 1``) or ``eps^-2`` (``eps >= 1``, the
    second branch), and the series of the specification where the closed forms cancel."""
    if eps < 1e-3:
        e2 = eps * eps
        return (eps * (1 - e2 / 8 - e2 * e2 / 64 - 5 * e2 ** 3 / 1024),
                1 - 3 * e2 / 4 + 9 * e2 ** 2 / 64 + 5 * e2 ** 3 / 256 + 105 * e2 ** 4 / 16384)
    if eps > 30.0:
        x = 1.0 / eps
        x2 = x * x
        return (1 - x2 / 8 - x2 ** 2 / 64 - 5 * x2 ** 3 / 1024 - 35 * x2 ** 4 / 16384
                - 147 * x2 ** 5 / 131072,
                x * (3 / 8 + x2 / 32 + 9 * x2 ** 2 / 1024 + 15 * x2 ** 3 / 4096
                     + 245 * x2 ** 4 / 131072 + 567 * x2 ** 5 / 524288))
    if eps == 1.0:
        return 8 / (3 * math.pi), 4 / (3 * math.pi)
    e2 = eps * eps
    if eps < 1.0:
        E, K = ellipe(e2), ellipk(e2)
        return ((4 / 3) * ((e2 + 1) * E + (e2 - 1) * K) / (eps * math.pi),
                (2 / 3) * ((4 - 2 * e2) * E + (e2 - 1) * K) / math.pi)
    E, K = ellipe(1 / e2), ellipk(1 / e2)
    return ((4 / 3) * ((e2 + 1) * E - (e2 - 1) * K) / math.pi,
            (2 / 3) * eps * ((4 - 2 * e2) * E + (2 * e2 - 5 + 3 / e2) * K) / math.pi)


def _reference_field(F):
    """``x_o'`` of the disc (126) at ``x_o != 0``: ``C = Q_eps/w12``, ``S = T_eps/|w3|`` with
    ``eps = (rho/R) w12/|w3|`` (eqs. 35, 53-54)."""

    def f(t, x):
        r = math.sqrt(x @ x)
        w = x / r
        w12, a3 = math.hypot(w[0], w[1]), abs(w[2])
        Q, T = _profile(RHO / R * w12 / a3 if a3 > 0 else math.inf)
        C = Q / w12 if w12 > 0 else RHO / R            # Q_eps'(0) = 1 (row 10)
        S = T / a3 if a3 > 0 else 3 * R / (8 * RHO)    # eps T_eps -> 3/8 (row 10)
        return np.array([-C * w[0] + F, -C * w[1], -B * S * w[2]])

    return f


def reference_stop_time(F, x0):
    """Stop time (s) of the disc pushed by ``F`` (N) from ``x0`` (m/s), integrated in physical time
    by DOP853 at rtol 1e-12 until the slip speed reaches ``R_END |x0|`` (terminal event); the
    last ``r/|r'|`` (~2e-10 |x0| s) is added, ``r' = w.x_o'`` -- exact once the direction has
    settled, and too small to matter when it has not."""
    f = _reference_field(F)
    r0 = float(np.linalg.norm(x0))

    def speed(t, x):
        return math.sqrt(x @ x) - R_END * r0
    speed.terminal = True
    speed.direction = -1

    sol = solve_ivp(f, (0.0, 1e3), np.asarray(x0, float), method="DOP853", rtol=1e-12,
                    atol=1e-13 * R_END * r0, events=speed)
    assert sol.status == 1, sol.message
    x = sol.y_events[0][0]
    r = math.sqrt(x @ x)
    return float(sol.t_events[0][0] + r / -(x / r @ f(0.0, x)))


def test_reference_profiles_and_stop_time_against_the_tables():
    """The reference written in this file against the specification's numbers: the profiles
    (rows 4, 6), the continuity at the series switches, and two stop times (rows 29, 31)."""
    # rows 4 and 6 are given to 12 digits; the closed forms are good to ~1e-14 there
    np.testing.assert_allclose(_profile(0.5), (0.483843755630, 0.821622532158), rtol=1e-11)
    np.testing.assert_allclose(_profile(2.0), (0.967687511260, 0.191713797426), rtol=1e-11)
    np.testing.assert_allclose(_profile(1.0 - 1e-12), (0.848826363157, 0.424413181578),
                               rtol=1e-10)
    # across the switches the closed forms lose ~1e-16/eps^2 (eps -> 0) and ~1e-16 eps^4
    # (torque, eps -> inf) absolutely, i.e. 1e-10 and 8e-11 there: the two sides agree to that
    for e in (1e-3, 30.0):
        lo, hi = _profile(e * (1 - 1e-15)), _profile(e * (1 + 1e-15))
        np.testing.assert_allclose(lo, hi, rtol=0, atol=1e-10)
    # rows 29 and 31 (exact model) are given to six decimals
    assert reference_stop_time(0.0, [1.0, 0.0, 0.2 * RHO]) == pytest.approx(1.028093, abs=6e-7)
    assert reference_stop_time(0.2, [1.0, 0.1, 0.3]) == pytest.approx(1.354772, abs=6e-7)


# ------------------------------------------------------------------ the pitchfork and neighbours
@pytest.fixture(scope="module")
def disc():
    return ReducedContactSystem.disc(ExactCircularFriction("uniform"))


#: starts (u_x, u_y, rho omega_z) (m/s): on the invariant circle w2 = 0 behind and ahead of the
#: stop direction, and off the circle
STARTS = ([-1.0, 0.0, 0.3], [1.0, 0.0, 0.2], [-1.0, 0.2, 0.3], [0.3, 0.8, -0.4])


@pytest.mark.parametrize("x0", STARTS)
def test_pitchfork_stop_time_against_physical_time_reference(disc, x0):
    assert disc.F_P == pytest.approx(F_P, abs=1e-14)         # 1/2, exact in binary
    s = disc.with_force(-F_P)
    tr = s.simulate_sliding(x0)                               # the default horizon
    assert tr.status == "complete" and tr.info["outcome"] == "stopped"
    assert tr.stopped and tr.stuck and math.isfinite(tr.t_stop)
    ref = reference_stop_time(-F_P, x0)
    # required: 1e-4. Both runs are DOP853 (rtol 1e-10 in rescaled time, 1e-12 here) and both
    # extrapolate below 1e-10 |x0|: they agree to ~1e-10, so 1e-8 leaves room and still fails on
    # any error of the stop detection (a missed stop is inf, a late one off by the horizon)
    assert tr.t_stop == pytest.approx(ref, rel=1e-8)
    assert tr.t_stop < tr.info["t_end"]
    # the direction is converged after the stop, towards the non-hyperbolic (-1, 0, 0): there
    # |V*| ~ 0.375 (pi - psi)^3, so |V*| < 1e-10 puts w within (1e-10/0.375)^(1/3) = 6.4e-4
    assert tr.info["w_converged"] and tr.info["w_residual"] <= 1.0001e-10
    assert np.linalg.norm(tr.w_final - [-1.0, 0.0, 0.0]) < 7e-4
    # and recognised as the limit case: the in-circle rate 3 * 0.375 * (6.4e-4)^2 = 4.6e-7 there
    assert tr.info["stop_direction"] == "non-hyperbolic"
    assert min(abs(x) for x in tr.info["stop_rates"]) < 1e-6


@pytest.mark.parametrize("dF", [-1e-1, -1e-2, -1e-3, -1e-6, 1e-6, 1e-3, 1e-2, 1e-1])
def test_near_pitchfork_stop_time_against_physical_time_reference(disc, dF):
    """``F = -F_P (1 + dF)``: beyond the pitchfork (``dF > 0``) the disc stops in pure slip,
    before it (``dF < 0``) in a combined slip-spin direction that leaves ``(-1, 0, 0)`` like
    ``sqrt(-dF)``; either way the slip direction converges slowly near ``dF = 0``."""
    F = -F_P * (1 + dF)
    s = disc.with_force(F)
    for x0 in STARTS[:3]:
        tr = s.simulate_sliding(x0)
        assert tr.stopped and tr.info["outcome"] == "stopped", (dF, x0, tr.info)
        # as for the pitchfork itself (see there)
        assert tr.t_stop == pytest.approx(reference_stop_time(F, x0), rel=1e-8), (dF, x0)
        assert tr.t_stop < tr.info["t_end"]
        # the stop direction: pure slip beyond the pitchfork, a slip-spin one before it
        if dF > 0:
            assert abs(tr.w_final[2]) < 1e-3
        else:
            assert tr.w_final[0] < 0 and abs(tr.w_final[2]) > 0.1 * math.sqrt(-dF)
        # the slowest rate on the sphere: |dF|/2 at (-1, 0, 0) beyond the pitchfork, ~|dF| on
        # the new branch before it -- hyperbolic unless within a few 1e-6 mu g of the pitchfork
        slow = min(abs(x) for x in tr.info["stop_rates"])
        if abs(dF) >= 1e-3:
            assert tr.info["stop_direction"] == "hyperbolic" and slow > 1e-4, (dF, x0)
        else:
            assert slow < 3e-6, (dF, x0, tr.info["stop_rates"])
        if dF > 0:
            # at (-1, 0, 0): lambda_perp = F/m and lambda_c = mu g (k_1 + f) = -dF/2 (the mirror
            # of the spec's lambda's at (1, 0, 0)); central differences h = 1e-6 give ~1e-9
            np.testing.assert_allclose(tr.info["stop_rates"], [F, -F_P * dF], atol=1e-7)


def test_pitchfork_in_rescaled_and_physical_time_agree(disc):
    """fesub's two integrations of the pitchfork (rescaled time, physical time) agree."""
    s = disc.with_force(-F_P)
    a = s.simulate_sliding([-1.0, 0.2, 0.3])
    b = s.simulate_sliding([-1.0, 0.2, 0.3], method="t")
    assert a.stopped and b.stopped
    # both DOP853 at rtol 1e-10, both end at 1e-12 |x0|
    assert a.t_stop == pytest.approx(b.t_stop, rel=1e-9)
    np.testing.assert_allclose(a.q[-1], b.q[-1], rtol=1e-8, atol=1e-12)


# ------------------------------------------------------------------ the horizon from the physics
def _energy_rate_reference(F, w):
    """``d sqrt(2E/m)/dt`` (m/s^2) of the disc at unit slip direction(s) ``w`` (n, 3), from its
    mass matrix ``M = diag(m, m, j m Rbar^2/rho^2)`` (eq. 11) and the reference field:
    ``E = x^T M x/2``, ``dE/dt = x^T M x'``."""
    f = _reference_field(F)
    M = np.array([1.0, 1.0, 0.5 * R * R / (RHO * RHO)])
    return np.array([(wi * M) @ f(0.0, wi) / math.sqrt((wi * M) @ wi) for wi in w])


@pytest.mark.parametrize("F", [0.0, -F_P, 0.9])
def test_slowdown_rate_is_the_least_energy_decay(disc, F):
    """beta against the energy rate over random directions on the whole sphere (not only the
    circle where fesub looks for it) and over a dense sweep of the circle."""
    beta = disc.with_force(F).slowdown_rate()
    rng = np.random.default_rng(1)
    w = rng.normal(size=(4000, 3))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    psi = np.linspace(0.0, math.pi, 4001)
    circle = np.stack([np.cos(psi), 0 * psi, np.sin(psi)], axis=1)
    rates = _energy_rate_reference(F, np.concatenate([w, circle]))
    # beta bounds every direction's decay (to rounding) ...
    assert np.max(rates) <= -beta + 1e-12
    # ... and is attained (the circle sweep is 8e-4 rad fine: the rate's minimum is flat to
    # ~(8e-4)^2 there)
    assert -np.max(rates) == pytest.approx(beta, abs=1e-6)


def _sweep_cases():
    """(system, x0) over models, bodies and forces up to just below the tangency."""
    disc_models = {"exact": ExactCircularFriction("uniform"),
                   "N2": HarmonicFriction("uniform", N=2),
                   "linear": LinearEllipsoidalFriction("uniform")}
    starts = ([1.0, 0.0, 0.2], [-0.4, 0.1, 0.9], [0.3, 0.6, -0.5], [-1.0, 0.0, 0.3])
    cases = []
    for name, model in disc_models.items():
        base = ReducedContactSystem.disc(model)
        for f in (-0.95, -0.6, -0.5, -0.3, 0.0, 0.3, 0.5, 0.95):
            cases.append((f"disc-{name}-F{f:g}", base.with_force(f * base.F_T), starts))
    ball = ReducedContactSystem.ball(ExactCircularFriction("hertz"))
    for f in (-1.0, 0.0, 0.5, 0.99):
        F = -ball.F_P if f == -1.0 else f * ball.F_T
        cases.append((f"ball-exact-F{F:g}", ball.with_force(F), starts[:2]))
    return cases


def test_stop_time_bound_and_horizon_hold_over_a_sweep():
    """Every run below the tangency force stops before the bound of its stop time from the
    slip energy, and so well before its horizon (twice the bound)."""
    tight = []
    for label, s, starts in _sweep_cases():
        for x0 in starts:
            tr = s.simulate_sliding(x0)
            assert tr.stopped and tr.info["outcome"] == "stopped", (label, x0, tr.info)
            bound = s.stop_time_bound(x0)
            assert tr.info["stop_time_bound"] == bound and tr.info["t_end"] == 2 * bound
            assert tr.t_stop <= bound, (label, x0, tr.t_stop, bound)
            assert tr.t_stop < tr.info["t_end"]
            tight.append(tr.t_stop / bound)
    # not vacuous: some runs come close to the bound (a start on the slowest direction does)
    assert max(tight) > 0.9


def test_energy_speed_falls_at_least_at_the_slowdown_rate(disc):
    """Along a trajectory sampled by fesub, the energy speed falls at least at beta between any
    two samples (a finite-difference check of the bound's premise)."""
    s = disc.with_force(0.6)
    tr = s.simulate_sliding([0.3, 0.6, -0.5], method="t", r_min=1e-6)
    e = s.energy_speed(tr.x_o)
    slope = np.diff(e) / np.diff(tr.t)
    # DOP853 at rtol 1e-10 on states of order 1
    assert np.all(slope <= -s.slowdown_rate() + 1e-8)


# ------------------------------------------------------------------ runs that never stop
def test_above_tangency_settles_in_sliding_without_a_horizon(disc):
    """Above ``F_T`` the stop time has no bound (no horizon); the run ends once the direction
    has settled on pure slip along F, which does not slow down."""
    s = disc.with_force(1.2)
    assert s.slowdown_rate() < 0 and math.isinf(s.stop_time_bound([0.1, 0.05, 0.1]))
    tr = s.simulate_sliding([0.1, 0.05, 0.1])
    assert math.isinf(tr.info["t_end"]) and tr.info["outcome"] == "sliding"
    assert not tr.stopped and math.isinf(tr.t_stop)
    # settled: |V*| < 1e-10 mu g at a node with eigenvalues -0.7, -1.2 (in tau)
    np.testing.assert_allclose(tr.w_final, [1.0, 0.0, 0.0], atol=1e-9)


def test_at_tangency_the_disc_slides_steadily(disc):
    """At ``F = F_T`` pure slip neither slows down nor speeds up: ``r' = R* = 0`` there."""
    s = disc.with_force(disc.F_T)
    tr = s.simulate_sliding([1.0, 0.0, 0.2])
    assert tr.info["outcome"] == "sliding" and not tr.stopped
    np.testing.assert_allclose(tr.w_final, [1.0, 0.0, 0.0], atol=1e-9)
    assert abs(float(s.radial(tr.w_final))) < 1e-9


def test_explicit_horizons_and_progress_bar(disc):
    """A given horizon is used as given (inf: none); a bad one is refused; the progress bar
    changes nothing in the numbers."""
    from fesub.errors import ParameterError

    s = disc.with_force(-F_P)
    x0 = [-1.0, 0.0, 0.3]
    quiet = s.simulate_sliding(x0)
    assert s.simulate_sliding(x0, t_end=math.inf).t_stop == quiet.t_stop
    cut = s.simulate_sliding(x0, t_end=1.0)       # the stop is at 2.096 s
    assert cut.info["outcome"] == "horizon" and not cut.stopped
    assert cut.t[-1] == pytest.approx(1.0, abs=1e-9)     # the event is located to ~1e-12 s
    for bad in ({"t_end": 0.0}, {"t_end": float("nan")}, {"max_tau": -1.0}, {"r_max": 0.0}):
        with pytest.raises(ParameterError):
            s.simulate_sliding(x0, **bad)
    shown = s.simulate_sliding(x0, progress=True)
    np.testing.assert_array_equal(shown.x_o, quiet.x_o)
    assert shown.t_stop == quiet.t_stop
