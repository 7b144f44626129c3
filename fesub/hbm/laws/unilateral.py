"""Unilateral contact with a gap: the penalty law ``f = k_p max(u - g, 0)``.

``u`` (m) is the relative normal displacement towards the obstacle, ``g`` (m) the gap (negative:
an initial interference), ``k_p`` (N/m) the penalty stiffness. The law is not odd, so its mean
force depends on the motion and it wants the constant term of the harmonic basis.

Evaluated by AFT (:mod:`fesub.hbm.laws.aft`). The law has a kink at ``u = g``: the trapezoidal
quadrature of a force with a jump in slope converges as ``nt^-2`` (measured in the tests against
the closed form of a one-harmonic motion: relative error of the coefficients ~ ``4/nt^2`` and
below 1e-5 at the default ``nt = 1024``). Its derivatives are those of the sampled map: the
stiffness is exact for it, and its Hessian is zero (the sampled map is piecewise linear in the
coefficients: the slope changes only when a sample crosses the gap).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ParameterError, check_positive
from .aft import AFTLaw

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
        AFT samples per period (default 1024: coefficient errors below 1e-5 relative, see the
        module docstring).
    """

    symmetric = False
    velocity_dependent = False

    def __init__(self, kp: float, gap: float = 0.0, *, nt: int = 1024):
        self.kp = check_positive("kp (penalty stiffness, N/m)", kp)
        gap = float(gap)
        if not math.isfinite(gap):
            raise ParameterError(f"gap (m) must be finite, got {gap!r}")
        self.gap = gap
        self.nt = nt

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

