"""Paper statements (spec 5 A) on cheap models, each against an independent reference, and the
spec's 1-DOF Jenkins FRF-peak line (spec 5 B) recomputed without fesub's harmonic balance.

Coarse beam: 4 Euler-Bernoulli elements, contact at the tip, force and monitor at mid-span (the
spec's substitute layout, same physics as the 20-element beam at a fifth of the cost)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from fesub.hbm.backbone import backbone
from fesub.hbm.forced import forced_response, frf_peak
from fesub.hbm.nnm import dnnm, linear_modes, phase_resonance
from fesub.hbm.optimality import backbone_point
from fesub.models.jenkins import jenkins_1dof
from fesub.models import cantilever_contact as cc

SQRT2 = math.sqrt(2.0)


# ------------------------------------------------------------------------------ coarse beam
@pytest.fixture(scope="module")
def coarse_beam():
    """Backbone (global window), phase resonance and dNNM over alpha in [0.01, 1000] N."""
    sy = cc.build(nh=3, ne=4, contact_node=4, force_node=2, monitor_node=2)
    Ms, _, Ks = sy.linear_matrices(stuck=True)
    w_st, V_st = linear_modes(Ms, Ks)
    w_fr, V_fr = linear_modes(sy.M, sy.K)
    wg = (0.7 * w_fr[0], 1.1 * w_st[0])
    phik = abs(V_st[sy.dof, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bb = backbone(sy, (0.01, 1000.0), (0.95 * w_st[0], 1.05 * w_st[0]), w_global=wg)
        pr = phase_resonance(sy, (0.01, 1000.0), bb.w[0])
        dn = dnnm(sy, (bb.Am[0] * SQRT2 / phik, 1.5 * bb.Am[-1] * SQRT2 / phik), mode=0)
    assert bb.stop_reason == pr.stop_reason == dn.stop_reason == "lam_range"
    return {"sy": sy, "bb": bb, "pr": pr, "dn": dn, "wg": wg, "w_fr": w_fr, "V_fr": V_fr}


def _linear_peak(sy, stuck, w0):
    """RMS peak of the linear complex FRF at the monitor (bounded Brent): (w, Am/F, x/F)."""
    M, C, K = sy.linear_matrices(stuck=stuck)

    def x_of(w):
        return np.linalg.solve(K - w * w * M + 1j * w * C, sy.fex[:sy.n])

    w = minimize_scalar(lambda w: -abs(x_of(w)[sy.dof]), bounds=(0.95 * w0, 1.05 * w0),
                        method="bounded", options={"xatol": 1e-10}).x
    x = x_of(w)
    return w, abs(x[sy.dof]) / SQRT2, x


def _local_peak(sy, a, w0, Q0, rel=0.01):
    """Brute-force maximum of the forced response at force a around w0 (continued both ways
    from a known solution, then Brent on dAm/dw)."""
    from fesub.hbm.forced import FRF

    lo = forced_response(sy, a, (w0, w0 * (1 - rel)), Q0=Q0)
    hi = forced_response(sy, a, (w0, w0 * (1 + rel)), Q0=Q0)
    frf = FRF(a, np.concatenate([lo.w[::-1], hi.w[1:]]), np.concatenate([lo.Q[::-1], hi.Q[1:]]),
              np.concatenate([lo.Am[::-1], hi.Am[1:]]), "merged")
    return frf_peak(sy, frf)


def _bb_at(sy, bb, a):
    i = int(np.argmin(np.abs(np.log(bb.alpha / a))))
    w, Q, _, _ = backbone_point(sy, a, bb.w[i], bb.Q[i], bb.lam[i])
    return w, Q


def test_beam_statement3_contact_amplitude_trend(coarse_beam):
    """Statement 3, amplitude part, read on the substitute layout (contact at the tip).

    The force-normalised peak amplitude first decreases (friction damping) and then increases
    (the contact lets go), with its minimum strictly inside the force range. The contact
    amplitude relative to the monitor does *not* first decrease here: it keeps its stuck value up
    to slip onset and then grows to the cantilever-mode value (the tip is the contact)."""
    c = coarse_beam
    sy, bb = c["sy"], c["bb"]
    n, dc, dm = sy.n, cc.dof_w(4), cc.dof_w(2)
    g = bb.Am / bb.alpha
    _, g_stuck, x_stuck = _linear_peak(sy, True, bb.w[0])
    _, g_free, x_free = _linear_peak(sy, False, c["w_fr"][0])
    # alpha = 0.01 N is fully stuck: linear, to the solver tolerances (measured 1e-15)
    assert g[0] == pytest.approx(g_stuck, rel=1e-8)
    # alpha = 1000 N: friction still dissipates (amplitude 4.5 % below the viscous-only peak,
    # measured), it can only lower the peak
    assert 0.9 * g_free < g[-1] < g_free
    k = int(np.argmin(g))
    assert 0 < k < len(g) - 1
    # measured: the ends are 17x and 294x above the minimum (30.3 N, 426 Hz: on the ridge
    # that exists only between ~8 and ~78 N and carries the global maximum from 28.7 to 44 N;
    # the partially stuck ridge followed without the global checks dips lower, to 1/23 of the
    # stuck value at 41 N, but it is not the maximum of the forced response there)
    assert g[0] > 10 * g[k] and g[-1] > 10 * g[k]
    # the minimum is a genuine peak of the forced response (local brute force, Brent on
    # dAm/dw; acceptance 1e-6 in frequency, the amplitude is flat at the peak: 1e-9)
    w_b, Q_b = _bb_at(sy, bb, bb.alpha[k])
    w_p, am_p, _ = _local_peak(sy, bb.alpha[k], w_b, Q_b)
    assert w_b == pytest.approx(w_p, rel=1e-6)
    assert sy.amplitude(Q_b) == pytest.approx(am_p, rel=1e-9)
    # and the global one: no sample of the whole forced response over the window lies above
    # it (to the corrector tolerance; measured: the largest sample is 5e-5 below the peak)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        frf = forced_response(sy, bb.alpha[k], (c["wg"][1], c["wg"][0]))
    assert frf.stop_reason == "lam_range"
    assert frf.Am.max() <= am_p * (1 + 1e-9)
    # contact / monitor ratio of the fundamental
    r = np.hypot(bb.Q[:, dc], bb.Q[:, n + dc]) / np.hypot(bb.Q[:, dm], bb.Q[:, n + dm])
    r_stuck = abs(x_stuck[dc]) / abs(x_stuck[dm])
    stuck = bb.alpha < 1.0  # slip onset 1.03 N
    np.testing.assert_allclose(r[stuck], r_stuck, rtol=1e-8)
    # just past the onset the ridge frequency drops by 5e-5 and the ratio with it by 2e-5
    # (measured) before slip raises it; it never goes further below the stuck value
    assert r.min() > r_stuck * (1 - 1e-4)
    # high force: the linear free structure at its peak (friction perturbs the shape by 2e-6,
    # measured); the cantilever-mode ratio itself is 3e-5 away (off-resonant modes, O(zeta))
    assert r[-1] == pytest.approx(abs(x_free[dc]) / abs(x_free[dm]), rel=1e-4)
    V = c["V_fr"]
    assert r[-1] == pytest.approx(abs(V[dc, 0] / V[dm, 0]), rel=2e-4)
    assert r[-1] > 400 * r_stuck


def _dnnm_at(dn, a):
    """dNNM frequency at equivalent force a, interpolated in log(force) on the monotone run of
    F_eq that contains a (F_eq folds near 46 N: the first run below, the last run above)."""
    d = np.diff(dn.F_eq)
    brk = np.flatnonzero(d <= 0)
    runs = [slice(0, brk[0] + 1), slice(brk[-1] + 1, None)] if len(brk) else [slice(None)]
    sl = runs[0] if a <= dn.F_eq[runs[0]][-1] else runs[-1]
    F, w = dn.F_eq[sl], dn.w0[sl]
    assert F[0] <= a <= F[-1]
    return float(np.interp(math.log(a), np.log(F), w))


def test_beam_statement2_methods_past_slip_onset(coarse_beam):
    """Statement 2 past slip onset: phase resonance and the dNNM agree with the backbone just
    past the onset and (dNNM) in gross slip; in between, under strong friction damping, both
    leave the true peak, which the backbone follows (brute force)."""
    c = coarse_beam
    sy, bb, pr, dn = c["sy"], c["bb"], c["pr"], c["dn"]
    assert np.all(np.diff(pr.alpha) > 0)

    def pr_at(a):
        # linear in log(force): neighbouring points differ by < 1e-4 in w at the forces used
        return float(np.interp(math.log(a), np.log(pr.alpha), pr.w))

    # stuck and up to 3 % past the onset (1.03 N): the RMS peak lies ~zeta^2 = 4.8e-4 below
    # the quadrature / damped-mode frequency (zeta = 2.2 %), plus the backbone's own drop
    # after the onset (2e-4 at 1.06 N); measured 5.5e-4, 6.2e-4, 7.0e-4 (pr), 5.1e-4 ... 6.6e-4
    for a in (0.5, 1.04, 1.06):
        w_b, _ = _bb_at(sy, bb, a)
        assert abs(pr_at(a) / w_b - 1) < 1e-3
        assert abs(_dnnm_at(dn, a) / w_b - 1) < 1e-3
    # gross slip: the friction share of the damping is small again, the dNNM frequency and the
    # RMS peak differ by O(zeta^2) with zeta ~ 0.5 %: tolerance 2e-4 (measured 3.6e-5 ... 7.1e-5)
    for a in (50.0, 100.0, 300.0):
        w_b, _ = _bb_at(sy, bb, a)
        assert abs(_dnnm_at(dn, a) / w_b - 1) < 2e-4
    # strong friction damping (modal zeta of the dNNM ~ 15 % at 10 N): both baselines are more
    # than 5 % above the true peak (measured +13 % and +9 %) while the backbone is the maximum
    # of the whole brute-force forced response (acceptance 1e-6, measured 2e-15)
    a = 10.0
    w_b, Q_b = _bb_at(sy, bb, a)
    assert pr_at(a) / w_b - 1 > 0.05 and _dnnm_at(dn, a) / w_b - 1 > 0.05
    frf = forced_response(sy, a, (c["wg"][1], c["wg"][0]))
    w_p, am_p, _ = frf_peak(sy, frf)
    assert w_b == pytest.approx(w_p, rel=1e-6)
    assert frf.Am.max() <= am_p * (1 + 1e-9)
    # phase resonance does not come back: its quadrature branch ends on the second cantilever
    # mode (the quadrature point of a mode with zeta_2 = 3.1 % lies within ~zeta^2 of it;
    # measured 4.3e-4 below), the dNNM and the backbone on the first
    assert pr.w[-1] == pytest.approx(c["w_fr"][1], rel=2e-3)
    assert bb.w[-1] == pytest.approx(c["w_fr"][0], rel=2e-3)


# ------------------------------------------------------------- Jenkins FRF peak (spec 5 B)
_NH = 7
_M, _C, _K, _KT, _FS, _F = 1.0, 0.02, 1.0, 1.0, 0.1, 0.1
_H = np.arange(1, _NH + 1)


def _basis(t, d=0):
    """[cos t, sin t, ..., cos 7t, sin 7t] and its d-th derivative (d <= 2), rows = times."""
    ht = np.outer(np.atleast_1d(t), _H)
    c, s = np.cos(ht), np.sin(ht)
    out = np.empty((ht.shape[0], 2 * _NH))
    if d == 0:
        out[:, 0::2], out[:, 1::2] = c, s
    elif d == 1:
        out[:, 0::2], out[:, 1::2] = -_H * s, _H * c
    else:
        out[:, 0::2], out[:, 1::2] = -_H ** 2 * c, -_H ** 2 * s
    return out


_GRID = 2 * np.pi * np.arange(1024) / 1024
_BGRID = _basis(_GRID)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(40)


def _jenkins_exact(X):
    """Fourier coefficients of the steady Jenkins force for x(t) = H(t) X (one maximum and one
    minimum per period): the play operator in closed form between the extrema, integrated
    piecewise by 40-point Gauss-Legendre (exact to rounding for these trigonometric
    polynomials)."""
    xg = _BGRID @ X
    if np.ptp(xg) <= 2 * _FS / _KT:
        return _KT * X
    s = np.sign(np.diff(np.append(xg, xg[0])))
    assert np.count_nonzero(s != np.roll(s, 1)) == 2

    def extremum(t):
        for _ in range(30):
            dt = (_basis(t, 1) @ X)[0] / (_basis(t, 2) @ X)[0]
            t -= dt
            if abs(dt) < 1e-15:
                break
        return t

    ta, tb = extremum(_GRID[np.argmax(xg)]), extremum(_GRID[np.argmin(xg)])
    tb += 2 * np.pi if tb < ta else 0.0
    tc = ta + 2 * np.pi

    def x(t):
        return float((_basis(t) @ X)[0])

    xa, xb = x(ta), x(tb)
    t1 = brentq(lambda t: x(t) - (xa - 2 * _FS / _KT), ta, tb, xtol=1e-15)
    t2 = brentq(lambda t: x(t) - (xb + 2 * _FS / _KT), tb, tc, xtol=1e-15)

    def integral(a, b, f):
        t = 0.5 * (b - a) * _GL_X + 0.5 * (a + b)
        return 0.5 * (b - a) / np.pi * (_basis(t).T @ (_GL_W * f(t)))

    def stick(x0, f0):
        return lambda t: f0 + _KT * (_basis(t) @ X - x0)

    return (integral(ta, t1, stick(xa, _FS)) + integral(t1, tb, lambda t: -_FS + 0 * t)
            + integral(tb, t2, stick(xb, -_FS)) + integral(t2, tc, lambda t: _FS + 0 * t))


def _jenkins_aft(nt):
    """Fourier coefficients of the time-discrete return map on nt samples per period (trial
    force + clipping, started at the sampled maximum where gross slip has just ended)."""
    E = _basis(2 * np.pi * np.arange(nt) / nt)

    def fc(X):
        x = E @ X
        if np.ptp(x) <= 2 * _FS / _KT:
            return _KT * X
        i0 = int(np.argmax(x))
        xr = np.roll(x, -i0)
        f, fp, xp = np.empty(nt), _FS, xr[0]
        for i in range(nt):
            fp = min(max(fp + _KT * (xr[i] - xp), -_FS), _FS)
            f[i], xp = fp, xr[i]
        return (2.0 / nt) * E.T @ np.roll(f, i0)

    return fc


def _jenkins_peak(fc):
    """(w, Am, |X1|) at the maximum of the RMS amplitude over w at F = 0.1: Newton with a
    central-difference Jacobian at each w, Brent's method on Am(w) itself (no derivative)."""

    def residual(X, w):
        R = np.empty(2 * _NH)
        for j, h in enumerate(_H):
            kd = _K - (h * w) ** 2 * _M
            R[2 * j] = kd * X[2 * j] + h * w * _C * X[2 * j + 1]
            R[2 * j + 1] = -h * w * _C * X[2 * j] + kd * X[2 * j + 1]
        R += fc(X)
        R[0] -= _F
        return R

    def solve(w, X):
        for _ in range(50):
            R = residual(X, w)
            if np.abs(R).max() < 1e-15:
                return X
            J = np.empty((2 * _NH, 2 * _NH))
            for i in range(2 * _NH):
                d = np.zeros(2 * _NH)
                d[i] = 1e-7
                J[:, i] = (residual(X + d, w) - residual(X - d, w)) / 2e-7
            X = X - np.linalg.solve(J, R)
        raise AssertionError(f"no convergence at w={w}")

    sols = {}

    def neg_am(w):
        near = min(sols, key=lambda v: abs(v - w)) if sols else None
        X = solve(w, sols[near] if near is not None else np.r_[0.0, 0.3, np.zeros(2 * _NH - 2)])
        sols[w] = X
        return -np.linalg.norm(X) / SQRT2

    ws = np.linspace(1.2, 1.0, 21)  # descending: each solve starts from its neighbour
    i = int(np.argmin([neg_am(w) for w in ws]))
    res = minimize_scalar(neg_am, bracket=(ws[i + 1], ws[i], ws[i - 1]), method="brent",
                          tol=1e-12)
    X = sols[res.x]
    return res.x, -res.fun, math.hypot(X[0], X[1])


