"""Constant (0th) harmonic term, static preload and the scalar contact laws of fesub.hbm.laws
(unilateral penalty contact, tanh-regularised Coulomb friction, user functions), against
independent references: closed forms, central finite differences, AFT sample-count convergence
and long time integration (scipy's DOP853 at tight tolerances)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub.errors import ModelError, ParameterError
from fesub.hbm.contact import Jenkins, StickSlipSeparation
from fesub.hbm.fourier import aft_matrix, aft_projection, basis, global_index, harmonic_amplitudes
from fesub.hbm.system import ContactElement, HBSystem

RNG = np.random.default_rng(7)


# ---------------------------------------------------------------- harmonic basis
def test_basis_with_constant_term():
    nh = 4
    tau = np.linspace(0.0, 6.0, 13)
    for d in (0, 1, 2):
        H0 = basis(nh, tau, d, constant=True)
        np.testing.assert_array_equal(H0[:, 1:], basis(nh, tau, d))
        np.testing.assert_array_equal(H0[:, 0], 1.0 if d == 0 else 0.0)
    # sampling then projecting a trigonometric polynomial of degree nh returns its coefficients,
    # mean included (the trapezoidal rule is exact below degree nt - nh; 1e-13: rounding of
    # sums of nt = 16 terms of O(1))
    X = RNG.normal(size=2 * nh + 1)
    for nt in (2 * nh + 2, 16):
        x = aft_matrix(nh, nt, constant=True) @ X
        np.testing.assert_allclose(aft_projection(nh, nt, constant=True) @ x, X, atol=1e-13)
    # without the constant term the projection is the former (2/nt) E^T
    E = aft_matrix(nh, 16)
    np.testing.assert_allclose(aft_projection(nh, 16), (2.0 / 16) * E.T, rtol=1e-15)
    assert global_index(3, nh, 1, 0, "c", constant=True) == 1
    assert global_index(3, nh, 1, 1, "s", constant=True) == 2 * 3 + 1
    with pytest.raises(ParameterError):
        global_index(3, nh, 1, 0, "c")
    Q = np.arange(3.0 * (2 * nh + 1))
    A = harmonic_amplitudes(Q, 3, nh, 2, constant=True)
    assert A[0] == 2.0 and A[1] == pytest.approx(math.hypot(5.0, 8.0))


# ---------------------------------------------------------------- system with the constant term
def _two_dof(nh, **kw):
    M = np.diag([1.0, 0.5])
    K = np.array([[2.0, -1.0], [-1.0, 1.5]])
    return HBSystem(M, 0.01 * K, K, nh, [], fex=np.array([1.0, 0.3]), dof=1, **kw)


def test_linear_system_with_constant_term_and_preload():
    """Linear structure: the mean is K^-1 f_s and the harmonics are those of the system
    without the constant term (the complex FRF), exactly."""
    nh, w = 3, 1.3
    fs = np.array([0.4, -0.2])
    on = _two_dof(nh, constant=True, fstatic=fs)
    off = _two_dof(nh)
    assert on.N == off.N + 2 and on.constant and not off.constant
    Q1 = on.linear_response(w, 0.7)
    Q0 = off.linear_response(w, 0.7)
    # 1e-13: two 8x8 / 6x6 solves of O(1) well-conditioned systems
    np.testing.assert_allclose(Q1[:2], np.linalg.solve(on.K, fs), rtol=1e-13)
    np.testing.assert_allclose(Q1[2:], Q0, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(on.residual(Q1, w, 0.7), 0.0, atol=1e-13)
    assert on.amplitude(Q1) == pytest.approx(off.amplitude(Q0), rel=1e-13)
    assert on.mean(Q1) == pytest.approx(np.linalg.solve(on.K, fs)[1], rel=1e-13)
    # derivatives of D in w: the mean block is K, constant in w (central differences of a
    # quadratic: exact up to rounding ~1e-16 / h)
    h = 1e-5
    np.testing.assert_allclose(on.D(w, 1), (on.D(w + h) - on.D(w - h)) / (2 * h), atol=1e-9)
    np.testing.assert_allclose(on.D(w, 2), (on.D(w + h, 1) - on.D(w - h, 1)) / (2 * h),
                               atol=1e-9)
    np.testing.assert_allclose(on.D_xi(w)[2:, 2:], off.D_xi(w), rtol=0)


def test_friction_elements_keep_the_decoupled_scheme():
    j = ContactElement(Jenkins(1.0, 0.1, 1.0), np.eye(1))
    s = ContactElement(StickSlipSeparation(1.0, 2.0, 0.3, 0.5), np.eye(2))
    # the friction elements have no constant term: default off, asking for it is an error
    assert not HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j]).constant
    assert not HBSystem(np.eye(2), np.eye(2), np.eye(2), 3, [s]).constant
    with pytest.raises(ModelError):
        HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j], constant=True)
    with pytest.raises(ParameterError):
        HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j], constant="yes")
    with pytest.raises(ParameterError):
        HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j], fstatic=[1.0, 2.0])


# ---------------------------------------------------------------- the scalar laws
from fesub.hbm.laws import RegularisedCoulomb, UnilateralContact, UserLaw  # noqa: E402

NH = 3
W = 1.7  # rad/s


def _smooth_user():
    """A smooth asymmetric law with every derivative given: f = a u^2 + b u v + c tanh(v)."""
    a, b, c = 40.0, 3.0, 0.2
    return UserLaw(lambda u, v: a * u * u + b * u * v + c * np.tanh(v),
                   lambda u, v: 2 * a * u + b * v,
                   lambda u, v: b * u + c / np.cosh(v) ** 2,
                   lambda u, v: (np.full_like(u, 2 * a), np.full_like(u, b),
                                 -2 * c * np.tanh(v) / np.cosh(v) ** 2))


def _laws():
    """(name, law, scale of p (m), relative FD step, smooth)."""
    with pytest.warns(UserWarning, match="finite differences"):
        fd_user = UserLaw(lambda u, v: 40.0 * u * u + 3.0 * u * v + 0.2 * np.tanh(v))
    return [("unilateral", UnilateralContact(3.0e3, 2e-3), 5e-3, 1e-7, False),
            ("tanh", RegularisedCoulomb(0.3, 20.0, 2e-3), 5e-3, 1e-5, True),
            ("user", _smooth_user(), 5e-2, 1e-5, True),
            ("user_fd", fd_user, 5e-2, 1e-5, True),
            ("unilateral_event", UnilateralContact(3.0e3, 2e-3, method="event"), 5e-3, 1e-6,
             True)]


def _coefficients(scale, constant, nh=NH):
    p = scale * RNG.normal(size=2 * nh + (1 if constant else 0)) / np.arange(1, 2 * nh + 2)[
        :2 * nh + (1 if constant else 0)]
    return p


def _fd(fun, p, h):
    """Central differences of ``fun`` (array valued) in every entry of ``p``."""
    cols = []
    for i in range(p.size):
        e = np.zeros(p.size)
        e[i] = h
        cols.append((fun(p + e) - fun(p - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("constant", [True, False])
@pytest.mark.parametrize("case", range(5))
def test_jacobian_hessian_and_dw_vs_central_differences(case, constant):
    """Analytic harmonic stiffness, Hessian and dF/dw of every law vs central differences.

    Steps: the smooth laws use h = 1e-5 |p| (truncation h^2 f'''/6 ~ 1e-10 and rounding
    eps/h ~ 1e-11, relative); the penalty law's sampled map is piecewise linear in p (its slope
    changes only when a sample crosses the gap), so a tiny h = 1e-7 |p| keeps every sample on its
    side and the differences are exact up to rounding eps/h ~ 2e-9; its exact (event)
    evaluation is C1 in p (K continuous), h = 1e-6 |p| (measured 2e-10 on K, 2e-9 on the
    Hessian). Tolerance 1e-6 relative to
    the largest entry; the user law with finite-difference derivatives inside has errors
    ~1e-10 (first) and ~6e-7 (second, differences of differences: checked to 1e-5)."""
    name, law, scale, rel, smooth = _laws()[case]
    p = _coefficients(scale, constant)
    off = 0.0 if constant else 1e-3
    h = rel * np.abs(p).max()

    def ev(q, **kw):
        return law.evaluate(q, NH, constant=constant, offset=off, w=W, **kw)

    r = ev(p, hessian=True, lam=np.arange(1.0, p.size + 1))
    K_fd = _fd(lambda q: ev(q).F, p, h)
    np.testing.assert_allclose(r.K, K_fd, atol=1e-6 * np.abs(K_fd).max())
    H_fd = _fd(lambda q: ev(q).K, p, h)
    tol_h = 1e-5 if name == "user_fd" else 1e-6
    scale_h = max(np.abs(H_fd).max(), 1.0 if smooth else 0.0)
    np.testing.assert_allclose(r.hess, H_fd, atol=tol_h * scale_h)
    np.testing.assert_allclose(r.hess_lam, np.einsum("i,iab->ab", np.arange(1.0, p.size + 1),
                                                     r.hess), atol=1e-12 * scale_h)
    for i in range(p.size):   # each hess[i] is symmetric
        np.testing.assert_allclose(r.hess[i], r.hess[i].T, atol=1e-12 * scale_h)
    if law.velocity_dependent:
        hw = 1e-5 * W
        Fw = (law.evaluate(p, NH, constant=constant, offset=off, w=W + hw).F
              - law.evaluate(p, NH, constant=constant, offset=off, w=W - hw).F) / (2 * hw)
        np.testing.assert_allclose(r.F_w, Fw, atol=1e-6 * np.abs(Fw).max())
    else:
        assert r.F_w is None


def test_penalty_aft_converges_as_nt_squared_to_the_closed_form():
    """u = a + b cos(tau): contact for |tau| < theta, theta = acos((g - a)/b), and
    F^0 = (k/pi)((a - g) theta + b sin theta),
    F^c1 = (k/pi)(2 (a - g) sin theta + b (theta + sin theta cos theta)),
    F^c2 = (k/pi)((a - g) sin 2 theta + b (sin theta + sin 3 theta / 3)).
    The kink makes the trapezoidal error O(nt^-2): measured below 4 / nt^2 relative for
    nt = 64..4096 (it oscillates with where the kink falls between samples), so below 4e-6
    at the default nt = 1024."""
    kp, g, a, b = 3.0, 0.02, 0.01, 0.05
    th = math.acos((g - a) / b)
    exact = kp / math.pi * np.array([(a - g) * th + b * math.sin(th),
                                     2 * (a - g) * math.sin(th) + b * (th + math.sin(th)
                                                                       * math.cos(th)),
                                     (a - g) * math.sin(2 * th) + b * (math.sin(th)
                                                                       + math.sin(3 * th) / 3)])
    el = UnilateralContact(kp, g)
    p = np.zeros(2 * NH + 1)
    p[:2] = a, b
    errs = {}
    for nt in (64, 128, 256, 512, 1024, 2048, 4096):
        F = el.evaluate(p, NH, constant=True, nt=nt).F
        errs[nt] = np.abs(F[[0, 1, 3]] - exact).max() / np.abs(exact).max()
        assert errs[nt] <= 4.0 / nt ** 2, errs
    assert max(errs[2048], errs[4096]) < errs[64] / 300   # the trend: 64x more samples
    F = el.evaluate(p, NH, constant=True).F
    assert np.abs(F[[0, 1, 3]] - exact).max() / np.abs(exact).max() < 4e-6


def test_penalty_event_method_is_exact_and_the_aft_converges_to_it():
    """The exact integration between the crossings reproduces the closed form of a one-harmonic
    motion to rounding (1e-13), and on a motion with 3 harmonics, two contact intervals and a
    static offset, the AFT converges to it: forces as nt^-2 (measured 6/nt^2 to 12/nt^2 relative
    for nt = 256..16384, checked below 16/nt^2), the stiffness as nt^-1 (its integrand jumps at
    the crossings: measured 1.3/nt to 3.5/nt, checked below 4/nt)."""
    kp, g, a, b = 3.0, 0.02, 0.01, 0.05
    th = math.acos((g - a) / b)
    exact = kp / math.pi * np.array([(a - g) * th + b * math.sin(th),
                                     2 * (a - g) * math.sin(th) + b * (th + math.sin(th)
                                                                       * math.cos(th))])
    p = np.zeros(2 * NH + 1)
    p[:2] = a, b
    F = UnilateralContact(kp, g, method="event").evaluate(p, NH, constant=True).F
    np.testing.assert_allclose(F[:2], exact, rtol=1e-13)
    el = UnilateralContact(3.0e3, 2e-3)
    p = np.array([1e-4, 1e-3, 2e-4, 4e-3, -5e-4, 3e-4, 1e-4])   # cos 2 tau dominates
    ev = el.evaluate(p, NH, constant=True, method="event")
    assert ev.tau.size == 4                      # two contact intervals
    for nt in (256, 1024, 4096):
        r = el.evaluate(p, NH, constant=True, nt=nt)
        assert np.abs(r.F - ev.F).max() / np.abs(ev.F).max() < 16.0 / nt ** 2
        assert np.abs(r.K - ev.K).max() / np.abs(ev.K).max() < 4.0 / nt


def test_tanh_aft_converges_spectrally():
    """Smooth law: the error against 2^16 samples falls faster than any power once the samples
    resolve the tanh switch (v_eps = 1.6 % of the velocity amplitude here); the default
    nt = 1024 is within 1e-8 relative (measured 4e-11)."""
    el = RegularisedCoulomb(0.3, 2.0, 0.01)
    p = np.array([0.0, 0.5, 0.2, 0.05, 0.01, 0.0, 0.02])
    ref = el.evaluate(p, NH, constant=True, w=1.0, nt=2 ** 16).F
    err = [np.abs(el.evaluate(p, NH, constant=True, w=1.0, nt=nt).F - ref).max()
           / np.abs(ref).max() for nt in (128, 256, 512, 1024)]
    assert err[3] < 1e-8 and err[3] < 1e-4 * err[1] and err[0] > 1e-4, err
    with pytest.raises(ParameterError):
        el.evaluate(p, NH, constant=True, w=1.0, nt=4 * NH + 1)   # below 4 nh + 2
    with pytest.raises(ParameterError):
        el.evaluate(p, NH, constant=True)                         # velocity law without w


def test_constant_harmonic_of_asymmetric_and_symmetric_laws():
    """Half-wave symmetric motion (odd harmonics only, zero mean): an odd law gives a zero mean
    force (to rounding), an asymmetric one a nonzero mean; the system default follows."""
    p = np.zeros(2 * NH + 1)
    p[1:3] = 4e-3, 1e-3        # harmonic 1
    p[5:7] = 5e-4, -2e-4       # harmonic 3
    pen = UnilateralContact(3.0e3, 1e-3).evaluate(p, NH, constant=True)
    tanh = RegularisedCoulomb(0.3, 20.0, 2e-3).evaluate(p, NH, constant=True, w=W)
    user = _smooth_user().evaluate(p, NH, constant=True, w=W)
    assert pen.F[0] > 1e-2 * np.abs(pen.F).max()
    assert abs(user.F[0]) > 1e-2 * np.abs(user.F).max()
    assert abs(tanh.F[0]) < 1e-14 * np.abs(tanh.F).max()
    assert np.abs(tanh.F[[3, 4]]).max() < 1e-14 * np.abs(tanh.F).max()   # no even harmonic
    ce = [ContactElement(UnilateralContact(3.0e3, 1e-3), np.eye(1))]
    assert HBSystem(np.eye(1), np.eye(1), np.eye(1), NH, ce).constant
    ct = [ContactElement(RegularisedCoulomb(0.3, 20.0, 2e-3), np.eye(1))]
    assert not HBSystem(np.eye(1), np.eye(1), np.eye(1), NH, ct).constant


def test_user_law_checks_its_function():
    with pytest.raises(ParameterError):
        UserLaw(3.0)
    bad = UserLaw(lambda u, v: np.ones(3), lambda u, v: u, velocity_dependent=False)
    with pytest.raises(ParameterError, match="shape"):
        bad.evaluate(np.ones(2 * NH), NH)
    nan = UserLaw(lambda u, v: u / 0.0, lambda u, v: u, velocity_dependent=False)
    with np.errstate(divide="ignore", invalid="ignore"), pytest.raises(ParameterError):
        nan.evaluate(np.ones(2 * NH), NH)
    with pytest.raises(ParameterError):
        UnilateralContact(-1.0, 0.0)
    with pytest.raises(ParameterError):
        UnilateralContact(1.0, math.nan)


# ---------------------------------------------------------------- against time integration
from scipy.integrate import solve_ivp  # noqa: E402



def _newton(sy, w, alpha, Q, tol=1e-12, max_iter=60):
    """Damped Newton on the system's own residual and Jacobian; None when it stalls."""
    R, J, _, _ = sy.jacobian(Q, w, alpha)
    scale = alpha + np.abs(sy.fs).max()
    for _ in range(max_iter):
        if np.abs(R).max() <= tol * scale:
            return Q
        dQ = np.linalg.solve(J, -R)
        step = 1.0
        while True:
            Rn, Jn, _, _ = sy.jacobian(Q + step * dQ, w, alpha)
            if np.abs(Rn).max() < np.abs(R).max() or step < 1e-6:
                break
            step *= 0.5
        Q, R, J = Q + step * dQ, Rn, Jn
    return None


def solve_at(sy, w, alpha):
    """Periodic response at ``w`` (rad/s), ``alpha`` (N) from the stuck-linear response, else
    stepping the force up from 1 % (where the response is the stuck-linear one); the tests
    exercise HBSystem itself, whatever strategy :func:`fesub.hbm.solve_at` adopts."""
    Q = _newton(sy, w, alpha, sy.linear_response(w, alpha))
    if Q is None:
        Q = sy.linear_response(w, 0.01 * alpha)
        for a in np.geomspace(0.01 * alpha, alpha, 25):
            Q = _newton(sy, w, a, Q)
            assert Q is not None, f"no solution at w={w} rad/s, alpha={a} N"
    return Q


# preloaded unilateral oscillator: m x'' + c x' + k x + kp max(x - g, 0) = fs + F cos(w t)
OSC = dict(m=1.0, c=0.2, k=1.0, kp=2.0, gap=0.05, fs=0.3, F=0.3)   # kg, N s/m, N/m, N/m, m, N, N
NH_OSC = 10


def _periodic_reference(force, w, x0, nh, periods=60, nfft=4096):
    """Harmonic coefficients ``[mean, c1, s1, ..., cnh, snh]`` (m) of the steady response of
    ``m x'' + c x' + k x + force(x, v) = fs + F cos(w t)`` by DOP853 (rtol 1e-10) over
    ``periods`` periods from rest at ``x0``, read by FFT on the last period; also the change of
    the coefficients over the last period (m: the transient left) and the extremes of x (m)."""
    o = OSC

    def rhs(t, y):
        return [y[1], (o["fs"] + o["F"] * math.cos(w * t) - o["c"] * y[1] - o["k"] * y[0]
                       - force(y[0], y[1])) / o["m"]]

    T = 2 * math.pi / w
    sol = solve_ivp(rhs, (0.0, periods * T), [x0, 0.0], method="DOP853", rtol=1e-10,
                    atol=1e-12, dense_output=True)
    assert sol.success
    out = []
    for p in (periods - 2, periods - 1):
        x = sol.sol(p * T + T * np.arange(nfft) / nfft)[0]
        X = np.fft.rfft(x) / nfft
        out.append(np.concatenate([[X[0].real]] + [[2 * X[h].real, -2 * X[h].imag]
                                                   for h in range(1, nh + 1)]))
    return out[1], np.abs(out[1] - out[0]).max(), (x.min(), x.max())


def _amplitudes(Q):
    """[|mean|, A_1, ..., A_nh] (m) of ``[mean, c1, s1, ...]``."""
    return np.concatenate([[abs(Q[0])], np.hypot(Q[1::2], Q[2::2])])


def _oscillator(law, constant=None):
    o = OSC
    return HBSystem(o["m"] * np.eye(1), o["c"] * np.eye(1), o["k"] * np.eye(1), NH_OSC,
                    [ContactElement(law, np.eye(1), "stop")], fstatic=[o["fs"]],
                    constant=constant)


def _mismatch(sy, Q, ref):
    """max_k |A_k(HB) - A_k(ref)| / max_k A_k(ref), k = 0 (mean) .. nh."""
    full = Q if sy.constant else np.concatenate([[sy.q_static[0]], Q])
    return np.abs(_amplitudes(full) - _amplitudes(ref)).max() / _amplitudes(ref).max()


@pytest.mark.parametrize("w", [0.6, 1.0, 1.2, 1.7, 2.0])
def test_preloaded_unilateral_contact_vs_time_integration(w):
    """The preload pushes the mass into the stop (static x = 0.133 m > g = 0.05 m); the forcing
    opens and closes the contact every period. Harmonic balance with the constant term agrees
    with the time integration to 1e-4 relative (measured 1.4e-5 at 0.6 rad/s, 2e-7 to 2e-6 at
    1-2 rad/s: truncation at 10 harmonics of a response with a kink and the AFT's ~4e-6; the
    integrator and the FFT of its dense output are good to ~1e-9). Without the constant term
    (static state solved apart, mean force of the dynamics discarded) the mismatch is 7 % to
    45 % (the mean and the fundamental move); checked above 5 %."""
    o = OSC
    law = UnilateralContact(o["kp"], o["gap"])
    x_static = (o["fs"] + o["kp"] * o["gap"]) / (o["k"] + o["kp"])
    ref, drift, (xmin, xmax) = _periodic_reference(
        lambda x, v: o["kp"] * max(x - o["gap"], 0.0), w, x_static, NH_OSC)
    assert drift < 1e-8                          # steady: the transient is gone
    assert xmin < o["gap"] < xmax                # the contact opens and closes
    on = _oscillator(law)
    assert on.constant                           # default for the asymmetric law
    Q = solve_at(on, w, o["F"])
    assert _mismatch(on, Q, ref) < 1e-4
    off = _oscillator(law, constant=False)
    assert off.q_static[0] == pytest.approx(x_static, rel=1e-12)
    assert _mismatch(off, solve_at(off, w, o["F"]), ref) > 0.05


def test_user_function_reproduces_the_penalty_element():
    """The penalty law given as a Python function: with its derivative, the same numbers as the
    built-in element (same samples, same arithmetic: 1e-12); without it (central differences in
    the Jacobian only), Newton reaches the same solution to its tolerance (1e-9 relative)."""
    o = OSC
    kp, g = o["kp"], o["gap"]
    built_in = _oscillator(UnilateralContact(kp, g))
    exact = UserLaw(lambda u, v: kp * np.maximum(u - g, 0.0),
                    lambda u, v: np.where(u > g, kp, 0.0), velocity_dependent=False, nt=1024)
    with pytest.warns(UserWarning, match="df/du"):
        fd = UserLaw(lambda u, v: kp * np.maximum(u - g, 0.0), velocity_dependent=False,
                     nt=1024)
    w = 1.0
    Q = solve_at(built_in, w, o["F"])
    for law, tol in ((exact, 1e-12), (fd, 1e-9)):
        sy = _oscillator(law)
        assert sy.constant
        np.testing.assert_allclose(solve_at(sy, w, o["F"]), Q, atol=tol * np.abs(Q).max())


def test_regularised_friction_oscillator_vs_time_integration():
    """1-DOF oscillator on tanh friction (odd law: no constant term by default, and none needed
    under a symmetric forcing; the preload only shifts the mean statically), v_eps = 0.2 m/s
    against a velocity amplitude of 0.7 m/s. The HB error against DOP853 falls with the number
    of harmonics (measured 1.3e-4, 2.3e-5, 4.1e-6 at 5, 7, 9 harmonics: truncation, the AFT
    being spectrally exact here): checked to fall by 10x and end below 1e-5. R_w carries dF/dw
    (checked by central differences in w, step 1e-5 w: 1e-6 relative)."""
    o = OSC
    w, fs, v_eps = 0.9, 0.1, 0.2                   # rad/s, mu N (N), m/s
    errs = []
    for nh in (5, 9):
        sy = HBSystem(o["m"] * np.eye(1), o["c"] * np.eye(1), o["k"] * np.eye(1), nh,
                      [ContactElement(RegularisedCoulomb(0.5, 0.2, v_eps), np.eye(1))],
                      fstatic=[o["fs"]])
        assert not sy.constant
        Q = solve_at(sy, w, o["F"])
        ref, drift, _ = _periodic_reference(lambda x, v: fs * math.tanh(v / v_eps), w,
                                            o["fs"] / o["k"], nh)
        assert drift < 1e-8
        errs.append(_mismatch(sy, Q, ref))
    assert errs[1] < 1e-5 and errs[1] < errs[0] / 10, errs
    h = 1e-5 * w
    _, _, Rw, _ = sy.jacobian(Q, w, o["F"])
    Rw_fd = (sy.residual(Q, w + h, o["F"]) - sy.residual(Q, w - h, o["F"])) / (2 * h)
    np.testing.assert_allclose(Rw, Rw_fd, atol=1e-6 * np.abs(Rw_fd).max())


def test_system_assembly_with_constant_term_vs_central_differences():
    """Two DOFs, a slanted penalty stop (exact event evaluation) and tanh friction between the
    DOFs, constant term on: the assembled K_f = dF_nl/dQ, d(K_f^T lam)/dQ and dF_nl/dw against
    central differences (h = 1e-6 |Q|: the event law is C1, tanh smooth; 1e-6 relative)."""
    M = np.diag([1.0, 0.5])
    K = np.array([[2.0, -1.0], [-1.0, 1.5]])
    stop = ContactElement(UnilateralContact(50.0, 0.01, method="event"), np.array([[0.8, 0.6]]))
    fric = ContactElement(RegularisedCoulomb(0.3, 2.0, 0.05), np.array([[1.0, -1.0]]))
    sy = HBSystem(M, 0.01 * K, K, 2, [stop, fric], fex=np.array([1.0, 0.3]),
                  fstatic=[0.2, 0.1])
    assert sy.constant and sy.N == 10
    Q = 0.05 * RNG.normal(size=sy.N)
    lam = RNG.normal(size=sy.N)
    w = 1.3
    F, Kf, HL, Fw = sy.fnl(Q, lam=lam, w=w, dw=True)
    h = 1e-6 * np.abs(Q).max()
    K_fd = _fd(lambda q: sy.fnl(q, w=w)[0], Q, h)
    np.testing.assert_allclose(Kf, K_fd, atol=1e-6 * np.abs(K_fd).max())
    HL_fd = _fd(lambda q: sy.fnl(q, w=w)[1].T @ lam, Q, h)
    np.testing.assert_allclose(HL, HL_fd, atol=1e-6 * np.abs(HL_fd).max())
    hw = 1e-6 * w
    Fw_fd = (sy.fnl(Q, w=w + hw)[0] - sy.fnl(Q, w=w - hw)[0]) / (2 * hw)
    np.testing.assert_allclose(Fw, Fw_fd, atol=1e-6 * np.abs(Fw_fd).max())
    # the residual's mean rows: K Q^0 + mean contact force - f_s
    R = sy.residual(Q, w, 0.7)
    np.testing.assert_allclose(R[:2], K @ Q[:2] + F[:2] - [0.2, 0.1], rtol=1e-13)


@pytest.mark.parametrize("nt", [7, 100.5, "512", True])
def test_sample_counts_are_checked_at_the_door(nt):
    for make in (lambda: UnilateralContact(1.0, 0.0, nt=nt),
                 lambda: RegularisedCoulomb(0.3, 1.0, 0.1, nt=nt),
                 lambda: UserLaw(lambda u, v: u, lambda u, v: np.ones_like(u), lambda u, v: 0 * u,
                                 nt=nt)):
        with pytest.raises(ParameterError):
            make()
    with pytest.raises(ParameterError):
        UnilateralContact(1.0, 0.0, method="exact")


def test_evaluate_contact_uses_the_system_basis():
    """Without the constant term a preload is balanced statically (q_s from
    K q + kp max(q - g, 0) = f_s in closed form) and the law sees the dynamics about it."""
    law = UnilateralContact(2.0, 0.05)
    off = HBSystem(np.eye(1), 0.1 * np.eye(1), np.eye(1), 3, [ContactElement(law, np.eye(1))],
                   fstatic=[0.3], constant=False)
    q_s = (0.3 + 2.0 * 0.05) / 3.0
    assert off.q_static[0] == pytest.approx(q_s, rel=1e-12)
    p = np.array([0.1, 0.02, 0.0, 0.01, 0.0, 0.0])
    np.testing.assert_array_equal(off.evaluate_contact(0, p).F,
                                  law.evaluate(p, 3, offset=q_s).F)
    on = HBSystem(np.eye(1), 0.1 * np.eye(1), np.eye(1), 3, [ContactElement(law, np.eye(1))],
                  fstatic=[0.3])
    p0 = np.concatenate([[q_s], p])
    np.testing.assert_array_equal(on.evaluate_contact(0, p0).F,
                                  law.evaluate(p0, 3, constant=True).F)


@pytest.mark.parametrize("constant", [False, True])
def test_energy_dissipated_by_tanh_friction(constant):
    """Dissipation per cycle from the harmonic forces, pi sum_k k (F^ck Q^sk - F^sk Q^ck), equals
    the time integral of f(v) v over the period of the same motion (fine trapezoidal rule,
    2^14 samples of a smooth periodic integrand: exact to rounding; 1e-8 covers the AFT's
    spectral error at nt = 1024), with and without the constant term (a mean displacement
    dissipates nothing)."""
    law = RegularisedCoulomb(0.5, 0.2, 0.2)
    nh, w = 3, 0.9
    sy = HBSystem(np.eye(1), 0.2 * np.eye(1), np.eye(1), nh, [ContactElement(law, np.eye(1))],
                  constant=constant)
    Q = np.array([0.3, 0.1, -0.05, 0.02, 0.01, -0.004, 0.003])[(0 if constant else 1):]
    nt = 2 ** 14
    tau = 2 * math.pi * np.arange(nt) / nt
    v = w * basis(nh, tau, 1, constant) @ Q
    E_time = np.mean(law.law(np.zeros(nt), v, 0)[0] * v) * 2 * math.pi / w
    assert sy.energy_dissipated(Q, w) == pytest.approx(E_time, rel=1e-8)


@pytest.mark.parametrize("w", [1.0, 1.7])
def test_library_solve_at_balances_the_preload_and_velocity_laws(w):
    """fesub.hbm.solve_at on the preloaded unilateral oscillator and on tanh friction: the same
    solution as the damped Newton of this file (which agrees with DOP853, above), to the
    solvers' tolerances (1e-12 of the force, amplified by the conditioning: 1e-9 relative)."""
    from fesub.errors import ModelError
    from fesub.hbm import solve_at as library_solve_at
    from fesub.hbm import solve_condensed

    o = OSC
    systems = [_oscillator(UnilateralContact(o["kp"], o["gap"])),
               HBSystem(o["m"] * np.eye(1), o["c"] * np.eye(1), o["k"] * np.eye(1), 5,
                        [ContactElement(RegularisedCoulomb(0.2, 1.0, 0.05), np.eye(1), "f")],
                        fex=np.array([1.0]))]
    for sy in systems:
        Q = library_solve_at(sy, w, o["F"])
        ref = solve_at(sy, w, o["F"])
        assert np.abs(Q - ref).max() <= 1e-9 * np.abs(ref).max()
        assert np.abs(sy.residual(Q, w, o["F"])).max() < 1e-10
        with pytest.raises(ModelError, match="use solve_at"):
            solve_condensed(sy, w, o["F"])
