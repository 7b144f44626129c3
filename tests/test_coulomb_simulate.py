"""Stick-slip time integration against the closed form, against solve_ivp, and across backends.

The integrator starts from rest and knows nothing of the closed form: it propagates each
stick/slip segment with the modal solution and switches at the located events. In the continuous
regime its converged periodic orbit must reproduce the closed-form amplitudes (1e-5 relative) and
phases (0.01 degree) -- acceptance criterion 2. Observed agreement is ~1e-9 in amplitude and
~1e-5 degree in phase; the tolerances are the acceptance targets.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from fesub import _backend
from fesub.coulomb import CONTINUOUS, REGIME_NAMES, STICK_SLIP, STUCK, ChainModel, steady_state
from fesub.coulomb.integrate import SimResult, simulate_chain, simulate_chain_scipy
from fesub.coulomb.numeric_map import NumericRegimeMap, numeric_regime_map, regime_map_point

U2 = ChainModel.uniform(2)
U5 = ChainModel.uniform(5)
TWO = ChainModel([1.0, 0.5], [1.0, 0.5])

CONFIGS = {
    "2dof-wall-j1-l1": (U2, "wall:0", 0, 0.3),
    "2dof-wall-j2-l1": (U2, "wall:1", 0, 0.3),
    "2dof-masses-1-2": (TWO, "masses:0,1", 0, 0.15),
    "2dof-base-j1": (U2, "base:0", 0, 0.3),
    "5dof-wall-j1-l1": (U5, "wall:0", 0, 0.3),
    "5dof-wall-j3-l1": (U5, "wall:2", 0, 0.2),
    "5dof-masses-2-3": (U5, "masses:1,2", 0, 0.1),
    "5dof-base-j1": (U5, "base:0", 0, 0.3),
}


def _wrapdeg(a):
    return np.degrees(np.abs(np.angle(np.exp(1j * a))))


def _continuous_points(model, c, l, beta, n=14):
    """n frequencies spread over the continuous regime, at least 15 % inside both boundaries."""
    r = np.linspace(0.3, 2.5, 441) + 0.00123      # offset: no exact (stuck-)resonance
    ss = steady_state(model, c, l, r, beta, amplitude="monoharmonic")
    ok = (ss.regime[0] == CONTINUOUS) & (beta < 0.85 * ss.beta_lim) & (beta < 0.85 * ss.beta_stuck)
    rs = r[ok]
    return rs[np.round(np.linspace(0, rs.size - 1, n)).astype(int)]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_integrator_matches_closed_form_continuous(name):
    model, c, l, beta = CONFIGS[name]
    pts = _continuous_points(model, c, l, beta)
    ss = steady_state(model, c, l, pts, beta)
    good = 0
    unconverged = []
    for i, r in enumerate(pts):
        res = simulate_chain(model, c, l, r, beta, max_periods=40000)
        if not res.converged:
            # spec section 7 caveat 1: some points never settle from rest (combination
            # resonances); they must say so instead of returning numbers
            assert np.isnan(res.X).all() and np.isnan(res.Z)
            unconverged.append(float(r))
            continue
        good += 1
        assert res.regime == CONTINUOUS and res.stops_per_period == 0
        # acceptance: amplitudes 1e-5 relative, phases 0.01 degree
        assert_allclose(res.X, ss.X[0, i], rtol=1e-5)
        assert_allclose(res.Z, ss.Z[0, i], rtol=1e-5)
        assert _wrapdeg(res.phi - ss.phi[0, i]).max() < 0.01
        assert _wrapdeg(res.phi_c - ss.phi_c[0, i]) < 0.01
    assert good >= 10, f"only {good} of {pts.size} points converged; unconverged at r1 = {unconverged}"


@pytest.mark.parametrize("name", ["2dof-wall-j1-l1", "2dof-wall-j2-l1", "2dof-masses-1-2", "2dof-base-j1",
                                  "5dof-wall-j1-l1", "5dof-wall-j3-l1", "5dof-masses-2-3", "5dof-base-j1"])
def test_predicted_regime_matches_simulation(name):
    model, c, l, _ = CONFIGS[name]
    r = np.linspace(0.2, 2.5, 10) + 0.0123
    betas = np.array([0.1, 0.3, 0.6, 1.0, 1.5])
    ss = steady_state(model, c, l, r, betas, amplitude="monoharmonic")
    compared = 0
    for ib, b in enumerate(betas):
        for ir, rr in enumerate(r):
            bl, bs = ss.beta_lim[ir], ss.beta_stuck[ir]
            # away from the boundaries: 20 % relative margin to both
            if min(abs(b - bl) / max(bl, 1e-9), abs(b - bs) / max(bs, 1e-9)) < 0.2:
                continue
            res = simulate_chain(model, c, l, rr, b, max_periods=5000, amplitudes=False)
            if not res.converged and res.regime != STUCK:
                continue          # the last period of an unsettled run is not a regime
            compared += 1
            assert res.regime == ss.regime[ib, ir], (rr, b, REGIME_NAMES[res.regime])
    assert compared >= 25


def test_backends_agree(backend):
    # the NumPy twin and the compiled kernel run the same algorithm: same periods, events and
    # states up to rounding (1e-9 relative after hundreds of periods)
    for model, c, l, r, b in ((U2, "wall:0", 0, 0.45, 0.3), (U2, "wall:1", 0, 1.2, 1.0),
                              (TWO, "masses:0,1", 0, 1.1, 0.15), (U2, "base:0", 0, 1.3, 0.3)):
        res = simulate_chain(model, c, l, r, b, max_periods=400)
        with _backend.use("python"):
            ref = simulate_chain(model, c, l, r, b, max_periods=400)
        assert res.converged == ref.converged and res.regime == ref.regime
        assert res.stops_per_period == ref.stops_per_period
        assert abs(res.periods - ref.periods) <= 2
        assert_allclose(res.x, ref.x, rtol=1e-8, atol=1e-9)


def test_exact_segments_match_solve_ivp_in_stick_slip():
    # a second, independent integrator (DOP853, rtol 1e-10) on stick-slip and stuck-adjacent
    # points: same regime and stops, amplitudes to 1e-6 (set by DOP853's rtol and event location)
    for model, c, l, r, b in ((U2, "wall:0", 0, 0.45, 0.7), (U2, "base:0", 0, 0.45, 0.4)):
        a = simulate_chain(model, c, l, r, b)
        s = simulate_chain_scipy(model, c, l, r, b)
        assert a.converged and s.converged and a.regime == 1
        assert a.regime == s.regime and a.stops_per_period == s.stops_per_period
        assert_allclose(a.X, s.X, rtol=1e-6)
        # phase of the free mass only: the contact mass dwells at its maximum while stuck, so
        # the time of its maximum is not defined in stick-slip
        assert _wrapdeg(a.phi[1] - s.phi[1]) < 1e-3


def test_stick_slip_point_has_stops():
    res = simulate_chain(U2, "wall:1", 0, 1.2, 1.0)
    ss = steady_state(U2, "wall:1", 0, 1.2, 1.0)
    assert ss.regime[0, 0] != CONTINUOUS
    assert res.converged and res.stops_per_period >= 1
    assert REGIME_NAMES[res.regime] == "stick-slip"


def test_energy_balance_over_a_period():
    # conservation check: over one steady period the work of the load equals the friction
    # dissipation beta * (total relative sliding distance); trapezoid on the exact history
    model, c, l, r, b = U2, "wall:0", 0, 0.8, 0.3
    res = simulate_chain(model, c, l, r, b)
    tau = np.linspace(0, 2 * np.pi, 200001)
    from fesub.coulomb import period_history
    x = period_history(model, c, l, res, tau)
    v = np.gradient(x, tau, axis=1)
    w_load = np.trapezoid(np.cos(tau) * v[l], tau)
    slide = np.trapezoid(np.abs(v[0]), tau)
    # both integrals by 2e5-point quadrature: 1e-6 relative
    assert_allclose(w_load, b * slide, rtol=1e-6)


def test_unsettled_point_reports_not_converged():
    # spec caveat 1: the 2DOF unit chain at r1 = 0.5, beta = 0.3 does not settle
    res = simulate_chain(U2, "wall:0", 0, 0.5, 0.3, max_periods=3000)
    assert not res.converged
    assert np.isnan(res.X).all() and np.isnan(res.Z) and np.isnan(res.phi_c)


def test_regime_map_point_is_pure_and_picklable():
    import pickle

    params = {"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:1", "load": 0, "mu": 1.0}
    d = regime_map_point(params, 0.8, 0.3)
    d2 = pickle.loads(pickle.dumps(d))
    assert d2 == d
    assert d.regime == d.analytic_regime == "continuous" and d.converged
    assert regime_map_point(params, 0.8, 0.3) == d      # deterministic


def test_numeric_regime_map_small(tmp_path):
    params = {"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:0"}
    mp = numeric_regime_map(params, [0.45, 1.3, 2.2], [0.2, 1.2], progress=False)
    assert mp.regime.shape == (2, 3)
    ss = steady_state(U2, "wall:0", 0, [0.45, 1.3, 2.2], [0.2, 1.2])
    ok = mp.converged | (mp.regime == STUCK)
    assert np.array_equal(mp.regime[ok], ss.regime[ok])
    assert mp.status == "complete"
    back = NumericRegimeMap.load(mp.save(tmp_path / "map"))
    assert (tmp_path / "map.nc").exists()
    assert np.array_equal(back.regime, mp.regime) and np.array_equal(back.Z, mp.Z, equal_nan=True)


def test_static_friction_ratio_mu():
    # mu enters beta_lim through max(S, mu sigma) and the stuck test |Lambda| <= mu beta: the
    # integrator (which only sees mu in its stick/slip switching) must follow both predictions
    for mu, b, expected in ((1.0, 0.5, "continuous"), (1.2, 0.5, "stick-slip"), (1.5, 0.7, "stuck")):
        ss = steady_state(U2, "wall:0", 0, 0.7, b, mu=mu)
        res = simulate_chain(U2, "wall:0", 0, 0.7, b, mu=mu)
        assert REGIME_NAMES[ss.regime[0, 0]] == expected
        assert res.converged and res.regime_name == expected


def test_sim_result_save(tmp_path):
    res = simulate_chain(U2, "wall:0", 0, 0.45, 0.3)
    back = SimResult.load(res.save(tmp_path / "sim"))
    assert np.array_equal(back.x, res.x) and np.array_equal(back.X, res.X)
    assert back.regime_name == "continuous" and back.converged is True


def test_started_on_the_analytic_orbit_stays_there():
    # the closed-form orbit is a fixed point of the integrator's Poincare map. In the
    # integrator's time the analytic solution reads x(tau) = x_an(tau - phi_c); start on it
    # (velocity by a central difference, error ~h^2 = 1e-10) and run 30 periods: the state
    # after each period returns to the start and the amplitudes match to 1e-8
    from fesub.coulomb import time_response

    for model, c, r, b in ((U5, "wall:0", 0.9, 0.2), (TWO, "masses:0,1", 1.1, 0.15)):
        phi_c = float(steady_state(model, c, 0, r, b, amplitude="monoharmonic").phi_c[0, 0])
        h = 1e-5
        t0 = np.mod(-phi_c, 2 * np.pi)
        _, x, _ = time_response(model, c, 0, r, b, tau=np.array([t0 - h, t0, t0 + h]))
        x0, v0 = x[:, 1], (x[:, 2] - x[:, 0]) / (2 * h)
        res = simulate_chain(model, c, 0, r, b, x0=x0, v0=v0, max_periods=30, min_periods=30,
                       keep_unconverged=True)
        ss = steady_state(model, c, 0, r, b)
        assert res.regime == CONTINUOUS
        assert_allclose(res.state["x"], x0, atol=1e-8)
        assert_allclose(res.X, ss.X[0, 0], rtol=1e-8)


def test_antiresonance_stuck_state_caveat3():
    # spec section 7, caveat 3: 2DOF unit chain, j = l = 1, r1 = 1 (the antiresonance of the
    # contact mass: m_2 alone on k_2 has r1 = 1), beta = 0.3 < 1/mu. The j = l rule of Eq. 79c
    # says "sliding" (beta* = 1) and the continuous regime is gone (V_1 = 0, beta_lim ~ 0), so the
    # closed form predicts stick-slip; the integrator instead finds m_1 held at an offset while
    # m_2 rings at its own frequency and cancels the load.
    from fesub.errors import ParameterError

    mu_beta = 0.3
    # at r1 = 1 exactly the stuck chain's modal propagator is singular: refused, not a number
    with pytest.raises(ParameterError, match="stuck chain"):
        simulate_chain(U2, "wall:0", 0, 1.0, 0.3)
    for r1 in (1 - 1e-8, 1 + 1e-8):
        ss = steady_state(U2, "wall:0", 0, r1, 0.3)
        assert ss.regime[0, 0] == STICK_SLIP
        assert abs(ss.beta_stuck[0] - 1.0) < 1e-12 and ss.beta_lim[0] < 1e-7
        res = simulate_chain(U2, "wall:0", 0, r1, 0.3, max_periods=3000)
        # stuck for the whole last period, but never settles: with m_1 held, m_2 vibrates at
        # 1/r1 != 1 without damping, so the Poincare state keeps turning -> converged = False and
        # no numbers
        assert res.regime == STUCK and not res.converged and res.periods == 3000
        assert (res.stops_per_period, res.slip_starts_per_period, res.reversals_per_period) == (0, 0, 0)
        assert np.isnan(res.X).all() and np.isnan(res.Z)
        res = simulate_chain(U2, "wall:0", 0, r1, 0.3, max_periods=3000, keep_unconverged=True)
        tau, x = res.tau, res.x
        c0 = x[0, 0]
        assert np.ptp(x[0]) < 1e-12 and 0 < abs(c0) < mu_beta     # m_1 stuck at an offset
        # independent check that this is a motion of Eq. 6: with x_1 = c0 fixed, m_2 obeys
        # r1^2 x_2'' + x_2 = c0, i.e. x_2 - c0 is a free vibration at frequency 1/r1. A least-squares
        # fit on that basis leaves rounding only (measured 1e-15)
        A = np.column_stack([np.cos(tau / r1), np.sin(tau / r1), np.ones_like(tau)])
        coef = np.linalg.lstsq(A, x[1], rcond=None)[0]
        assert np.abs(A @ coef - x[1]).max() < 1e-12 and abs(coef[2] - c0) < 1e-12
        # ... and the wall can hold m_1: Lambda = cos(tau) - (K x)_1 = cos(tau) - 2 c0 + x_2 stays
        # within mu beta (measured max 0.270), i.e. m_2's vibration cancels the load to within
        # mu beta + |c0|
        lam = np.cos(tau) - 2 * x[0] + x[1]
        assert np.abs(lam).max() <= mu_beta
        assert abs(np.hypot(coef[0], coef[1]) - 1.0) <= mu_beta + abs(c0)
    # non-uniqueness: any offset |c| < mu beta with x_2 = c - cos(tau) is a stuck motion; started
    # there, the integrator keeps it (200 periods; the 1e-8 detuning turns m_2's phase by 1.3e-5
    # rad, hence 1e-4 on the amplitudes)
    for c in (0.1, -0.25):
        res = simulate_chain(U2, "wall:0", 0, 1 + 1e-8, 0.3, x0=[c, c - 1.0], v0=[0.0, 0.0], max_periods=200,
                       keep_unconverged=True)
        assert res.regime == STUCK and not res.converged
        assert res.state["x"][0] == pytest.approx(c, abs=1e-12)
        assert_allclose(res.X, [abs(c), 1 + abs(c)], atol=1e-4)
