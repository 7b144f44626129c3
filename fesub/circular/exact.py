"""Closed-form friction profiles ``Q_eps(eps)``, ``T_eps(eps)`` of a circular contact.

``eps = |u| / (R |omega_z|)`` is the slip-spin ratio. The resultant friction is
``|Q_xy| = mu P Q_eps(eps)`` and ``T_z = -mu P kappa sgn(omega_z) T_eps(eps)`` (eqs. 53-54).

Uniform pressure (eqs. 59-60) uses the *complete* elliptic integrals ``K(m)``, ``E(m)`` of parameter
``m`` (the paper calls them incomplete; they are complete). The second branch of (58)/(60) is used
for ``eps >= 1`` (the paper prints the first branch twice). Hertz pressure uses (62)-(63).

Every branch for ``eps > 1`` is written in ``x = 1/eps`` so that ``eps = inf`` (pure slip) is an
ordinary point. Cancellation makes the closed forms lose accuracy like ``1e-16/eps**2`` for
``eps -> 0`` (uniform) and ``1e-16 eps**2`` for ``eps -> inf`` (both laws), so the series of the
specification are used for uniform ``eps < EPS_SMALL`` and for ``eps > EPS_LARGE`` (both laws). The paper's
series (78)-(79) carry two misprints (5/584 for 5/384 and 1/512 for 3/512); the coefficients below
are the corrected ones (and have more terms), and the tests check them against quadrature.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ellipe, ellipk

__all__ = ["uniform_profile", "hertz_profile", "exact_profile", "EPS_SMALL", "EPS_LARGE"]

# Switch points, chosen by measuring both forms against the quadrature of fesub.circular.quadrature
# (accurate to ~1e-14): the specification suggests 1e-3 and 30, where the closed forms have already
# lost ~1e-10 to cancellation (the uniform torque loses ~1e-16 eps**4 for large eps); at 0.03 and 7
# both the series truncation and the cancellation error
# stay below ~3e-13.
EPS_SMALL = 0.03   # uniform: below this the small-eps series is used
EPS_LARGE = 7.0    # both laws: above this the large-eps series (in x = 1/eps) is used


def _uniform_lo(e, eps_small=None):
    """Uniform law, 0 <= eps <= 1: (Q, T)."""
    eps_small = EPS_SMALL if eps_small is None else eps_small
    m = e * e
    K = ellipk(m)
    E = ellipe(m)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        emK = np.where(m < 1.0, (m - 1.0) * K, 0.0)   # (eps^2-1) K -> 0 at the kink eps = 1
        Q = (4.0 / 3.0) * ((m + 1.0) * E + emK) / (e * math.pi)
    T = (2.0 / 3.0) * ((4.0 - 2.0 * m) * E + emK) / math.pi
    small = e < eps_small
    if np.any(small):
        es = e[small]
        e2 = es * es
        Q[small] = es * (1.0 - e2 * (1.0 / 8.0 + e2 * (1.0 / 64.0 + e2 * (5.0 / 1024.0))))
        T[small] = 1.0 + e2 * (-0.75 + e2 * (9.0 / 64.0 + e2 * (5.0 / 256.0
                                                                 + e2 * (105.0 / 16384.0))))
    return Q, T


def _uniform_hi(x, eps_large=None):
    """Uniform law, eps >= 1 written in x = 1/eps in [0, 1]: (Q, T)."""
    eps_large = EPS_LARGE if eps_large is None else eps_large
    m = x * x
    K = ellipk(m)
    E = ellipe(m)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        omK = np.where(m < 1.0, (1.0 - m) * K, 0.0)
        Q = (4.0 / 3.0) * ((1.0 + m) * E - omK) / (m * math.pi)
        T = (2.0 / 3.0) * ((4.0 * m - 2.0) * E + omK * (2.0 - 3.0 * m)) / (m * x * math.pi)
    large = x < 1.0 / eps_large
    if np.any(large):
        xs = x[large]
        x2 = xs * xs
        Q[large] = 1.0 - x2 * (1.0 / 8.0 + x2 * (1.0 / 64.0 + x2 * (5.0 / 1024.0 + x2 * (
            35.0 / 16384.0 + x2 * (147.0 / 131072.0)))))
        T[large] = xs * (3.0 / 8.0 + x2 * (1.0 / 32.0 + x2 * (9.0 / 1024.0 + x2 * (
            15.0 / 4096.0 + x2 * (245.0 / 131072.0 + x2 * (567.0 / 524288.0))))))
    return Q, T


def _hertz_lo(e, eps_small=None):
    """Hertz law, 0 <= eps <= 1: polynomials (62)-(63), exact in floating point."""
    e2 = e * e
    Q = (3.0 * math.pi / 32.0) * e * (4.0 - e2)
    T = (3.0 * e2 * e2 - 8.0 * e2 + 8.0) / 8.0
    return Q, T


def _hertz_hi(x, eps_large=None):
    """Hertz law, eps >= 1 in x = 1/eps."""
    eps_large = EPS_LARGE if eps_large is None else eps_large
    x2 = x * x
    asn = np.arcsin(x)
    sq = np.sqrt(np.maximum(1.0 - x2, 0.0))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        Q = (3.0 / 16.0) * ((4.0 * x2 - 1.0) * asn / (x2 * x) + (1.0 + 2.0 * x2) * sq / x2)
        T = ((3.0 - 8.0 * x2 + 8.0 * x2 * x2) * asn / (x2 * x2)
             + (6.0 * x2 - 3.0) * sq / (x2 * x)) / (4.0 * math.pi)
    large = x < 1.0 / eps_large
    if np.any(large):
        xs = x[large]
        y = xs * xs
        Q[large] = 1.0 - y * (1.0 / 10.0 + y * (3.0 / 280.0 + y * (1.0 / 336.0 + y * (
            5.0 / 4224.0 + y * (21.0 / 36608.0)))))
        T[large] = xs * (16.0 / 15.0 + y * (8.0 / 105.0 + y * (2.0 / 105.0 + y * (
            5.0 / 693.0 + y * (35.0 / 10296.0 + y * (21.0 / 11440.0)))))) / math.pi
    return Q, T


_BRANCHES = {"uniform": (_uniform_lo, _uniform_hi), "hertz": (_hertz_lo, _hertz_hi)}


def profile_ab(law: str, a, b, eps_small=None, eps_large=None):
    """Profiles at ``eps = a/b`` without forming the ratio (``a, b >= 0``, not both 0).

    Returns ``(Q, T)`` with ``Q = Q_eps``, ``T = T_eps``. ``b = 0`` is pure slip (``eps = inf``).
    Inputs must already be validated, broadcast and of equal shape (float arrays). This is the
    NumPy implementation; :class:`~fesub.circular.models.ExactCircularFriction` runs the compiled
    kernel ``fesub._core.circular`` when it is available.
    """
    lo_f, hi_f = _BRANCHES[law]
    Q = np.empty(a.shape)
    T = np.empty(a.shape)
    lo = a <= b
    if np.all(lo):
        return lo_f(a / b, eps_small)
    hi = ~lo
    if np.any(lo):
        Q[lo], T[lo] = lo_f(a[lo] / b[lo], eps_small)
    Q[hi], T[hi] = hi_f(b[hi] / a[hi], eps_large)
    return Q, T


def exact_profile(law: str, eps):
    """``(Q_eps, T_eps)`` of the ``'uniform'`` or ``'hertz'`` law at slip-spin ratios ``eps``.

    Parameters
    ----------
    law : {'uniform', 'hertz'}
    eps : array_like
        Slip-spin ratio(s) ``|u|/(R|omega|)`` in [0, inf] (``inf`` = pure slip).
    """
    from .models import ExactCircularFriction

    return ExactCircularFriction(law).profile_eps(eps)


def uniform_profile(eps):
    """Closed-form ``(Q_eps, T_eps)`` for uniform pressure (eqs. 59-60 + series)."""
    return exact_profile("uniform", eps)


def hertz_profile(eps):
    """Closed-form ``(Q_eps, T_eps)`` for Hertz pressure (eqs. 62-63 + series)."""
    return exact_profile("hertz", eps)
