"""NumPy twin of ``circular.pyx``: closed-form friction profiles of a circular contact.

Same functions and signatures as the compiled kernel; ``law`` is 0 (uniform) or 1 (Hertz). The
formulas are those documented in :mod:`fesub.circular.exact` (uniform pressure: eqs. 59-60 with
the complete elliptic integrals of SciPy; Hertz pressure: eqs. 62-63), every branch for
``eps > 1`` written in ``x = 1/eps``, and the series below ``eps_small`` (uniform) and above
``eps_large`` (both laws). Like every twin, this module holds no physics imports: the switch points
are arguments, chosen by the caller.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ellipe, ellipk


def _uniform_lo(e, eps_small):
    """Uniform law, 0 <= eps <= 1: (Q, T)."""
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


def _uniform_hi(x, eps_large):
    """Uniform law, eps >= 1 written in x = 1/eps in [0, 1]: (Q, T)."""
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


def _hertz_lo(e, eps_small):
    """Hertz law, 0 <= eps <= 1: polynomials (62)-(63), exact in floating point."""
    e2 = e * e
    Q = (3.0 * math.pi / 32.0) * e * (4.0 - e2)
    T = (3.0 * e2 * e2 - 8.0 * e2 + 8.0) / 8.0
    return Q, T


def _hertz_hi(x, eps_large):
    """Hertz law, eps >= 1 in x = 1/eps."""
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


_BRANCHES = ((_uniform_lo, _uniform_hi), (_hertz_lo, _hertz_hi))


def _profile(law, a, b, eps_small, eps_large):
    """``(Q_eps, T_eps)`` at ``eps = a/b`` without forming the ratio (new arrays)."""
    lo_f, hi_f = _BRANCHES[law]
    lo = a <= b
    if np.all(lo):
        return lo_f(a / b, eps_small)
    Q = np.empty(a.shape)
    T = np.empty(a.shape)
    hi = ~lo
    if np.any(lo):
        Q[lo], T[lo] = lo_f(a[lo] / b[lo], eps_small)
    Q[hi], T[hi] = hi_f(b[hi] / a[hi], eps_large)
    return Q, T


def profile_ab(law, a, b, eps_small, eps_large, Q, T):
    """Profiles ``(Q_eps, T_eps)`` at ``eps = a/b`` (a, b >= 0, not both zero) into Q, T."""
    q, t = _profile(law, np.asarray(a), np.asarray(b), eps_small, eps_large)
    Q[:] = q
    T[:] = t


def force_torque(law, ux, uy, om, R, muP, kappa, eps_small, eps_large, Qx, Qy, Tz, set_valued):
    """Resultant friction of the exact model for slip (ux, uy) and spin om (all length n)."""
    ux = np.asarray(ux)
    uy = np.asarray(uy)
    om = np.asarray(om)
    speed = np.hypot(ux, uy)
    spin = R * np.abs(om)
    sv = (speed == 0) & (spin == 0)
    q, t = _profile(law, np.where(sv, 1.0, speed), spin, eps_small, eps_large)
    f = np.where(speed > 0, q / np.where(speed > 0, speed, 1.0), 0.0)
    Qx[:] = -muP * f * ux
    Qy[:] = -muP * f * uy
    Tz[:] = -muP * kappa * np.sign(om) * t
    Qx[sv] = 0.0
    Qy[sv] = 0.0
    Tz[sv] = 0.0
    set_valued[:] = sv
