"""Pseudo-arclength continuation of solution branches ``R(x, lam) = 0``.

One driver for the whole project (harmonic balance, backbones, periodic orbits of free-play
oscillators). The branch is followed in the scaled unknowns ``y = (x, lam) / scale``:

* tangent predictor ``y_p = y_k + ds t_k``;
* Newton corrector on the bordered system ``[R(y); t_k^T (y - y_p)] = 0``;
* the new tangent solves ``[J(y); t_k^T] t = e_{n+1}`` (keeps the orientation), then is normalised;
* step control: halve ``ds`` on corrector failure or when the angle between consecutive tangents
  exceeds ``max_angle_deg``; grow it by 1.5 after a fast (<= 3 iterations) convergence;
* events: the built-in ``'fold'`` (sign change of the ``lam`` part of the tangent), user test
  functions ``g(x, lam)`` and a stability callback are located between accepted points by
  secant/bisection on the arclength, each trial point being corrected onto the branch.

When the corrector fails at ``ds_min`` the driver stops, records where and why in
``Branch.stop_reason`` and returns the branch computed so far; it never raises mid-branch. A
KeyboardInterrupt (Ctrl-C) during the steps likewise returns the points accepted so far, with
``stop_reason='interrupted'`` (``Branch.status == 'interrupted'``).
A branch that cannot start (no convergence of the initial correction at fixed ``lam0``) raises
:class:`~fesub.errors.ConvergenceError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .errors import BackendError, ConvergenceError, FesubError, ParameterError, check_positive
from .io import Result, summary_record

__all__ = ["Branch", "Event", "continue_branch", "newton"]


@dataclass
class Event:
    """A located special point between ``Branch`` points ``index`` and ``index + 1``.

    Attributes
    ----------
    kind : str
        ``'fold'``, ``'stability'`` or the name of a user test function.
    index : int
        Index of the accepted branch point just before the event.
    x : numpy.ndarray
        State at the event.
    lam : float
        Continuation parameter at the event.
    info : dict
        Extra data (``'tangent'`` at the event, residual norm, value of the test function, ...).
    """

    kind: str
    index: int
    x: np.ndarray
    lam: float
    info: dict = field(default_factory=dict)


@dataclass
class Branch(Result):
    """A continued solution branch.

    Attributes
    ----------
    x : numpy.ndarray, shape (npts, n)
        Converged states (in the units of the problem, ``x_unit``).
    lam : numpy.ndarray, shape (npts,)
        Continuation parameter (``lam_unit``).
    tangent : numpy.ndarray, shape (npts, n + 1)
        Unit tangents (x part, lam part) in the *scaled* variables used by the driver
        (dimensionless).
    stable : numpy.ndarray of bool or None
        Stability flags (only with a ``stability`` callback).
    events : list of Event
        Located special points.
    stop_reason : str
        ``'lam_range'``, ``'max_steps'``, ``'corrector_failed at lam=... (...)'``, ``'user'`` or
        ``'interrupted'`` (KeyboardInterrupt: the points accepted before it).
    newton_iters : numpy.ndarray, shape (npts,)
        Corrector iterations of each accepted point (0 for the start point).
    x_unit, lam_unit : str
        Units of ``x`` and ``lam`` recorded in saved files (``"1"``: dimensionless or as the
        problem defines them; a caller that knows them sets them).
    """

    x: np.ndarray
    lam: np.ndarray
    tangent: np.ndarray
    stable: np.ndarray | None
    events: list
    stop_reason: str
    newton_iters: np.ndarray | None = None
    x_unit: str = "1"
    lam_unit: str = "1"

    kind = "branch"

    def __len__(self) -> int:
        return len(self.lam)

    @property
    def status(self) -> str:
        """``'interrupted'`` when a KeyboardInterrupt stopped the branch, else ``'finished'``."""
        return "interrupted" if self.stop_reason == "interrupted" else "finished"

    def events_of(self, kind: str) -> list:
        """Events of one kind."""
        return [e for e in self.events if e.kind == kind]

    def to_xarray(self):
        """Dataset with dims ``point``, ``state``, ``tangent_component`` and ``event``.

        Events are stored as ``event_x``/``event_lam``/``event_index`` and the attributes
        ``event_kinds`` and ``event_info`` (arrays in the info kept as arrays)."""
        import xarray as xr

        n = self.x.shape[1] if self.x.ndim == 2 else 0
        xu, lu = self.x_unit, self.lam_unit
        v = {"x": (("point", "state"), np.asarray(self.x, float),
                   {"units": xu, "long_name": "converged state"}),
             "lam": ("point", np.asarray(self.lam, float),
                     {"units": lu, "long_name": "continuation parameter"}),
             "tangent": (("point", "tangent_component"), np.asarray(self.tangent, float),
                         {"units": "1", "long_name": "unit tangent in the scaled variables"}),
             "event_x": (("event", "state"),
                         np.array([np.asarray(e.x, float) for e in self.events]).reshape(
                             len(self.events), n), {"units": xu}),
             "event_lam": ("event", np.array([float(e.lam) for e in self.events], float),
                           {"units": lu}),
             "event_index": ("event", np.array([int(e.index) for e in self.events], np.int64),
                             {"units": "1", "long_name": "branch point just before the event"})}
        if self.stable is not None:
            v["stable"] = ("point", np.asarray(self.stable, bool), {"units": "1"})
        if self.newton_iters is not None:
            v["newton_iters"] = ("point", np.asarray(self.newton_iters), {"units": "1"})
        return xr.Dataset(v, attrs={
            "stop_reason": self.stop_reason, "x_unit": xu, "lam_unit": lu,
            "event_kinds": [e.kind for e in self.events],
            "event_info": [_encode_info(e.info) for e in self.events]})

    @classmethod
    def from_xarray(cls, ds) -> "Branch":
        a = ds.attrs
        events = [Event(k, int(i), x.copy(), float(lm), _decode_info(info))
                  for k, i, x, lm, info in zip(a["event_kinds"], ds["event_index"].values,
                                               ds["event_x"].values, ds["event_lam"].values,
                                               a["event_info"])]
        return cls(x=ds["x"].values.copy(), lam=ds["lam"].values.copy(),
                   tangent=ds["tangent"].values.copy(),
                   stable=ds["stable"].values.copy() if "stable" in ds else None,
                   events=events, stop_reason=a["stop_reason"],
                   newton_iters=ds["newton_iters"].values.copy() if "newton_iters" in ds
                   else None, x_unit=a["x_unit"], lam_unit=a["lam_unit"])

    def summary(self) -> dict:
        lam = np.asarray(self.lam, float)
        res = {"points": (len(lam), None), "stop_reason": (self.stop_reason, None),
               "events": (len(self.events), None)}
        if len(lam):
            res["lam_start"] = (float(lam[0]), self.lam_unit)
            res["lam_end"] = (float(lam[-1]), self.lam_unit)
        kinds = sorted({e.kind for e in self.events})
        return summary_record(self.kind, {}, res, details={
            "events_by_kind": {k: len(self.events_of(k)) for k in kinds}})


_ARRAY_KEY = "__ndarray__"


def _encode_info(info: dict) -> dict:
    """Event info as JSON values; an array becomes ``{"__ndarray__": values, "dtype": ...}``."""
    return {k: ({_ARRAY_KEY: v.tolist(), "dtype": v.dtype.str} if isinstance(v, np.ndarray)
                else v) for k, v in info.items()}


def _decode_info(info: dict) -> dict:
    return {k: (np.array(v[_ARRAY_KEY], dtype=v["dtype"])
                if isinstance(v, dict) and _ARRAY_KEY in v else v) for k, v in info.items()}


# evaluation failures of the user functions that count as a corrector failure (the driver
# halves the step instead of raising mid-branch)
_EVAL_ERRORS = (ArithmeticError, ValueError, np.linalg.LinAlgError, FesubError)


def _evaluation_failed(exc) -> bool:
    """Whether an exception of a residual counts as a failed evaluation (the caller then tries
    a smaller step); a missing compiled kernel is a broken installation and must surface."""
    if isinstance(exc, BackendError):
        raise exc
    return True


def _solve(A, b):
    try:
        import scipy.sparse as sp

        if sp.issparse(A):
            import scipy.sparse.linalg as spla

            return spla.spsolve(A.tocsc(), b)
    except ImportError:  # pragma: no cover
        pass
    return np.linalg.solve(A, b)


def newton(fun, x0, *, tol=1e-10, max_iter=10, xtol=1e-14):
    """Plain Newton iteration for ``fun(x) -> (r, J)``.

    Returns ``(x, converged, iterations, |r|)``; never raises on non-convergence (singular
    Jacobians count as failure).
    """
    x = np.array(x0, dtype=float)
    try:
        r, J = fun(x)
    except _EVAL_ERRORS as exc:
        _evaluation_failed(exc)
        return x, False, 0, math.inf
    nr = float(np.linalg.norm(r, np.inf))
    if not np.isfinite(nr):
        return x, False, 0, nr
    for it in range(1, max_iter + 1):
        if nr <= tol:
            return x, True, it - 1, nr
        try:
            dx = _solve(J, -r)
        except np.linalg.LinAlgError:
            return x, False, it, nr
        if not np.all(np.isfinite(dx)):
            return x, False, it, nr
        x = x + dx
        try:
            r, J = fun(x)
        except _EVAL_ERRORS as exc:
            _evaluation_failed(exc)
            return x, False, it, math.inf
        nr = float(np.linalg.norm(r, np.inf))
        if not np.isfinite(nr):
            return x, False, it, nr
        if nr <= tol or np.linalg.norm(dx, np.inf) <= xtol * (1.0 + np.linalg.norm(x, np.inf)):
            return x, nr <= max(tol, 1e3 * tol), it, nr
    return x, nr <= tol, max_iter, nr


class _Problem:
    """Scaled wrapper: y = (x, lam) / scale."""

    def __init__(self, residual, jacobian, n, scale):
        self.residual = residual
        self.jacobian = jacobian
        self.n = n
        self.s = scale

    def unpack(self, y):
        z = y * self.s
        return z[:-1], float(z[-1])

    def RJ(self, y):
        x, lam = self.unpack(y)
        Rx, Rl = self.jacobian(x, lam)  # Jacobian first: callers may cache R alongside it
        R = np.asarray(self.residual(x, lam), dtype=float)
        Rx = np.asarray(Rx.toarray() if hasattr(Rx, "toarray") else Rx, dtype=float)
        J = np.empty((self.n, self.n + 1))
        J[:, :-1] = Rx * self.s[:-1][None, :]
        J[:, -1] = np.asarray(Rl, dtype=float).ravel() * self.s[-1]
        return R, J

    def tangent(self, J, t_ref):
        A = np.vstack([J, t_ref[None, :]])
        b = np.zeros(self.n + 1)
        b[-1] = 1.0
        try:
            t = np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            return None
        nt = np.linalg.norm(t)
        if not np.isfinite(nt) or nt == 0:
            return None
        return t / nt

    def correct(self, y_pred, t, y_base=None, s_target=None, *, tol, max_iter):
        """Newton on [R; t.(y - y_pred)] = 0 (or t.(y - y_base) = s_target)."""
        if y_base is None:
            y_base, s_target = y_pred, 0.0

        def fun(y):
            R, J = self.RJ(y)
            r = np.append(R, t @ (y - y_base) - s_target)
            return r, np.vstack([J, t[None, :]])

        y, ok, its, nr = newton(fun, y_pred, tol=tol, max_iter=max_iter)
        return y, ok, its, nr


def continue_branch(residual, jacobian, x0, lam0, *, ds=0.01, ds_min=1e-8, ds_max=0.1,
                    lam_range=(-math.inf, math.inf), max_steps=1000, tol=1e-10, max_iter=10,
                    direction=+1, max_angle_deg=15.0, events=None, stability=None,
                    progress=False, scale=None, callback=None, kink_ds=None) -> Branch:
    """Follow the branch of ``residual(x, lam) = 0`` from ``(x0, lam0)``.

    Parameters
    ----------
    residual : callable
        ``residual(x, lam) -> R``, shape (n,).
    jacobian : callable
        ``jacobian(x, lam) -> (R_x, R_lam)``, shapes (n, n) (dense or scipy sparse) and (n,).
    x0 : array_like, shape (n,)
        Initial guess; corrected by Newton at fixed ``lam0`` first.
    lam0 : float
        Initial parameter value.
    ds, ds_min, ds_max : float
        Initial, minimum and maximum arclength step (in the scaled variables).
    lam_range : (float, float)
        The branch stops (with a point exactly on the bound when it can be computed) when
        ``lam`` leaves this interval.
    max_steps : int
        Maximum number of accepted steps.
    tol : float
        Corrector tolerance on ``max |R|`` (in the units of ``R``).
    max_iter : int
        Maximum corrector iterations per step.
    direction : {+1, -1}
        Initial direction: sign of ``d lam / ds`` at the start.
    max_angle_deg : float
        Maximum angle between consecutive tangents (deg); larger turns are rejected.
    events : dict, optional
        ``name -> g(x, lam) -> float``; sign changes are located and returned as events.
    stability : callable, optional
        ``stability(x, lam) -> bool`` (True = stable); changes are located as ``'stability'``.
    progress : bool
        Show a tqdm progress bar over the steps.
    scale : array_like, shape (n + 1,), optional
        Characteristic magnitude of each unknown (x, then lam); the arclength is measured in
        ``(x, lam) / scale``. Default: ones.
    callback : callable, optional
        ``callback(x, lam) -> bool``; returning True stops the branch with ``stop_reason='user'``.
    kink_ds : float, optional
        Non-smooth branches (e.g. friction slip onset, where the Jacobian jumps): when the
        corrector converges but the angle test still fails with ``ds <= kink_ds``, the point is
        accepted and recorded as an event ``'kink'`` (with the angle). Default None: such a
        point stops the branch like any corrector failure.

    Returns
    -------
    Branch
        ``stop_reason='interrupted'`` when a KeyboardInterrupt arrived during the steps (the
        points accepted before it are kept).

    Raises
    ------
    ConvergenceError
        If the initial correction at ``lam0`` does not converge (the branch cannot start).
    ParameterError
        For invalid step sizes, tolerances or shapes.
    """
    x0 = np.asarray(x0, dtype=float).ravel()
    n = x0.size
    ds_min = check_positive("ds_min", ds_min)
    ds_max = check_positive("ds_max", ds_max)
    ds = check_positive("ds", ds)
    tol = check_positive("tol", tol)
    if ds_min > ds_max:
        raise ParameterError(f"ds_min must be <= ds_max, got ds_min={ds_min}, ds_max={ds_max}")
    ds = min(max(ds, ds_min), ds_max)
    if direction not in (1, -1):
        raise ParameterError(f"direction must be +1 or -1, got {direction!r}")
    if int(max_steps) < 0:
        raise ParameterError(f"max_steps must be >= 0, got {max_steps!r}")
    if int(max_iter) < 1:
        raise ParameterError(f"max_iter must be >= 1, got {max_iter!r}")
    lo, hi = float(lam_range[0]), float(lam_range[1])
    if not lo <= float(lam0) <= hi:
        raise ParameterError(f"lam0={lam0} must lie in lam_range [{lo}, {hi}]")
    if scale is None:
        sc = np.ones(n + 1)
    else:
        sc = np.asarray(scale, dtype=float).ravel()
        if sc.shape != (n + 1,) or not np.all(sc > 0) or not np.all(np.isfinite(sc)):
            raise ParameterError(f"scale must have shape ({n + 1},) with finite entries > 0")
    events = dict(events or {})
    prob = _Problem(residual, jacobian, n, sc)

    # --- initial correction at fixed lam
    def fixed(xx):
        R, J = prob.RJ(np.append(xx / sc[:-1], lam0 / sc[-1]))
        return R, J[:, :-1] / sc[:-1][None, :]

    x_start, ok, its0, nr0 = newton(fixed, x0, tol=tol, max_iter=max(max_iter, 20))
    if not ok:
        raise ConvergenceError(
            f"continuation cannot start: Newton at fixed lam={lam0:g} did not converge "
            f"(|R|={nr0:.3e} after {its0} iterations, tol={tol:g}; |R|=inf: the residual raised "
            "or was not finite); improve x0")
    y = np.append(x_start / sc[:-1], lam0 / sc[-1])
    R, J = prob.RJ(y)
    e = np.zeros(n + 1)
    e[-1] = 1.0
    t = prob.tangent(J, e)
    if t is None or abs(t[-1]) < 1e-12:
        # singular with the lam border (start at a fold): null vector by SVD
        _, _, vt = np.linalg.svd(J)
        t = vt[-1]
    t = t / np.linalg.norm(t)
    if t[-1] * direction < 0 or (t[-1] == 0 and direction < 0):
        t = -t

    ys, ts, its_list = [y.copy()], [t.copy()], [0]
    stab = [bool(stability(*prob.unpack(y)))] if stability is not None else None
    gvals = {k: float(g(*prob.unpack(y))) for k, g in events.items()}
    found: list[Event] = []
    stop = "max_steps"
    cos_max = math.cos(math.radians(max_angle_deg))

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=int(max_steps), desc="continuation", leave=False)

    def point_at(y0, t0, s, y_guess=None):
        """Point on the branch at arclength s from y0 (constraint t0.(y - y0) = s)."""
        yp = y0 + s * t0 if y_guess is None else y_guess
        yy, ok_, _, _ = prob.correct(yp, t0, y0, s, tol=tol, max_iter=max_iter + 5)
        return yy if ok_ else None

    def locate(y0, t0, s1, fval0, fval1, gfun, kind, idx):
        """Secant/bisection (Illinois) for a sign change of gfun along the arclength."""
        a, b, fa, fb = 0.0, s1, fval0, fval1
        ym = None
        side = 0
        for _ in range(60):
            if kind == "bool":
                m = 0.5 * (a + b)
            else:
                m = b - fb * (b - a) / (fb - fa) if fb != fa else 0.5 * (a + b)
                if not (min(a, b) < m < max(a, b)):
                    m = 0.5 * (a + b)
            ym = point_at(y0, t0, m)
            if ym is None:
                m = 0.5 * (a + b)
                ym = point_at(y0, t0, m)
                if ym is None:
                    return None
            fm = gfun(ym)
            if kind == "bool":
                if fm == fa:
                    a, fa = m, fm
                else:
                    b, fb = m, fm
                if abs(b - a) <= 1e-10 * abs(s1):
                    break
                continue
            if fm == 0:
                break
            if (fm > 0) == (fa > 0):
                a, fa = m, fm
                if side == -1:
                    fb *= 0.5
                side = -1
            else:
                b, fb = m, fm
                if side == 1:
                    fa *= 0.5
                side = 1
            if abs(b - a) <= 1e-13 * (1 + abs(s1)):
                break
        return ym

    def record(kind, y_ev, idx, info):
        x_ev, lam_ev = prob.unpack(y_ev)
        found.append(Event(kind, idx, x_ev.copy(), lam_ev, info))

    step = 0
    try:
        while step < int(max_steps):
            y0, t0 = ys[-1], ts[-1]
            yp = y0 + ds * t0
            y1, ok, its, nr = prob.correct(yp, t0, tol=tol, max_iter=max_iter)
            reason = f"|R|={nr:.3e} after {its} iterations"
            t1 = None
            if ok:
                _, J1 = prob.RJ(y1)
                t1 = prob.tangent(J1, t0)
                if t1 is None:
                    ok, reason = False, "singular bordered Jacobian"
                elif t1 @ t0 < cos_max:
                    angle = math.degrees(math.acos(max(-1, min(1, t1 @ t0))))
                    if kink_ds is not None and ds <= kink_ds and t1 @ t0 > 0:
                        x_k, lam_k = prob.unpack(y1)
                        found.append(Event("kink", len(ys) - 1, x_k.copy(), lam_k,
                                           {"angle_deg": angle}))
                    else:
                        ok = False
                        reason = f"tangent turned by {angle:.1f} deg"
            if not ok:
                if ds <= ds_min * (1 + 1e-12):
                    _, lam_here = prob.unpack(y0)
                    stop = (f"corrector_failed at lam={lam_here:.10g} ({reason}, ds={ds:.3e})")
                    break
                ds = max(0.5 * ds, ds_min)
                continue
            idx = len(ys) - 1
            x1, lam1 = prob.unpack(y1)
            # --- lam range
            if lam1 < lo or lam1 > hi:
                bound = hi if lam1 > hi else lo
                _, lam_prev = prob.unpack(y0)
                frac = (bound - lam_prev) / (lam1 - lam_prev) if lam1 != lam_prev else 1.0
                yg = y0 + frac * (y1 - y0)
                xb, okb, _, _ = newton(fixed_at(prob, bound), yg[:-1] * sc[:-1],
                                       tol=tol, max_iter=max_iter + 5)
                if okb:
                    yb = np.append(xb / sc[:-1], bound / sc[-1])
                    _, Jb = prob.RJ(yb)
                    tb = prob.tangent(Jb, t0)
                    ys.append(yb)
                    ts.append(tb if tb is not None else t0)
                    its_list.append(its)
                    if stab is not None:
                        stab.append(bool(stability(*prob.unpack(yb))))
                stop = "lam_range"
                break
            # --- events between y0 and y1 (arclength along t0 from y0)
            s1 = float(t0 @ (y1 - y0))
            if t0[-1] * t1[-1] < 0:
                def gfold(yy, t0=t0):
                    _, Jy = prob.RJ(yy)
                    tt = prob.tangent(Jy, t0)
                    return tt[-1] if tt is not None else 0.0
                yf = locate(y0, t0, s1, t0[-1], t1[-1], gfold, "fold", idx)
                if yf is not None:
                    _, Jf = prob.RJ(yf)
                    tf = prob.tangent(Jf, t0)
                    record("fold", yf, idx, {"tangent": tf * 1.0 if tf is not None else None})
            for name, g in events.items():
                g1 = float(g(x1, lam1))
                g0 = gvals[name]
                if np.isfinite(g0) and np.isfinite(g1) and (g0 > 0) != (g1 > 0) and g0 != 0:
                    ye = locate(y0, t0, s1, g0, g1, lambda yy, g=g: float(g(*prob.unpack(yy))),
                                name, idx)
                    if ye is not None:
                        record(name, ye, idx, {"g": float(g(*prob.unpack(ye)))})
                gvals[name] = g1
            if stab is not None:
                st1 = bool(stability(x1, lam1))
                if st1 != stab[-1]:
                    ye = locate(y0, t0, s1, stab[-1], st1,
                                lambda yy: bool(stability(*prob.unpack(yy))), "bool", idx)
                    if ye is not None:
                        record("stability", ye, idx, {"from": stab[-1], "to": st1})
                stab.append(st1)
            ys.append(y1)
            ts.append(t1)
            its_list.append(its)
            step += 1
            if bar is not None:
                bar.update(1)
            if callback is not None and callback(x1, lam1):
                stop = "user"
                break
            if its <= 3:
                ds = min(1.5 * ds, ds_max)
    except KeyboardInterrupt:
        # Ctrl-C (or SIGTERM raised as one): keep the points accepted so far; a point being
        # appended when it arrived is dropped from every list
        stop = "interrupted"
        npts = min(len(ys), len(ts), len(its_list), len(stab) if stab is not None else len(ys))
        del ys[npts:], ts[npts:], its_list[npts:]
        if stab is not None:
            del stab[npts:]
    finally:
        if bar is not None:
            bar.close()

    Y = np.array(ys) * sc[None, :]
    return Branch(x=Y[:, :-1].copy(), lam=Y[:, -1].copy(), tangent=np.array(ts),
                  stable=None if stab is None else np.array(stab, bool), events=found,
                  stop_reason=stop, newton_iters=np.array(its_list, int))


def fixed_at(prob: _Problem, lam: float):
    """Newton function (unscaled x) at fixed lam for a scaled problem."""
    sc = prob.s

    def f(xx):
        R, J = prob.RJ(np.append(xx / sc[:-1], lam / sc[-1]))
        return R, J[:, :-1] / sc[:-1][None, :]

    return f
