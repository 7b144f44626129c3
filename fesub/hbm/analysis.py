"""Forced responses, backbone curves (Lagrange optimality system), phase resonance and dNNM.

All branches use the shared pseudo-arclength driver :func:`fesub.continuation.continue_branch`.

Backbone (spec section 2): the ridge of the forced-response surface is the set of points where
``Am = (sqrt 2/2)|Q_k|`` is stationary in ``w`` at fixed ``alpha``. With multipliers ``lam``
(``eta_Am = 1``, ``eta_w = 0``) the reduced optimality system is::

    R(Q, w, alpha) = 0,   grad Am + R_Q^T lam = 0,   lam^T D'(w) Q = 0

and it is continued in ``s = log(alpha)`` with the scaled unknowns ``(Q/alpha, lam, w)`` (all
O(1) over decades of force). Its Jacobian needs ``d(K_f^T lam)/dQ``, the contact Hessian
contracted with the multipliers (analytic, :mod:`fesub.hbm.contact`). Stages (paper 3.2):
1. forced response at ``alpha_min`` over a frequency window, its maximum located;
2. multipliers from ``lstsq([R_Q^T; (D'Q)^T], [-grad Am; 0])`` (equivalent to the paper's
   continuation in ``eta_Am`` from 0 to 1, consistent at the extremum);
3. continuation in ``log alpha``;
4. on a corrector failure (singular point) restart at ``log alpha + 1e-3`` with stages 1-3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from ..continuation import continue_branch, newton
from ..errors import ConvergenceError, ParameterError, check_positive
from ._threads import single_thread_blas
from .system import HBSystem


def _single(fn):
    """Run ``fn`` with a single-threaded BLAS (small dense systems, see ``_threads``)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with single_thread_blas():
            return fn(*args, **kwargs)

    return wrapper

__all__ = ["FRF", "forced_response", "solve_at", "frf_peak", "Backbone", "backbone",
           "phase_resonance", "dnnm", "linear_modes"]


def _increasing_range(name, r, unit=""):
    """(lo, hi) with 0 < lo < hi, both finite, else ParameterError."""
    try:
        lo, hi = r
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a pair (low, high), got {r!r}") from None
    lo = check_positive(f"{name}[0]{unit}", lo)
    hi = check_positive(f"{name}[1]{unit}", hi)
    if hi <= lo:
        raise ParameterError(f"{name} must be increasing, got {r!r}")
    return lo, hi


def _dof_or_load(name, sys, dof):
    if dof is None:
        return int(np.argmax(np.abs(sys.fex[:sys.n])))
    if int(dof) != dof or not 0 <= dof < sys.n:
        raise ParameterError(f"{name} must be an integer in [0, {sys.n - 1}], got {dof!r}")
    return int(dof)


@dataclass
class FRF:
    """Forced-response curve at fixed force amplitude ``alpha`` (N)."""

    alpha: float
    w: np.ndarray
    Q: np.ndarray
    Am: np.ndarray
    stop_reason: str


def _fixed_w_fun(sys: HBSystem, w, alpha):
    def f(Q):
        R, RQ, _, _ = sys.jacobian(Q, w, alpha)
        return R, RQ
    return f


@_single
def solve_at(sys: HBSystem, w, alpha, Q0=None, tol=None, max_iter=30):
    """Periodic response at one frequency ``w`` (rad/s) and force ``alpha`` (N) by Newton.

    Starts from ``Q0`` or from the stuck-linear response. Raises ConvergenceError on failure.
    """
    w = check_positive("w (rad/s)", w)
    alpha = check_positive("alpha (force amplitude, N)", alpha)
    given = Q0 is not None
    Q0 = sys.linear_response(w, alpha) if Q0 is None else np.asarray(Q0, float)
    tol = tol if tol is not None else 1e-11 * max(abs(alpha), 1e-300)
    Q, ok, its, nr = newton(_fixed_w_fun(sys, w, alpha), Q0, tol=tol, max_iter=max_iter)
    if not ok and not given:
        # homotopy in log(alpha) from a force small enough for the stuck-linear guess
        a_lo = alpha * 1e-4

        def res(Qt, s):
            a = math.exp(s)
            return (sys.residual(a * Qt, w, a)) / a

        def jac(Qt, s):
            a = math.exp(s)
            F, K, _ = sys.fnl(a * Qt)
            return sys.D(w) + K, (K @ (a * Qt) - F) / a

        Qt0 = sys.linear_response(w, 1.0)
        try:
            br = continue_branch(res, jac, Qt0, math.log(a_lo), ds=0.1, ds_max=1.0,
                                 lam_range=(math.log(a_lo), math.log(alpha)), max_steps=400,
                                 tol=1e-11, kink_ds=1e-5,
                                 scale=np.append(np.full(sys.N, np.abs(Qt0).max()), 1.0))
            if br.stop_reason == "lam_range" and abs(br.lam[-1] - math.log(alpha)) < 1e-12:
                Q, ok, its, nr = newton(_fixed_w_fun(sys, w, alpha), alpha * br.x[-1], tol=tol,
                                        max_iter=max_iter)
        except ConvergenceError:
            pass
    if not ok:
        raise ConvergenceError(f"harmonic balance at w={w:.6g} rad/s, alpha={alpha:.6g} N did "
                               f"not converge (|R|={nr:.3e} N after {its} iterations)", partial=Q)
    return Q


