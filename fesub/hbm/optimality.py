"""The optimality system of the backbone and its solution at one force.

The ridge of the forced-response surface is the set of points where ``Am = (sqrt 2/2)|Q_k|`` is
stationary in ``w`` at fixed ``alpha``. With multipliers ``lam`` (``eta_Am = 1``,
``eta_w = 0``) the reduced optimality system is::

    R(Q, w, alpha) = 0,   grad Am + R_Q^T lam = 0,   lam^T D'(w) Q = 0

in the scaled unknowns ``y = (Q/alpha, lam, w)`` (all O(1) over decades of force) with the
parameter ``s = log(alpha)``. Its Jacobian needs ``d(K_f^T lam)/dQ``, the contact Hessian
contracted with the multipliers (analytic, :mod:`fesub.hbm.contact`).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError
from .newton import RTOL, abs_dynamic_stiffness, damped_newton
from .system import HBSystem

__all__ = ["OptimalitySystem", "backbone_point"]


class OptimalitySystem:
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
        """``(G_y, G_s)`` at ``(y, s)``, kept with ``G`` for the calls at the same point that
        follow (the continuation asks again at its converged point)."""
        if want_jac:
            key = (y.tobytes(), float(s))
            if self._cache is not None and self._cache[0] == key:
                return self._cache[2]
            R, J, Js = self._eval(y, s, True)
            self._cache = (key, R, (J, Js))
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


def start_multipliers(sys, Q, w, alpha):
    _, RQ, Rw, _ = sys.jacobian(Q, w, alpha)
    A = np.vstack([RQ.T, Rw[None, :]])
    b = np.concatenate([-sys.amp_grad(Q), [0.0]])
    lam = np.linalg.lstsq(A, b, rcond=None)[0]
    return lam


def optimality_start(sys, alpha, w, Q, lam):
    """Optimality system, scaled start vector, continuation scales and slip-onset test
    functions at a point ``(Q, w, lam)`` of a ridge at force ``alpha`` (N)."""
    N = sys.N
    qt = np.abs(Q).max() / alpha
    ls = np.abs(lam).max()
    D1Q = sys.D(w, 1) @ (Q / alpha)
    opt = OptimalitySystem(sys, r3scale=1.0 / max(ls * np.abs(D1Q).max(), 1e-300))
    y0 = np.concatenate([Q / alpha, lam, [w]])
    sc = np.concatenate([np.full(N, qt), np.full(N, ls), [w], [1.0]])
    evs = {f"slip_onset_{i}": (lambda y, s, i=i: float(
        sys.stuck_margin(math.exp(s) * y[:N])[i]) / (sys.contacts[i].element.kt * qt
                                                      * math.exp(s)))
        for i in range(len(sys.contacts))}
    return opt, y0, sc, evs


def _block_scales(opt, y, s, aD, aD1):
    """Rounding scale of each block of the optimality residual at ``(y, s)``: the largest
    componentwise sum of the absolute terms of the block, repeated over its rows (the blocks
    have different units: N/N, m/N, and the scaled phase condition)."""
    sy, N = opt.sys, opt.N
    Qt, lam, w = opt.split(y)
    a = math.exp(s)
    F, K, _ = sy.fnl(a * Qt)
    aQ, aL = np.abs(Qt), np.abs(lam)
    s1 = np.max(aD @ aQ + np.abs(F) / a + np.abs(sy.fex))
    s2 = np.max(np.abs(sy.amp_grad(a * Qt)) + (aD + np.abs(K)).T @ aL)
    s3 = abs(opt.r3) * float(aL @ (aD1 @ aQ))
    return np.concatenate([np.full(N, s1), np.full(N, s2), [s3]])


def backbone_point(sys: HBSystem, alpha, w_guess, Q_guess, lam_guess=None, tol=1e-8, *,
                   rtol=RTOL, max_iter=30):
    """Solve the optimality system at one force by Newton (full steps, no continuation).

    Parameters
    ----------
    sys : HBSystem
    alpha : float
        Force amplitude (N).
    w_guess : float
        Frequency guess (rad/s).
    Q_guess : (N,) array
        Harmonic coefficients guess (m).
    lam_guess : (N,) array, optional
        Multipliers (m/N, the adjoint of ``R_Q``); by default the least-squares solution of
        the multiplier equations at the guess.
    tol : float
        Absolute tolerance on ``max |G|`` of the scaled optimality residual (-, its rows are
        ``R / alpha``, the multiplier equations and the phase condition scaled to 1).
    rtol : float
        Relative tolerance (-) to the rounding scale of each block of the residual (the sum
        of the absolute values of its terms, :mod:`fesub.hbm.newton`): a ``tol`` below what
        rounding lets the residual reach (large ``D(w) Q`` against the force) is replaced by
        ``rtol`` times that scale instead of failing.
    max_iter : int
        Newton iterations.

    Returns
    -------
    w : float
        Frequency of the ridge point (rad/s).
    Q : (N,) ndarray
        Harmonic coefficients (m).
    lam : (N,) ndarray
        Multipliers.
    iterations : int

    Raises
    ------
    ConvergenceError
        Naming the residual reached and the iterations; ``status`` holds the NewtonStatus.
    """
    s = math.log(alpha)
    Qt = np.asarray(Q_guess, float) / alpha
    lam = start_multipliers(sys, Q_guess, w_guess, alpha) if lam_guess is None else lam_guess
    D1Q = sys.D(w_guess, 1) @ Qt
    opt = OptimalitySystem(sys, r3scale=1.0 / max(np.abs(lam).max() * np.abs(D1Q).max(), 1e-300))
    y0 = np.concatenate([Qt, lam, [w_guess]])
    N = sys.N

    def f(y):
        J, _ = opt.jacobian(y, s)
        w = float(y[2 * N])
        aD = abs_dynamic_stiffness(sys, w)
        aD1 = np.abs(sys.D(w, 1))
        return opt.residual(y, s), J, _block_scales(opt, y, s, aD, aD1)

    # full Newton steps: a start outside the basin of the tracked ridge must fail (the
    # backbone's restarts then search globally), not settle on another stationary point
    y, st = damped_newton(f, y0, rtol=rtol, atol=tol, max_iter=max_iter, damped=False)
    if not st.converged:
        exc = ConvergenceError(f"optimality system at alpha={alpha:g} N did not converge "
                               f"(|G|={st.residual:.3e}: {st.describe()})", partial=y)
        exc.status = st
        raise exc
    return float(y[2 * N]), y[:N] * alpha, y[N:2 * N], st.iterations
