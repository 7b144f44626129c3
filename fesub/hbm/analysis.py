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

With a global frequency window the backbone is the global maximum of the forced response: the
upper envelope of the ridge from stage 1, of the ridges traced down from the peaks at the
largest force, and of the ridges seeded by forced responses swept over the window at check
forces ("global checks"); it jumps where another ridge rises above the followed one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from ..continuation import continue_branch, newton
from ..errors import ConvergenceError, ParameterError, check_positive
from ..io import Result, json_default, summary_record
from ..parallel import single_thread_blas
from .system import HBSystem


def _single(fn):
    """Run ``fn`` with a single-threaded BLAS (small dense systems, see :mod:`fesub.parallel`)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with single_thread_blas():
            return fn(*args, **kwargs)

    return wrapper

__all__ = ["FRF", "forced_response", "solve_at", "frf_peak", "Backbone", "backbone",
           "PhaseResonance", "phase_resonance", "DNNM", "dnnm", "linear_modes"]


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


def _steps(name, value):
    """A number of continuation steps: an integer >= 1, else ParameterError naming it."""
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ParameterError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _go_on(result):
    """``result`` of an inner continuation; the KeyboardInterrupt it caught is raised again (the
    long run that called it returns what it has computed, ``status = 'interrupted'``)."""
    if result.stop_reason == "interrupted":
        raise KeyboardInterrupt
    return result


def _dof_or_load(name, sys, dof):
    if dof is None:
        return int(np.argmax(np.abs(sys.fex[:sys.n])))
    if int(dof) != dof or not 0 <= dof < sys.n:
        raise ParameterError(f"{name} must be an integer in [0, {sys.n - 1}], got {dof!r}")
    return int(dof)


class _Curve(Result):
    """What the harmonic-balance results share: the status, saved files' layout helpers."""

    #: what the ``coefficient`` dimension of ``Q`` holds
    Q_LAYOUT = ("harmonic coefficients of the displacements, blocks of the n DOFs: "
                "cos 1, sin 1, cos 2, sin 2, ... (x(t) = sum_h Q_cos,h cos(h w t) + "
                "Q_sin,h sin(h w t))")

    @property
    def status(self) -> str:
        """``'interrupted'`` when a KeyboardInterrupt stopped the computation (the points
        computed before it are kept), else ``'finished'``."""
        return "interrupted" if self.stop_reason == "interrupted" else "finished"

    @staticmethod
    def _Q(Q):
        return (("point", "coefficient"), np.asarray(Q, float),
                {"units": "m", "long_name": _Curve.Q_LAYOUT})

    @staticmethod
    def _dataset(data: dict, coords: dict, attrs: dict):
        import xarray as xr

        return xr.Dataset(data, coords=coords, attrs=attrs)


def _plain(obj):
    """``obj`` as plain JSON values (tuples as lists, NumPy scalars as Python numbers): the
    records of a result are then equal to what its saved file gives back."""
    import json

    return json.loads(json.dumps(obj, default=json_default))


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