@_single
def forced_response(sys: HBSystem, alpha, w_range, *, Q0=None, ds=0.02, ds_max=0.1,
                    max_steps=2000, progress=False, qscale=None) -> FRF:
    """Forced-response curve over ``w_range = (w_start, w_end)`` (rad/s) at force ``alpha`` (N).

    Continued by pseudo-arclength in ``w`` (turning points allowed); the unknowns are scaled by
    ``qscale`` (m; default: the largest stuck-linear amplitude in the range) and ``w_start``.
    """
    alpha = check_positive("alpha (force amplitude, N)", alpha)
    w0, w1 = float(w_range[0]), float(w_range[1])
    check_positive("w_range[0] (rad/s)", w0)
    check_positive("w_range[1] (rad/s)", w1)
    direction = 1 if w1 > w0 else -1
    Qs = solve_at(sys, w0, alpha, Q0)
    if qscale is None:
        ws = np.linspace(min(w0, w1), max(w0, w1), 60)
        qscale = max(np.abs(sys.linear_response(w, alpha)).max() for w in ws)
    sc = np.append(np.full(sys.N, qscale), abs(w0))

    def res(Q, w):
        return sys.residual(Q, w, alpha) / alpha

    def jac(Q, w):
        _, RQ, Rw, _ = sys.jacobian(Q, w, alpha)
        return RQ / alpha, Rw / alpha

    br = continue_branch(res, jac, Qs, w0, ds=ds, ds_max=ds_max, ds_min=1e-7,
                         lam_range=(min(w0, w1), max(w0, w1)), max_steps=max_steps,
                         direction=direction, tol=1e-10, max_angle_deg=10.0, scale=sc,
                         progress=progress, kink_ds=1e-5)
    Am = np.array([sys.amplitude(q) for q in br.x])
    return FRF(alpha, br.lam, br.x, Am, br.stop_reason)


def _dAm_dw(sys, Q, w, alpha):
    _, RQ, Rw, _ = sys.jacobian(Q, w, alpha)
    dQ = -np.linalg.solve(RQ, Rw)
    return sys.amp_grad(Q) @ dQ


@_single
def frf_peak(sys: HBSystem, frf: FRF, *, rtol=1e-13):
    """Brute-force maximum of ``Am`` on a forced-response curve.

    Independent of the optimality system: the root of ``dAm/dw = grad Am . (-R_Q^{-1} R_w)``
    between the curve points around the largest ``Am`` is found by Brent's method with a Newton
    solve at fixed ``w`` for every trial frequency. Returns ``(w_peak, Am_peak, Q_peak)``.
    """
    i = int(np.argmax(frf.Am))
    lo, hi = max(i - 1, 0), min(i + 1, len(frf.w) - 1)
    cache = {}

    def g(w):
        j = lo if abs(w - frf.w[lo]) < abs(w - frf.w[hi]) else hi
        Q = solve_at(sys, w, frf.alpha, cache.get("Q", frf.Q[j]))
        cache["Q"] = Q
        return _dAm_dw(sys, Q, w, frf.alpha)

    wa, wb = frf.w[lo], frf.w[hi]
    ga, gb = g(wa), g(wb)
    if ga * gb > 0:
        raise ConvergenceError("frf_peak: no sign change of dAm/dw around the largest sample "
                               "(maximum at the end of the range?)")
    wp = brentq(g, min(wa, wb), max(wa, wb), xtol=1e-15, rtol=rtol, maxiter=200)
    Qp = solve_at(sys, wp, frf.alpha, cache["Q"])
    return wp, sys.amplitude(Qp), Qp


# ---------------------------------------------------------------------------------- backbone
@dataclass
class Backbone:
    """Backbone (ridge of the forced-response surface).

    Attributes
    ----------
    alpha : (npts,) force amplitude (N)
    w : (npts,) peak frequency (rad/s)
    Am : (npts,) peak RMS amplitude at the monitor DOF (m)
    Q : (npts, N) harmonic coefficients (m)
    lam : (npts, N) multipliers (m/N)
    eta_alpha : (npts,) ``F_ex^T lam = -dAm*/dalpha`` (m/N)
    segments : (npts,) segment index (increments at every restart)
    singular_points : list of dict (alpha, w, reason)
    events : list of continuation events (e.g. 'slip_onset_0' = contact 0 starts to slip)
    newton_iters : (npts,) corrector iterations
    stop_reason : str
    """

    alpha: np.ndarray
    w: np.ndarray
    Am: np.ndarray
    Q: np.ndarray
    lam: np.ndarray
    eta_alpha: np.ndarray
    segments: np.ndarray
    singular_points: list = field(default_factory=list)
    events: list = field(default_factory=list)
    newton_iters: np.ndarray | None = None
    stop_reason: str = ""

    def save(self, path):
        """Save as ``.npz`` plus a JSON summary beside it."""
        import json
        from pathlib import Path

        path = Path(path)
        np.savez(path, alpha=self.alpha, w=self.w, Am=self.Am, Q=self.Q, lam=self.lam,
                 eta_alpha=self.eta_alpha, segments=self.segments)
        summ = {"stop_reason": self.stop_reason, "npts": int(len(self.alpha)),
                "singular_points": self.singular_points,
                "events": [{"kind": e["kind"], "alpha": e["alpha"], "w": e["w"]}
                           for e in self.events]}
        path.with_suffix(".json").write_text(json.dumps(summ, indent=2))


