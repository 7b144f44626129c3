"""Unilateral contact with a gap: the penalty law ``f = k_p max(u - g, 0)``.

``u`` (m) is the relative normal displacement towards the obstacle, ``g`` (m) the gap (negative:
an initial interference), ``k_p`` (N/m) the penalty stiffness. The law is not odd, so its mean
force depends on the motion and it wants the constant term of the harmonic basis.

Evaluated by AFT (:mod:`fesub.hbm.laws.aft`, the default). The law has a kink at ``u = g``: the
trapezoidal quadrature of a force with a jump in slope converges as ``nt^-2`` (measured in the
tests against exact integration: relative error of the coefficients below ``4/nt^2`` for a
one-harmonic motion, 6/nt^2 to 12/nt^2 for three harmonics and two contact intervals, so ~1e-5
at the default ``nt = 1024``). Its derivatives are those of the sampled map: the stiffness is
exact for it (and approaches the continuous one only as ``nt^-1``: its integrand jumps at the
crossings), and its Hessian is zero (the sampled map is piecewise linear in the coefficients:
the slope changes only when a sample crosses the gap).

``method='event'`` integrates exactly instead: the crossings ``u(tau_r) = g`` are bracketed on a
grid of ``64 nh`` steps and bisected to rounding; on each contact interval ``[a, b]`` the force is
affine in the coefficients, so with ``W = int_a^b H H^T`` and ``w = int_a^b H`` (closed forms,
:mod:`fesub.hbm.fourier`)::

    F = c k_p sum (W p + (u_s - g) w),   K = c k_p sum W,
    hess[i, a, b] = c_i k_p sum_r H_i H_a H_b (tau_r) / |u'(tau_r)|

(``c`` the Galerkin weights; ``f`` vanishes at the crossings, so ``K`` has no boundary term, and
the Hessian is the motion of the crossings, ``dtau_r/dp = -H(tau_r) / u'(tau_r)``). That is the
Hessian the backbone's optimality system needs. A grazing contact narrower than a grid step is
missed; its force is ``O(k_p delta^3)`` for a width ``delta``.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ParameterError, check_positive
from ..fourier import basis, check_nh, interval_w, interval_W, n_rows, row_weights
from .aft import AFTLaw, LawResult, check_samples

__all__ = ["UnilateralContact"]


class UnilateralContact(AFTLaw):
    """Penalty contact with a gap, ``f = k_p max(u - g, 0)`` (N).

    Parameters
    ----------
    kp : float
        Penalty stiffness (N/m), > 0.
    gap : float
        Gap (m): contact when ``u > gap``; negative for an initial interference.
    nt : int
        AFT samples per period (default 1024: coefficient errors ~1e-5 relative, see the module
        docstring).
    method : {'aft', 'event'}
        Default evaluation: AFT, or exact integration between the crossings of the gap (with
        the Hessian of the crossings' motion).
    """

    symmetric = False
    velocity_dependent = False

    def __init__(self, kp: float, gap: float = 0.0, *, nt: int = 1024, method: str = "aft"):
        self.kp = check_positive("kp (penalty stiffness, N/m)", kp)
        gap = float(gap)
        if not math.isfinite(gap):
            raise ParameterError(f"gap (m) must be finite, got {gap!r}")
        self.gap = gap
        self.nt = check_samples(nt)
        if method not in ("aft", "event"):
            raise ParameterError(f"method must be 'aft' or 'event', got {method!r}")
        self.method = method

    @property
    def linear_stiffness(self) -> float:
        """Stiffness of the closed contact (N/m), used by the linear guesses."""
        return self.kp

    def law(self, u, v, order: int):
        d = u - self.gap
        f = self.kp * np.maximum(d, 0.0)
        if order == 0:
            return (f,)
        fu = np.where(d > 0, self.kp, 0.0)
        zero = np.zeros_like(f)
        if order == 1:
            return f, fu, zero
        return f, fu, zero, zero, zero, zero

    def evaluate(self, p, nh: int, *, constant: bool = False, offset=0.0, w=None,
                 hessian: bool = False, lam=None, nt=None, method=None) -> LawResult:
        """As :meth:`AFTLaw.evaluate`; ``method`` ('aft' or 'event', default the law's)."""
        method = self.method if method is None else method
        if method != "event":
            return super().evaluate(p, nh, constant=constant, offset=offset, w=w,
                                    hessian=hessian, lam=lam, nt=nt, method=method)
        nh = check_nh(nh)
        rows = n_rows(nh, constant)
        p = np.asarray(p, float).ravel()
        if p.size != rows or not np.all(np.isfinite(p)):
            raise ParameterError(f"p must be {rows} finite coefficients (m), got {p.size}")
        a, b = _contact_intervals(p, nh, constant, float(offset) - self.gap)
        c = row_weights(nh, constant)
        Wt = _interval_matrix(nh, constant, a, b)           # (m, rows, rows), unweighted
        wt = _interval_vector(nh, constant, a, b)           # (m, rows)
        K = self.kp * c[:, None] * Wt.sum(axis=0)
        F = K @ p + self.kp * (float(offset) - self.gap) * c * wt.sum(axis=0)
        tau = np.concatenate([a, b]) if a.size else np.zeros(0)
        Hr = basis(nh, tau, 0, constant)
        slope = np.abs(basis(nh, tau, 1, constant) @ p)
        g = Hr / slope[:, None]                              # H / |u'| at the crossings
        hess = (self.kp * c[:, None, None] * np.einsum("ri,ra,rb->iab", Hr, Hr, g)
                if hessian else None)
        hl = None
        if lam is not None:
            lam = np.asarray(lam, float).ravel()
            if lam.size != rows:
                raise ParameterError(f"lam must have length {rows}, got {lam.size}")
            hl = self.kp * (Hr * ((Hr @ (c * lam)) / slope)[:, None]).T @ Hr
        e = np.zeros(0)
        return LawResult(F, K, hess, hl, tau, e.astype(int), e.astype(int), -1, None)


def _contact_intervals(p, nh, constant, shift, ngrid_per_harmonic=64):
    """Starts ``a`` and ends ``b`` (rad, ``a < b <= a + 2 pi``) of the intervals where
    ``H^T p + shift > 0``: sign changes on a grid of ``64 nh`` steps, bisected to rounding."""
    ng = ngrid_per_harmonic * nh
    t = 2 * math.pi * np.arange(ng + 1) / ng
    d = basis(nh, t, 0, constant) @ p + shift
    up = np.flatnonzero((d[:-1] <= 0) & (d[1:] > 0))
    down = np.flatnonzero((d[:-1] > 0) & (d[1:] <= 0))
    if up.size == 0 and down.size == 0:
        full = d[0] > 0
        return (np.array([0.0]), np.array([2 * math.pi])) if full else (np.zeros(0),
                                                                          np.zeros(0))
    roots_up = _bisect(p, nh, constant, shift, t[up], t[up + 1], rising=True)
    roots_dn = _bisect(p, nh, constant, shift, t[down], t[down + 1], rising=False)
    # each start pairs with the next end, cyclically
    ends = np.sort(roots_dn)
    a = np.sort(roots_up)
    idx = np.searchsorted(ends, a) % ends.size
    b = ends[idx]
    b = np.where(b <= a, b + 2 * math.pi, b)
    return a, b


def _bisect(p, nh, constant, shift, lo, hi, rising, iters=60):
    """Vectorised bisection of ``H^T p + shift = 0`` in the brackets ``[lo, hi]`` (rad)."""
    lo, hi = lo.copy(), hi.copy()
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        pos = basis(nh, mid, 0, constant) @ p + shift > 0
        right = pos if rising else ~pos
        hi = np.where(right, mid, hi)
        lo = np.where(right, lo, mid)
    return 0.5 * (lo + hi)


def _interval_matrix(nh, constant, a, b):
    """``int_a^b H H^T dtau`` (rad) per interval, shape (m, rows, rows)."""
    W = math.pi * interval_W(nh, a, b)
    if not constant:
        return W
    w = math.pi * interval_w(nh, a, b)
    out = np.empty((a.size, 2 * nh + 1, 2 * nh + 1))
    out[:, 0, 0] = b - a
    out[:, 0, 1:] = w
    out[:, 1:, 0] = w
    out[:, 1:, 1:] = W
    return out


def _interval_vector(nh, constant, a, b):
    """``int_a^b H dtau`` (rad) per interval, shape (m, rows)."""
    w = math.pi * interval_w(nh, a, b)
    return np.column_stack([b - a, w]) if constant else w
