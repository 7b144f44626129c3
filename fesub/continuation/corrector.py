"""Newton corrector of the continuation: plain Newton (:func:`newton`) and the problem in the
scaled unknowns ``y = (x, lam) / scale`` with its bordered corrector and tangent
(:class:`ScaledProblem`)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import BackendError, FesubError
from .linsolve import DirectSolver

__all__ = ["newton", "ScaledProblem", "fixed_at"]

# evaluation failures of the user functions that count as a corrector failure (the driver
# halves the step instead of raising mid-branch)
_EVAL_ERRORS = (ArithmeticError, ValueError, np.linalg.LinAlgError, FesubError)


def _evaluation_failed(exc) -> bool:
    """Whether an exception of a residual counts as a failed evaluation (the caller then tries
    a smaller step); a missing compiled kernel is a broken installation and must surface."""
    if isinstance(exc, BackendError):
        raise exc
    return True


def newton(fun, x0, *, tol=1e-10, max_iter=10, xtol=1e-14, solver=None, last=None):
    """Plain Newton iteration for ``fun(x) -> (r, J)``.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (r, J)``: residual (in its own units) and its Jacobian (dense or scipy
        sparse).
    x0 : array_like
        Initial guess (in the units of ``x``).
    tol : float
        Convergence tolerance on ``max |r|`` (units of ``r``).
    max_iter : int
        Maximum number of iterations.
    xtol : float
        Relative step size below which the iteration stops (dimensionless).
    solver : object, optional
        Linear solver with ``solve(A, b, atol)`` (:mod:`fesub.continuation.linsolve`; ``atol``
        the residual ``|b - A x|_2`` an iterative solver may stop at, here ``tol / 10``);
        default :class:`~fesub.continuation.linsolve.DirectSolver`.
    last : dict, optional
        Filled with ``'r'`` and ``'J'``, the residual and Jacobian at the returned ``x`` (when
        they were evaluated there), for callers that need them next.

    Returns
    -------
    tuple
        ``(x, converged, iterations, |r|)``; never raises on non-convergence (singular
        Jacobians and residuals that fail to evaluate count as failure), except a
        :class:`~fesub.errors.BackendError` (a missing compiled kernel), which surfaces.
    """
    x = np.array(x0, dtype=float)
    solver = DirectSolver() if solver is None else solver
    if last is not None:
        last.clear()
    try:
        r, J = fun(x)
    except _EVAL_ERRORS as exc:
        _evaluation_failed(exc)
        return x, False, 0, math.inf
    nr = float(np.linalg.norm(r, np.inf))
    if not np.isfinite(nr):
        return x, False, 0, nr
    if last is not None:
        last.update(r=r, J=J)
    for it in range(1, max_iter + 1):
        if nr <= tol:
            return x, True, it - 1, nr
        try:
            # the linear residual a tenth of the tolerance (the 2-norm bounds the max norm):
            # an iterative solver stops there, a direct one solves exactly
            dx = solver.solve(J, -r, atol=0.1 * tol)
        except np.linalg.LinAlgError:
            return x, False, it, nr
        if not np.all(np.isfinite(dx)):
            return x, False, it, nr
        x = x + dx
        if last is not None:
            last.clear()
        try:
            r, J = fun(x)
        except _EVAL_ERRORS as exc:
            _evaluation_failed(exc)
            return x, False, it, math.inf
        if last is not None:
            last.update(r=r, J=J)
        nr = float(np.linalg.norm(r, np.inf))
        if not np.isfinite(nr):
            return x, False, it, nr
        if nr <= tol or np.linalg.norm(dx, np.inf) <= xtol * (1.0 + np.linalg.norm(x, np.inf)):
            return x, nr <= max(tol, 1e3 * tol), it, nr
    return x, nr <= tol, max_iter, nr


class ScaledProblem:
    """The branch problem ``R(x, lam) = 0`` in the scaled unknowns ``y = (x, lam) / scale``.

    Parameters
    ----------
    residual : callable
        ``residual(x, lam) -> R``, shape (n,).
    jacobian : callable
        ``jacobian(x, lam) -> (R_x, R_lam)``.
    n : int
        Number of states.
    scale : numpy.ndarray, shape (n + 1,)
        Characteristic magnitude of each unknown (units of ``x``, then of ``lam``).
    solver : object, optional
        Linear solver of the corrector and the tangent (``solve(A, b)``,
        :mod:`fesub.continuation.linsolve`); default a
        :class:`~fesub.continuation.linsolve.DirectSolver`.
    reuse_buffers : bool, optional
        :meth:`correct` fills its bordered matrices into two arrays kept for the whole branch
        (alternately: a Newton iteration's matrix is not needed once the next one is formed),
        not a fresh array each time: for large dense problems a fresh array costs more than
        filling it (its pages faulted in and zeroed: 80 ms against 36 ms at ``n = 4300``).
        :attr:`last_A` is then valid until the next :meth:`correct`. Default False.

    Attributes
    ----------
    last_A : numpy.ndarray or None
        The bordered ``(n + 1, n + 1)`` matrix ``[J; t^T]`` of the last :meth:`correct` at the
        point it returned (None when it failed): the Jacobian there and the tangent's matrix,
        which then need no new evaluation.
    """

    def __init__(self, residual, jacobian, n, scale, solver=None, reuse_buffers=False):
        self.residual = residual
        self.jacobian = jacobian
        self.n = n
        self.s = scale
        self.solver = DirectSolver() if solver is None else solver
        self.last_A = None
        self._buffers = [] if reuse_buffers else None
        self._turn = 0

    def unpack(self, y):
        """``(x, lam)`` in the units of the problem from scaled ``y``."""
        z = y * self.s
        return z[:-1], float(z[-1])

    def RJ(self, y, border=None, out=None):
        """Residual and the ``(n, n + 1)`` Jacobian with respect to the scaled ``y``; with a
        ``border`` (n + 1,) the ``(n + 1, n + 1)`` bordered matrix ``[J; border^T]`` instead
        (filled in place: no copy of the large Jacobian), into ``out`` when given."""
        x, lam = self.unpack(y)
        Rx, Rl = self.jacobian(x, lam)  # Jacobian first: callers may cache R alongside it
        R = np.asarray(self.residual(x, lam), dtype=float)
        Rx = np.asarray(Rx.toarray() if hasattr(Rx, "toarray") else Rx, dtype=float)
        shape = (self.n + (border is not None), self.n + 1)
        J = np.empty(shape) if out is None else out
        np.multiply(Rx, self.s[:-1][None, :], out=J[:self.n, :-1])
        J[:self.n, -1] = np.asarray(Rl, dtype=float).ravel() * self.s[-1]
        if border is not None:
            J[-1] = border
        return R, J

    def tangent(self, J, t_ref, bordered=False):
        """Unit tangent solving ``[J; t_ref^T] t = e_{n+1}`` (oriented like ``t_ref``), or None
        when that bordered matrix is singular. ``bordered``: ``J`` is already
        ``[J; t_ref^T]`` (as :attr:`last_A`)."""
        A = J if bordered else np.vstack([J, t_ref[None, :]])
        b = np.zeros(self.n + 1)
        b[-1] = 1.0
        try:
            t = self.solver.solve(A, b)
        except np.linalg.LinAlgError:
            return None
        nt = np.linalg.norm(t)
        if not np.isfinite(nt) or nt == 0:
            return None
        return t / nt

    def correct(self, y_pred, t, y_base=None, s_target=None, *, tol, max_iter):
        """Newton on ``[R; t.(y - y_pred)] = 0`` (or ``t.(y - y_base) = s_target``); returns
        ``(y, converged, iterations, |R|)`` like :func:`newton`."""
        if y_base is None:
            y_base, s_target = y_pred, 0.0

        def fun(y):
            R, A = self.RJ(y, border=t, out=self._buffer())
            return np.append(R, t @ (y - y_base) - s_target), A

        last = {}
        y, ok, its, nr = newton(fun, y_pred, tol=tol, max_iter=max_iter, solver=self.solver,
                                last=last)
        self.last_A = last["J"] if ok and "J" in last else None
        return y, ok, its, nr


    def _buffer(self):
        """The next of the two kept arrays for a bordered matrix (None without
        ``reuse_buffers``)."""
        if self._buffers is None:
            return None
        if not self._buffers:
            self._buffers.extend(np.empty((self.n + 1, self.n + 1)) for _ in range(2))
        self._turn ^= 1
        return self._buffers[self._turn]


def fixed_at(prob: ScaledProblem, lam: float):
    """Newton function ``x -> (R, R_x)`` (unscaled ``x``) at fixed ``lam`` for a scaled
    problem."""
    sc = prob.s

    def f(xx):
        R, J = prob.RJ(np.append(xx / sc[:-1], lam / sc[-1]))
        return R, J[:, :-1] / sc[:-1][None, :]

    return f