class _Optimality:
    """Reduced optimality system in y = (Q/alpha, lam, w), parameter s = log(alpha)."""

    def __init__(self, sys: HBSystem, r3scale=1.0):
        self.sys = sys
        self.N = sys.N
        self.r3 = r3scale
        self._cache = None

    def split(self, y):
        N = self.N
        return y[:N], y[N:2 * N], float(y[2 * N])

    def residual(self, y, s):
        key = (y.tobytes(), float(s))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        return self.jacobian(y, s, want_jac=False)

    def jacobian(self, y, s, want_jac=True):
        if want_jac:
            R, J, Js = self._eval(y, s, True)
            self._cache = ((y.tobytes(), float(s)), R)
            return J, Js
        return self._eval(y, s, False)

    def _eval(self, y, s, want_jac):
        sy = self.sys
        N = self.N
        Qt, lam, w = self.split(y)
        a = math.exp(s)
        Q = a * Qt
        F, K, HL = sy.fnl(Q, lam=lam if want_jac else None)
        Dw, D1 = sy.D(w), sy.D(w, 1)
        RQ = Dw + K
        gA = sy.amp_grad(Q)
        R = np.concatenate([Dw @ Qt + F / a - sy.fex, gA + RQ.T @ lam,
                            [self.r3 * lam @ (D1 @ Qt)]])
        if not want_jac:
            return R
        J = np.zeros((2 * N + 1, 2 * N + 1))
        hA = sy.amp_hess(Q)
        J[:N, :N] = RQ
        J[:N, 2 * N] = D1 @ Qt
        J[N:2 * N, :N] = a * (hA + HL)
        J[N:2 * N, N:2 * N] = RQ.T
        J[N:2 * N, 2 * N] = D1.T @ lam
        J[2 * N, :N] = self.r3 * (D1.T @ lam)
        J[2 * N, N:2 * N] = self.r3 * (D1 @ Qt)
        J[2 * N, 2 * N] = self.r3 * lam @ (sy.D(w, 2) @ Qt)
        Js = np.zeros(2 * N + 1)
        Js[:N] = (K @ Q - F) / a
        Js[N:2 * N] = HL @ Q
        return R, J, Js


def _start_multipliers(sys, Q, w, alpha):
    _, RQ, Rw, _ = sys.jacobian(Q, w, alpha)
    A = np.vstack([RQ.T, Rw[None, :]])
    b = np.concatenate([-sys.amp_grad(Q), [0.0]])
    lam = np.linalg.lstsq(A, b, rcond=None)[0]
    return lam


def _peak_start(sys, alpha, w_window, Qguess=None, progress=False):
    frf = forced_response(sys, alpha, w_window, Q0=Qguess, progress=progress)
    wp, _, Qp = frf_peak(sys, frf)
    return wp, Qp


