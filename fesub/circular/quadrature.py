"""Direct quadrature of the friction resultants for any axisymmetric pressure (independent check).

Without loss of generality ``u = (eps R, 0)`` and ``omega_z = 1``; the instantaneous centre of
rotation (ICR) is ``c = (0, eps R)``. In polar coordinates ``(s, alpha)`` centred at the ICR,
``X = c + s (cos alpha, sin alpha)``, the slip velocity is ``s (-sin alpha, cos alpha)``: its direction
depends on ``alpha`` only, so the discontinuous Coulomb integrand becomes smooth. Then

    Q_x = mu int int p sin(alpha) s ds dalpha,   T_z = -mu int int p (X . e) s ds dalpha,

and ``Q_eps = -Q_x/(mu P)``, ``T_eps = -T_z/(mu kappa P)``.

* ``eps < 1`` (ICR inside the disc): whole chords through the ICR are integrated at once, ``alpha``
  in [0, pi) and ``s`` in [s-, s+] with ``s < 0`` on the far side (where the slip direction flips, so
  ``p sgn(s) |s| = p s`` stays smooth through the ICR). With ``s = mid + half sin(sigma)``, ``mid =
  -c.e`` and ``half = R sqrt(1 - eps^2 cos^2 alpha)``, the same identities as below hold and the terms
  odd in ``sigma`` vanish, which leaves ``Q_eps = (eps R/P) int sin^2(alpha) half I_q dalpha``: no
  cancellation as ``eps -> 0``. The ``alpha``-integrand is periodic; the trapezoid rule runs on ``phi``
  with ``tan(alpha) = k tan(phi)``, ``k = min(1, 1.5 (1 - eps^2)^(1/4))``, which clusters nodes at
  ``alpha = 0, pi`` where ``half`` varies on the scale ``sqrt(1 - eps^2)`` as the ICR nears the rim.
* ``eps >= 1`` (ICR outside or on the rim): ``alpha = -pi/2 + beta`` with ``sin(beta) = sin(t)/eps``
  and ``s = mid + half sin(sigma)``; the chord half-length is exactly ``half = R cos t``, ``X . e =
  half sin(sigma)`` and ``1 - |X|^2/R^2 = cos(t)^2 cos(sigma)^2``. The terms odd in ``sigma`` integrate
  to zero exactly and are dropped, which avoids the cancellation that would otherwise cost a factor
  ``eps^2`` of accuracy in the torque at large ``eps``.

Only the pressure law, its total ``P`` and ``kappa`` enter; nothing here uses the closed forms.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import roots_legendre

from ..errors import ParameterError
from .pressure import Pressure

__all__ = ["quadrature_profile"]


@lru_cache(maxsize=16)
def _gl_sym(n: int):
    """Gauss-Legendre nodes and weights on [-pi/2, pi/2]."""
    x, w = roots_legendre(n)
    return 0.5 * math.pi * x, 0.5 * math.pi * w


def _inside(pr: Pressure, e, n_alpha: int, n_s: int):
    """(Q, T) for 0 <= e < 1 (1-D array), integrating over whole chords through the ICR."""
    R = pr.R
    sg, ws = _gl_sym(n_s)
    cs = np.cos(sg)
    w_q = ws * cs                    # weights of the sigma-integrals
    w_t = ws * cs * np.sin(sg) ** 2
    out_q = np.empty(e.size)
    out_t = np.empty(e.size)
    for i, ei in enumerate(e):
        s_ = math.sqrt(max((1.0 - ei) * (1.0 + ei), 0.0))
        k = min(1.0, 1.5 * math.sqrt(s_))
        # the nearest singularity sits ~sqrt(s_) from the real axis in phi: keep ~16 nodes per unit
        n = n_alpha if k >= 1.0 else max(n_alpha, int(math.ceil(16.0 / math.sqrt(s_))))
        phi = math.pi * np.arange(n) / n
        dphi = math.pi / n
        D2 = np.cos(phi) ** 2 + (k * np.sin(phi)) ** 2
        sa2 = (k * np.sin(phi)) ** 2 / D2              # sin(alpha)^2
        jac = k / D2                                   # d alpha / d phi
        ca2 = np.cos(phi) ** 2 / D2                    # cos(alpha)^2
        # (half/R)^2 = 1 - eps^2 cos^2(alpha), written without cancellation near eps = 1
        h2 = sa2 + (1.0 - ei) * (1.0 + ei) * ca2
        z = h2[:, None] * cs[None, :] ** 2
        p = pr.p_z(z)
        iq = p @ w_q
        it = p @ w_t
        h = np.sqrt(h2)
        out_q[i] = ei * R ** 2 / pr.P * np.sum(sa2 * h * iq * jac) * dphi
        out_t[i] = R ** 3 / (pr.kappa * pr.P) * np.sum(h2 * h * it * jac) * dphi
    return out_q, out_t


def _outside(pr: Pressure, x, n_t: int, n_sigma: int):
    """(Q, eps*T) for eps >= 1 given x = 1/eps in [0, 1] (1-D array)."""
    R = pr.R
    t, wt = _gl_sym(n_t)
    sg, ws = _gl_sym(n_sigma)
    ct = np.cos(t)
    st = np.sin(t)
    cs = np.cos(sg)
    # inner integrals depend on t only (z = cos^2 t cos^2 sigma)
    z = (ct[:, None] * cs[None, :]) ** 2
    p = pr.p_z(z)
    iq = (p * cs[None, :] * ws[None, :]).sum(axis=1)
    it = (p * np.sin(sg)[None, :] ** 2 * cs[None, :] * ws[None, :]).sum(axis=1)
    # cos(beta) = sqrt(1 - x^2 sin^2 t) = sqrt(cos^2 t + (1 - x)(1 + x) sin^2 t)
    cb = np.sqrt(ct[None, :] ** 2 + ((1.0 - x) * (1.0 + x))[:, None] * st[None, :] ** 2)
    Q = (R * R / pr.P) * np.sum(wt * ct ** 2 * iq * cb, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        eT = (R ** 3 / (pr.kappa * pr.P)) * np.sum(
            wt * ct ** 4 * it / np.where(cb > 0, cb, 1.0), axis=1)
    return Q, eT


def quadrature_profile(pressure: Pressure, eps, *, n_alpha: int = 1024, n_s: int = 64,
                       n_t: int = 400, n_sigma: int = 64):
    """``(Q_eps, T_eps)`` by direct quadrature for any axisymmetric pressure.

    Parameters
    ----------
    pressure : Pressure
        The pressure law (its ``R``, ``P`` and ``kappa`` are used).
    eps : array_like
        Slip-spin ratios in [0, inf].
    n_alpha, n_s : int
        Trapezoid nodes in the chord angle on [0, pi) and Gauss-Legendre nodes along the chord
        (``eps < 1``).
    n_t, n_sigma : int
        Gauss-Legendre nodes in the two angles of the ``eps >= 1`` branch.

    Returns
    -------
    Q, T : ndarray
        Dimensionless force and torque profiles (same shape as ``eps``).

    Notes
    -----
    Cost is about ``n_alpha * n_s`` pressure evaluations per ``eps < 1`` and ``n_t * n_sigma`` once
    plus ``n_t`` per ``eps >= 1``; this is a reference, not a fast path.
    """
    e = np.asarray(eps, dtype=float)
    if np.any(np.isnan(e)) or np.any(e < 0):
        raise ParameterError("eps (slip-spin ratio) must lie in [0, inf], got NaN or negative")
    for name, n in (("n_alpha", n_alpha), ("n_s", n_s), ("n_t", n_t), ("n_sigma", n_sigma)):
        if int(n) != n or n < 4:
            raise ParameterError(f"{name} must be an integer >= 4, got {n!r}")
    shape = e.shape
    e = np.atleast_1d(e).ravel()
    Q = np.empty(e.size)
    T = np.empty(e.size)
    lo = e < 1.0
    if np.any(lo):
        Q[lo], T[lo] = _inside(pressure, e[lo], int(n_alpha), int(n_s))
    hi = ~lo
    if np.any(hi):
        x = np.where(np.isfinite(e[hi]), 1.0 / e[hi], 0.0)
        q, et = _outside(pressure, x, int(n_t), int(n_sigma))
        Q[hi] = q
        T[hi] = et * x
    return Q.reshape(shape), T.reshape(shape)


def quadrature_tail(pressure: Pressure, *, n_t: int = 400, n_sigma: int = 64) -> float:
    """``lim_{eps->inf} eps T_eps`` by the same quadrature (for the derived function S(0))."""
    return float(_outside(pressure, np.zeros(1), n_t, n_sigma)[1][0])
