"""Regularised Coulomb friction: ``f = mu N tanh(v / v_eps)``.

``v`` (m/s) the relative sliding velocity, ``N`` (N) a constant normal load, ``mu`` (-) the
friction coefficient and ``v_eps`` (m/s) the regularisation velocity: below it the law is a
viscous damper ``mu N / v_eps`` (N s/m), above it Coulomb's ``mu N sign(v)``. The law is odd
(symmetric): with the constant term off its mean force vanishes for half-wave symmetric motion.

Evaluated by AFT (:mod:`fesub.hbm.laws.aft`) with analytic first and second derivatives. The law
is smooth, so the AFT converges spectrally once the samples resolve the switch of ``tanh``: a
sign change of ``v`` takes ``~ v_eps / |dv/dtau|`` rad, and ``nt`` must put a few samples in it.
The default ``nt = 1024`` resolves ``v_eps`` down to ~1 % of the velocity amplitude (checked in
the tests); sharper regularisations need ``nt`` to grow like ``1 / v_eps``.
"""

from __future__ import annotations

import numpy as np

from ...errors import check_positive
from .aft import AFTLaw, check_samples

__all__ = ["RegularisedCoulomb"]


class RegularisedCoulomb(AFTLaw):
    """Coulomb friction regularised by ``tanh``: ``f = mu N tanh(v / v_eps)`` (N).

    Parameters
    ----------
    mu : float
        Friction coefficient (-), >= 0.
    normal_load : float
        Normal load ``N`` (N), > 0.
    v_eps : float
        Regularisation velocity (m/s), > 0.
    nt : int
        AFT samples per period (default 1024, see the module docstring).
    """

    symmetric = True
    velocity_dependent = True
    linear_stiffness = 0.0

    def __init__(self, mu: float, normal_load: float, v_eps: float, *, nt: int = 1024):
        self.mu = check_positive("mu (friction coefficient)", mu, strict=False)
        self.normal_load = check_positive("normal_load (N)", normal_load)
        self.v_eps = check_positive("v_eps (regularisation velocity, m/s)", v_eps)
        self.nt = check_samples(nt)

    def law(self, u, v, order: int):
        fs = self.mu * self.normal_load
        t = np.tanh(v / self.v_eps)
        f = fs * t
        if order == 0:
            return (f,)
        s2 = 1.0 - t * t
        zero = np.zeros_like(f)
        fv = fs / self.v_eps * s2
        if order == 1:
            return f, zero, fv
        fvv = -2.0 * fs / self.v_eps ** 2 * t * s2
        return f, zero, fv, zero, zero, fvv