@_single
def backbone(sys: HBSystem, alpha_range, w_window, *, ds=0.05, ds_max=1.0, ds_min=1e-3,
             max_steps=600, max_restarts=8, restart_eps=1e-3, w_global=None,
             progress=False) -> Backbone:
    """Trace the backbone from ``alpha_range[0]`` to ``alpha_range[1]`` (N).

    Parameters
    ----------
    sys : HBSystem
    alpha_range : (float, float)
        Force amplitudes (N), 0 < alpha_min < alpha_max.
    w_window : (float, float)
        Frequency window (rad/s) of the stage-1 forced response at ``alpha_min``; must contain
        the stuck-linear resonance of interest.
    ds, ds_max, ds_min : float
        Arclength steps in the scaled unknowns.
    max_restarts : int
        Restarts allowed at singular points (stage 4).
    restart_eps : float
        Restart offset in ``log alpha`` (spec: 1e-3).
    w_global : (float, float), optional
        Frequency window (rad/s) searched for the global maximum at every restart; when that
        maximum is higher than the continued local one, the backbone jumps to it (two-peak
        forced responses). After the sweep, the ridges of the peaks found at ``alpha_max`` (from
        the stuck and sliding linear peaks in the window) are traced down in force; where such a
        ridge lies above the traced backbone down to its fold, the backbone switches to it at
        the fold (recorded as a singular point; beam: the friction-limited free-mode peak,
        which only exists once the force can overcome the friction dissipation, overtakes the
        partially stuck ridge long before that ridge is lost). Ridges that do not exist at
        ``alpha_max`` (e.g. superharmonic resonances at intermediate forces) are not searched.
        Default: only the local ridge is followed.
    """
    a0, a1 = _increasing_range("alpha_range", alpha_range, " (N)")
    w_lo = check_positive("w_window[0] (rad/s)", w_window[0])
    w_hi = check_positive("w_window[1] (rad/s)", w_window[1])
    if w_lo == w_hi:
        raise ParameterError(f"w_window must have two different ends, got {w_window}")
    if w_global is not None:
        _increasing_range("w_global", w_global, " (rad/s)")
    if int(max_restarts) != max_restarts or max_restarts < 0:
        raise ParameterError(f"max_restarts must be an integer >= 0, got {max_restarts!r}")
    check_positive("restart_eps", restart_eps)
    s_end = math.log(a1)
    N = sys.N
    segs_y, segs_s, segs_it, seg_id = [], [], [], []
    singular, events = [], []
    s_start = math.log(a0)
    window = (w_lo, w_hi)
    stop = ""
    Qguess = None
    y_restart = None
    for seg in range(max_restarts + 1):
        alpha = math.exp(s_start)
        if y_restart is not None:
            wp, Qp, lam = y_restart
        else:
            wp, Qp = _peak_start(sys, alpha, window, Qguess)
            lam = _start_multipliers(sys, Qp, wp, alpha)
        # scales of the unknowns
        qt = np.abs(Qp).max() / alpha
        ls = np.abs(lam).max()
        D1Q = sys.D(wp, 1) @ (Qp / alpha)
        opt = _Optimality(sys, r3scale=1.0 / max(ls * np.abs(D1Q).max(), 1e-300))
        y0 = np.concatenate([Qp / alpha, lam, [wp]])
        sc = np.concatenate([np.full(N, qt), np.full(N, ls), [wp], [1.0]])
        evs = {f"slip_onset_{i}": (lambda y, s, i=i: float(
            sys.stuck_margin(math.exp(s) * y[:N])[i]) / (sys.contacts[i].element.kt * qt
                                                          * math.exp(s)))
            for i in range(len(sys.contacts))}
        try:
            br = _continue_backbone(opt, y0, s_start, s_end, ds, ds_min, ds_max, max_steps, sc,
                                    evs, progress)
        except ConvergenceError as exc:
            if seg == 0:
                raise ConvergenceError(f"backbone cannot start at alpha={alpha:.6g} N, "
                                       f"w={wp:.6g} rad/s: {exc}") from None
            stop = f"segment {seg} could not start at alpha={math.exp(s_start):.6g} N: {exc}"
            break
        segs_y.append(br.x)
        segs_s.append(br.lam)
        segs_it.append(br.newton_iters)
        seg_id.append(np.full(len(br.lam), seg))
        for e in br.events:
            events.append({"kind": e.kind, "alpha": math.exp(e.lam), "w": float(e.x[2 * N]),
                           "segment": seg})
        stop = br.stop_reason
        if not stop.startswith("corrector_failed"):
            break
        s_fail = float(br.lam[-1])
        w_fail = float(br.x[-1][2 * N])
        margin_before = sys.stuck_margin(math.exp(s_fail) * br.x[-1][:N])
        singular.append({"alpha": math.exp(s_fail), "w": w_fail, "reason": stop})
        s_start = s_fail + restart_eps
        if s_start >= s_end:
            break
        # restart (stage 4) just beyond the singular point: a Newton solve of the optimality
        # system from the last point, else stages 1-3 from a new forced response; offsets
        # restart_eps, 10x, 30x (the kink region of a non-smooth point can be wide)
        y_restart = None
        for eps in (restart_eps, 10 * restart_eps, 30 * restart_eps):
            a_r = math.exp(s_fail + eps)
            try:
                w_r, Q_r, l_r, _ = backbone_point(sys, a_r, w_fail, math.exp(eps) * Qt_last(br, N)
                                                  * math.exp(s_fail), br.x[-1][N:2 * N],
                                                  tol=1e-8)
                y_restart = (w_r, Q_r, l_r)
            except ConvergenceError:
                try:
                    wg, Qg = _peak_start(sys, a_r, (w_fail * 0.7, w_fail * 1.15))
                    w_r, Q_r, l_r, _ = backbone_point(sys, a_r, wg, Qg, tol=1e-8)
                    y_restart = (w_r, Q_r, l_r)
                except ConvergenceError:
                    pass
            if w_global is not None:
                # the tracked local maximum may have vanished or been overtaken by another
                # ridge (two-peak responses, spec 2.3 4(d)): try the optimality system from the
                # linear peaks of the stuck and the sliding structures in the window and keep
                # the highest maximum
                for wg, Qg in _linear_peak_guesses(sys, a_r, w_global):
                    try:
                        w_c, Q_c, l_c, _ = backbone_point(sys, a_r, wg, Qg, tol=1e-8)
                    except ConvergenceError:
                        continue
                    if not (w_global[0] <= w_c <= w_global[1]):
                        continue
                    if y_restart is None or sys.amplitude(Q_c) > sys.amplitude(y_restart[1]) * (
                            1 + 1e-6):
                        y_restart = (w_c, Q_c, l_c)
            if y_restart is None:
                continue
            s_start = s_fail + eps
            break
        if y_restart is None:
            stop = f"restart failed after singular point at alpha={math.exp(s_fail):.6g} N"
            break
        margin_after = sys.stuck_margin(y_restart[1])
        # a contact whose stuck margin is ~0 at the failure point (within 1 % of its slip
        # force) or which changes from stuck to slipping across the restart starts to slip there
        onset = [i for i in range(len(margin_before))
                 if (margin_before[i] <= 0 < margin_after[i])
                 or abs(margin_before[i]) <= 1e-2 * sys.contacts[i].element.mu
                 * sys.contacts[i].element.n0]
        if onset:
            singular[-1]["slip_onset_contacts"] = onset
    if stop.startswith("corrector_failed"):
        # where in physical units (the driver reports lam = log alpha) and why it stopped
        why = (f"max_restarts={max_restarts} reached" if len(singular) > max_restarts
               else f"within restart_eps={restart_eps:g} of alpha_range[1]")
        stop += (f" [backbone stopped at alpha={math.exp(segs_s[-1][-1]):.6g} N, "
                 f"w={segs_y[-1][-1][2 * N]:.6g} rad/s: {why}]")
    Y = np.vstack(segs_y)
    S = np.concatenate(segs_s)
    alpha = np.exp(S)
    Qt = Y[:, :N]
    Q = Qt * alpha[:, None]
    lam = Y[:, N:2 * N]
    w = Y[:, 2 * N]
    Am = np.array([sys.amplitude(q) for q in Q])
    segs = np.concatenate(seg_id)
    its = np.concatenate(segs_it)
    if w_global is not None and stop == "lam_range":
        alt = _other_ridges(sys, alpha, w, Am, w_global, math.log(a0), ds, ds_min, ds_max,
                            max_steps)
        if alt is not None:
            a_alt, w_alt, Q_alt, l_alt, am_alt, it_alt, a_sw = alt
            keep = alpha < a_sw
            new = a_alt >= a_sw
            order = np.argsort(a_alt[new])
            # singular points and events of the abandoned part describe a ridge no longer on
            # the backbone
            singular = [p for p in singular if p["alpha"] < a_sw]
            events = [e for e in events if e["alpha"] < a_sw]
            o = np.argsort(alpha)
            singular.append({"alpha": float(a_sw), "w": float(w_alt[new][order][0]),
                             "reason": "global maximum jumps to another ridge (from w = "
                                       f"{np.interp(a_sw, alpha[o], w[o]):.6g} rad/s)"})
            alpha = np.concatenate([alpha[keep], a_alt[new][order]])
            w = np.concatenate([w[keep], w_alt[new][order]])
            Q = np.vstack([Q[keep], Q_alt[new][order]])
            lam = np.vstack([lam[keep], l_alt[new][order]])
            Am = np.concatenate([Am[keep], am_alt[new][order]])
            its = np.concatenate([its[keep], it_alt[new][order]])
            seg_new = int(segs[keep].max()) + 1 if keep.any() else 0
            segs = np.concatenate([segs[keep], np.full(int(new.sum()), seg_new)])
    return Backbone(alpha=alpha, w=w, Am=Am, Q=Q, lam=lam, eta_alpha=lam @ sys.fex,
                    segments=segs, singular_points=singular, events=events,
                    newton_iters=its, stop_reason=stop)


