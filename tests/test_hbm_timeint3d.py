"""Time integration of Friction3D contacts (newmark) against harmonic balance and the dNNM."""

import math
import warnings

import numpy as np
import pytest

import fesub
from fesub.errors import ConvergenceError, ModelError, StepWarning
from fesub.hbm import (
    ContactElement,
    Friction3D,
    HBSystem,
    Jenkins,
    decay_prediction,
    dnnm,
    harmonics,
    initial_from_hb,
    newmark,
    solve_at,
)
from fesub.hbm.ringdown import RingDown, decay_rates, ring_down

TH = 0.5
# two elements whose tangential motions span the plane (an elliptical orbit when the DOFs are
# out of phase); their normal rows are zero, so each keeps its normal load n0 (see
# test_forced_steady_state_against_harmonic_balance for why)
GA = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]])
GB = np.array([[math.cos(TH), math.sin(TH), 0.0], [-math.sin(TH), 0.0, math.cos(TH)],
               [0.0, 0.0, 0.0]])


def _three_dof(nh, nt, c=1e-3):
    els = [ContactElement(Friction3D(1e4, 5e4, 0.3, 20.0, nt=nt), GA, "a"),
           ContactElement(Friction3D(2e4, 5e4, 0.2, 30.0, nt=nt), GB, "b")]
    K = np.diag([4e4, 5e4, 6e4])
    return HBSystem(np.eye(3), c * K, K, nh, els, fex=np.array([1.0, 0.5, 0.0]), dof=0)


def test_harmonics_of_a_known_signal():
    """The last period's coefficients in the layout of Q against a signal built from them
    (two DOFs: mean, cos 1, sin 3; exact for a trigonometric polynomial sampled evenly:
    rounding, 1e-15)."""
    from fesub.hbm import TimeResult
    w, spp = 7.0, 64
    t = np.arange(1, 3 * spp + 1) * (2 * math.pi / w / spp)
    q = np.column_stack([0.3 + 2.0 * np.cos(w * t) - 0.5 * np.sin(3 * w * t),
                         -1.0 * np.sin(w * t) + 0.25 * np.cos(2 * w * t)])
    res = TimeResult(t, q, np.zeros((t.size, 0)), np.zeros((t.size, 0), int), spp, w)
    want = [0.3, 0.0, 2.0, 0.0, 0.0, -1.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0, -0.5, 0.0]
    np.testing.assert_allclose(harmonics(res, 3, constant=True), want, atol=1e-14)
    np.testing.assert_allclose(harmonics(res, 3), want[2:], atol=1e-14)


def test_one_direction_equals_exact_jenkins_integrator():
    """A 3D element sliding along one direction of its plane (at 30 deg) with a constant normal
    load is the Jenkins element: the Newton step of the 3D law reproduces the existing exact
    (affine-state) return mapping of Jenkins contacts to rounding."""
    th = math.radians(30)
    K = np.diag([4e4, 9e4])
    G3 = np.array([[math.cos(th), 0.0], [math.sin(th), 0.0], [0.0, 0.0]])
    s3 = HBSystem(np.eye(2), 1e-4 * K, K, 3,
                  [ContactElement(Friction3D(2e4, 5e4, 0.3, 10.0), G3, "c")], fex=[1.0, 0.3], dof=0)
    sj = HBSystem(np.eye(2), 1e-4 * K, K, 3,
                  [ContactElement(Jenkins(2e4, 0.3, 10.0), np.array([[1.0, 0.0]]), "c")],
                  fex=[1.0, 0.3], dof=0)
    kw = {"periods": 4, "steps_per_period": 128, "record_periods": 4}
    r3 = newmark(s3, 8.0, 190.0, **kw)
    rj = newmark(sj, 8.0, 190.0, **kw)
    assert np.count_nonzero(r3.state == 1) > 50             # it slips
    np.testing.assert_allclose(r3.q, rj.q, rtol=0, atol=1e-11 * np.abs(rj.q).max())
    ft = r3.fc[:, 0] * math.cos(th) + r3.fc[:, 1] * math.sin(th)
    np.testing.assert_allclose(ft, rj.fc[:, 0], atol=1e-9 * 3.0)
    # the force stays in the sliding direction and within the circle mu n0 = 3 N
    assert np.abs(r3.fc[:, 0] * math.sin(th) - r3.fc[:, 1] * math.cos(th)).max() < 1e-12
    assert np.hypot(r3.fc[:, 0], r3.fc[:, 1]).max() <= 3.0 * (1 + 1e-12)


