"""The pseudo-arclength driver :func:`continue_branch`: validation, start, and the loop of
predictor, corrector, step control, event detection and bookkeeping, each a named step."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError, ParameterError, check_positive
from .corrector import ScaledProblem, fixed_at, newton
from .events import (Segment, augmented_det, branch_point_event, fold_event, stability_event,
                     user_events)
from .linsolve import ReusedFactorization
from .result import Branch, Event

__all__ = ["continue_branch"]


@dataclass(frozen=True)
class _Settings:
    """Validated options of one continuation (steps in the scaled variables)."""

    ds_min: float
    ds_max: float
    tol: float
    max_iter: int
    lo: float
    hi: float
    cos_max: float
    kink_ds: float | None


@dataclass
class _Step:
    """Outcome of one predictor-corrector step from ``(y0, t0)`` with step ``ds``."""

    y: np.ndarray
    t: np.ndarray | None
    its: int
    ok: bool
    reason: str
    residual: float
    J: np.ndarray | None = None
    cause: str | None = None
    angle: float | None = None
    kink_angle: float | None = None

    def failure(self) -> dict:
        """Why the step failed, as :attr:`Branch.stop_info` entries."""
        if self.cause == "not_converged":
            return {"cause": self.cause, "residual": self.residual, "iterations": self.its}
        if self.cause == "tangent_turned":
            return {"cause": self.cause, "angle_deg": self.angle}
        return {"cause": self.cause}


class _Trace:
    """Bookkeeping of the accepted points (scaled), their tangents, corrector iterations,
    stability flags and the located events."""

    def __init__(self, prob: ScaledProblem, y, t, stable):
        self.prob = prob
        self.ys, self.ts, self.its = [y.copy()], [t.copy()], [0]
        self.stab = None if stable is None else [stable]
        self.events: list[Event] = []
        self.bp_sign = None  # sign of det [J; t] at the last point (branch-point test)

    def record(self, kind, y_ev, idx, info):
        """Add an event of ``kind`` at scaled point ``y_ev`` after accepted point ``idx``."""
        x_ev, lam_ev = self.prob.unpack(y_ev)
        self.events.append(Event(kind, idx, x_ev.copy(), lam_ev, info))

    def accept(self, y, t, its, stable=None):
        """Append an accepted point (``stable`` only when stability is tracked)."""
        self.ys.append(y)
        self.ts.append(t)
        self.its.append(its)
        if self.stab is not None:
            self.stab.append(stable)

    def trim(self):
        """Drop a point half-appended when an interrupt arrived (lists of equal length)."""
        npts = min(len(self.ys), len(self.ts), len(self.its),
                   len(self.stab) if self.stab is not None else len(self.ys))
        del self.ys[npts:], self.ts[npts:], self.its[npts:]
        if self.stab is not None:
            del self.stab[npts:]

    def branch(self, stop: str, info: dict) -> Branch:
        """The :class:`Branch` in the units of the problem; ``info`` (the stop code and
        details) gets the parameter of the last point."""
        Y = np.array(self.ys) * self.prob.s[None, :]
        return Branch(x=Y[:, :-1].copy(), lam=Y[:, -1].copy(), tangent=np.array(self.ts),
                      stable=None if self.stab is None else np.array(self.stab, bool),
                      events=self.events, stop_reason=stop,
                      newton_iters=np.array(self.its, int),
                      stop_info={**info, "lam": float(Y[-1, -1])})


def _validated(n, lam0, *, ds, ds_min, ds_max, tol, direction, max_steps, max_iter, lam_range,
               scale, max_angle_deg, kink_ds):
    """Check the options at the door; returns ``(ds, settings, scale)``."""
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
    settings = _Settings(ds_min, ds_max, tol, max_iter, lo, hi,
                         math.cos(math.radians(max_angle_deg)), kink_ds)
    return ds, settings, sc


def _start(prob: ScaledProblem, x0, lam0, direction, s: _Settings):
    """Correct ``x0`` at fixed ``lam0`` and orient the first unit tangent along ``direction``
    (in ``lam``); returns scaled ``(y, t)``. Raises ConvergenceError if Newton fails."""
    sc = prob.s
    x_start, ok, its0, nr0 = newton(fixed_at(prob, lam0), x0, tol=s.tol,
                                    max_iter=max(s.max_iter, 20), solver=prob.solver)
    if not ok:
        raise ConvergenceError(
            f"continuation cannot start: Newton at fixed lam={lam0:g} did not converge "
            f"(|R|={nr0:.3e} after {its0} iterations, tol={s.tol:g}; |R|=inf: the residual "
            "raised or was not finite); improve x0")
    y = np.append(x_start / sc[:-1], lam0 / sc[-1])
    _, J = prob.RJ(y)
    e = np.zeros(prob.n + 1)
    e[-1] = 1.0
    t = prob.tangent(J, e)
    if t is None or abs(t[-1]) < 1e-12:
        # singular with the lam border (start at a fold): null vector by SVD
        _, _, vt = np.linalg.svd(J)
        t = vt[-1]
    t = t / np.linalg.norm(t)
    if t[-1] * direction < 0 or (t[-1] == 0 and direction < 0):
        t = -t
    return y, t


def _predict_correct(prob: ScaledProblem, y0, t0, ds, s: _Settings) -> _Step:
    """Tangent predictor ``y0 + ds t0``, bordered Newton corrector, new tangent and the angle
    test between ``t0`` and it (a turn above the limit is a failure, or a kink when
    ``ds <= kink_ds``)."""
    yp = y0 + ds * t0
    y1, ok, its, nr = prob.correct(yp, t0, tol=s.tol, max_iter=s.max_iter)
    step = _Step(y1, None, its, ok, f"|R|={nr:.3e} after {its} iterations", nr)
    if not ok:
        step.cause = "not_converged"
        return step
    A = prob.last_A
    if A is None:  # pragma: no cover (a converged corrector keeps its last matrix)
        A = prob.RJ(y1, border=t0)[1]
    step.J = A[:-1]
    step.t = prob.tangent(A, t0, bordered=True)
    if step.t is None:
        step.ok, step.reason, step.cause = False, "singular bordered Jacobian", "singular_jacobian"
    elif step.t @ t0 < s.cos_max:
        angle = math.degrees(math.acos(max(-1, min(1, step.t @ t0))))
        if s.kink_ds is not None and ds <= s.kink_ds and step.t @ t0 > 0:
            step.kink_angle = angle
        else:
            step.ok, step.reason = False, f"tangent turned by {angle:.1f} deg"
            step.cause, step.angle = "tangent_turned", angle
    return step


def _next_ds(ds, its, s: _Settings):
    """Step control after an accepted point: grow by 1.5 after a fast (<= 3 iterations)
    convergence, never beyond ``ds_max``."""
    return min(1.5 * ds, s.ds_max) if its <= 3 else ds


def _end_at_bound(prob: ScaledProblem, trace: _Trace, y0, t0, y1, its, stability, s: _Settings):
    """``y1`` left ``[lo, hi]``: add the point on the bound (Newton at fixed ``lam`` from the
    linear interpolation) when it converges."""
    sc = prob.s
    _, lam1 = prob.unpack(y1)
    bound = s.hi if lam1 > s.hi else s.lo
    _, lam_prev = prob.unpack(y0)
    frac = (bound - lam_prev) / (lam1 - lam_prev) if lam1 != lam_prev else 1.0
    yg = y0 + frac * (y1 - y0)
    xb, okb, _, _ = newton(fixed_at(prob, bound), yg[:-1] * sc[:-1], tol=s.tol,
                           max_iter=s.max_iter + 5, solver=prob.solver)
    if okb:
        yb = np.append(xb / sc[:-1], bound / sc[-1])
        _, Jb = prob.RJ(yb)
        tb = prob.tangent(Jb, t0)
        trace.ys.append(yb)
        trace.ts.append(tb if tb is not None else t0)
        trace.its.append(its)
        if trace.stab is not None:
            trace.stab.append(bool(stability(*prob.unpack(yb))))


def _detect_events(prob, trace: _Trace, y0, t0, step: _Step, events, gvals, stability,
                   s: _Settings):
    """Locate the folds, branch points (when ``trace.bp_sign`` is tracked), user events and
    stability changes between the last accepted point and ``step.y``; returns the stability
    flag of ``step.y`` (None when not tracked)."""
    idx = len(trace.ys) - 1
    x1, lam1 = prob.unpack(step.y)
    seg = Segment(prob, y0, t0, step.y, tol=s.tol, max_iter=s.max_iter)
    fold_event(seg, step.t, trace.record, idx)
    if trace.bp_sign is not None:
        trace.bp_sign = branch_point_event(seg, step.J, step.t, trace.bp_sign, trace.record, idx)
    user_events(seg, events, gvals, x1, lam1, trace.record, idx)
    if trace.stab is None:
        return None
    return stability_event(seg, stability, trace.stab[-1], x1, lam1, trace.record, idx)


class _Progress:
    """The progress bar of a branch: over the share of a finite ``lam_range`` covered (its
    time estimate then follows the branch, which ends at the range's end long before
    ``max_steps``), or over the steps for an unbounded range; the steps taken and ``lam`` are
    shown beside it."""

    def __init__(self, lam0: float, direction: int, max_steps: int, s: _Settings):
        from tqdm.auto import tqdm

        self.span = (s.lo, s.hi) if math.isfinite(s.lo) and math.isfinite(s.hi) else None
        self.direction, self.steps = direction, 0
        if self.span is None:
            self.bar = tqdm(total=int(max_steps), desc="continuation", leave=False)
        else:
            self.bar = tqdm(total=100.0, desc="continuation", leave=False,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                       "[{elapsed}<{remaining}{postfix}]")
            self.bar.update(self._share(lam0))

    def _share(self, lam: float) -> float:
        """Percent of the range between its start (in ``direction``) and ``lam``."""
        lo, hi = self.span
        f = (lam - lo) / (hi - lo) if hi > lo else 1.0
        return 100.0 * min(max(f if self.direction > 0 else 1.0 - f, 0.0), 1.0)

    def step(self, lam: float):
        self.steps += 1
        if self.span is None:
            self.bar.update(1)
            return
        self.bar.set_postfix_str(f"{self.steps} steps, lam = {lam:.6g}", refresh=False)
        self.bar.update(self._share(lam) - self.bar.n)

    def close(self):
        self.bar.close()


def _march(prob, trace: _Trace, ds, max_steps, events, stability, callback, bar,
           s: _Settings):
    """The step loop: returns why it stopped, as the message ``stop_reason`` (``'max_steps'``,
    ``'lam_range'``, ``'user'`` or ``'corrector_failed at lam=... (...)'``) and the data
    ``stop_info`` (code, step and, for a failure, its cause)."""
    gvals = {k: float(g(*prob.unpack(trace.ys[0]))) for k, g in events.items()}
    step_no = 0
    ds_turned = None        # the step at which a turn was first refused since the last kink
    while step_no < int(max_steps):
        y0, t0 = trace.ys[-1], trace.ts[-1]
        step = _predict_correct(prob, y0, t0, ds, s)
        if not step.ok:
            if ds <= s.ds_min * (1 + 1e-12):
                _, lam_here = prob.unpack(y0)
                return (f"corrector_failed at lam={lam_here:.10g} ({step.reason}, ds={ds:.3e})",
                        {"code": "min_step", "ds": ds, **step.failure()})
            if step.cause == "tangent_turned" and ds_turned is None:
                ds_turned = ds
            ds = max(0.5 * ds, s.ds_min)
            continue
        restore = None
        if step.kink_angle is not None:
            trace.record("kink", step.y, len(trace.ys) - 1, {"angle_deg": step.kink_angle})
            restore, ds_turned = ds_turned, None
        x1, lam1 = prob.unpack(step.y)
        if lam1 < s.lo or lam1 > s.hi:
            _end_at_bound(prob, trace, y0, t0, step.y, step.its, stability, s)
            return "lam_range", {"code": "lam_range", "ds": ds}
        st1 = _detect_events(prob, trace, y0, t0, step, events, gvals, stability, s)
        trace.accept(step.y, step.t, step.its, st1)
        step_no += 1
        if bar is not None:
            bar.step(lam1)
        if callback is not None and callback(x1, lam1):
            return "user", {"code": "user", "ds": ds}
        ds = _next_ds(ds, step.its, s)
        if restore is not None:
            # past a kink the branch is smooth again: go on with the step the smooth branch
            # had before it (halved), not with the tiny step that located the kink
            ds = min(max(ds, 0.5 * restore), s.ds_max)
    return "max_steps", {"code": "max_steps", "ds": ds}


def continue_branch(residual, jacobian, x0, lam0, *, ds=0.01, ds_min=1e-8, ds_max=0.1,
                    lam_range=(-math.inf, math.inf), max_steps=1000, tol=1e-10, max_iter=10,
                    direction=+1, max_angle_deg=15.0, events=None, stability=None,
                    progress=False, scale=None, callback=None, kink_ds=None,
                    branch_points=False, reuse_factorization=False) -> Branch:
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
        Show a tqdm progress bar: over the share of ``lam_range`` covered when it is finite
        (with the steps taken and ``lam`` beside it), else over the ``max_steps`` steps.
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
    branch_points : bool
        Also watch the sign of the determinant of the augmented Jacobian ``[R_y; t^T]``
        (scaled variables) and record each change, located on the branch, as an event
        ``'branch_point'`` (a candidate where another branch crosses; a regular fold does not
        change that sign). Costs one determinant per step. Default False.
    reuse_factorization : bool
        Solve the corrector's and the tangent's dense linear systems by GMRES preconditioned
        with the LU factors of an earlier Jacobian, factoring afresh only when GMRES needs
        many iterations (:class:`~fesub.continuation.linsolve.ReusedFactorization`): for
        large dense Jacobians (thousands of unknowns), whose factorisation dominates a step.
        The points are those of the direct solves to the corrector's tolerance (the factors
        kept in single precision, Newton's corrections solved to a tenth of that tolerance:
        :mod:`~fesub.continuation.linsolve`), and the corrector's matrices are filled into
        two arrays kept for the branch. Default False (every system factored).
        ``stop_info`` then also holds ``'factorizations'`` and ``'krylov_iterations'``.

    Returns
    -------
    Branch
        Folds are always located and recorded as events ``'fold'``; ``stop_reason`` says why
        the branch stopped in words and ``stop_info`` as data (``'max_steps'``,
        ``'lam_range'``, ``'min_step'`` with its cause and the residual reached, ``'user'``,
        ``'interrupted'``). ``stop_reason='interrupted'`` when a KeyboardInterrupt arrived
        during the steps (the points accepted before it are kept).

    Raises
    ------
    ConvergenceError
        If the initial correction at ``lam0`` does not converge (the branch cannot start).
    ParameterError
        For invalid step sizes, tolerances or shapes.
    """
    x0 = np.asarray(x0, dtype=float).ravel()
    n = x0.size
    ds, s, sc = _validated(n, lam0, ds=ds, ds_min=ds_min, ds_max=ds_max, tol=tol,
                           direction=direction, max_steps=max_steps, max_iter=max_iter,
                           lam_range=lam_range, scale=scale, max_angle_deg=max_angle_deg,
                           kink_ds=kink_ds)
    events = dict(events or {})
    # the kept arrays of the large dense path: a step's matrix is then overwritten by the
    # event location's correctors, which the branch-point test (it reads that matrix after
    # them) does not allow
    prob = ScaledProblem(residual, jacobian, n, sc,
                         ReusedFactorization() if reuse_factorization else None,
                         reuse_buffers=bool(reuse_factorization) and not branch_points)
    y, t = _start(prob, x0, lam0, direction, s)
    trace = _Trace(prob, y, t, bool(stability(*prob.unpack(y))) if stability is not None
                   else None)
    bar = _Progress(float(lam0), direction, max_steps, s) if progress else None
    if branch_points:
        trace.bp_sign = augmented_det(prob.RJ(y)[1], t)[0]
    try:
        stop, info = _march(prob, trace, ds, max_steps, events, stability, callback, bar, s)
    except KeyboardInterrupt:
        # Ctrl-C (or SIGTERM raised as one): keep the points accepted so far; a point being
        # appended when it arrived is dropped from every list
        stop, info = "interrupted", {"code": "interrupted"}
        trace.trim()
    finally:
        if bar is not None:
            bar.close()
    if reuse_factorization:
        info.update(factorizations=prob.solver.factorizations,
                    krylov_iterations=prob.solver.krylov_iterations)
    return trace.branch(stop, info)