@_single
def _continue_backbone(opt, y0, s_start, s_end, ds, ds_min, ds_max, max_steps, sc, evs,
                       progress):
    return continue_branch(opt.residual, opt.jacobian, y0, s_start, ds=ds, ds_min=ds_min,
                           ds_max=ds_max, lam_range=(s_start, s_end), max_steps=max_steps,
                           tol=1e-8, max_iter=8, max_angle_deg=10.0, scale=sc, events=evs,
                           progress=progress)


def _other_ridges(sys, alpha, w, Am, w_global, s_min, ds, ds_min, ds_max, max_steps):
    """Ridges of other peaks traced down from the largest force; returns the one whose upper
    branch overtakes the traced backbone first (lowest switching force), or None.

    The forced response can have several peaks (beam: the stuck-tip mode and, once the force
    can drive the sliding structure, the free first mode); the backbone of *global* maxima
    jumps to the other ridge where that ridge first rises above it (at its fold).
    """
    N = sys.N
    a_end, s_end = alpha[-1], math.log(alpha[-1])
    best = None
    o = np.argsort(alpha)
    for wg, Qg in _linear_peak_guesses(sys, a_end, w_global):
        try:
            w_c, Q_c, l_c, _ = backbone_point(sys, a_end, wg, Qg, tol=1e-8)
        except ConvergenceError:
            continue
        if not (w_global[0] <= w_c <= w_global[1]):
            continue
        D1Q = sys.D(w_c, 1) @ (Q_c / a_end)
        opt = _Optimality(sys, r3scale=1.0 / max(np.abs(l_c).max() * np.abs(D1Q).max(), 1e-300))
        y0 = np.concatenate([Q_c / a_end, l_c, [w_c]])
        sc = np.concatenate([np.full(N, np.abs(Q_c).max() / a_end), np.full(N, np.abs(l_c).max()),
                             [w_c], [1.0]])
        last = [s_end]

        def past_fold(y, s, last=last):
            # the ridge turned back up in force: its upper branch (the peaks) ended at a fold
            turned = s > last[0]
            last[0] = s
            return turned

        try:
            br = continue_branch(opt.residual, opt.jacobian, y0, s_end, ds=ds, ds_min=ds_min,
                                 ds_max=ds_max, lam_range=(s_min, s_end), max_steps=max_steps,
                                 direction=-1, tol=1e-8, max_iter=8, max_angle_deg=10.0,
                                 scale=sc, callback=past_fold)
        except ConvergenceError:
            continue
        s = br.lam
        x = br.x
        its = br.newton_iters
        upper = len(s)
        for i in range(1, len(s)):
            if s[i] > s[i - 1]:
                upper = i
                break
        s, x, its = s[:upper], x[:upper], its[:upper]
        folds = [e for e in br.events_of("fold") if e.index < upper and e.lam < s[-1]]
        if folds:  # the located turning point is the lowest force of this ridge
            s = np.append(s, folds[0].lam)
            x = np.vstack([x, folds[0].x])
            its = np.append(its, 0)
        a_r = np.exp(s)
        Q_r = x[:, :N] * a_r[:, None]
        am_r = np.array([sys.amplitude(q) for q in Q_r])
        am_main = np.exp(np.interp(np.log(a_r), np.log(alpha[o]), np.log(Am[o])))
        # same ridge as the traced backbone (to the corrector tolerance) or above it
        above = am_r >= am_main * (1 - 1e-6)
        if not above[0]:
            continue
        k = 0
        while k + 1 < len(above) and above[k + 1]:
            k += 1
        if not np.any(am_r[:k + 1] > am_main[:k + 1] * (1 + 1e-6)):
            continue  # nothing gained: the backbone already follows this ridge
        a_sw = a_r[k]
        if best is None or a_sw < best[-1]:
            best = (a_r, x[:, 2 * N], Q_r, x[:, N:2 * N], am_r, its, a_sw)
    return best