# ---------------------------------------------------------------------------------- backbone
@dataclass
class Backbone(_Curve):
    """Backbone (ridge of the forced-response surface).

    Attributes
    ----------
    alpha : (npts,) force amplitude (N)
    w : (npts,) peak frequency (rad/s)
    Am : (npts,) peak RMS amplitude at the monitor DOF (m)
    Q : (npts, N) harmonic coefficients (m)
    lam : (npts, N) multipliers (m/N)
    eta_alpha : (npts,) ``F_ex^T lam = -dAm*/dalpha`` (m/N)
    segments : (npts,) segment index (increments at every restart and at every jump)
    singular_points : list of dict (alpha, w, reason); restarts of the continuation and jumps
        of the global maximum to another ridge (reason ``'global maximum jumps to another
        ridge (from w = ... rad/s)'``)
    events : list of continuation events (e.g. 'slip_onset_0' = contact 0 starts to slip)
    newton_iters : (npts,) corrector iterations
    stop_reason : str
    ridge : (npts,) index into ``ridges`` of the ridge each point lies on
    ridges : list of dict, the candidate ridges whose upper envelope is the backbone: ``origin``
        (``'w_window'``: traced from the stage-1 peak; ``'alpha_max'``: traced down from a peak
        at the largest force; ``'check'``: traced both ways from a peak found by a global
        check), ``alpha_seed``/``w_seed`` (N, rad/s) where it was seeded, ``alpha``/``w``
        (N, rad/s) its range, ``ends`` (why it ends below/above), ``npts`` and ``on_backbone``
        (number of its points kept)
    jumps : list of dict, where the backbone switches ridge: ``alpha`` (N; the fold where the
        new ridge is born, the end of the old one, or the crossing of their amplitudes; both
        ridges have a point there), ``w_from``/``w_to`` (rad/s), ``Am_from``/``Am_to`` (m;
        ``Am_from`` None when the jump could not be located and the old ridge's last point lies
        below ``alpha``; ``w_from`` is then that point's), ``ridge_from``/``ridge_to``
    checks : list of dict, one per global check force: ``alpha`` (N), ``method``
        (``'linear'``: every contact stays stuck over the window, the stuck-linear peaks are
        exact; ``'sweep'``: forced response continued over the window), ``peaks`` (``w``,
        ``Am``: the sampled peak, solved on the optimality system where it seeded a ridge;
        ``ridge``: the ridge it lies on, or None when it could not be traced),
        ``missed`` (frequency intervals (rad/s) the sweep could not cover)

    The records are plain JSON values (lists, not tuples), as a saved file gives them back.
    ``stop_reason == 'interrupted'`` (``status``): a KeyboardInterrupt stopped the trace; the
    backbone then holds the points of the ridge from ``w_window`` computed before it.
    Saved files (``save``/``fesub.load``): dimensions ``point`` and ``coefficient``, ``alpha``
    (N) the coordinate along ``point``, ``w`` in rad/s, the records as attributes.
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
    ridge: np.ndarray | None = None
    ridges: list = field(default_factory=list)
    jumps: list = field(default_factory=list)
    checks: list = field(default_factory=list)

    kind = "backbone"

    def __post_init__(self):
        for name in ("singular_points", "events", "ridges", "jumps", "checks"):
            setattr(self, name, _plain(getattr(self, name)))

    def to_xarray(self):
        """Dataset with dimensions ``point`` and ``coefficient``; ``alpha`` (N) the coordinate
        along ``point``, frequencies in rad/s; the records (singular points, events, ridges,
        jumps, checks) as attributes."""
        pt = "point"
        data = {"w": (pt, np.asarray(self.w, float),
                      {"units": "rad/s", "long_name": "peak frequency"}),
                "Am": (pt, np.asarray(self.Am, float),
                       {"units": "m", "long_name": "peak RMS amplitude at the monitor DOF"}),
                "Q": self._Q(self.Q),
                "lam": (("point", "coefficient"), np.asarray(self.lam, float),
                        {"units": "m/N", "long_name": "multipliers of the optimality system"}),
                "eta_alpha": (pt, np.asarray(self.eta_alpha, float),
                              {"units": "m/N", "long_name": "F_ex^T lam = -dAm*/dalpha"}),
                "segments": (pt, np.asarray(self.segments, np.int64),
                             {"units": "1", "long_name": "segment index"})}
        if self.newton_iters is not None:
            data["newton_iters"] = (pt, np.asarray(self.newton_iters, np.int64),
                                    {"units": "1", "long_name": "corrector iterations"})
        if self.ridge is not None:
            data["ridge"] = (pt, np.asarray(self.ridge, np.int64),
                             {"units": "1", "long_name": "index into the ridges record"})
        return self._dataset(
            data, {"alpha": (pt, np.asarray(self.alpha, float),
                             {"units": "N", "long_name": "force amplitude"})},
            {"stop_reason": self.stop_reason, "singular_points": self.singular_points,
             "events": self.events, "ridges": self.ridges, "jumps": self.jumps,
             "checks": self.checks})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs

        def opt(name):
            return ds[name].values.copy() if name in ds else None

        return cls(alpha=ds["alpha"].values.copy(), w=ds["w"].values.copy(),
                   Am=ds["Am"].values.copy(), Q=ds["Q"].values.copy(),
                   lam=ds["lam"].values.copy(), eta_alpha=ds["eta_alpha"].values.copy(),
                   segments=ds["segments"].values.copy(), singular_points=a["singular_points"],
                   events=a["events"], newton_iters=opt("newton_iters"),
                   stop_reason=a["stop_reason"], ridge=opt("ridge"), ridges=a["ridges"],
                   jumps=a["jumps"], checks=a["checks"])

    def summary(self) -> dict:
        res = {"points": (len(self.alpha), None), "stop_reason": (self.stop_reason, None),
               "singular_points": (len(self.singular_points), None),
               "jumps": (len(self.jumps), None)}
        par = {}
        if len(self.alpha):
            par = {"alpha_first": (float(self.alpha[0]), "N"),
                   "alpha_last": (float(self.alpha[-1]), "N")}
            res.update(w_first=(float(self.w[0]), "rad/s"), w_last=(float(self.w[-1]), "rad/s"),
                       Am_first=(float(self.Am[0]), "m"), Am_last=(float(self.Am[-1]), "m"))
        return summary_record(self.kind, par, res)


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
    frf = _go_on(forced_response(sys, alpha, w_window, Q0=Qguess, progress=progress))
    wp, _, Qp = frf_peak(sys, frf)
    return wp, Qp


@_single
def backbone(sys: HBSystem, alpha_range, w_window, *, ds=0.05, ds_max=1.0, ds_min=1e-3,
             max_steps=600, max_restarts=8, restart_eps=1e-3, w_global=None, global_checks=2.0,
             progress=False) -> Backbone:
    """Trace the backbone from ``alpha_range[0]`` to ``alpha_range[1]`` (N).

    Parameters
    ----------
    sys : HBSystem
    alpha_range : (float, float)
        Force amplitudes (N), 0 < alpha_min < alpha_max.
    w_window : (float, float)
        Frequency window (rad/s), ``0 < low < high``, of the stage-1 forced response at
        ``alpha_min``; must contain the stuck-linear resonance of interest.
    ds, ds_max, ds_min : float
        Arclength steps in the scaled unknowns.
    max_steps : int
        Continuation steps (>= 1) allowed per traced piece of a ridge.
    max_restarts : int
        Restarts allowed at singular points (stage 4), per traced ridge and direction.
    restart_eps : float
        Restart offset in ``log alpha`` (spec: 1e-3).
    w_global : (float, float), optional
        Frequency window (rad/s) in which the backbone is the *global* maximum of the forced
        response (largest interior peak) at every force. Default: only the local ridge started
        in ``w_window`` is followed. With a window the backbone is the upper envelope of
        candidate ridges, each traced with the optimality system:

        * the ridge from ``w_window``; at every restart it jumps to the highest of the maxima
          started from the stuck and the sliding linear peaks in the window (two-peak forced
          responses);
        * the ridges of the peaks at ``alpha_max`` (from the same linear peaks), traced down in
          force to their folds (beam: the friction-limited free-mode peak, which only exists
          once the force can overcome the friction dissipation, overtakes the partially stuck
          ridge long before that ridge is lost);
        * global checks (``global_checks``): at check forces spread evenly in ``log alpha``
          the forced response is swept over the whole window (or, where every contact stays
          stuck over the window, the stuck-linear peaks are taken: exact), and every interior
          peak that lies on none of the ridges above (frequency within 1 %) seeds a new ridge,
          traced both ways in force to its folds (beam: a ridge near 400 Hz that exists only
          between ~9 and ~78 N and is the global maximum, up to 1.8x above the others, between
          ~29 and ~44 N).

        Where the envelope changes ridge the backbone jumps (``jumps``, and a singular point
        with reason ``'global maximum jumps to another ridge ...'``).
    global_checks : float or None
        Check forces per decade of force (with ``w_global`` only; 0 or None: no checks).
        The checks are placed at ``ceil(global_checks * decades) + 1`` forces from
        ``alpha_min`` to the end of the backbone. Limitation: a ridge that exists only between
        two neighbouring check forces (and is not reached from ``w_window`` or ``alpha_max``)
        is not found, nor is a peak that the sweep steps over (much narrower than its steps);
        raise ``global_checks`` when the forced responses change faster in force. Default 2
        (one per half-decade): the beam's intermediate ridge spans almost a decade. Cost: one
        sweep per check force at which a contact can slip (stuck-linear checks are almost
        free) and the traces of the new ridges; beam (20 elements, [0.01, 1000] N): 17 s
        instead of 8 s without checks.
    progress : bool
        Show progress bars (continuations, global checks).

    Returns
    -------
    Backbone
        On a KeyboardInterrupt, the points of the ridge from ``w_window`` traced before it,
        with ``stop_reason = 'interrupted'`` (``status``).
    """
    a0, a1 = _increasing_range("alpha_range", alpha_range, " (N)")
    w_lo, w_hi = _increasing_range("w_window", w_window, " (rad/s)")
    max_steps = _steps("max_steps", max_steps)
    if w_global is not None:
        w_global = _increasing_range("w_global", w_global, " (rad/s)")
    if int(max_restarts) != max_restarts or max_restarts < 0:
        raise ParameterError(f"max_restarts must be an integer >= 0, got {max_restarts!r}")
    check_positive("restart_eps", restart_eps)
    n_checks = _check_count("global_checks", global_checks)
    pieces, singular, events = [], [], []  # the ridge from w_window, kept on an interrupt
    try:
        s_end = math.log(a1)
        N = sys.N
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
            opt, y0, sc, evs = _optimality_start(sys, alpha, wp, Qp, lam)
            try:
                br = _continue_backbone(opt, y0, s_start, s_end, ds, ds_min, ds_max, max_steps, sc,
                                        evs, progress)
            except ConvergenceError as exc:
                if seg == 0:
                    raise ConvergenceError(f"backbone cannot start at alpha={alpha:.6g} N, "
                                           f"w={wp:.6g} rad/s: {exc}") from None
                stop = f"segment {seg} could not start at alpha={math.exp(s_start):.6g} N: {exc}"
                break
            pieces.append((br.lam, br.x, br.newton_iters))
            _go_on(br)
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
                    w_r, Q_r, l_r, _ = backbone_point(sys, a_r, w_fail,
                                                      math.exp(eps) * Qt_last(br, N)
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
            stop += (f" [backbone stopped at alpha={math.exp(pieces[-1][0][-1]):.6g} N, "
                     f"w={pieces[-1][1][-1][2 * N]:.6g} rad/s: {why}]")
        main = _ridge_from_pieces(sys, pieces, singular, events, origin="w_window", alpha_seed=a0,
                                  w_seed=float(pieces[0][1][0][2 * N]),
                                  ends={"low": "alpha_range", "high": stop})
        if w_global is None:
            return _local_backbone(sys, pieces, singular, events, stop,
                                   [_ridge_summary(main, sum(len(p[0]) for p in pieces))])
        a_end = float(main["alpha"][-1])
        trace = dict(s_lo=math.log(a0), s_hi=math.log(a_end), ds=ds, ds_min=ds_min, ds_max=ds_max,
                     max_steps=max_steps, max_restarts=max_restarts, restart_eps=restart_eps,
                     progress=progress)
        ridges = [main]
        if stop == "lam_range":
            # the main ridge is known down to alpha_min when no restart jumped to another peak
            jump_free = all(abs(pieces[k][1][0][2 * N] - pieces[k - 1][1][-1][2 * N])
                            <= _SAME_RIDGE_W * pieces[k - 1][1][-1][2 * N]
                            for k in range(1, len(pieces)))
            ridges += _ridges_from_alpha_max(sys, a_end, w_global, trace,
                                             known=main if jump_free else None)
        checks = []
        if n_checks > 0 and a_end > a0:
            checks = _global_checks(sys, ridges, np.geomspace(
                a0, a_end, max(2, int(math.ceil(n_checks * math.log10(a_end / a0) - 1e-9)) + 1)),
                w_global, trace, progress)
        return _envelope_backbone(sys, ridges, checks, a0, a_end, stop)
    except KeyboardInterrupt:
        return _local_backbone(sys, pieces, singular, events, "interrupted", [])


def _local_backbone(sys, pieces, singular, events, stop, ridges):
    """The backbone of the ridge from ``w_window`` alone, in continuation order (``pieces``:
    continued pieces ``(log alpha, (Q/alpha, lam, w), iterations)``, none when interrupted
    before the first)."""
    N = sys.N
    if not pieces:
        pieces = [(np.zeros(0), np.zeros((0, 2 * N + 1)), np.zeros(0, int))]
    S = np.concatenate([p[0] for p in pieces])
    alpha = np.exp(S)
    Y = np.vstack([p[1] for p in pieces])
    Q = Y[:, :N] * alpha[:, None]
    lam = Y[:, N:2 * N]
    return Backbone(alpha=alpha, w=Y[:, 2 * N], Am=np.array([sys.amplitude(q) for q in Q]),
                    Q=Q, lam=lam, eta_alpha=lam @ sys.fex,
                    segments=np.concatenate([np.full(len(p[0]), k)
                                             for k, p in enumerate(pieces)]),
                    singular_points=singular, events=events,
                    newton_iters=np.concatenate([p[2] for p in pieces]), stop_reason=stop,
                    ridge=np.zeros(len(S), int), ridges=ridges)


def _check_count(name, value):
    """Check forces per decade: a finite number >= 0 (None: 0)."""
    if value is None:
        return 0.0
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number of check forces per decade >= 0 "
                             f"(0 or None: no checks), got {value!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise ParameterError(f"{name} must be a number of check forces per decade >= 0 "
                             f"(0 or None: no checks), got {value!r}")
    return v


def _optimality_start(sys, alpha, w, Q, lam):
    """Optimality system, scaled start vector, continuation scales and slip-onset test
    functions at a point ``(Q, w, lam)`` of a ridge at force ``alpha`` (N)."""
    N = sys.N
    qt = np.abs(Q).max() / alpha
    ls = np.abs(lam).max()
    D1Q = sys.D(w, 1) @ (Q / alpha)
    opt = _Optimality(sys, r3scale=1.0 / max(ls * np.abs(D1Q).max(), 1e-300))
    y0 = np.concatenate([Q / alpha, lam, [w]])
    sc = np.concatenate([np.full(N, qt), np.full(N, ls), [w], [1.0]])
    evs = {f"slip_onset_{i}": (lambda y, s, i=i: float(
        sys.stuck_margin(math.exp(s) * y[:N])[i]) / (sys.contacts[i].element.kt * qt
                                                      * math.exp(s)))
        for i in range(len(sys.contacts))}
    return opt, y0, sc, evs


@_single
def _continue_backbone(opt, y0, s_start, s_end, ds, ds_min, ds_max, max_steps, sc, evs,
                       progress):
    return continue_branch(opt.residual, opt.jacobian, y0, s_start, ds=ds, ds_min=ds_min,
                           ds_max=ds_max, lam_range=(s_start, s_end), max_steps=max_steps,
                           tol=1e-8, max_iter=8, max_angle_deg=10.0, scale=sc, events=evs,
                           progress=progress)


# ------------------------------------------------------------- ridges and their upper envelope
# Two peaks of one forced response whose frequencies differ by less than this (relative) are
# taken as the same ridge: the global checks do not trace a peak this close to a known ridge,
# and the envelope does not switch between two traces this close (interpolated between their
# own points, two traces of one ridge differ by more than their corrector tolerance)
_SAME_RIDGE_W = 1e-2
# the envelope switches ridge only for a gain larger than this (relative amplitude): two
# ridges within it are equally good
_SWITCH_GAIN = 1e-6


def _ridge_from_pieces(sys, pieces, singular, events, **info):
    """A candidate ridge from continued pieces ``(log alpha, (Q/alpha, lam, w), iterations)``,
    sorted by force, one local segment per piece."""
    N = sys.N
    S = np.concatenate([p[0] for p in pieces])
    X = np.vstack([p[1] for p in pieces])
    its = np.concatenate([p[2] for p in pieces])
    seg = np.concatenate([np.full(len(p[0]), k) for k, p in enumerate(pieces)])
    o = np.argsort(S, kind="stable")
    S, X, its, seg = S[o], X[o], its[o], seg[o]
    keep = np.ones(len(S), bool)
    keep[1:] = np.diff(S) > 0  # the seed of a two-way trace appears in both directions
    S, X, its, seg = S[keep], X[keep], its[keep], seg[keep]
    _, first = np.unique(seg, return_index=True)
    renum = {int(seg[i]): k for k, i in enumerate(np.sort(first))}
    alpha = np.exp(S)
    Q = X[:, :N] * alpha[:, None]
    return dict(alpha=alpha, w=X[:, 2 * N].copy(), Q=Q, lam=X[:, N:2 * N].copy(),
                Am=np.array([sys.amplitude(q) for q in Q]), its=its,
                seg=np.array([renum[int(k)] for k in seg], int),
                qmax=np.abs(Q).max(axis=1), singular=list(singular), events=list(events),
                **info)


def _ridge_summary(rd, on_backbone):
    return {"origin": rd["origin"], "alpha_seed": float(rd["alpha_seed"]),
            "w_seed": float(rd["w_seed"]),
            "alpha": [float(rd["alpha"][0]), float(rd["alpha"][-1])],
            "w": [float(rd["w"][0]), float(rd["w"][-1])], "ends": dict(rd["ends"]),
            "npts": int(len(rd["alpha"])), "on_backbone": int(on_backbone)}


def _trace_ridge(sys, alpha, seed, *, s_lo, s_hi, directions=(-1, 1), ds, ds_min, ds_max,
                 max_steps, max_restarts, restart_eps, progress, origin):
    """Ridge through the optimality-system point ``seed = (w, Q, lam)`` at force ``alpha`` (N),
    continued in ``log alpha`` down and/or up to its folds (the located turning point ends it)
    or to ``[s_lo, s_hi]``, restarted past singular points like stage 4 of the backbone."""
    N = sys.N
    s_c = math.log(alpha)
    pieces, singular, events, ends = [], [], [], {}
    for direction in directions:
        side = "low" if direction < 0 else "high"
        bound = s_lo if direction < 0 else s_hi
        if (bound - s_c) * direction <= 1e-12:
            ends[side] = "alpha_range"
            continue
        s0, (y_w, y_Q, y_l) = s_c, seed
        end = f"max_restarts={max_restarts} reached"
        for _ in range(max_restarts + 1):
            opt, y0, sc, evs = _optimality_start(sys, math.exp(s0), y_w, y_Q, y_l)
            last = [s0]

            def turned(y, s, last=last, d=direction):
                # the ridge turned back in force: it ended at a fold
                t = (s - last[0]) * d < 0
                last[0] = s
                return t

            try:
                br = continue_branch(opt.residual, opt.jacobian, y0, s0, ds=ds, ds_min=ds_min,
                                     ds_max=ds_max, lam_range=(min(s0, bound), max(s0, bound)),
                                     max_steps=max_steps, direction=direction, tol=1e-8,
                                     max_iter=8, max_angle_deg=10.0, scale=sc, events=evs,
                                     callback=turned, progress=progress)
                _go_on(br)
            except ConvergenceError as exc:
                end = f"could not continue from alpha={math.exp(s0):.6g} N: {exc}"
                break
            s, x, its = br.lam, br.x, br.newton_iters
            k = len(s)
            for i in range(1, len(s)):
                if (s[i] - s[i - 1]) * direction < 0:
                    k = i
                    break
            s, x, its = s[:k], x[:k], its[:k]
            folds = [e for e in br.events_of("fold") if e.index < k]
            if folds and (folds[0].lam - s[-1]) * direction > 0:
                s = np.append(s, folds[0].lam)
                x = np.vstack([x, folds[0].x])
                its = np.append(its, 0)
            pieces.append((s, x, its))
            events += [{"kind": e.kind, "alpha": math.exp(e.lam), "w": float(e.x[2 * N])}
                       for e in br.events if e.kind != "fold" and e.index < k]
            if br.stop_reason == "user":
                end = "fold"
                break
            if not br.stop_reason.startswith("corrector_failed"):
                end = br.stop_reason
                break
            s_fail, x_fail = float(s[-1]), x[-1]
            singular.append({"alpha": math.exp(s_fail), "w": float(x_fail[2 * N]),
                             "reason": br.stop_reason})
            s0 = None
            for eps in (restart_eps, 10 * restart_eps, 30 * restart_eps):
                s_r = s_fail + direction * eps
                if (s_r - bound) * direction > 0:
                    break
                a_r = math.exp(s_r)
                try:
                    y_w, y_Q, y_l, _ = backbone_point(sys, a_r, float(x_fail[2 * N]),
                                                      x_fail[:N] * a_r, x_fail[N:2 * N],
                                                      tol=1e-8)
                except ConvergenceError:
                    continue
                s0 = s_r
                break
            if s0 is None:
                end = f"lost after the singular point at alpha={math.exp(s_fail):.6g} N"
                break
        ends[side] = end
    if not pieces:  # the seed at a bound of the range, traced towards it
        y_w, y_Q, y_l = seed
        pieces = [(np.array([s_c]), np.concatenate([y_Q / alpha, y_l, [y_w]])[None, :],
                   np.zeros(1, int))]
    return _ridge_from_pieces(sys, pieces, singular, events, origin=origin, alpha_seed=alpha,
                              w_seed=float(seed[0]), ends=ends)


def _ridges_from_alpha_max(sys, a_end, w_global, trace, known=None):
    """Ridges of the peaks at the largest force (optimality system started from the stuck and
    the sliding linear peaks in ``w_global``), traced down in force to their folds; a peak on
    the ``known`` ridge (traced over the whole range) is not traced again.

    The forced response can have several peaks (beam: the stuck-tip mode and, once the force
    can drive the sliding structure, the free first mode); the envelope jumps to such a ridge
    where it rises above the others (at its fold or where it crosses them)."""
    out = [] if known is None else [known]
    for wg, Qg in _linear_peak_guesses(sys, a_end, w_global):
        try:
            w_c, Q_c, l_c, _ = backbone_point(sys, a_end, wg, Qg, tol=1e-8)
        except ConvergenceError:
            continue
        if not (w_global[0] <= w_c <= w_global[1]):
            continue
        if any(abs(rd["w"][-1] - w_c) <= _SAME_RIDGE_W * w_c for rd in out):
            continue  # both linear peaks led to the same maximum
        try:
            out.append(_trace_ridge(sys, a_end, (w_c, Q_c, l_c), directions=(-1,),
                                    origin="alpha_max", **trace))
        except ConvergenceError:
            continue
    return out if known is None else out[1:]


def _covering_ridge(ridges, alpha, w):
    """Index of a ridge with a segment through force ``alpha`` (N) within ``_SAME_RIDGE_W`` of
    the frequency ``w`` (rad/s), or None."""
    la = math.log(alpha)
    for r, rd in enumerate(ridges):
        for k in np.unique(rd["seg"]):
            m = rd["seg"] == k
            al = np.log(rd["alpha"][m])
            if al[0] - 1e-12 <= la <= al[-1] + 1e-12:
                wr = float(np.interp(la, al, rd["w"][m]))
                if abs(wr - w) <= _SAME_RIDGE_W * w:
                    return r
    return None


def _linear_Q(sys, w, alpha, mats):
    """Harmonic coefficients (m) of the linear response with matrices ``mats = (M, C, K)``
    (complex solve per loaded harmonic, size n)."""
    M, C, K = mats
    n = sys.n
    Q = np.zeros(sys.N)
    for h in range(1, sys.nh + 1):
        i = 2 * (h - 1) * n
        f = sys.fex[i:i + n] - 1j * sys.fex[i + n:i + 2 * n]
        if not np.any(f):
            continue
        x = np.linalg.solve(K - (h * w) ** 2 * M + 1j * h * w * C, alpha * f)
        Q[i:i + n], Q[i + n:i + 2 * n] = x.real, -x.imag
    return Q


def _grid_maxima(fun, window, npts=400, refine=None):
    """Local maxima of ``fun`` over ``window`` (rad/s): grid, then bounded Brent around the
    grid maxima (``refine``: how many, largest first; None: every interior one). A sharp
    resonance can fall between grid points; the refinement finds its top."""
    from scipy.optimize import minimize_scalar

    ws = np.linspace(window[0], window[1], npts)
    v = np.array([fun(w) for w in ws])
    idx = [i for i in range(npts) if (i == 0 or v[i] >= v[i - 1]) and
           (i == npts - 1 or v[i] > v[i + 1])]
    if refine is None:
        idx = [i for i in idx if 0 < i < npts - 1]
    else:
        idx = sorted(idx, key=lambda i: -v[i])[:refine]
    out = []
    for i in idx:
        lo, hi = ws[max(i - 1, 0)], ws[min(i + 1, npts - 1)]
        r = minimize_scalar(lambda w: -fun(w), bounds=(lo, hi), method="bounded",
                            options={"xatol": 1e-10 * hi})
        out.append((float(r.x), -float(r.fun)) if -r.fun >= v[i] else (float(ws[i]), v[i]))
    return out


def _stuck_throughout(sys, alpha, window, mats):
    """True when the stuck-linear response at force ``alpha`` (N) keeps every contact stuck
    (at least 0.1 % of its slip margin left) over the whole window: it is then the forced
    response, linear, at every frequency of the window."""
    m0 = sys.stuck_margin(np.zeros(sys.N))
    if np.any(m0 >= 0):
        return False

    def worst(w):  # -1 at rest, 0 at the onset of slip or separation
        return float(np.max(sys.stuck_margin(_linear_Q(sys, w, alpha, mats)) / -m0))

    return max(v for _, v in _grid_maxima(worst, window, refine=3)) < -1e-3


def _sweep_peaks(sys, alpha, window, qscale):
    """Interior peaks of the forced response at force ``alpha`` (N) over ``window`` (rad/s):
    continued down from the top of the window, and up from its bottom to where the first sweep
    stopped if it did not get through. Returns ``([(w, Am, Q, sampled curve around it)],
    missed intervals)``. The unknowns are scaled by the larger of the stuck-linear amplitude
    and ``qscale`` (m; the known ridges' amplitude: fewer steps at large force), the corrector
    tolerance is 1e-8 (that of the optimality system)."""
    w_lo, w_hi = window
    mats = sys.linear_matrices(stuck=True)
    qs = max(max(np.abs(_linear_Q(sys, w, alpha, mats)).max()
                 for w in np.linspace(w_lo, w_hi, 60)), qscale)
    frfs = []

    def sweep(start, end):
        """Continue from ``start`` towards ``end`` (rad/s); return how far it got."""
        try:
            f = _go_on(forced_response(sys, alpha, (start, end), qscale=qs, tol=1e-8))
        except ConvergenceError:
            return start
        frfs.append(f)
        if f.stop_reason == "lam_range":
            return end
        return float(f.w.min() if end < start else f.w.max())

    reached = sweep(w_hi, w_lo)
    missed = []
    if reached > w_lo:
        top = sweep(w_lo, reached)
        if top < reached:
            missed.append((top, reached))
    out = []
    for f in frfs:
        am = f.Am
        for j in range(1, len(am) - 1):
            if am[j] >= am[j - 1] and am[j] > am[j + 1]:
                out.append((float(f.w[j]), float(am[j]), f.Q[j],
                            FRF(alpha, f.w[j - 1:j + 2], f.Q[j - 1:j + 2], am[j - 1:j + 2],
                                "sampled")))
    return out, missed


def _global_checks(sys, ridges, forces, w_global, trace, progress):
    """At each check force, the interior peaks of the forced response over ``w_global``; a
    peak on none of the known ``ridges`` seeds a new ridge (appended to ``ridges``), traced
    both ways in force. Returns one record per check force."""
    import warnings

    from tqdm.auto import tqdm

    mats = sys.linear_matrices(stuck=True)
    checks, trouble = [], []
    linear = True  # the stuck margins grow with the force: once slipping, always
    for a in tqdm(forces, desc="global checks", unit="force", disable=not progress,
                  leave=False):
        a = float(a)
        rec = {"alpha": a, "peaks": [], "missed": []}
        linear = linear and _stuck_throughout(sys, a, w_global, mats)
        if linear:
            rec["method"] = "linear"
            cands = [(w, am, _linear_Q(sys, w, a, mats), None) for w, am in _grid_maxima(
                lambda w: sys.amplitude(_linear_Q(sys, w, a, mats)), w_global)]
        else:
            rec["method"] = "sweep"
            env = [np.exp(np.interp(math.log(a), np.log(rd["alpha"]), np.log(rd["qmax"])))
                   for rd in ridges if rd["alpha"][0] <= a <= rd["alpha"][-1]]
            cands, rec["missed"] = _sweep_peaks(sys, a, w_global, max(env, default=0.0))
            if rec["missed"]:
                trouble.append(f"at {a:.4g} N the sweep missed "
                               + ", ".join(f"[{lo:.6g}, {hi:.6g}]" for lo, hi in rec["missed"])
                               + " rad/s")
        for w, am, Q, curve in sorted(cands, key=lambda c: -c[1]):
            r = _covering_ridge(ridges, a, w)
            if r is None:
                if curve is not None:
                    try:
                        w, am, Q = frf_peak(sys, curve)
                    except ConvergenceError:
                        pass
                try:
                    w_c, Q_c, l_c, _ = backbone_point(sys, a, w, Q, tol=1e-8)
                    if not (w_global[0] <= w_c <= w_global[1]):
                        raise ConvergenceError(f"the optimality system converged outside "
                                               f"w_global (w={w_c:.6g} rad/s)")
                    r = _covering_ridge(ridges, a, w_c)
                    if r is None:
                        ridges.append(_trace_ridge(sys, a, (w_c, Q_c, l_c), origin="check",
                                                   **trace))
                        r = len(ridges) - 1
                    w, am = w_c, sys.amplitude(Q_c)
                except ConvergenceError as exc:
                    trouble.append(f"the peak at {a:.4g} N, {w:.6g} rad/s could not be "
                                   f"traced ({exc})")
            rec["peaks"].append({"w": float(w), "Am": float(am), "ridge": r})
        checks.append(rec)
    if trouble:
        warnings.warn("backbone: the global maximum is not guaranteed: " + "; ".join(trouble),
                      stacklevel=4)
    return checks


def _ridge_point(sys, rd, alpha):
    """Solution of the optimality system on ridge ``rd`` at force ``alpha`` (N), by Newton
    from the ridge's nearest point; ConvergenceError if it lands on another ridge."""
    la = np.log(rd["alpha"])
    i = int(np.argmin(np.abs(la - math.log(alpha))))
    w, Q, lam, its = backbone_point(sys, alpha, rd["w"][i], rd["Q"][i] * (alpha / rd["alpha"][i]),
                                    rd["lam"][i], tol=1e-8)
    if abs(w - np.interp(math.log(alpha), la, rd["w"])) > _SAME_RIDGE_W * w:
        raise ConvergenceError(f"the optimality system at alpha={alpha:.6g} N left the ridge")
    return w, Q, lam, its


def _jump_force(sys, A, B, lo, a_end, b_start, hi):
    """Force (N) where the envelope leaves ridge ``A`` (kept on ``[lo, a_end]``) for ridge
    ``B`` (kept on ``[b_start, hi]``): B's fold where B is born above A, A's end where A is
    lost, else the crossing of the two amplitudes (Brent in log alpha on exact solutions of
    both ridges, searched outwards from ``[a_end, b_start]`` over the ridges' own points when
    the interpolated amplitudes misplaced it). None when it cannot be located."""
    if b_start <= B["alpha"][0] * (1 + 1e-12) and B["ends"].get("low") == "fold":
        return b_start
    if a_end >= A["alpha"][-1] * (1 - 1e-12):
        return a_end
    lo = max(lo, B["alpha"][0])
    hi = min(hi, A["alpha"][-1])
    pts = np.unique(np.concatenate([A["alpha"], B["alpha"], [a_end, b_start]]))
    pts = pts[(pts >= lo * (1 - 1e-12)) & (pts <= hi * (1 + 1e-12))]

    def gain(a):
        return (math.log(sys.amplitude(_ridge_point(sys, B, a)[1]))
                - math.log(sys.amplitude(_ridge_point(sys, A, a)[1])))

    try:
        k = int(np.searchsorted(pts, a_end * (1 - 1e-12)))
        a_l, g_l = pts[k], gain(pts[k])
        while g_l >= 0 and k > 0:
            k -= 1
            a_l, g_l = pts[k], gain(pts[k])
        k = min(int(np.searchsorted(pts, b_start * (1 - 1e-12))), len(pts) - 1)
        a_r, g_r = pts[k], gain(pts[k])
        while g_r <= 0 and k < len(pts) - 1:
            k += 1
            a_r, g_r = pts[k], gain(pts[k])
        if not (g_l < 0 < g_r and a_l < a_r):
            return None
        return math.exp(brentq(lambda s: gain(math.exp(s)), math.log(a_l), math.log(a_r),
                               xtol=1e-12, rtol=1e-14))
    except ConvergenceError:
        return None


def _envelope_backbone(sys, ridges, checks, a_lo, a_hi, stop):
    """Backbone = upper envelope of the candidate ridges over ``[a_lo, a_hi]`` (N).

    On the union of all ridges' forces, each ridge's amplitude is interpolated in log-log by
    cubic Hermite polynomials with the exact slopes of the envelope theorem
    (``dAm*/dalpha = -F_ex^T lam``); the envelope keeps its ridge while that one exists and no
    ridge at another frequency is higher. Each stretch keeps the points of its own ridge; at a
    jump (located on exact solutions) both ridges get a point at the jump force, so the jump is
    vertical in force."""
    from scipy.interpolate import CubicHermiteSpline

    G = np.unique(np.concatenate([rd["alpha"] for rd in ridges]))
    G = G[(G >= a_lo * (1 - 1e-12)) & (G <= a_hi * (1 + 1e-12))]
    lg = np.log(G)
    LA = np.full((len(ridges), len(G)), -np.inf)
    W = np.full((len(ridges), len(G)), np.nan)
    for r, rd in enumerate(ridges):
        la = np.log(rd["alpha"])
        m = (lg >= la[0] - 1e-12) & (lg <= la[-1] + 1e-12)
        lam_fex = rd["lam"] @ sys.fex
        if len(la) > 1:
            LA[r, m] = CubicHermiteSpline(la, np.log(rd["Am"]),
                                          -rd["alpha"] * lam_fex / rd["Am"])(lg[m])
        else:
            LA[r, m] = np.log(rd["Am"][0])
        W[r, m] = np.interp(lg[m], la, rd["w"])

    def same(r, q, j):  # two traces of one ridge
        return abs(W[r, j] - W[q, j]) <= _SAME_RIDGE_W * W[q, j]

    win = np.empty(len(G), int)
    cur = -1
    for j in range(len(G)):
        best = int(np.argmax(LA[:, j]))
        if not (cur >= 0 and np.isfinite(LA[cur, j])
                and (LA[best, j] <= LA[cur, j] + _SWITCH_GAIN or same(best, cur, j))):
            # the first trace (main ridge first) of the highest ridge
            cur = min(r for r in range(len(ridges)) if np.isfinite(LA[r, j]) and same(r, best, j))
        win[j] = cur
    # stretches of one ridge, as force intervals between that ridge's own points
    runs = []
    j0 = 0
    for j in range(1, len(G) + 1):
        if j == len(G) or win[j] != win[j0]:
            r = int(win[j0])
            al = ridges[r]["alpha"]
            own = al[(al >= G[j0] * (1 - 1e-12)) & (al <= G[j - 1] * (1 + 1e-12))]
            if own.size:
                if runs and runs[-1]["r"] == r:
                    runs[-1]["hi"] = float(own[-1])
                else:
                    runs.append({"r": r, "lo": float(own[0]), "hi": float(own[-1]),
                                 "at_lo": False, "at_hi": False})
            j0 = j
    # locate the jumps on exact solutions; both ridges get a point there
    for n in range(1, len(runs)):
        P, R = runs[n - 1], runs[n]
        a_x = _jump_force(sys, ridges[P["r"]], ridges[R["r"]], P["lo"], P["hi"], R["lo"], R["hi"])
        if a_x is not None and P["lo"] <= a_x <= R["hi"]:
            P["hi"], R["lo"] = a_x, a_x
            P["at_hi"], R["at_lo"] = True, True
    keys = ("alpha", "w", "Q", "lam", "Am", "its", "seg")
    for run in runs:
        rd = ridges[run["r"]]
        idx = np.flatnonzero((rd["alpha"] >= run["lo"] * (1 - 1e-12))
                             & (rd["alpha"] <= run["hi"] * (1 + 1e-12)))
        cols = {k: rd[k][idx] for k in keys}
        for edge, flag in ((run["lo"], run["at_lo"]), (run["hi"], run["at_hi"])):
            if not flag or (idx.size and np.min(np.abs(rd["alpha"][idx] / edge - 1)) <= 1e-12):
                continue
            try:
                w_x, Q_x, l_x, its_x = _ridge_point(sys, rd, edge)
            except ConvergenceError:
                continue
            k = int(np.argmin(np.abs(np.log(rd["alpha"] / edge))))
            new = {"alpha": edge, "w": w_x, "Q": Q_x, "lam": l_x, "Am": sys.amplitude(Q_x),
                   "its": its_x, "seg": rd["seg"][k]}
            for key in keys:
                v = np.asarray(new[key])[None, ...]
                cols[key] = np.concatenate([v, cols[key]] if edge == run["lo"]
                                           else [cols[key], v])
        run.update(cols)
    runs = [run for run in runs if len(run["alpha"])]
    jumps = []
    for n in range(1, len(runs)):
        P, R = runs[n - 1], runs[n]
        a_j = float(R["alpha"][0])
        located = abs(P["alpha"][-1] / a_j - 1) <= 1e-12
        jumps.append({"alpha": a_j, "w_from": float(P["w"][-1]), "w_to": float(R["w"][0]),
                      "Am_from": float(P["Am"][-1]) if located else None,
                      "Am_to": float(R["Am"][0]), "ridge_from": int(P["r"]),
                      "ridge_to": int(R["r"])})
    segs, singular, events = [], [], []
    on_bb = [0] * len(ridges)
    seg_id = -1
    last_key = None
    for n, run in enumerate(runs):
        r, rd = run["r"], ridges[run["r"]]
        sg = []
        for k in run["seg"]:
            if (r, int(k)) != last_key:
                seg_id += 1
                last_key = (r, int(k))
            sg.append(seg_id)
        segs += sg
        on_bb[r] += len(run["alpha"])
        lo, hi = run["alpha"][0] * (1 - 1e-12), run["alpha"][-1] * (1 + 1e-12)
        singular += [p for p in rd["singular"] if lo <= p["alpha"] <= hi]
        for e in rd["events"]:
            if lo <= e["alpha"] <= hi:
                i = min(max(int(np.searchsorted(run["alpha"], e["alpha"])) - 1, 0), len(sg) - 1)
                events.append(dict(e, segment=sg[i]))
        if n:
            jp = jumps[n - 1]
            singular.append({"alpha": jp["alpha"], "w": jp["w_to"],
                             "reason": "global maximum jumps to another ridge (from w = "
                                       f"{jp['w_from']:.6g} rad/s)"})
    singular.sort(key=lambda p: p["alpha"])
    events.sort(key=lambda e: e["alpha"])
    lam = np.vstack([run["lam"] for run in runs])
    return Backbone(alpha=np.concatenate([run["alpha"] for run in runs]),
                    w=np.concatenate([run["w"] for run in runs]),
                    Am=np.concatenate([run["Am"] for run in runs]),
                    Q=np.vstack([run["Q"] for run in runs]), lam=lam, eta_alpha=lam @ sys.fex,
                    segments=np.array(segs, int), singular_points=singular, events=events,
                    newton_iters=np.concatenate([run["its"] for run in runs]),
                    stop_reason=stop,
                    ridge=np.concatenate([np.full(len(run["alpha"]), run["r"]) for run in runs]),
                    ridges=[_ridge_summary(rd, on_bb[r]) for r, rd in enumerate(ridges)],
                    jumps=jumps, checks=checks)


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
class PhaseResonance(_Curve):
    """Phase-resonance backbone: points where the driven DOF lags the force by 90 deg.

    Attributes
    ----------
    alpha : (npts,) force amplitude (N); w : (npts,) frequency (rad/s); Am : (npts,) RMS
    amplitude at the monitor DOF (m); Q : (npts, N) harmonic coefficients (m);
    stop_reason : str (``'interrupted'``: stopped by a KeyboardInterrupt, ``status``).

    Saved files: dimensions ``point`` and ``coefficient``, ``alpha`` (N) the coordinate.
    """

    alpha: np.ndarray
    w: np.ndarray
    Am: np.ndarray
    Q: np.ndarray
    stop_reason: str

    kind = "phase-resonance"

    def to_xarray(self):
        return self._dataset(
            {"w": ("point", np.asarray(self.w, float), {"units": "rad/s",
                                                        "long_name": "phase-resonance frequency"}),
             "Am": ("point", np.asarray(self.Am, float),
                    {"units": "m", "long_name": "RMS amplitude at the monitor DOF"}),
             "Q": self._Q(self.Q)},
            {"alpha": ("point", np.asarray(self.alpha, float),
                       {"units": "N", "long_name": "force amplitude"})},
            {"stop_reason": self.stop_reason})

    @classmethod
    def from_xarray(cls, ds):
        return cls(ds["alpha"].values.copy(), ds["w"].values.copy(), ds["Am"].values.copy(),
                   ds["Q"].values.copy(), ds.attrs["stop_reason"])

    def summary(self) -> dict:
        res = {"points": (len(self.alpha), None), "stop_reason": (self.stop_reason, None)}
        if len(self.alpha):
            res.update(w_first=(float(self.w[0]), "rad/s"), w_last=(float(self.w[-1]), "rad/s"),
                       alpha_last=(float(self.alpha[-1]), "N"))
        return summary_record(self.kind, {}, res)


@_single
def phase_resonance(sys: HBSystem, alpha_range, w_guess, *, force_dof=None, ds=0.05,
                    ds_max=0.3, max_steps=600, progress=False) -> PhaseResonance:
    """Continue ``R = 0`` with the quadrature condition ``Q^c1_k = 0`` in ``log alpha``.

    ``force_dof`` (default: the DOF with the largest entry of the load pattern) is the DOF
    whose cosine fundamental must vanish. ``w_guess`` (rad/s) is near the stuck resonance.
    A KeyboardInterrupt during the continuation returns the points computed so far with
    ``stop_reason = 'interrupted'``.
    """
    a0, a1 = _increasing_range("alpha_range", alpha_range, " (N)")
    w_guess = check_positive("w_guess (rad/s)", w_guess)
    max_steps = _steps("max_steps", max_steps)
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
class DNNM(_Curve):
    """Damped nonlinear normal mode with the extended energy balance (spec 3.1).

    Attributes
    ----------
    a : modal amplitude (sqrt(kg) m); w0 : (rad/s); xi : extra damping (1/s, < 0 = injection);
    zeta : ``-xi / (2 w0)``; Q : ``a psi`` (m); Am : RMS amplitude at the monitor (m);
    F_eq : force amplitude (N) whose work balances the dissipation (single point, in phase);
    stop_reason : str (``'interrupted'``: stopped by a KeyboardInterrupt, ``status``).

    Saved files: dimensions ``point`` and ``coefficient``, ``a`` the coordinate along ``point``.
    """

    a: np.ndarray
    w0: np.ndarray
    xi: np.ndarray
    zeta: np.ndarray
    Q: np.ndarray
    Am: np.ndarray
    F_eq: np.ndarray
    stop_reason: str

    kind = "dnnm"

    def to_xarray(self):
        pt = "point"
        return self._dataset(
            {"w0": (pt, np.asarray(self.w0, float), {"units": "rad/s",
                                                    "long_name": "natural frequency"}),
             "xi": (pt, np.asarray(self.xi, float),
                    {"units": "1/s", "long_name": "extra damping (C -> C + xi M), < 0: injection"}),
             "zeta": (pt, np.asarray(self.zeta, float),
                      {"units": "1", "long_name": "damping ratio -xi / (2 w0)"}),
             "Q": self._Q(self.Q),
             "Am": (pt, np.asarray(self.Am, float),
                    {"units": "m", "long_name": "RMS amplitude at the monitor DOF"}),
             "F_eq": (pt, np.asarray(self.F_eq, float),
                      {"units": "N", "long_name": "force amplitude of the energy balance"})},
            {"a": (pt, np.asarray(self.a, float),
                   {"units": "kg^0.5 m", "long_name": "modal amplitude (mass-normalised mode)"})},
            {"stop_reason": self.stop_reason})

    @classmethod
    def from_xarray(cls, ds):
        return cls(*(ds[k].values.copy() for k in ("a", "w0", "xi", "zeta", "Q", "Am", "F_eq")),
                   ds.attrs["stop_reason"])

    def summary(self) -> dict:
        res = {"points": (len(self.a), None), "stop_reason": (self.stop_reason, None)}
        if len(self.a):
            res.update(w0_first=(float(self.w0[0]), "rad/s"), w0_last=(float(self.w0[-1]), "rad/s"),
                       zeta_max=(float(np.max(self.zeta)), "1"))
        return summary_record(self.kind, {}, res)


@_single
def dnnm(sys: HBSystem, a_range, mode: int = 0, *, force_dof=None, harmonics="all", ds=0.05,
         ds_max=0.3, max_steps=600, progress=False) -> DNNM:
    """dNNM continuation in ``log a`` (spec 3.1, paper eqs. 8-12, printed typos fixed).

    Unknowns ``(psi, w0, xi)``: ``Dbar(w0, xi) psi + F_nl(a psi)/a = 0`` with ``C -> C + xi M``,
    ``psi^c1 . M psi^c1 + psi^s1 . M psi^s1 = 1``, phase ``psi^s1_k = 0`` (k = force DOF).
    Energy balance: ``E_d = -xi pi w0 sum_n n^2 (Q^cn.M Q^cn + Q^sn.M Q^sn)`` (``harmonics='all'``)
    or the fundamental only; ``F_eq = E_d / (pi |Q^1_k|)``.
    A KeyboardInterrupt during the continuation returns the points computed so far with
    ``stop_reason = 'interrupted'``.
    """
    if harmonics not in ("all", "fundamental"):
        raise ParameterError(f"harmonics must be 'all' or 'fundamental', got {harmonics!r}")
    a0, a1 = _increasing_range("a_range", a_range, " (modal amplitude, sqrt(kg) m)")
    max_steps = _steps("max_steps", max_steps)
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