def test_jenkins_frf_peak_line_of_the_spec():
    """Spec 5 B prints, for the same oscillator at F = 0.1, an FRF peak (w, Am, |X1|) =
    (1.10857888, 0.25009254, 0.35367056) and a backbone point (1.10862030, 0.25008496) that must
    coincide. The FRF line is the 512-sample AFT (time-discrete return map) peak, reproduced here
    to all printed digits; with exact Fourier coefficients the peak is the backbone's point."""
    # independent of fesub: exact play-operator coefficients, finite-difference Newton, Brent
    # on Am(w). Am(w) ~ Am* - 17.7 (w - w*)^2 near the peak and Am is resolved to ~1e-15, so
    # w* is located to ~1e-8; the spec prints 8 decimals (rounding 5e-9)
    w, am, x1 = _jenkins_peak(_jenkins_exact)
    assert w == pytest.approx(1.10862030, abs=2e-8)
    assert am == pytest.approx(0.25008496, abs=1e-8)
    assert x1 == pytest.approx(0.35365983, abs=1e-8)
    # fesub (event-based coefficients, brute-force FRF peak) agrees to the same resolution
    sy = jenkins_1dof(nh=_NH)
    w_f, am_f, Q_f = frf_peak(sy, forced_response(sy, _F, (0.9, 1.6)))
    assert w_f == pytest.approx(w, abs=2e-8)
    assert am_f == pytest.approx(am, abs=1e-10)
    assert math.hypot(Q_f[0], Q_f[1]) == pytest.approx(x1, abs=1e-10)
    # the spec's FRF line: the same search with the force from 512 samples per period
    w5, am5, x15 = _jenkins_peak(_jenkins_aft(512))
    assert w5 == pytest.approx(1.10857888, abs=2e-8)
    assert am5 == pytest.approx(0.25009254, abs=1e-8)
    assert x15 == pytest.approx(0.35367056, abs=1e-8)
    # its sampling error (4.1e-5 in w, 3e-5 in Am) is 2000x the resolution above
    assert abs(w5 - w) > 4e-5