def _linear_peak_guesses(sys, alpha, window, npts=400):
    """(w, Q) at the RMS peaks of the stuck and of the sliding (kt = 0) linear responses."""
    out = []
    ws = np.linspace(window[0], window[1], npts)
    for stuck in (True, False):
        M, C, K = sys.linear_matrices(stuck=stuck, slip=not stuck)
        amps = []
        for w in ws:
            x = np.linalg.solve(K - w * w * M + 1j * w * C, sys.fex[:sys.n])
            amps.append(abs(x[sys.dof]))
        amps = np.array(amps)
        for i in range(1, npts - 1):
            if amps[i] >= amps[i - 1] and amps[i] > amps[i + 1]:
                x = np.linalg.solve(K - ws[i] ** 2 * M + 1j * ws[i] * C, alpha * sys.fex[:sys.n])
                Q = np.zeros(sys.N)
                Q[:sys.n], Q[sys.n:2 * sys.n] = x.real, -x.imag
                out.append((ws[i], Q))
    return out


def Qt_last(br, N):
    return br.x[-1][:N]


def backbone_point(sys: HBSystem, alpha, w_guess, Q_guess, lam_guess=None, tol=1e-8):
    """Solve the optimality system at one force ``alpha`` (N) by Newton (no continuation)."""
    s = math.log(alpha)
    Qt = np.asarray(Q_guess, float) / alpha
    lam = _start_multipliers(sys, Q_guess, w_guess, alpha) if lam_guess is None else lam_guess
    D1Q = sys.D(w_guess, 1) @ Qt
    opt = _Optimality(sys, r3scale=1.0 / max(np.abs(lam).max() * np.abs(D1Q).max(), 1e-300))
    y0 = np.concatenate([Qt, lam, [w_guess]])

    def f(y):
        J, _ = opt.jacobian(y, s)
        return opt.residual(y, s), J

    y, ok, its, nr = newton(f, y0, tol=tol, max_iter=30)
    if not ok:
        raise ConvergenceError(f"optimality system at alpha={alpha:g} N did not converge "
                               f"(|G|={nr:.3e})")
    N = sys.N
    return float(y[2 * N]), y[:N] * alpha, y[N:2 * N], its


# ---------------------------------------------------------------------------- linear modes
def linear_modes(M, K):
    """Undamped modes: (w (rad/s), mass-normalised shapes (n, nmodes))."""
    from scipy.linalg import eigh

    ev, V = eigh(K, M)
    return np.sqrt(np.maximum(ev, 0.0)), V


# ------------------------------------------------------------------------- phase resonance
@dataclass
class PhaseResonance:
    """Phase-resonance backbone: points where the driven DOF lags the force by 90 deg."""

    alpha: np.ndarray
    w: np.ndarray
    Am: np.ndarray
    Q: np.ndarray
    stop_reason: str


