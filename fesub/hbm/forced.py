"""Forced responses: one frequency (:func:`solve_at`, :func:`solve_condensed`), a curve over
frequency (:func:`forced_response`, result :class:`FRF`), its brute-force peak
(:func:`frf_peak`), and :func:`forced_response_record`, one forced response as a JSON-friendly
record (what a parameter sweep's case returns).

Curves use the shared pseudo-arclength driver :func:`fesub.continuation.continue_branch`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..continuation import continue_branch
from ..errors import ConvergenceError, ModelError, check_positive
from ..io import summary_record
from ._common import (FORCED_ARRAYS, REUSE_FROM, Curve, check_analysis_memory, go_on, single_threaded,
                      step_count)
from .newton import RTOL, abs_dynamic_stiffness, damped_newton
from .stability import Stability, frf_stability, with_stability
from .system import HBSystem

__all__ = ["FRF", "forced_response", "solve_at", "frf_peak", "solve_condensed",
           "forced_response_record"]


def _peak_results(w, Am, prefix=""):
    """Summary entries of the largest amplitude of a curve (sampled points)."""
    if not len(Am):
        return {}
    i = int(np.argmax(Am))
    return {f"{prefix}Am_max": (float(Am[i]), "m"), f"{prefix}w_at_Am_max": (float(w[i]), "rad/s"),
            f"{prefix}f_at_Am_max": (float(w[i]) / (2 * math.pi), "Hz")}


@dataclass
class FRF(Curve):
    """Forced-response curve at fixed force amplitude ``alpha``.

    Saved files (``save``/``fesub.load``): dimensions ``point`` and ``coefficient``, ``w`` a
    coordinate along ``point``, ``alpha`` a scalar variable.

    Parameters
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
    stability : Stability or None
        Floquet multipliers and stability of every point by Hill's method, with the located
        folds and other bifurcations (``forced_response(..., stability=True)``).
    """

    alpha: float
    w: np.ndarray
    Q: np.ndarray
    Am: np.ndarray
    stop_reason: str
    stability: Stability | None = None

    kind = "frf"

    def to_xarray(self):
        ds = self._dataset(
            {"alpha": ((), float(self.alpha), {"units": "N", "long_name": "force amplitude"}),
             "Q": self._Q(self.Q),
             "Am": ("point", np.asarray(self.Am, float),
                    {"units": "m", "long_name": "RMS amplitude at the monitor DOF"})},
            {"w": ("point", np.asarray(self.w, float),
                   {"units": "rad/s", "long_name": "excitation frequency"})},
            {"stop_reason": self.stop_reason})
        return with_stability(ds, self.stability)

    @classmethod
    def from_xarray(cls, ds):
        f = cls(float(ds["alpha"].values), ds["w"].values.copy(), ds["Q"].values.copy(),
                ds["Am"].values.copy(), ds.attrs["stop_reason"])
        f.stability = Stability.from_dataset(ds, f.w, np.full(len(f.w), f.alpha), f.Am)
        return f

    def summary(self) -> dict:
        res = {"points": (len(self.w), None), "stop_reason": (self.stop_reason, None)}
        if len(self.w):
            res.update(w_first=(float(self.w[0]), "rad/s"), w_last=(float(self.w[-1]), "rad/s"))
        res.update(_peak_results(self.w, self.Am))
        return summary_record(self.kind, {"alpha": (float(self.alpha), "N")}, res)


def _fixed_w_fun(sys: HBSystem, w, alpha):
    """``Q -> (R, R_Q, s)`` at fixed ``w`` (rad/s) and ``alpha`` (N); ``s`` (N) is the rounding
    scale ``max_k (|D_s| |Q| + |F_nl| + alpha |F_ex|)_k`` of the residual, ``|D_s|`` the
    absolute dynamic stiffness with the contact springs (:func:`.newton.abs_dynamic_stiffness`)."""
    Dw = sys.D(w)
    aD = abs_dynamic_stiffness(sys, w)
    af = alpha * np.abs(sys.fex)

    af = af + np.abs(sys.fs)

    def f(Q):
        F, K, _ = sys.fnl(Q, w=w)  # w: laws of the velocity (tanh friction, user laws)
        R = Dw @ Q + F - alpha * sys.fex - sys.fs
        return R, Dw + K, float(np.max(aD @ np.abs(Q) + np.abs(F) + af))
    return f


def _predictor(sys, Q0, w0, alpha0, w, alpha):
    """Warm start at ``(w, alpha)`` from the solution ``Q0`` (m) at ``(w0, alpha0)``: scaled by
    ``alpha / alpha0`` (exact in the stuck and in the fully slipping limits, where the response
    is linear in the force), then moved along the tangent ``dQ/dw = -R_Q^-1 R_w`` to ``w``."""
    Q = np.asarray(Q0, float) * (alpha / alpha0 if alpha0 is not None else 1.0)
    if w0 is not None and w0 != w:
        try:
            _, RQ, Rw, _ = sys.jacobian(Q, w0, alpha)
            dQ = np.linalg.solve(RQ, -Rw) * (w - w0)
        except (np.linalg.LinAlgError, ArithmeticError, ValueError, ConvergenceError):
            return Q
        if np.all(np.isfinite(dQ)):
            Q = Q + dQ
    return Q


def _cold_starts(sys, fun, w, alpha):
    """``get(i)``: the two linear limits at ``(w, alpha)``, contacts stuck (small force) and
    absent (large force: the slip force is then small against the load), the one of smaller
    relative residual first (computed on first use)."""
    out = []

    def get(i):
        if not out:
            Qs = [sys.linear_response(w, alpha, stuck=True),
                  sys.linear_response(w, alpha, stuck=False)]
            rel = []
            for Q in Qs:
                try:
                    R, _, s = fun(Q)
                    rel.append(float(np.abs(R).max()) / s)
                except (ArithmeticError, ValueError, ConvergenceError):
                    rel.append(math.inf)
            out.extend(Qs if rel[0] <= rel[1] else Qs[::-1])
        return out[i]
    return get


def _homotopy(sys, w, alpha):
    """Start at ``(w, alpha)`` continued in ``log(alpha)`` from ``1e-4 alpha`` (stuck-linear
    guess exact there) in the scaled unknowns ``Q / alpha``; None when it does not arrive."""
    if np.any(sys.fs) or sys.constant:
        return None  # the homotopy scales a response linear in alpha: no fixed preload
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
    except ConvergenceError:
        return None
    go_on(br)
    if br.stop_reason == "lam_range" and abs(br.lam[-1] - math.log(alpha)) < 1e-12:
        return alpha * br.x[-1]
    return None


@single_threaded
def solve_at(sys: HBSystem, w, alpha, Q0=None, tol=None, max_iter=120, *, rtol=RTOL,
             w0=None, alpha0=None, return_status=False):
    """Periodic response at one frequency ``w`` (rad/s) and force ``alpha`` (N) by damped Newton.

    Parameters
    ----------
    sys : HBSystem
    w : float
        Excitation frequency (rad/s), > 0.
    alpha : float
        Force amplitude (N), > 0.
    Q0 : (N,) array, optional
        Warm start (m): a solution at a neighbouring frequency ``w0`` and force ``alpha0``.
    tol : float, optional
        Absolute tolerance on ``max |R|`` (N); by default (None) only the relative one.
    max_iter : int
        Newton iterations over all the starts together; each of the four starts (warm, the
        two cold ones, the polish after the homotopy) gets at most a quarter of them, so that
        none starves the others.
    rtol : float
        Relative tolerance (-): converged when ``max|R| <= max(tol, rtol s)``, ``s`` (N) the
        rounding scale ``max_k (|D_s(w)| |Q| + |F_nl| + alpha |F_ex|)_k`` of the residual
        (``|D_s|``: ``|K| + (k w)^2 |M|``, ``k w |C|`` and the contact springs ``kt``, ``kn``,
        whose forces ``kt x`` the contact forces are differences of). The
        default 1e-13 is ~450 ulps of ``s``, reachable however large the elastic and inertial
        terms are against the force (a step criterion also accepts a stalled residual within
        1e3 of it once the Newton step is below 1e-12 of ``Q``); see :mod:`fesub.hbm.newton`.
    w0, alpha0 : float, optional
        Frequency (rad/s) and force (N) at which ``Q0`` was solved: the warm start is then the
        predictor ``Q0 alpha / alpha0`` moved along the tangent ``dQ/dw`` to ``w``.
    return_status : bool
        Also return the :class:`~fesub.hbm.newton.NewtonStatus`.

    Returns
    -------
    Q : (N,) ndarray
        Harmonic coefficients (m); with ``return_status``, ``(Q, status)``.

    Starts, in order, until one converges: the warm start (when ``Q0`` is given); the cold
    starts, the linear responses with the contacts stuck and absent (the one closer to a
    solution first); a homotopy in ``log(alpha)`` from ``1e-4 alpha``. Which one
    converged is ``status.start`` and every attempt is listed in ``status.attempts``.

    Raises
    ------
    ConvergenceError
        No start converged: the message names the residual reached, its tolerance and the
        iterations; ``partial`` is the best iterate, ``status`` the NewtonStatus.
    """
    w = check_positive("w (rad/s)", w)
    alpha = check_positive("alpha (force amplitude, N)", alpha)
    max_iter = step_count("max_iter", max_iter)
    atol = 0.0 if tol is None else check_positive("tol (N)", tol)
    fun = _fixed_w_fun(sys, w, alpha)
    starts = []
    if Q0 is not None:
        starts.append(("warm", lambda: _predictor(sys, Q0, w0, alpha0, w, alpha)))
    cold = _cold_starts(sys, fun, w, alpha)
    starts += [("cold", lambda: cold(0)), ("cold", lambda: cold(1))]
    starts.append(("homotopy", lambda: _homotopy(sys, w, alpha)))
    Q, status = _first_converged(fun, starts, atol=atol, rtol=rtol, max_iter=max_iter)
    if not status.converged:
        exc = ConvergenceError(f"harmonic balance at w={w:.6g} rad/s, alpha={alpha:.6g} N did "
                               f"not converge (|R|={status.residual:.3e} N after "
                               f"{status.iterations} iterations; tolerance "
                               f"{status.tolerance:.3e} N; " + "; ".join(status.attempts) + ")",
                               partial=Q)
        exc.status = status
        raise exc
    return (Q, status) if return_status else Q


def _first_converged(fun, starts, *, atol, rtol, max_iter):
    """Damped Newton from each ``(name, make_start)`` in turn until one converges, within
    ``max_iter`` iterations in all (each start at most a quarter). Returns the converged point or
    the best iterate, and a NewtonStatus whose ``attempts`` list every start tried."""
    best, best_st = None, None
    used, attempts = 0, []
    for name, make in starts:
        budget = min(max(1, max_iter // 4), max_iter - used)
        if budget <= 0:
            attempts.append(f"{name} start not tried (iterations spent)")
            continue
        x0 = make()
        if x0 is None:
            attempts.append(f"{name} start unavailable (homotopy did not reach the force)")
            continue
        x, st = damped_newton(fun, x0, rtol=rtol, atol=atol, max_iter=budget)
        used += st.iterations
        st.start = name
        outcome = "converged" if st.converged else "failed"
        attempts.append(f"{name} start {outcome} ({st.criterion}): |R|={st.residual:.3e} "
                        f"after {st.iterations} iterations")
        if best_st is None or st.converged or st.relative_residual < best_st.relative_residual:
            best, best_st = x, st
        if st.converged:
            break
    best_st.iterations = used
    best_st.attempts = attempts
    return best, best_st


@single_threaded
def forced_response(sys: HBSystem, alpha, w_range, *, Q0=None, ds=0.02, ds_max=0.1,
                    max_steps=2000, progress=False, qscale=None, tol=1e-10,
                    stability=False, reuse_factorization=None) -> FRF:
    """Forced-response curve over ``w_range = (w_start, w_end)`` (rad/s) at force ``alpha`` (N).

    Continued by pseudo-arclength in ``w`` (turning points allowed); the unknowns are scaled by
    ``qscale`` (m; default: the largest stuck-linear amplitude in the range) and ``w_start``.
    ``tol`` is the corrector tolerance on ``max |R| / alpha`` (N/N); near a sharp resonance at
    large force the elastic and inertial terms reach 1e5 and more, so 1e-10 can lie below their
    rounding (the corrector then fails), 1e-8 does not.

    ``stability=True`` adds the Floquet multipliers of every point by Hill's method and the
    located folds and other bifurcations (:func:`~fesub.hbm.stability.frf_stability`;
    ``FRF.stability``, drawn by :func:`fesub.hbm.plots.stability`).

    A KeyboardInterrupt during the continuation returns the curve computed so far with
    ``stop_reason = 'interrupted'``.

    Parameters
    ----------
    sys : HBSystem
        Structure, contacts and load pattern.
    alpha : float
        Force amplitude (N), > 0.
    w_range : (float, float)
        Start and end frequency (rad/s), both > 0; the curve is continued from the first to
        the second (downwards when the second is smaller).
    Q0 : (N,) array, optional
        Warm start of the first point (m), see :func:`solve_at`.
    ds, ds_max : float, optional
        Initial and largest arclength step (dimensionless: in the unknowns scaled by
        ``qscale`` and ``w_start``); defaults 0.02 and 0.1.
    max_steps : int, optional
        Continuation steps allowed; default 2000.
    progress : bool, optional
        tqdm progress bar.
    qscale : float, optional
        Scale of the harmonic coefficients (m); default the largest stuck-linear amplitude in
        the range.
    tol : float, optional
        Corrector tolerance on ``max |R| / alpha`` (N/N, dimensionless); default 1e-10.
    stability : bool, optional
        Also compute the stability of every point by Hill's method.
    reuse_factorization : bool, optional
        Solve the continuation's linear systems by GMRES preconditioned with an earlier
        Jacobian's LU factors (``continue_branch(reuse_factorization=True)``); default None:
        on from ``N >= REUSE_FROM`` (1000) harmonic unknowns, where the
        dense factorisation dominates a step.

    Returns
    -------
    FRF
        Frequencies (rad/s), harmonic coefficients (m), RMS amplitudes at the monitor DOF (m).

    Raises
    ------
    ParameterError
        Before the first step, when the analysis's arrays
        (:meth:`~fesub.hbm.HBSystem.memory_bytes`) exceed :mod:`fesub.limits`' memory limit.
    """
    alpha = check_positive("alpha (force amplitude, N)", alpha)
    tol = check_positive("tol", tol)
    max_steps = step_count("max_steps", max_steps)
    w0, w1 = float(w_range[0]), float(w_range[1])
    check_positive("w_range[0] (rad/s)", w0)
    check_positive("w_range[1] (rad/s)", w1)
    direction = 1 if w1 > w0 else -1
    check_analysis_memory(sys, "a forced response", FORCED_ARRAYS)
    Qs = solve_at(sys, w0, alpha, Q0)
    if qscale is None:
        ws = np.linspace(min(w0, w1), max(w0, w1), 60)
        qscale = max(np.abs(sys.linear_response(w, alpha)).max() for w in ws)
        # the stuck-linear model can miss the range (contacts open in a preload count as
        # closed there): never below the first solved point
        qscale = max(qscale, np.abs(Qs).max())
    sc = np.append(np.full(sys.N, qscale), abs(w0))

    last = {}  # the driver asks for the Jacobian first: keep R from the same contact evaluation

    def res(Q, w):
        if last.get("key") == (Q.tobytes(), float(w)):
            return last["R"]
        return sys.residual(Q, w, alpha) / alpha

    def jac(Q, w):  # kept: the continuation asks again at its converged point
        key = (Q.tobytes(), float(w))
        if last.get("key") != key:
            R, RQ, Rw, _ = sys.jacobian(Q, w, alpha)
            last["key"], last["R"], last["J"] = key, R / alpha, (RQ / alpha, Rw / alpha)
        return last["J"]

    br = continue_branch(res, jac, Qs, w0, ds=ds, ds_max=ds_max, ds_min=1e-7,
                         lam_range=(min(w0, w1), max(w0, w1)), max_steps=max_steps,
                         direction=direction, tol=tol,
                         max_angle_deg=10.0, scale=sc, progress=progress, kink_ds=1e-5,
                         reuse_factorization=(sys.N >= REUSE_FROM if reuse_factorization is None
                                              else bool(reuse_factorization)))
    Am = np.array([sys.amplitude(q) for q in br.x])
    frf = FRF(alpha, br.lam, br.x, Am, br.stop_reason)
    if stability:
        frf.stability = frf_stability(sys, frf, progress=progress)
    return frf


def _dAm_dw(sys, Q, w, alpha):
    _, RQ, Rw, _ = sys.jacobian(Q, w, alpha)
    dQ = -np.linalg.solve(RQ, Rw)
    return sys.amp_grad(Q) @ dQ


@single_threaded
def frf_peak(sys: HBSystem, frf: FRF, *, rtol=RTOL, wtol=1e-13):
    """Brute-force maximum of ``Am`` on a forced-response curve.

    Independent of the optimality system: the root of ``dAm/dw = grad Am . (-R_Q^{-1} R_w)``
    between the curve points around the largest ``Am`` is found by Brent's method with a Newton
    solve at fixed ``w`` for every trial frequency (:func:`solve_at`, warm-started from the
    previous trial).

    Parameters
    ----------
    sys : HBSystem
    frf : FRF
        The curve; its largest sample must not be at an end.
    rtol : float
        Relative residual tolerance (-) of every Newton solve, as in :func:`solve_at` (a
        fraction of the rounding scale of the residual, always reachable).
    wtol : float
        Relative tolerance (-) of Brent's method on the peak frequency. Brent keeps a bracket
        of the sign change, so a ``wtol`` below the noise of ``dAm/dw`` (the solutions are
        determined to ``eps cond(R_Q)``) returns a frequency within that noise, never fails:
        on the beam the peak agrees with the modal linear peak to 9e-12 at small force.

    Returns
    -------
    w_peak : float
        Frequency of the peak (rad/s).
    Am_peak : float
        RMS amplitude there (m).
    Q_peak : (N,) ndarray
        Harmonic coefficients there (m).
    """
    i = int(np.argmax(frf.Am))
    lo, hi = max(i - 1, 0), min(i + 1, len(frf.w) - 1)
    last = {}

    def solve(w):
        j = lo if abs(w - frf.w[lo]) < abs(w - frf.w[hi]) else hi
        Q = solve_at(sys, w, frf.alpha, last.get("Q", frf.Q[j]), rtol=rtol,
                     w0=last.get("w", frf.w[j]), alpha0=frf.alpha)
        last["Q"], last["w"] = Q, w
        return Q

    def g(w):
        return _dAm_dw(sys, solve(w), w, frf.alpha)

    wa, wb = frf.w[lo], frf.w[hi]
    ga, gb = g(wa), g(wb)
    if ga * gb > 0:
        raise ConvergenceError("frf_peak: no sign change of dAm/dw around the largest sample "
                               "(maximum at the end of the range?)")
    wp = brentq(g, min(wa, wb), max(wa, wb), xtol=1e-15, rtol=wtol, maxiter=200)
    Qp = solve(wp)
    return wp, sys.amplitude(Qp), Qp


@single_threaded
def solve_condensed(sys: HBSystem, w, alpha, *, u0=None, rtol=RTOL, max_iter=60):
    """Periodic response at one frequency by harmonic balance condensed on the contact
    coordinates (exact for localised nonlinearities; an independent route to the full HB).

    With ``Z = D(w)^{-1} [P^T, F_ex]``: ``u - alpha P Z_f + P Z_P F_c(u) = 0`` in the
    ``2 nh x (contact components)`` unknowns ``u = P Q``, solved by the damped Newton method of
    :mod:`fesub.hbm.newton` (``rtol`` relative to the rounding scale
    ``max(|u| + alpha |P Z_f| + |P Z_P| |F_c|)``, m), and a homotopy in ``alpha``
    (x1e-3 -> 1, 30 log steps) when Newton from the linear guess (``u0``, m) fails within
    ``max_iter`` iterations. ``w`` in rad/s, ``alpha`` in N. Returns ``Q`` (m).

    Parameters
    ----------
    sys : HBSystem
        Structure with friction elements (Jenkins, stick-slip-separation) only, without the
        constant term or a static preload.
    w : float
        Excitation frequency (rad/s), > 0.
    alpha : float
        Force amplitude (N), > 0.
    u0 : array, optional
        Start of Newton on the contact coordinates ``u = P Q`` (m); default the linear guess
        ``alpha P Z_f``.
    rtol : float, optional
        Relative tolerance (dimensionless), relative to the rounding scale above (m).
    max_iter : int, optional
        Newton iterations per solve; default 60.

    Returns
    -------
    (N,) ndarray
        Harmonic coefficients of all DOFs (m).
    """
    w = check_positive("w (rad/s)", w)
    alpha = check_positive("alpha (force amplitude, N)", alpha)
    if sys.constant or np.any(sys.fs) or not all(hasattr(c.element, "kt") for c in sys.contacts):
        raise ModelError("solve_condensed handles the friction elements (Jenkins, "
                         "stick-slip-separation) without the constant term or a preload; "
                         "use solve_at")
    P = np.vstack(sys.P)
    m = P.shape[0]
    Z = np.linalg.solve(sys.D(w), np.column_stack([P.T, sys.fex]))
    G = P @ Z[:, :m]
    ul = P @ Z[:, m]
    # rounding scale of G F_c: the spring forces (kt |u|, kn |u|) inside the contact forces
    kc = np.concatenate([np.repeat(k, 2 * sys.nh)
                         for c in sys.contacts for k in c.element.stiffnesses])
    aG = np.abs(G)
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

    def fun_at(a):
        def f(u):
            F, K = FK(u)
            s = np.max(np.abs(u) + a * np.abs(ul) + aG @ (np.abs(F) + kc * np.abs(u)))
            return u - a * ul + G @ F, np.eye(m) + G @ K, s
        return f

    u, st = damped_newton(fun_at(alpha), alpha * ul if u0 is None else u0, rtol=rtol,
                          max_iter=max_iter)
    if not st.converged:
        u = 1e-3 * alpha * ul
        for a in np.geomspace(1e-3 * alpha, alpha, 31)[1:]:
            u, st = damped_newton(fun_at(a), u, rtol=rtol, max_iter=max_iter)
            if not st.converged:
                break
    if not st.converged:
        raise ConvergenceError(f"condensed harmonic balance at w={w:.6g} rad/s, "
                               f"alpha={alpha:.6g} N did not converge ({st.describe()})",
                               partial=u)
    F, _ = FK(u)
    return alpha * Z[:, m] - Z[:, :m] @ F


def forced_response_record(sy: HBSystem, force: float, omega: float) -> dict:
    """Periodic forced response of a harmonic-balance system at one force (N) and frequency
    (rad/s), as a JSON-friendly record; a solve that does not converge gives NaN values and its
    message instead of an exception.

    Parameters
    ----------
    sy : HBSystem
        The system (for instance a model of :mod:`fesub.models` built by
        :func:`fesub.models.build`).
    force : float
        Force amplitude (N), > 0.
    omega : float
        Excitation frequency (rad/s), > 0.

    Returns
    -------
    dict
        ``force`` (N), ``omega`` (rad/s), ``nh``, ``converged``, ``message``, ``Am`` (RMS
        amplitude at the monitor DOF, m), ``harmonic_amplitudes`` (m, k = 1..nh),
        ``energy_dissipated`` (J per cycle), ``stuck_margin`` (N, per contact, > 0 = slipping)
        and ``Q`` (list of harmonic coefficients, m).
    """
    from .fourier import harmonic_amplitudes

    out = {"force": float(force), "omega": float(omega), "nh": sy.nh}
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
