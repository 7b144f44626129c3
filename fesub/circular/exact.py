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
series (78)-(79) carry two misprints (5/584 for 5/384 and 1/512 for 3/512); the kernels use the
corrected coefficients (and more terms), and the tests check them against quadrature.

The formulas are evaluated by the compiled kernel ``fesub._core.circular`` or its NumPy twin
``fesub._core.circular_ref`` (same branches, SciPy's elliptic integrals); this module chooses the
switch points and validates the input.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError

__all__ = ["uniform_profile", "hertz_profile", "exact_profile", "profile_ab", "EPS_SMALL",
           "EPS_LARGE"]

# Switch points, chosen by measuring both forms against the quadrature of fesub.circular.quadrature
# (accurate to ~1e-14): the specification suggests 1e-3 and 30, where the closed forms have already
# lost ~1e-10 to cancellation (the uniform torque loses ~1e-16 eps**4 for large eps); at 0.03 and 7
# both the series truncation and the cancellation error stay below ~3e-13.
EPS_SMALL = 0.03   # uniform: below this the small-eps series is used
EPS_LARGE = 7.0    # both laws: above this the large-eps series (in x = 1/eps) is used


LAWS = ("uniform", "hertz")   # kernel law codes 0 and 1


def law_code(law: str) -> int:
    """Kernel code of a closed-form pressure law: 0 for ``'uniform'``, 1 for ``'hertz'``."""
    if law not in LAWS:
        raise ParameterError(f"law must be 'uniform' or 'hertz', got {law!r} (closed forms exist "
                             "only for these; use QuadratureFriction for any other law)")
    return LAWS.index(law)


def check_eps(eps) -> np.ndarray:
    """``eps`` as a float array, refused when NaN or negative (``inf`` is pure slip)."""
    e = np.asarray(eps, dtype=float)
    if np.any(np.isnan(e)) or np.any(e < 0):
        raise ParameterError("eps (slip-spin ratio) must lie in [0, inf]")
    return e


def eps_as_ab(e):
    """``(a, b)`` with ``a/b = e`` for ``e`` in [0, inf] (``b = 0`` at ``inf``, pure slip)."""
    fin = np.isfinite(e)
    return np.where(fin, e, 1.0), np.where(fin, 1.0, 0.0)


def profile_ab(law: str, a, b):
    """Profiles at ``eps = a/b`` without forming the ratio (``a, b >= 0``, not both 0).

    Returns ``(Q, T)`` with ``Q = Q_eps``, ``T = T_eps`` (flat arrays); ``b = 0`` is pure slip
    (``eps = inf``). Inputs must already be validated and of equal shape. Runs the compiled kernel
    ``fesub._core.circular`` or its NumPy twin (:mod:`fesub._backend`).
    """
    from .. import _backend

    a = np.ascontiguousarray(a, dtype=float).ravel()
    b = np.ascontiguousarray(b, dtype=float).ravel()
    Q = np.empty(a.size)
    T = np.empty(a.size)
    _backend.kernels("circular").profile_ab(law_code(law), a, b, EPS_SMALL, EPS_LARGE, Q, T)
    return Q, T


def exact_profile(law: str, eps):
    """``(Q_eps, T_eps)`` of the ``'uniform'`` or ``'hertz'`` law at slip-spin ratios ``eps``.

    Parameters
    ----------
    law : {'uniform', 'hertz'}
    eps : array_like
        Slip-spin ratio(s) ``|u|/(R|omega|)`` in [0, inf] (``inf`` = pure slip).

    Returns
    -------
    Q, T : ndarray
        Dimensionless force ``|Q_xy|/(mu P)`` and torque ``|T_z|/(mu P kappa)``, shaped like
        ``eps``.
    """
    law_code(law)
    e = check_eps(eps)
    shape = e.shape
    Q, T = profile_ab(law, *eps_as_ab(np.atleast_1d(e).ravel()))
    return Q.reshape(shape), T.reshape(shape)


def uniform_profile(eps):
    """Closed-form ``(Q_eps, T_eps)`` for uniform pressure (eqs. 59-60 + series).

    Parameters
    ----------
    eps : float or array_like
        Slip-spin ratio ``|u|/(R |omega|)`` (dimensionless), >= 0 (``inf`` for pure slip).

    Returns
    -------
    (Q_eps, T_eps) : numpy.ndarray
        Force ``|Q_xy|/(mu P)`` and torque ``|T_z|/(mu P kappa)`` profiles (dimensionless), of the
        shape of ``eps``.
    """
    return exact_profile("uniform", eps)


def hertz_profile(eps):
    """Closed-form ``(Q_eps, T_eps)`` for Hertz pressure (eqs. 62-63 + series).

    Parameters
    ----------
    eps : float or array_like
        Slip-spin ratio ``|u|/(R |omega|)`` (dimensionless), >= 0 (``inf`` for pure slip).

    Returns
    -------
    (Q_eps, T_eps) : numpy.ndarray
        Force ``|Q_xy|/(mu P)`` and torque ``|T_z|/(mu P kappa)`` profiles (dimensionless), of the
        shape of ``eps``.
    """
    return exact_profile("hertz", eps)