@_single
def phase_resonance(sys: HBSystem, alpha_range, w_guess, *, force_dof=None, ds=0.05,
                    ds_max=0.3, max_steps=600, progress=False) -> PhaseResonance:
    """Continue ``R = 0`` with the quadrature condition ``Q^c1_k = 0`` in ``log alpha``.

    ``force_dof`` (default: the DOF with the largest entry of the load pattern) is the DOF
    whose cosine fundamental must vanish. ``w_guess`` (rad/s) is near the stuck resonance.
    """
    a0, a1 = _increasing_range("alpha_range", alpha_range, " (N)")
    w_guess = check_positive("w_guess (rad/s)", w_guess)
    N = sys.N
    k = _dof_or_load("force_dof", sys, force_dof)
    e = np.zeros(N)
    e[k] = 1.0

    def res(y, s):
        a = math.exp(s)
        Qt, w = y[:N], y[N]
        F, _, _ = sys.fnl(a * Qt)
        return np.append(sys.D(w) @ Qt + F / a - sys.fex, Qt[k])

    def jac(y, s):
        a = math.exp(s)
        Qt, w = y[:N], y[N]
        F, K, _ = sys.fnl(a * Qt)
        J = np.zeros((N + 1, N + 1))
        J[:N, :N] = sys.D(w) + K
        J[:N, N] = sys.D(w, 1) @ Qt
        J[N, :N] = e
        Js = np.zeros(N + 1)
        Js[:N] = (K @ (a * Qt) - F) / a
        return J, Js

    # start: linear (stuck) quadrature point near w_guess
    s0 = math.log(a0)
    Q0 = sys.linear_response(w_guess, a0)
    y, ok, its, nr = newton(lambda y: (res(y, s0), jac(y, s0)[0]),
                            np.append(Q0 / a0, w_guess), tol=1e-11, max_iter=40)
    if not ok:
        raise ConvergenceError(f"phase resonance cannot start near w={w_guess:g} rad/s")
    sc = np.append(np.full(N, np.abs(y[:N]).max()), [y[N], 1.0])
    br = continue_branch(res, jac, y, s0, ds=ds, ds_max=ds_max, ds_min=1e-7,
                         lam_range=(s0, math.log(a1)), max_steps=max_steps, tol=1e-10,
                         max_angle_deg=10.0, scale=sc, progress=progress, kink_ds=1e-5)
    alpha = np.exp(br.lam)
    Q = br.x[:, :N] * alpha[:, None]
    return PhaseResonance(alpha, br.x[:, N], np.array([sys.amplitude(q) for q in Q]), Q,
                          br.stop_reason)


# ----------------------------------------------------------------------------------- dNNM
@dataclass
class DNNM:
    """Damped nonlinear normal mode with the extended energy balance (spec 3.1).

    Attributes
    ----------
    a : modal amplitude (sqrt(kg) m); w0 : (rad/s); xi : extra damping (1/s, < 0 = injection);
    zeta : ``-xi / (2 w0)``; Q : ``a psi`` (m); Am : RMS amplitude at the monitor (m);
    F_eq : force amplitude (N) whose work balances the dissipation (single point, in phase).
    """

    a: np.ndarray
    w0: np.ndarray
    xi: np.ndarray
    zeta: np.ndarray
    Q: np.ndarray
    Am: np.ndarray
    F_eq: np.ndarray
    stop_reason: str


