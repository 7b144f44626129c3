"""Forced responses: one frequency (:func:`solve_at`, :func:`solve_condensed`), a curve over
frequency (:func:`forced_response`, result :class:`FRF`), its brute-force peak
(:func:`frf_peak`), and :func:`forced_response_point`, the pure, picklable per-case function of
parameter sweeps (a registered model of :mod:`fesub.models` at one force and frequency).

Curves use the shared pseudo-arclength driver :func:`fesub.continuation.continue_branch`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..continuation import continue_branch, newton
from ..errors import ConvergenceError, check_positive
from ..io import summary_record
from ..models import build
from ._common import _Curve, _go_on, _single, _steps
from .system import HBSystem

__all__ = ["FRF", "forced_response", "solve_at", "frf_peak", "solve_condensed",
           "forced_response_point"]


def _peak_results(w, Am, prefix=""):
    """Summary entries of the largest amplitude of a curve (sampled points)."""
    if not len(Am):
        return {}
    i = int(np.argmax(Am))
    return {f"{prefix}Am_max": (float(Am[i]), "m"), f"{prefix}w_at_Am_max": (float(w[i]), "rad/s"),
            f"{prefix}f_at_Am_max": (float(w[i]) / (2 * math.pi), "Hz")}


@dataclass
class FRF(_Curve):
    """Forced-response curve at fixed force amplitude ``alpha``.

    Attributes
    ----------
    alpha : float
        Force amplitude (N).
    w : (npts,) ndarray
        Excitation frequency (rad/s), in continuation order (turning points allowed).
    Q : (npts, N) ndarray
        Harmonic coefficients (m), blocks of the n DOFs: cos 1, sin 1, cos 2, ...
    Am : (npts,) ndarray
        RMS amplitude at the monitor DOF (m).
    stop_reason : str
        Why the continuation stopped (``'lam_range'``: the whole range; ``'interrupted'``).

    Saved files (``save``/``fesub.load``): dimensions ``point`` and ``coefficient``, ``w`` a
    coordinate along ``point``, ``alpha`` a scalar variable.
    """

    alpha: float
    w: np.ndarray
    Q: np.ndarray
    Am: np.ndarray
    stop_reason: str

    kind = "frf"

    def to_xarray(self):
        return self._dataset(
            {"alpha": ((), float(self.alpha), {"units": "N", "long_name": "force amplitude"}),
             "Q": self._Q(self.Q),
             "Am": ("point", np.asarray(self.Am, float),
                    {"units": "m", "long_name": "RMS amplitude at the monitor DOF"})},
            {"w": ("point", np.asarray(self.w, float),
                   {"units": "rad/s", "long_name": "excitation frequency"})},
            {"stop_reason": self.stop_reason})

    @classmethod
    def from_xarray(cls, ds):
        return cls(float(ds["alpha"].values), ds["w"].values.copy(), ds["Q"].values.copy(),
                   ds["Am"].values.copy(), ds.attrs["stop_reason"])

    def summary(self) -> dict:
        res = {"points": (len(self.w), None), "stop_reason": (self.stop_reason, None)}
        if len(self.w):
            res.update(w_first=(float(self.w[0]), "rad/s"), w_last=(float(self.w[-1]), "rad/s"))
        res.update(_peak_results(self.w, self.Am))
        return summary_record(self.kind, {"alpha": (float(self.alpha), "N")}, res)


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
            _go_on(br)
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
                    max_steps=2000, progress=False, qscale=None, tol=1e-10) -> FRF:
    """Forced-response curve over ``w_range = (w_start, w_end)`` (rad/s) at force ``alpha`` (N).

    Continued by pseudo-arclength in ``w`` (turning points allowed); the unknowns are scaled by
    ``qscale`` (m; default: the largest stuck-linear amplitude in the range) and ``w_start``.
    ``tol`` is the corrector tolerance on ``max |R| / alpha`` (N/N); near a sharp resonance at
    large force the elastic and inertial terms reach 1e5 and more, so 1e-10 can lie below their
    rounding (the corrector then fails), 1e-8 does not.

    A KeyboardInterrupt during the continuation returns the curve computed so far with
    ``stop_reason = 'interrupted'``.
    """
    alpha = check_positive("alpha (force amplitude, N)", alpha)
    tol = check_positive("tol", tol)
    max_steps = _steps("max_steps", max_steps)
    w0, w1 = float(w_range[0]), float(w_range[1])
    check_positive("w_range[0] (rad/s)", w0)
    check_positive("w_range[1] (rad/s)", w1)
    direction = 1 if w1 > w0 else -1
    Qs = solve_at(sys, w0, alpha, Q0)
    if qscale is None:
        ws = np.linspace(min(w0, w1), max(w0, w1), 60)
        qscale = max(np.abs(sys.linear_response(w, alpha)).max() for w in ws)
    sc = np.append(np.full(sys.N, qscale), abs(w0))

    last = {}  # the driver asks for the Jacobian first: keep R from the same contact evaluation

    def res(Q, w):
        if last.get("key") == (Q.tobytes(), float(w)):
            return last["R"]
        return sys.residual(Q, w, alpha) / alpha

    def jac(Q, w):
        R, RQ, Rw, _ = sys.jacobian(Q, w, alpha)
        last["key"], last["R"] = (Q.tobytes(), float(w)), R / alpha
        return RQ / alpha, Rw / alpha

    br = continue_branch(res, jac, Qs, w0, ds=ds, ds_max=ds_max, ds_min=1e-7,
                         lam_range=(min(w0, w1), max(w0, w1)), max_steps=max_steps,
                         direction=direction, tol=tol,
                         max_angle_deg=10.0, scale=sc, progress=progress, kink_ds=1e-5)
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


def forced_response_point(model_name: str, params: dict, force: float, omega: float) -> dict:
    """Periodic forced response of a registered model at one force (N) and frequency (rad/s).

    Pure and picklable (for sweep engines). ``model_name`` is a harmonic-balance model of
    :data:`fesub.models.MODELS`, ``params`` its builder's parameter overrides. Returns a
    JSON-friendly dict: ``converged``, ``Am`` (RMS amplitude at the monitor DOF, m),
    ``harmonic_amplitudes`` (m, k = 1..nh), ``energy_dissipated`` (J per cycle),
    ``stuck_margin`` (per contact, > 0 = slipping), ``Q`` (list, m) and ``message`` on failure
    (then NaN values).
    """
    from .fourier import harmonic_amplitudes

    sy = build(model_name, **dict(params or {}))
    out = {"model": model_name, "params": dict(params or {}), "force": float(force),
           "omega": float(omega), "nh": sy.nh}
    try:
        Q = solve_at(sy, float(omega), float(force))
    except ConvergenceError as exc:
        out.update(converged=False, message=str(exc), Am=math.nan,
                   harmonic_amplitudes=[math.nan] * sy.nh, energy_dissipated=math.nan,
                   stuck_margin=[math.nan] * len(sy.contacts), Q=[])
        return out
    out.update(converged=True, message="", Am=sy.amplitude(Q),
               harmonic_amplitudes=harmonic_amplitudes(Q, sy.n, sy.nh, sy.dof).tolist(),
               energy_dissipated=float(sy.energy_dissipated(Q)),
               stuck_margin=sy.stuck_margin(Q).tolist(), Q=Q.tolist())
    return out
