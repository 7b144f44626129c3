"""Cubic (Duffing) stiffness element ``f = k3 u^3`` for harmonic balance.

The element is placed in a structure like the friction laws: ``ContactElement(Cubic(k3), G)``
with ``u = G q`` (one component, m). With ``u(tau) = H(tau)^T X`` (no constant term, the basis of
:mod:`fesub.hbm.fourier`), the harmonic force, stiffness and Hessian are::

    F_i        = (1/pi) int_0^{2 pi} H_i k3 u^3 dtau                     (N)
    K_ia       = (1/pi) int_0^{2 pi} H_i 3 k3 u^2 H_a dtau               (N/m)
    hess_iab   = (1/pi) int_0^{2 pi} H_i 6 k3 u H_a H_b dtau             (N/m^2)

Every integrand is a trigonometric polynomial of degree at most ``4 nh``, so the trapezoidal
rule on ``nt > 4 nh`` equally spaced samples integrates it exactly (aliasing starts at degree
``nt``): the values are exact up to rounding, not an approximation by sampling.

:meth:`Cubic.tangent` gives the time-domain tangent ``df/du = 3 k3 u^2`` (N/m); a memoryless law
with a tangent lets :mod:`fesub.hbm.stability` build the Hill matrix with the constant harmonic of
the perturbation.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError, check_range
from .contact import ContactResult
from .fourier import aft_matrix, check_nh

__all__ = ["Cubic"]


def _samples(nh: int) -> int:
    """Samples per period making the quadrature exact for degree ``4 nh`` (margin of 2)."""
    return 4 * nh + 2


class Cubic:
    """Cubic stiffness ``f = k3 u^3`` (hardening for ``k3 > 0``, softening for ``k3 < 0``).

    Parameters
    ----------
    k3 : float
        Cubic stiffness coefficient (N/m^3), finite and non-zero.
    """

    ncomp = 1
    #: stiffness at zero amplitude (N/m): the element adds nothing to the linear structure
    kt = 0.0
    #: per component the stiffness at zero amplitude (N/m)
    stiffnesses = (0.0,)
    #: no normal component
    normal_component = None

    def __init__(self, k3: float):
        k3 = check_range("k3 (cubic stiffness, N/m^3)", k3)
        if k3 == 0.0 or not math.isfinite(k3):
            raise ParameterError(f"k3 (cubic stiffness, N/m^3) must be finite and non-zero, "
                                 f"got {k3!r}")
        self.k3 = k3

    def __repr__(self) -> str:
        return f"Cubic(k3={self.k3!r})"

    def force(self, u):
        """Force ``k3 u^3`` (N) at displacements ``u`` (m)."""
        return self.k3 * np.asarray(u, float) ** 3

    def tangent(self, u):
        """Tangent stiffness ``df/du = 3 k3 u^2`` (N/m) at displacements ``u`` (m)."""
        return 3.0 * self.k3 * np.asarray(u, float) ** 2

    def evaluate(self, p, nh: int, *, hessian: bool = False, lam=None, ngrid=None,
                 method: str = "event", nt: int | None = None) -> ContactResult:
        """Harmonic force (N), stiffness (N/m) and optionally Hessian (N/m^2) at ``p = X``.

        Parameters
        ----------
        p : (2 nh,) array
            Harmonic coefficients of ``u`` (m).
        nh : int
            Number of harmonics.
        hessian : bool
            Return the full Hessian tensor ``hess[i, a, b] = d K[i, a] / d p_b``.
        lam : (2 nh,) array, optional
            Multipliers; return ``hess_lam = sum_i lam_i hess[i]`` (N/m^2 times lam's unit).
        ngrid, method : ignored
            Accepted for the interface of the friction laws (the quadrature is exact).
        nt : int, optional
            Samples per period (default ``4 nh + 2``, the fewest that are exact); must exceed
            ``4 nh``.
        """
        nh = check_nh(nh)
        X = np.asarray(p, float).ravel()
        if X.size != 2 * nh:
            raise ParameterError(f"p must have length 2*nh = {2 * nh}, got {X.size}")
        if not np.all(np.isfinite(X)):
            raise ParameterError("p (harmonic coefficients, m) contains NaN or inf")
        nt = _samples(nh) if nt is None else int(nt)
        if nt <= 4 * nh:
            raise ParameterError(f"nt must exceed 4*nh = {4 * nh} (exact quadrature), got {nt}")
        E = aft_matrix(nh, nt)                 # (nt, 2nh): u = E X
        u = E @ X
        wq = 2.0 / nt                          # (1/pi) * (2 pi / nt)
        F = wq * (E.T @ (self.k3 * u ** 3))
        K = wq * (E.T * (3.0 * self.k3 * u ** 2)) @ E
        hess = None
        if hessian:
            hess = wq * np.einsum("ti,ta,tb,t->iab", E, E, E, 6.0 * self.k3 * u)
        hl = None
        if lam is not None:
            lam = np.asarray(lam, float).ravel()
            if lam.size != 2 * nh:
                raise ParameterError(f"lam must have length 2*nh = {2 * nh}, got {lam.size}")
            hl = wq * (E.T * (6.0 * self.k3 * u * (E @ lam))) @ E
        empty = np.zeros(0)
        return ContactResult(F, K, hess, hl, empty, np.zeros(0, int), np.zeros(0, int), 0)