@_single
def dnnm(sys: HBSystem, a_range, mode: int = 0, *, force_dof=None, harmonics="all", ds=0.05,
         ds_max=0.3, max_steps=600, progress=False) -> DNNM:
    """dNNM continuation in ``log a`` (spec 3.1, paper eqs. 8-12, printed typos fixed).

    Unknowns ``(psi, w0, xi)``: ``Dbar(w0, xi) psi + F_nl(a psi)/a = 0`` with ``C -> C + xi M``,
    ``psi^c1 . M psi^c1 + psi^s1 . M psi^s1 = 1``, phase ``psi^s1_k = 0`` (k = force DOF).
    Energy balance: ``E_d = -xi pi w0 sum_n n^2 (Q^cn.M Q^cn + Q^sn.M Q^sn)`` (``harmonics='all'``)
    or the fundamental only; ``F_eq = E_d / (pi |Q^1_k|)``.
    """
    if harmonics not in ("all", "fundamental"):
        raise ParameterError(f"harmonics must be 'all' or 'fundamental', got {harmonics!r}")
    a0, a1 = _increasing_range("a_range", a_range, " (modal amplitude, sqrt(kg) m)")
    n, N = sys.n, sys.N
    if int(mode) != mode or not 0 <= mode < n:
        raise ParameterError(f"mode must be an integer in [0, {n - 1}], got {mode!r}")
    mode = int(mode)
    k = _dof_or_load("force_dof", sys, force_dof)
    M = sys.M
    Mst, Cst, Kst = sys.linear_matrices(stuck=True)
    wm, V = linear_modes(Mst, Kst)
    phi = V[:, mode]
    if phi[k] < 0:
        phi = -phi
    blkM = np.zeros((N, N))
    blkM[:n, :n] = M
    blkM[n:2 * n, n:2 * n] = M
    ks = n + k
    # the dynamic rows are scaled to O(1) (w^2 M phi): an absolute corrector tolerance on
    # N/sqrt(kg) would be below rounding for stiff structures (beam: K ~ 1e9 N/m)
    rs = 1.0 / max(wm[mode] ** 2 * np.abs(M @ phi).max(), 1e-300)

    def res(y, s):
        a = math.exp(s)
        psi, w0, xi = y[:N], y[N], y[N + 1]
        F, _, _ = sys.fnl(a * psi)
        return np.concatenate([rs * (sys.D(w0, extra_xi=xi) @ psi + F / a),
                               [psi @ blkM @ psi - 1.0, psi[ks]]])

    def jac(y, s):
        a = math.exp(s)
        psi, w0, xi = y[:N], y[N], y[N + 1]
        F, K, _ = sys.fnl(a * psi)
        J = np.zeros((N + 2, N + 2))
        J[:N, :N] = sys.D(w0, extra_xi=xi) + K
        J[:N, N] = sys.D(w0, 1, extra_xi=xi) @ psi
        J[:N, N + 1] = sys.D_xi(w0) @ psi
        J[N, :N] = 2 * blkM @ psi
        J[:N] *= rs
        J[N + 1, ks] = 1.0
        Js = np.zeros(N + 2)
        Js[:N] = rs * (K @ (a * psi) - F) / a
        return J, Js

    s0 = math.log(a0)
    psi0 = np.zeros(N)
    psi0[:n] = phi
    cm = phi @ sys.C @ phi
    y0 = np.concatenate([psi0, [wm[mode], -cm]])
    sc = np.concatenate([np.full(N, np.abs(phi).max()), [wm[mode], max(abs(cm), 1e-3 * wm[mode])],
                         [1.0]])
    br = continue_branch(res, jac, y0, s0, ds=ds, ds_max=ds_max, ds_min=1e-7,
                         lam_range=(s0, math.log(a1)), max_steps=max_steps, tol=1e-10,
                         max_angle_deg=10.0, scale=sc, progress=progress, kink_ds=1e-5)
    a = np.exp(br.lam)
    psi = br.x[:, :N]
    w0 = br.x[:, N]
    xi = br.x[:, N + 1]
    Q = psi * a[:, None]
    nh = sys.nh
    Ed = np.zeros(len(a))
    for i in range(len(a)):
        tot = 0.0
        for h in range(1, (nh if harmonics == "all" else 1) + 1):
            j = 2 * (h - 1) * n
            qc, qs = Q[i, j:j + n], Q[i, j + n:j + 2 * n]
            tot += h * h * (qc @ M @ qc + qs @ M @ qs)
        Ed[i] = -xi[i] * math.pi * w0[i] * tot
    q1 = np.hypot(Q[:, k], Q[:, n + k])
    Feq = Ed / (math.pi * q1)
    return DNNM(a, w0, xi, -xi / (2 * w0), Q, np.array([sys.amplitude(q) for q in Q]), Feq,
                br.stop_reason)


# ------------------------------------------------------------------------ condensed solver
@_single
def solve_condensed(sys: HBSystem, w, alpha, *, u0=None, tol=1e-12, max_iter=60):
    """Periodic response at one frequency by harmonic balance condensed on the contact
    coordinates (exact for localised nonlinearities; an independent route to the full HB).

    With ``Z = D(w)^{-1} [P^T, F_ex]``: ``u - alpha P Z_f + P Z_P F_c(u) = 0`` in the
    ``2 nh x (contact components)`` unknowns ``u = P Q``; damped Newton with backtracking, and
    a homotopy in ``alpha`` (x1e-3 -> 1, 30 log steps) when Newton from the linear guess fails.
    Returns ``Q`` (m).
    """
    P = np.vstack(sys.P)
    m = P.shape[0]
    Dw = sys.D(w)
    Z = np.linalg.solve(Dw, np.column_stack([P.T, sys.fex]))
    G = P @ Z[:, :m]
    ul = P @ Z[:, m]
    offs = np.cumsum([0] + [p.shape[0] for p in sys.P])

    def FK(u):
        F = np.zeros(m)
        K = np.zeros((m, m))
        for i, c in enumerate(sys.contacts):
            sl = slice(offs[i], offs[i + 1])
            r = c.element.evaluate(u[sl], sys.nh)
            F[sl] = r.F
            K[sl, sl] = r.K
        return F, K

    def newton_at(a, u):
        F, K = FK(u)
        R = u - a * ul + G @ F
        nr = np.abs(R).max()
        scale = max(np.abs(a * ul).max(), 1e-300)
        for _ in range(max_iter):
            if nr <= tol * scale:
                return u, True
            du = -np.linalg.solve(np.eye(m) + G @ K, R)
            step = 1.0
            while step > 1e-4:
                un = u + step * du
                Fn, Kn = FK(un)
                Rn = un - a * ul + G @ Fn
                if np.abs(Rn).max() < nr:
                    break
                step *= 0.5
            u, F, K, R, nr = un, Fn, Kn, Rn, np.abs(Rn).max()
        return u, nr <= 1e3 * tol * scale

    u0 = alpha * ul if u0 is None else np.asarray(u0, float)
    u, ok = newton_at(alpha, u0)
    if not ok:
        u = 1e-3 * alpha * ul
        for a in np.geomspace(1e-3 * alpha, alpha, 31)[1:]:
            u, ok = newton_at(a, u * 1.0)
            if not ok:
                break
    if not ok:
        raise ConvergenceError(f"condensed harmonic balance at w={w:.6g} rad/s, "
                               f"alpha={alpha:.6g} N did not converge")
    F, _ = FK(u)
    return alpha * Z[:, m] - Z[:, :m] @ F
