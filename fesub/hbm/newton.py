"""The damped Newton method of the harmonic-balance solvers at one point (:func:`solve_at`,
:func:`solve_condensed`, :func:`backbone_point`), with tolerances scaled to the problem.

Convergence is judged against the **rounding scale** of the residual, not an absolute number.
A residual ``R = sum_i t_i`` assembled from terms ``t_i`` (``D(w) Q``, ``F_nl(Q)``,
``alpha F_ex`` for the harmonic balance) is computed with an error of about
``eps * sum_i |t_i|`` per component (``eps = 2.2e-16``), whatever the solution: near a sharp
resonance at large force the elastic and inertial terms reach 1e5 times the force and their sum
cannot come closer to zero than a few ulps of *them*. The solvers return the componentwise
bound ``s = max_k sum_i |t_i|_k`` (N) with the residual and stop when::

    ||R||_inf <= max(atol, rtol * s)                    (residual criterion)

The default ``rtol = 1e-13`` is about 450 ulps of the scale: above the rounding of the sum of a
few hundred terms of a dense row, and of the contact forces (event method: transition times
to a few ulps), so it is reachable; below it the residual is noise. A second, **step**
criterion accepts a point where the full Newton step is below ``xtol`` relative to the
unknowns (the error of the iterate, in the quadratic regime) while the residual is within
1e3 times the tolerance: a residual that stalls just above ``rtol s`` (noisy contact forces)
then still converges, and a step that is small because the Jacobian is huge does not.

Each Newton step ``dx = -J^-1 R`` is damped by backtracking (``t = 1, 1/2, ...`` down to
``2^-12``) until the natural monotonicity test holds: the simplified correction
``J^-1 R(x + t dx)`` with the *old* Jacobian is shorter than ``(1 - t/4) |dx|``. It is the
decrease of ``||J^-1 R||^2``, a merit function invariant to the scaling of the equations (rows
of N next to rows of N m, stiffnesses from 1e2 to 1e9 N/m): on the friction beam a backtracking
on ``||R||^2`` itself crawls with steps of 1e-2 from a stuck start to a slipping solution (no
convergence in 30 iterations at 10 N, 4750 rad/s, warm from 4500 rad/s) where this test takes
full steps within a few iterations (12). A residual that cannot be evaluated (chattering contact,
non-finite values) counts as a failed trial. The outcome is a :class:`NewtonStatus`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import BackendError, FesubError

__all__ = ["RTOL", "XTOL", "NewtonStatus", "abs_dynamic_stiffness", "damped_newton"]

#: default relative residual tolerance (-): ~450 ulps of the rounding scale of R
RTOL = 1e-13
#: default step tolerance (-), relative to ``||x||_inf``
XTOL = 1e-12

_EVAL_ERRORS = (ArithmeticError, ValueError, np.linalg.LinAlgError, FesubError)
_MIN_STEP = 2.0 ** -12


@dataclass
class NewtonStatus:
    """How a Newton solve ended.

    Parameters
    ----------
    converged : bool
        True when a convergence criterion was met.
    criterion : str
        ``'residual'`` or ``'step'`` when converged (see :mod:`fesub.hbm.newton`); else why it
        stopped: ``'max_iter'``, ``'line_search'`` (no damped step down to ``2^-12`` passes the
        monotonicity test), ``'singular'`` (Jacobian), ``'not_finite'`` (residual or step).
    iterations : int
        Newton iterations (of all the starts together in the solvers' statuses).
    residual : float
        ``||R||_inf`` reached (units of the residual, N for the harmonic balance).
    relative_residual : float
        ``max_k |R_k| / s_k`` (-), the residual in units of its rounding scale.
    scale : float
        ``max_k s_k``, the largest rounding scale of the residual there (units of ``R``).
    tolerance : float
        ``max(atol, rtol scale)`` (units of ``R``): the residual criterion with the largest
        scale (the criterion itself is componentwise, ``|R_k| <= max(atol, rtol s_k)``).
    start : str
        Which start converged (or gave the best iterate): ``'given'``, ``'warm'`` (predictor
        from a neighbouring solution), ``'cold'`` (a linear response), ``'homotopy'``
        (continued in force from the linear limit).
    attempts : list of str
        One line per start tried, in order, with its outcome.
    """

    converged: bool
    criterion: str
    iterations: int
    residual: float
    relative_residual: float
    scale: float
    tolerance: float
    start: str = "given"
    attempts: list = field(default_factory=list)

    def describe(self) -> str:
        """One line: outcome, residual reached against its tolerance, iterations."""
        what = f"converged ({self.criterion})" if self.converged else f"failed ({self.criterion})"
        return (f"{what} from the {self.start} start: |R|={self.residual:.3e} "
                f"(tolerance {self.tolerance:.3e}; {self.relative_residual:.1e} of the rounding "
                f"scale) after {self.iterations} iterations")


class _Point:
    """One evaluation: ``R``, ``J``, ``rel = max_k |R_k| / s_k`` and ``q``, the largest ratio of
    ``|R_k|`` to its tolerance ``max(atol, rtol s_k)`` (``q <= 1``: converged)."""

    def __init__(self, x, R, J, s, rtol, atol):
        self.x, self.R, self.J = x, R, J
        s = np.broadcast_to(np.asarray(s, float), R.shape)
        aR = np.abs(R)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.rel = float(np.max(np.where(aR > 0, aR / s, 0.0))) if R.size else 0.0
            self.q = float(np.max(np.where(aR > 0, aR / np.maximum(atol, rtol * s), 0.0)))
        self.nr = float(aR.max()) if R.size else 0.0
        self.smax = float(s.max()) if R.size else 0.0

    def status(self, ok, why, it, rtol, atol):
        return NewtonStatus(ok, why, it, self.nr, self.rel, self.smax,
                            max(atol, rtol * self.smax))


def _evaluate(fun, x, rtol, atol):
    """``fun(x)`` as a _Point, or None when it cannot be evaluated (a missing compiled kernel
    is raised: a broken installation, not a failed trial)."""
    try:
        R, J, s = fun(x)
    except BackendError:
        raise
    except _EVAL_ERRORS:
        return None
    R = np.asarray(R, float)
    if not np.all(np.isfinite(R)):
        return None
    return _Point(x, R, J, s, rtol, atol)


def _natural(J, Rt, t, ndx):
    """Natural monotonicity test of the damped step ``t``: the simplified Newton correction
    ``J^-1 R(x + t dx)`` (old Jacobian) is shorter than ``(1 - t/4) |dx|``."""
    try:
        dxb = np.linalg.solve(J, -Rt)
    except np.linalg.LinAlgError:
        return False
    return float(np.linalg.norm(dxb)) <= (1.0 - t / 4.0) * ndx


def damped_newton(fun, x0, *, rtol=RTOL, atol=0.0, xtol=XTOL, max_iter=30, damped=True):
    """Damped Newton iteration, backtracking by the natural monotonicity test (module doc).

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (R, J, s)``: residual, its Jacobian and the rounding scale ``s`` of ``R``,
        a scalar or one per component (``sum_i |t_i|`` over the terms ``t_i`` of ``R``, units
        of ``R``).
    x0 : (n,) array
        Start.
    rtol : float
        Relative residual tolerance (-): converged when ``|R_k| <= max(atol, rtol s_k)``.
    atol : float
        Absolute residual tolerance (units of ``R``); 0 (default) uses ``rtol s`` only.
    xtol : float
        Step tolerance relative to ``||x||_inf`` (-) of the step criterion.
    max_iter : int
        Newton iterations (each a Jacobian solve).
    damped : bool
        Backtrack (default); False takes every full step, for callers that rely on Newton
        *failing* away from the basin of the solution they track (the backbone's restarts
        fall back to a global search then, where a damped iteration could settle on another
        stationary point).

    Returns
    -------
    x : (n,) ndarray
        The converged point, or on failure the iterate of smallest ``max_k |R_k| / s_k``.
    status : NewtonStatus
    """
    pt = _evaluate(fun, np.array(x0, dtype=float), rtol, atol)
    if pt is None:
        return np.array(x0, dtype=float), NewtonStatus(False, "not_finite", 0, math.inf,
                                                       math.inf, math.inf, math.inf)
    best = pt

    def done(p, ok, why, it):
        return p.x, p.status(ok, why, it, rtol, atol)

    for it in range(max_iter + 1):
        if pt.q <= 1.0:
            return done(pt, True, "residual", it)
        if it == max_iter:
            break
        try:
            dx = np.linalg.solve(pt.J, -pt.R)
        except np.linalg.LinAlgError:
            return done(best, False, "singular", it)
        if not np.all(np.isfinite(dx)):
            return done(best, False, "not_finite", it)
        ndx = float(np.linalg.norm(dx))
        small = np.linalg.norm(dx, np.inf) <= xtol * np.linalg.norm(pt.x, np.inf)
        t = 1.0
        while True:
            trial = _evaluate(fun, pt.x + t * dx, rtol, atol)
            if not damped and trial is None:
                return done(best, False, "not_finite", it + 1)
            if trial is not None and (not damped or _natural(pt.J, trial.R, t, ndx)
                                      or small and trial.q <= 1e3):
                break
            t *= 0.5
            if t < _MIN_STEP:
                if small and pt.q <= 1e3:
                    return done(pt, True, "step", it)
                return done(best, False, "line_search", it + 1)
        pt = trial
        if pt.rel < best.rel:
            best = pt
        if small and pt.q <= 1e3:
            return done(pt, True, "residual" if pt.q <= 1.0 else "step", it + 1)
    return done(best, False, "max_iter", max_iter)


def abs_dynamic_stiffness(sys, w):
    """``|K_s| + (k w)^2 |M|`` and ``k w |C|`` in the blocks of ``D(w)`` (N/m), ``K_s`` the
    stiffness with the contacts' springs (``kt``, ``kn``) added: ``abs_D @ |Q|`` bounds,
    componentwise, the terms whose rounding makes the error of ``D(w) Q + F_nl(Q)`` (the
    contact forces are differences of spring forces ``kt x`` that can be far larger than the
    slip force, their rounding is a few ulps of those)."""
    n = sys.n
    aK = np.abs(sys.K) + np.abs(sys.spring_matrix(stuck=True))
    aM, aC = np.abs(sys.M), np.abs(sys.C)
    out = np.zeros((sys.N, sys.N))
    for k in range(1, sys.nh + 1):
        i = 2 * (k - 1) * n
        c, s = slice(i, i + n), slice(i + n, i + 2 * n)
        A = aK + (k * w) ** 2 * aM
        B = k * w * aC
        out[c, c] = A
        out[s, s] = A
        out[c, s] = B
        out[s, c] = B
    return out
