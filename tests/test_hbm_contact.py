"""Friction contact elements: analytic stiffness and Hessian vs central finite differences,
event-method vs AFT Fourier coefficients, both kernel backends."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub import _backend
from fesub.errors import ParameterError
from fesub.hbm.contact import Jenkins, StickSlipSeparation, force_history
from fesub.hbm.fourier import basis, interval_W, interval_w

RNG = np.random.default_rng(12345)


def _fd(el, p, nh, h):
    m = p.size
    K = np.zeros((m, m))
    H = np.zeros((m, m, m))
    for b in range(m):
        e = np.zeros(m)
        e[b] = h
        rp, rm = el.evaluate(p + e, nh), el.evaluate(p - e, nh)
        K[:, b] = (rp.F - rm.F) / (2 * h)
        H[:, :, b] = (rp.K - rm.K) / (2 * h)
    return K, H


def _jenkins_case(nh, amp):
    # seeded per case: the same point whatever subset of the tests runs
    rng = np.random.default_rng((12345, nh))
    X = np.zeros(2 * nh)
    X[0] = 1.0
    X[1:] = 0.05 * rng.standard_normal(2 * nh - 1)
    return amp * X


def _yang_case(nh, ax, ay):
    rng = np.random.default_rng((54321, nh))
    X = np.zeros(2 * nh)
    X[0] = ax
    X[2:] = 0.05 * ax * rng.standard_normal(2 * nh - 2)
    Y = np.zeros(2 * nh)
    Y[0], Y[1] = 0.3 * ay, ay
    Y[2:] = 0.05 * ay * rng.standard_normal(2 * nh - 2)
    return np.concatenate([X, Y])


# regimes of the 2D element (kt = kn = 1, mu = 0.3, N0 = 1): stick / stick-slip (variable
# normal load) / separation with re-contact in slip / separation with re-contact in stick
# (small tangential motion: kt |x'| <= mu kn |y'| when contact returns, spec 1.5)
YANG_REGIMES = {"stick": (0.1, 0.1), "stick-slip": (1.0, 0.3), "separation": (1.5, 1.5),
                "separation-stick": (0.2, 2.0)}
STICK, SLIP_P, SLIP_N, SEP = 0, 1, 2, 3


def test_closed_form_integrals():
    # W, w against adaptive-free dense trapezoid quadrature on a smooth integrand
    nh = 4
    a, b = 0.3, 2.9
    t = np.linspace(a, b, 200001)
    Hs = basis(nh, t)
    wq = np.trapezoid(Hs, t, axis=0) / math.pi
    Wq = np.trapezoid(Hs[:, :, None] * Hs[:, None, :], t, axis=0) / math.pi
    # trapezoid error ~ (b-a) h^2 f''/12 with h = 1.3e-5, f'' <= 64 -> < 1e-8
    np.testing.assert_allclose(interval_w(nh, a, b), wq, atol=1e-8)
    np.testing.assert_allclose(interval_W(nh, a, b), Wq, atol=1e-8)
    # full period: orthogonality
    np.testing.assert_allclose(interval_W(nh, 0.0, 2 * math.pi), np.eye(2 * nh), atol=1e-14)


@pytest.mark.parametrize("nh", [1, 3, 7])
@pytest.mark.parametrize("amp,regime", [(0.05, "stick"), (0.3, "stick-slip"), (3.0, "gross slip")])
def test_jenkins_K_and_hessian_vs_fd(nh, amp, regime):
    el = Jenkins(1.0, 0.1, 1.0)  # fs = 0.1, stick limit amplitude fs/kt = 0.1
    p = _jenkins_case(nh, amp)
    r = el.evaluate(p, nh, hessian=True)
    assert (r.tau.size == 0) == (regime == "stick")
    K, H = _fd(el, p, nh, 1e-6 * amp)
    # central differences with h = 1e-6 |p|: truncation ~ h^2 |F'''| and rounding
    # ~ eps |F| / h ~ 1e-10 relative; 1e-6 is the acceptance target
    assert np.abs(r.K - K).max() <= 1e-6 * np.abs(r.K).max()
    # relative to the larger of the two (both exactly 0 when fully stuck: linear element)
    assert np.abs(r.hess - H).max() <= 1e-6 * max(np.abs(r.hess).max(), np.abs(H).max())
    # every Hessian slice is symmetric (mixed partials), to rounding
    assert np.abs(r.hess - r.hess.transpose(0, 2, 1)).max() <= 1e-12 * np.abs(r.hess).max()
    # contracted Hessian = sum_i lam_i Hes_i
    lam = RNG.standard_normal(2 * nh)
    rl = el.evaluate(p, nh, lam=lam)
    np.testing.assert_allclose(rl.hess_lam, np.einsum("i,iab->ab", lam, r.hess), rtol=1e-12,
                               atol=1e-12 * np.abs(r.hess).max())


@pytest.mark.parametrize("nh", [1, 3, 7])
@pytest.mark.parametrize("regime", list(YANG_REGIMES))
def test_yang_K_and_hessian_vs_fd(nh, regime):
    el = StickSlipSeparation(1.0, 1.0, 0.3, 1.0)
    p = _yang_case(nh, *YANG_REGIMES[regime])
    r = el.evaluate(p, nh, hessian=True)
    states = set(r.to_state.tolist())
    trans = set(zip(r.from_state.tolist(), r.to_state.tolist()))
    if regime == "stick":
        assert r.tau.size == 0
    elif regime == "stick-slip":
        assert states <= {STICK, SLIP_P, SLIP_N} and {SLIP_P, SLIP_N} & states and STICK in states
    elif regime == "separation":
        # contact lost while slipping, regained in slip (then slip -> stick)
        assert {(SEP, SLIP_P), (SEP, SLIP_N)} & trans and STICK in states
    else:
        # contact regained in stick (paper eqs. 43, 58-61: the Y-dependent re-contact time)
        assert (SEP, STICK) in trans
    K, H = _fd(el, p, nh, 1e-6)
    # see the Jenkins test for the tolerance
    assert np.abs(r.K - K).max() <= 1e-6 * np.abs(r.K).max()
    assert np.abs(r.hess - H).max() <= 1e-6 * max(np.abs(r.hess).max(), np.abs(H).max())
    assert np.abs(r.hess - r.hess.transpose(0, 2, 1)).max() <= 1e-12 * np.abs(r.hess).max()
    # structure: the normal force does not depend on X, lower-left block of K is 0
    m = 2 * nh
    assert np.all(r.K[m:, :m] == 0)


@pytest.mark.parametrize("nh", [1, 3, 7])
@pytest.mark.parametrize("regime", list(YANG_REGIMES))
def test_event_vs_aft(nh, regime):
    el = StickSlipSeparation(1.0, 1.0, 0.3, 1.0)
    p = _yang_case(nh, *YANG_REGIMES[regime])
    r = el.evaluate(p, nh)
    ra = el.evaluate(p, nh, method="aft", nt=16384)
    # the discrete return map detects transitions to within one sample: F converges like
    # O(nt^-2) (the force is continuous), measured <= 8e-8 at nt = 16384; acceptance 1e-6.
    # (Re-contact in stick: with the last separated sample as the spring origin instead of the
    # interpolated contact point this was an O(1/nt) offset, 1.3e-5 at 16384 samples.)
    assert np.abs(ra.F - r.F).max() <= 1e-6 * np.abs(r.F).max()
    # K of the discrete map converges only like O(1/nt) (jumping derivatives are sampled):
    # 4.3e-4 measured at nt = 16384 for the worst case; 2e-3 leaves room for the others
    assert np.abs(ra.K - r.K).max() <= 2e-3 * np.abs(r.K).max()


@pytest.mark.parametrize("nh", [1, 3, 7])
@pytest.mark.parametrize("amp", [0.05, 0.3, 3.0])
def test_jenkins_event_vs_aft(nh, amp):
    el = Jenkins(1.0, 0.1, 1.0)
    p = _jenkins_case(nh, amp)
    r = el.evaluate(p, nh)
    ra = el.evaluate(p, nh, method="aft", nt=16384)
    # continuous force, O(nt^-2): measured <= 1.1e-7 at 16384 samples; acceptance 1e-6
    assert np.abs(ra.F - r.F).max() <= 1e-6 * np.abs(r.F).max()


@pytest.mark.parametrize("regime", list(YANG_REGIMES))
def test_aft_stiffness_is_derivative_of_discrete_map(regime):
    el = StickSlipSeparation(1.0, 1.0, 0.3, 1.0)
    nh, nt = 3, 1024
    p = _yang_case(nh, *YANG_REGIMES[regime])
    r = el.evaluate(p, nh, method="aft", nt=nt)
    h = 1e-7
    K = np.zeros_like(r.K)
    for b in range(p.size):
        e = np.zeros(p.size)
        e[b] = h
        K[:, b] = (el.evaluate(p + e, nh, method="aft", nt=nt).F
                   - el.evaluate(p - e, nh, method="aft", nt=nt).F) / (2 * h)
    # h = 1e-7 changes no sample's state: the map is smooth there and central differences
    # are exact up to rounding eps |F| / h ~ 1e-9 (measured <= 1.5e-8)
    assert np.abs(K - r.K).max() <= 1e-6 * np.abs(r.K).max()


def test_aft_convergence_order():
    el = StickSlipSeparation(1.0, 1.0, 0.3, 1.0)
    p = _yang_case(3, 1.5, 1.5)
    r = el.evaluate(p, 3)
    errs = [np.abs(el.evaluate(p, 3, method="aft", nt=nt).F - r.F).max() for nt in (1024, 8192)]
    # 8x more samples: at least a 20x smaller error (second order would be 64x)
    assert errs[1] < errs[0] / 20


def test_jenkins_closed_form_describing_function():
    # single harmonic input A cos: K_eq and dissipation of the Jenkins element (classical
    # closed form: F_c = kt A (pi - phi + sin(2phi)/2 ... ) via the hysteresis loop area)
    el = Jenkins(2.0, 0.25, 1.0)  # fs = 0.25, onset amplitude 0.125
    A = 0.4
    r = el.evaluate(np.array([A, 0.0]), 1)
    fs, kt = 0.25, 2.0
    # loop area 4 fs (A - fs/kt) = pi A F_s (sign: F_s = -area / (pi A))
    assert r.F[1] == pytest.approx(-4 * fs * (A - fs / kt) / (math.pi * A), rel=1e-12)
    # in-phase part: beta = arccos(1 - 2 fs/(kt A)); F_c = kt A (beta - sin(2 beta)/2) / pi
    beta = math.acos(1 - 2 * fs / (kt * A))
    assert r.F[0] == pytest.approx(kt * A * (beta - 0.5 * math.sin(2 * beta)) / math.pi,
                                   rel=1e-12)


def test_backends_agree(backend):
    for nh in (1, 3):
        for regime in YANG_REGIMES:
            el = StickSlipSeparation(1.0, 1.0, 0.3, 1.0)
            p = _yang_case(nh, *YANG_REGIMES[regime])
            r = el.evaluate(p, nh, hessian=True)
            with _backend.use("python"):
                rr = el.evaluate(p, nh, hessian=True)
            # same algorithm, same arithmetic up to libm differences
            np.testing.assert_allclose(r.tau, rr.tau, atol=1e-13)
            np.testing.assert_array_equal(r.to_state, rr.to_state)
            np.testing.assert_allclose(r.K, rr.K, atol=1e-11 * np.abs(r.K).max())
            np.testing.assert_allclose(r.F, rr.F, atol=1e-12 * np.abs(r.F).max())
            _check_contraction(el, p, nh)
    # the FD check on this backend, one case with separation
    p = _yang_case(3, 1.5, 1.5)
    el = StickSlipSeparation(1.0, 1.0, 0.3, 1.0)
    r = el.evaluate(p, 3, hessian=True)
    K, H = _fd(el, p, 3, 1e-6)
    assert np.abs(r.K - K).max() <= 1e-6 * np.abs(r.K).max()
    assert np.abs(r.hess - H).max() <= 1e-6 * np.abs(r.hess).max()


def test_backends_agree_1d(backend):
    """The 1D element (no normal motion: the compiled march skips the separation test) gives
    the same transitions and stiffness on both kernels, for several harmonic contents."""
    el = Jenkins(2.0, 0.5, 0.5)
    for nh in (1, 3, 7):
        for amp in (0.3, 1.0, 5.0):
            p = _jenkins_case(nh, amp)
            r = el.evaluate(p, nh, hessian=True)
            with _backend.use("python"):
                rr = el.evaluate(p, nh, hessian=True)
            assert r.tau.size >= 2      # slipping (fs / kt = 0.125 < amp)
            # same algorithm; the transition times are bisected to machine precision, so only
            # libm rounding separates them (1e-13 rad: a few ulps of 2 pi)
            np.testing.assert_allclose(r.tau, rr.tau, atol=1e-13)
            np.testing.assert_array_equal(r.to_state, rr.to_state)
            np.testing.assert_allclose(r.K, rr.K, atol=1e-11 * np.abs(r.K).max())
            np.testing.assert_allclose(r.F, rr.F, atol=1e-12 * np.abs(r.F).max())
            _check_contraction(el, p, nh)


def _check_contraction(el, p, nh):
    """The compiled (or twin) contraction ``hess_lam`` against the contraction of the Hessian
    tensor of the Python path (checked against finite differences in the tests above): two
    codings of the same sums, so rounding only (measured <= 3e-15 of the largest entry;
    1e-13 leaves room for nh up to 7)."""
    lam = np.random.default_rng((nh, p.size)).standard_normal(p.size)
    ref = np.einsum("i,iab->ab", lam, el.evaluate(p, nh, hessian=True).hess)
    hl = el.evaluate(p, nh, lam=lam).hess_lam
    assert np.abs(hl - ref).max() <= 1e-13 * max(np.abs(ref).max(), 1e-300)


def test_compiled_kernel_checks_work_size():
    """The compiled march, cycle forces and contraction keep their tables in ``work``: too
    short a buffer is refused."""
    hbm = pytest.importorskip("fesub._core.hbm")
    nh = 3
    X = _jenkins_case(nh, 1.0)
    with pytest.raises(ValueError, match="work"):
        hbm.march(X, np.zeros(2 * nh), nh, 2.0, 0.0, 0.5, 0.5, 64, 1e-12, np.empty(6 * nh),
                  np.empty(64), np.empty(64, np.intc), np.empty(64, np.intc),
                  np.zeros(2, np.intc))
    tau = np.array([0.5, 3.0])
    states = np.array([0, 1], np.intc), np.array([1, 0], np.intc)
    with pytest.raises(ValueError, match="work"):
        hbm.cycle_forces(X, np.zeros(2 * nh), nh, 2.0, 0.0, 0.5, 0.5, tau, *states,
                         np.zeros(4 * nh), np.zeros((4 * nh, 4 * nh)), np.empty(4 * nh * nh))
    with pytest.raises(ValueError, match="work"):
        hbm.cycle_hess_lam(X, np.zeros(2 * nh), nh, 2.0, 0.0, 0.5, 0.5, tau, *states,
                           np.zeros(4 * nh), np.zeros((4 * nh, 4 * nh)), np.empty(8 * nh))


def test_force_history_matches_coefficients():
    el = StickSlipSeparation(1.0, 1.0, 0.3, 1.0)
    p = _yang_case(3, 1.0, 0.3)
    fx, fy, st = force_history(el, p, 3, 4096)
    E = basis(3, 2 * math.pi * np.arange(4096) / 4096)
    r = el.evaluate(p, 3)
    # projection of the sampled cycle = AFT; O(nt^-2) -> 1e-6 at 4096 samples
    np.testing.assert_allclose(2 / 4096 * E.T @ fx, r.F[:6], atol=1e-6 * np.abs(r.F).max())
    assert set(np.unique(st)) <= {0, 1}


def test_bad_input():
    with pytest.raises(ParameterError, match="mu"):
        Jenkins(1.0, -0.1, 1.0)
    with pytest.raises(ParameterError, match="kt"):
        Jenkins(-1.0, 0.1, 1.0)
    with pytest.raises(ParameterError, match="kn"):
        StickSlipSeparation(1.0, -2.0, 0.1, 1.0)
    with pytest.raises(ParameterError, match="n0"):
        StickSlipSeparation(1.0, 1.0, 0.1, 0.0)
    with pytest.raises(ParameterError, match="nh"):
        Jenkins(1.0, 0.1, 1.0).evaluate(np.zeros(2), 0)
    with pytest.raises(ParameterError, match="length"):
        Jenkins(1.0, 0.1, 1.0).evaluate(np.zeros(3), 1)
    with pytest.raises(ParameterError, match="NaN"):
        Jenkins(1.0, 0.1, 1.0).evaluate(np.array([np.nan, 0.0]), 1)
    with pytest.raises(ParameterError, match="Hessian"):
        Jenkins(1.0, 0.1, 1.0).evaluate(np.array([1.0, 0.0]), 1, method="aft", hessian=True)