@pytest.mark.slow
def test_forced_steady_state_against_harmonic_balance():
    """Forced steady states at two force levels (stick-slip of both elements, their orbits
    elliptical): the harmonics of the time integration's last period equal the harmonic
    balance's within 1e-4 of the largest coefficient.

    Same samples: the integrator's steps per period equal the AFT's nt (1024), so both apply
    the same discrete element law at the same instants; what differs is the harmonic
    truncation (Nh = 13: the coefficients change by 6e-6..7e-6 of the largest from Nh = 11,
    7e-5..1e-4 from 5 to 7) and the integrator's step (average acceleration, second order).
    Measured: 2.0e-5 and 1.5e-5 at 1024 steps. Step check: at 512 steps (the harmonic balance
    kept at 1024 samples) 1.2e-4 and 3.2e-4, as the law is then applied at other instants
    (its first-order error in the samples) besides the doubled step; with samples and steps
    halved together (c = 2e-4 K, Nh = 11) 6.5e-4, 2.3e-4, 5e-5 at 256, 512, 1024.
    Damping c = 1e-3 K (zeta ~ 0.1) lets the start transient (from the harmonic-balance state)
    settle within four periods (period to period change < 1e-6 after three).
    Normal rows are zero on purpose: the harmonic balance drops every force's mean (the
    decoupled scheme) while the integrator keeps it; with a moving normal load the friction
    forces get a mean, the structure a static offset and the contacts another normal load, so
    the two would solve different problems (test_forced_steady_state_with_moving_normal_loads:
    the constant term keeps those means)."""
    nh, nt = 13, 1024
    errs = {}
    for alpha in (5.0, 40.0):
        sy = _three_dof(nh, nt)
        w = 260.0
        Q = solve_at(sy, w, alpha)
        q0, v0, fi = initial_from_hb(sy, Q, w, nt=nt)
        for spp in ((nt, nt // 2) if alpha == 40.0 else (nt,)):
            res = newmark(sy, alpha, w, periods=4, steps_per_period=spp, q0=q0, v0=v0,
                          contact_init=fi)
            err = np.abs(harmonics(res, nh) - Q).max() / np.abs(Q).max()
            errs[(alpha, spp)] = err
        assert np.any(res.state == 1) and np.any(res.state == 0)     # stick-slip
    for alpha in (5.0, 40.0):
        assert errs[(alpha, nt)] < 1e-4, errs
    # the 1024-step difference is no floor of another kind: the coarser step moves it
    assert errs[(40.0, nt // 2)] > 2.5 * errs[(40.0, nt)], errs


@pytest.mark.slow
def test_forced_steady_state_with_moving_normal_loads():
    """The elements' normal loads move with the structure (normal rows not zero; at 40 N
    element a opens over part of the cycle): the harmonic balance with the constant term keeps
    the mean of every force (the friction forces get one when the normal load moves) and agrees
    with the time integration, mean included, within 1e-4 of the largest coefficient. The
    decoupled scheme (no constant term) drops those means and misses by 7e-4 (5 N) and 8 %
    (40 N, separation): the check fails there.

    Same samples as test_forced_steady_state_against_harmonic_balance (nt = steps = 1024,
    Nh = 13). Measured with the constant term: 2.8e-5 (5 N), 2.0e-5 (40 N); Nh = 11 gives
    1.9e-5 (40 N), so the harmonics have converged; 512 samples and steps give 7.2e-5 (40 N),
    the step's share, which shrinks with the step."""
    nh, nt, w = 13, 1024, 260.0
    ga = GA.copy()
    gb = GB.copy()
    ga[2] = [0.3, 0.5, 0.0]
    gb[2] = [0.0, 0.4, 0.6]
    K = np.diag([4e4, 5e4, 6e4])
    errs = {}
    for constant in (True, False):
        els = [ContactElement(Friction3D(1e4, 5e4, 0.3, 20.0, nt=nt), ga, "a"),
               ContactElement(Friction3D(2e4, 5e4, 0.2, 30.0, nt=nt), gb, "b")]
        sy = HBSystem(np.eye(3), 1e-3 * K, K, nh, els, fex=np.array([1.0, 0.5, 0.0]), dof=0,
                      constant=constant)
        for alpha in (5.0, 40.0):
            Q = solve_at(sy, w, alpha)
            q0, v0, fi = initial_from_hb(sy, Q, w, nt=nt)
            res = newmark(sy, alpha, w, periods=4, steps_per_period=nt, q0=q0, v0=v0,
                          contact_init=fi)
            ti = harmonics(res, nh, constant=True)
            hb = Q if constant else np.concatenate([np.zeros(3), Q])
            scale = np.abs(hb).max()
            # the decoupled scheme's mean is the static state (zero), not compared
            errs[(constant, alpha)] = np.abs(ti - hb)[0 if constant else 3:].max() / scale
            if alpha == 40.0:
                assert res.fc[:, 2].min() == 0.0 and res.fc[:, 2].max() > 0   # a opens
            assert np.ptp(res.fc[:, 5]) > 1.0                   # b's normal load moves (N)
    assert errs[(True, 5.0)] < 1e-4 and errs[(True, 40.0)] < 1e-4, errs
    assert errs[(False, 5.0)] > 3e-4 and errs[(False, 40.0)] > 1e-2, errs


@pytest.fixture(scope="module")
def one_dof_mode():
    """One DOF with a 3D element sliding at 60 deg in its plane (constant normal load), and its
    damped nonlinear mode (nh = 3) in macroslip (started there: the mode's Newton finds it from
    the stuck linear mode)."""
    th = math.radians(60)
    G = np.array([[math.cos(th)], [math.sin(th)], [0.0]])
    sy = HBSystem(np.eye(1), 0.4 * np.eye(1), 4e4 * np.eye(1), 3,
                  [ContactElement(Friction3D(2e3, 5e4, 0.3, 2.0, nt=256), G, "c")],
                  fex=[1.0], dof=0)
    return sy, dnnm(sy, (7e-4, 2e-3), 0, max_steps=100)


def test_ring_down_against_dnnm(one_dof_mode, tmp_path):
    """Free decay from the dNNM point at a = 1.5e-3 m (macroslip): frequency and damping ratio
    read half-swing by half-swing against the dNNM at the same half-swing.

    Measured: frequency -1.2e-4..-2.1e-4 (the average-acceleration period error at 256 steps
    per period, (2 pi / 256)^2 / 12 = 5e-5, plus the AFT's first-order one at nt = 256), damping
    ratio +0.7 %..+1.4 % as the amplitude falls (zeta 6.3e-3..8.0e-3; the readings average over
    one period a damping ratio that grows as the amplitude falls, and the dNNM's extra damping
    spreads over the harmonics). Asserted: 5e-4 and 2 %."""
    sy, d = one_dof_mode
    # friction dominates the damping: the linear damping ratio is c / (2 m w) = 1e-3
    assert d.zeta.min() > 4e-3 and d.stop_reason == "lam_range"
    point = int(np.searchsorted(d.a, 1.5e-3))
    rd = ring_down(sy, d, point, periods=12, steps_per_period=256)
    dw, dz = rd.compare(d, sy.n, sy.nh)
    assert np.isfinite(dz).sum() >= 15
    assert np.nanmax(np.abs(dw)) < 5e-4
    assert np.nanmax(np.abs(dz)) < 0.02
    assert rd.amp[-1] < 0.75 * rd.amp[0]                 # it did decay through a range
    back = fesub.load(rd.save(tmp_path / "rd"))
    assert isinstance(back, RingDown)
    np.testing.assert_array_equal(back.zeta, rd.zeta)
    s = rd.summary()
    assert s["results"]["w_first"]["unit"] == "rad/s"


def test_ring_down_against_the_decay_the_mode_predicts(one_dof_mode):
    """The same decay against the mode's energy balance between turning points
    (:meth:`RingDown.compare_prediction`): the contact, slipping at each turning point, holds no
    more energy at a larger amplitude, so the decay is faster than the mode's ``zeta w0`` by
    the contact's share of the stiffness; the +0.6 % to +1.3 % of the test above fall to
    -0.10 % to +0.06 % (the same at 512 steps per period and at nh = 7: the slow flow's own
    error, the amplitude falling 4 % per half-swing). Asserted: 0.2 %, and the plain
    comparison at least 0.4 % off at every reading (the prediction does the work)."""
    sy, d = one_dof_mode
    point = int(np.searchsorted(d.a, 1.5e-3))
    rd = ring_down(sy, d, point, periods=12, steps_per_period=256)
    _dw, dz_mode = rd.compare(d, sy.n, sy.nh)
    dw, dz = rd.compare_prediction(decay_prediction(sy, d, rd.weights))
    ok = np.isfinite(dz)
    assert ok.sum() >= 15 and np.array_equal(ok, np.isfinite(dz_mode))
    assert np.nanmax(np.abs(dw)) < 5e-4
    assert np.abs(dz[ok]).max() < 2e-3, dz
    assert dz_mode[ok].min() > 4e-3, dz_mode


def test_ring_down_with_hht_dissipation(one_dof_mode):
    """The same decay with hht = 0.3: its mode is resolved (w dt = 2 pi / 256), where HHT's
    damping ratio is 2.7e-7, so the readings stay within the tolerances above (5e-4, 2 %)."""
    sy, d = one_dof_mode
    point = int(np.searchsorted(d.a, 1.5e-3))
    rd = ring_down(sy, d, point, periods=12, steps_per_period=256, hht=0.3)
    plain = ring_down(sy, d, point, periods=3, steps_per_period=256)
    assert not np.array_equal(rd.x[:len(plain.x)], plain.x)          # it was applied
    dw, dz = rd.compare(d, sy.n, sy.nh)
    assert np.isfinite(dz).sum() >= 15
    assert np.nanmax(np.abs(dw)) < 5e-4
    assert np.nanmax(np.abs(dz)) < 0.02


def test_decay_rates_of_a_linear_decay():
    """A damped sine x = e^{-zeta w0 t} cos(wd t) (zeta 0.02) with an offset: frequency and
    damping ratio to the sampling error (extrema by a parabola through three samples)."""
    w0, z = 300.0, 0.02
    wd = w0 * math.sqrt(1 - z * z)
    t = np.arange(0, 40 * 2 * math.pi / wd, 2 * math.pi / wd / 512)
    x = 1e-3 * np.exp(-z * w0 * t) * np.cos(wd * t + 0.3) + 2e-5
    _tc, _amp, w, zeta = decay_rates(t, x)
    # a constant offset cancels in half-swings; the decrement between the extrema of a damped
    # cosine equals its envelope's (they are one half period apart): within 1e-5
    np.testing.assert_allclose(w, wd, rtol=1e-5)
    np.testing.assert_allclose(zeta * w / w0, z, rtol=2e-3)


def test_newmark_refuses_a_mix_of_3d_and_scalar_contacts():
    K = np.diag([4e4, 5e4, 6e4])
    cts = [ContactElement(Friction3D(1e4, 5e4, 0.3, 20.0), np.eye(3), "a"),
           ContactElement(Jenkins(1e4, 0.3, 20.0), np.array([[1.0, 0, 0]]), "b")]
    sy = HBSystem(np.eye(3), 1e-4 * K, K, 3, cts, fex=[1.0, 0, 0], dof=0)
    with pytest.raises(ModelError, match="mix"):
        newmark(sy, 1.0, 200.0, periods=1)


def test_open_contact_at_rest_stays_at_rest():
    """An open contact (gap: n0 < 0) carries no static force: the structure at rest, unloaded,
    stays at rest (the static normal load balanced by the decoupled scheme is max(n0, 0), so a
    gap's negative n0 pushes nothing); a closed one beside it likewise."""
    K = np.diag([4e4, 5e4, 6e4])
    cts = [ContactElement(Friction3D(1e4, 5e4, 0.3, -20.0), np.eye(3), "open"),
           ContactElement(Friction3D(1e4, 5e4, 0.3, 20.0), GB, "closed")]
    sy = HBSystem(np.eye(3), 1e-4 * K, K, 1, cts, fex=[1.0, 0, 0], dof=0)
    res = newmark(sy, 0.0, 200.0, periods=2, steps_per_period=32, record_periods=2)
    assert np.abs(res.q).max() == 0.0
    assert set(res.state[:, 0]) == {3} and set(res.state[:, 1]) == {0}
    np.testing.assert_array_equal(res.fc[:, 5], 20.0)


def _bouncing_mass():
    """A unit mass on springs 4e4 N/m, moving normal to a penalty contact (kn 4e8 N/m) across a
    gap of 2e-4 m: the contact's own frequency is 100 times the structure's. Its swing of 1e-3 m
    closes the gap once per period; nothing dissipates (no damping, no tangential motion), so the
    exact motion keeps its energy."""
    k, kn, gap = 4e4, 4e8, 2e-4
    K = np.diag([k, k, k])
    cts = [ContactElement(Friction3D(1e6, kn, 0.3, -kn * gap), np.eye(3), "gap")]
    sy = HBSystem(np.eye(3), 0.0 * K, K, 1, cts, fex=[1.0, 0, 0], dof=0)
    w = math.sqrt(k)
    v0 = np.array([0.0, 0.0, 1e-3 * w])

    def energy(res):
        # kinetic + strain + the penalty spring's, from the recorded states alone
        pen = np.maximum(-kn * gap + kn * res.q[:, 2], 0.0)
        return 0.5 * (res.v ** 2).sum(1) + 0.5 * k * (res.q ** 2).sum(1) + pen ** 2 / (2 * kn)

    return sy, w, v0, energy


def test_energy_made_by_an_unresolved_penalty_contact_is_reported():
    """At 256 steps per period the contact's mode has w_c dt = 2.45: a closure within a step
    can return more energy than it took (measured: the energy climbs to 1.084 times its start
    and falls to 0.30). The run warns, and its booked energy equals the largest growth of the
    energy computed from the recorded states (measured difference 2e-13 of it; asserted 1e-9,
    rounding over 768 steps)."""
    sy, w, v0, energy = _bouncing_mass()
    with pytest.warns(StepWarning, match="steps per period"):
        res = newmark(sy, 0.0, w, periods=3, steps_per_period=256, v0=v0, record_periods=3)
    e0 = 0.5 * v0 @ v0
    grown = energy(res).max() - e0
    assert res.energy_in == pytest.approx(e0, rel=1e-12)
    assert grown > 0.05 * e0
    assert res.energy_created == pytest.approx(grown, rel=1e-9)
    # w_c = sqrt(kn / m) for the unit mass, dt = 2 pi / (w 256)
    assert res.wc_dt == pytest.approx(math.sqrt(4e8) * 2 * math.pi / w / 256, rel=1e-12)


def test_a_run_made_of_created_energy_stops():
    """At 64 steps per period (w_c dt = 9.8) the energy grows without bound: the run stops
    with the remedy named instead of returning a blown-up motion."""
    sy, w, v0, _ = _bouncing_mass()
    with pytest.warns(StepWarning), pytest.raises(ConvergenceError, match="steps per period"):
        newmark(sy, 0.0, w, periods=3, steps_per_period=64, v0=v0)


def test_a_resolved_penalty_contact_creates_no_energy():
    """At 4096 steps per period (w_c dt = 0.15) the closures lose energy (measured: 1.1 % over
    two periods) and create none: no warning, and the energy from the recorded states never
    exceeds its start (asserted to 1e-9: rounding)."""
    sy, w, v0, energy = _bouncing_mass()
    with warnings.catch_warnings():
        warnings.simplefilter("error", StepWarning)
        res = newmark(sy, 0.0, w, periods=2, steps_per_period=4096, v0=v0, record_periods=2)
    e0 = 0.5 * v0 @ v0
    assert res.energy_created <= 1e-9 * e0
    assert energy(res).max() <= e0 * (1 + 1e-9)


def _hht_amplification(om, h):
    """One step of the Hilber-Hughes-Taylor rule (alpha = -h) on x'' + x = 0 at the step om
    (rad), from its textbook equations: ``a1 + (1 - h) x1 + h x0 = 0`` with Newmark's
    ``beta = (1 + h)^2 / 4`` and ``gamma = 1/2 + h``, as a matrix on (x, v, a)."""
    beta, gamma = (1 + h) ** 2 / 4, 0.5 + h
    lhs = np.array([[1.0, 0.0, -beta * om * om], [0.0, 1.0, -gamma * om], [1 - h, 0.0, 1.0]])
    rhs = np.array([[1.0, om, om * om * (0.5 - beta)], [0.0, 1.0, om * (1 - gamma)],
                    [-h, 0.0, 0.0]])
    return np.linalg.solve(lhs, rhs)


@pytest.mark.parametrize("h", [0.0, 0.1, 1.0 / 3.0])
def test_hht_free_vibration_follows_its_amplification_matrix(h):
    """A free linear oscillator (1000 rad/s, no contact) stepped at w dt = 7.85: the recorded
    states equal the HHT amplification matrix's powers on the start (to rounding, 1e-12 of the
    amplitude); with h > 0 the oscillation decays, by the matrix's spectral radius per step."""
    K = np.array([[1e6]])
    sy = HBSystem(np.eye(1), 0.0 * K, K, 1, [], fex=[1.0], dof=0)
    w_ex, spp = 100.0, 8
    om = 1000.0 * 2 * math.pi / w_ex / spp
    res = newmark(sy, 0.0, w_ex, periods=2, steps_per_period=spp, q0=np.array([1e-3]),
                  record_periods=2, hht=h)
    A = _hht_amplification(om, h)
    # the state (x, v / w, a / w^2) of the oscillator scaled to w = 1; at rest a0 = -w^2 x0
    x = np.array([1e-3, 0.0, -1e-3])
    exp = []
    for _ in range(2 * spp):
        x = A @ x
        exp.append(x[0])
    np.testing.assert_allclose(res.q[:, 0], exp, rtol=0, atol=1e-12 * 1e-3)
    if h > 0:
        assert np.abs(res.q[-4:, 0]).max() < 0.9 * 1e-3


def test_hht_keeps_an_unresolved_penalty_contact_from_creating_energy():
    """The bouncing mass at 256 steps per period (w_c dt = 2.45), which the average-acceleration
    rule drives 8 % above its start, stays below it with hht = 0.3 (measured: the energy's
    maximum is 0.99993 of the start): no warning."""
    sy, w, v0, energy = _bouncing_mass()
    with warnings.catch_warnings():
        warnings.simplefilter("error", StepWarning)
        res = newmark(sy, 0.0, w, periods=3, steps_per_period=256, v0=v0, record_periods=3,
                      hht=0.3)
    assert energy(res).max() <= 0.5 * v0 @ v0 * (1 + 1e-9)
