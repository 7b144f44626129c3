"""Frequency features of the closed-form Coulomb steady state (spec sections 5-7).

What a designer reads off the closed form of :mod:`fesub.coulomb.analytic` without sweeping it:

* :func:`resonance_thresholds` -- the friction ratio above which each resonance peak is finite
  (Eqs. 70, 102);
* :func:`quasi_static` -- the amplitudes as r1 -> 0 (Eq. 73);
* :func:`beta_inf`, :func:`beta_stuck_inf` -- the high-frequency limits of the continuous and
  stuck boundaries (Eqs. 75-76, 103-104);
* :func:`invariant_points`, :func:`inversion_intervals` -- frequencies where an amplitude does
  not depend on friction, and where it grows with it (Eqs. 77-78, 91, 114).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ..errors import ParameterError
from .analytic import beta_limit, contact_setup, modal_sums
from .model import ChainModel, as_beta, check_index, check_mu

__all__ = ["resonance_thresholds", "quasi_static", "beta_inf", "beta_stuck_inf", "invariant_points",
           "inversion_intervals"]


def resonance_thresholds(model: ChainModel, contact, load: int = 0) -> np.ndarray:
    """``beta_n,i = (pi/4) |phi_li / phi_ci|`` (Eqs. 70, 102): peak i is finite iff beta > beta_n,i.

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.

    Returns
    -------
    numpy.ndarray (N,)
        Thresholds ``beta_n,i`` of the friction ratio F/P, one per mode (dimensionless; inf
        where the mode does not move the contact).
    """
    contact, l, w = contact_setup(model, contact, load)
    pc = w @ model.phi
    with np.errstate(divide="ignore"):
        return np.pi / 4.0 * np.abs(model.phi[l] / pc)


def quasi_static(model: ChainModel, contact, load: int, beta) -> np.ndarray:
    """Signed quasi-static amplitudes ``X_0 = K^-1 (e_l - beta w)`` (Eq. 73), shape (N,).

    For a moving base every mass follows the base as r1 -> 0 (all ones).

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    beta : float
        Friction ratio F/P (dimensionless, >= 0).

    Returns
    -------
    numpy.ndarray (N,)
        Signed amplitudes ``X_0`` per unit load, ``X k_0 / P`` (dimensionless).
    """
    contact, l, w = contact_setup(model, contact, load)
    beta = float(as_beta(beta)[0])
    if contact.kind == "base":
        return np.ones(model.n)
    rhs = -beta * w
    rhs[l] += 1.0
    return np.linalg.solve(model.K, rhs)


def _beta_high_frequency(model, contact, load, mu, factor) -> float:
    """``|w_l / gamma_l| / (w^T Gamma^-1 w factor(mu))``, the common form of the high-frequency
    limits (Eqs. 75-76, 103-104); inf for a moving base."""
    contact, l, w = contact_setup(model, contact, load)
    mu = check_mu(mu)
    if contact.kind == "base":
        return np.inf
    gi = 1.0 / model.gamma
    return abs(w[l] * gi[l]) / (float(w @ (gi * w)) * factor(mu))


def beta_inf(model: ChainModel, contact, load: int = 0, mu: float = 1.0) -> float:
    """High-frequency limit of beta_lim (Eqs. 75-76, 103; inf for a moving base).

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    mu : float
        Static/kinetic friction ratio (dimensionless, >= 1).

    Returns
    -------
    float
        Limit of ``beta_lim`` as r1 -> inf, a friction ratio F/P (dimensionless).
    """
    return _beta_high_frequency(model, contact, load, mu,
                                lambda m: np.sqrt(m * m + np.pi ** 2 / 4.0))


def beta_stuck_inf(model: ChainModel, contact, load: int = 0, mu: float = 1.0) -> float:
    """High-frequency limit of the stuck boundary beta* (Eq. 104; inf for a moving base).

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    mu : float
        Static/kinetic friction ratio (dimensionless, >= 1).

    Returns
    -------
    float
        Limit of the stuck boundary ``beta*`` as r1 -> inf, a friction ratio F/P (dimensionless).
    """
    return _beta_high_frequency(model, contact, load, mu, lambda m: m)


def _feature(model, contact, load, k, kind):
    def f(r):
        ms = modal_sums(model, contact, load, np.atleast_1d(r))
        with np.errstate(all="ignore"):
            if kind == "U":
                return ms.U[:, k] if k is not None else ms.Uc
            if kind == "inversion":
                return 1.0 - 2.0 * ms.V[:, k] * ms.Uc / (ms.Vc * ms.U[:, k])
        raise ParameterError(f"kind must be 'U' or 'inversion', got {kind!r}")
    return f


def _sign_changes(f, r_range, n):
    lo, hi = (float(v) for v in r_range)
    if not (0 < lo < hi):
        raise ParameterError(f"r_range must satisfy 0 < r_min < r_max, got {r_range!r}")
    r = np.linspace(lo, hi, int(n))
    y = f(r)
    ok = np.isfinite(y)
    idx = np.nonzero(ok[:-1] & ok[1:] & (np.sign(y[:-1]) * np.sign(y[1:]) < 0))[0]
    return r, y, idx


def invariant_points(model: ChainModel, contact, load: int, k=None, r_range=(0.3, 2.5),
                     kind: str = "U", n: int = 20001, beta=None, mu: float = 1.0,
                     poles: bool = False) -> np.ndarray:
    """Roots of ``U_k`` (Eq. 77; ``k=None``: the contact coordinate ``U_c``) or of the inversion
    function ``C_k = 1 - 2 V_k U_c / (V_c U_k)`` (Eqs. 78, 91, 114) in ``r_range``.

    Sign changes on an ``n``-point grid are refined with brentq; sign changes at poles are
    discarded unless ``poles=True`` (the spec's root lists include, e.g., r1 = 0.323607 of the unit
    2DOF chain, where ``U_2`` changes sign through the pole of ``u`` at ``R_2 = 1/5``). With ``beta`` given, only roots where the response is continuous are kept.

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    k : int, optional
        Mass index (-, 0-based); None for the contact coordinate.
    r_range : tuple of float
        Interval of frequency ratios r1 searched (dimensionless).
    kind : {'U', 'inversion'}
        Roots of ``U_k`` or of the inversion function ``C_k``.
    n : int
        Points of the sign-change grid (-).
    beta : float, optional
        Friction ratio F/P (dimensionless); keeps only roots where the response is continuous.
    mu : float
        Static/kinetic friction ratio (dimensionless, >= 1), used with ``beta``.
    poles : bool
        Also keep sign changes through poles.

    Returns
    -------
    numpy.ndarray
        Frequency ratios r1 of the roots (dimensionless), increasing.
    """
    if k is not None:
        k = check_index("k (mass index)", k, model.n)
    f = _feature(model, contact, load, k, kind)
    r, y, idx = _sign_changes(f, r_range, n)
    roots = []
    scale = np.nanmedian(np.abs(y[np.isfinite(y)])) if np.isfinite(y).any() else 1.0
    for i in idx:
        x0 = brentq(lambda s: float(f(s)[0]), r[i], r[i + 1], xtol=1e-14, rtol=1e-14)
        if poles or abs(float(f(x0)[0])) < 1e-6 * max(scale, 1.0):
            roots.append(x0)
    roots = np.array(roots)
    if beta is not None and roots.size:
        bl = beta_limit(model, contact, load, roots, mu=mu)
        roots = roots[float(beta) < bl]
    return roots


def inversion_intervals(model: ChainModel, contact, load: int, k: int, r_range=(0.5, 2.5),
                        n: int = 20001) -> list[tuple[float, float]]:
    """Intervals of r1 where ``C_k > 0`` (X_k grows with beta, Eq. 78); ends are zeros or poles.

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    k : int
        Mass index (-, 0-based).
    r_range : tuple of float
        Interval of frequency ratios r1 searched (dimensionless).
    n : int
        Points of the sign-change grid (-).

    Returns
    -------
    list of tuple of float
        ``(r_lo, r_hi)`` intervals of r1 (dimensionless).
    """
    k = check_index("k (mass index)", k, model.n)
    f = _feature(model, contact, load, k, "inversion")
    lo, hi = (float(v) for v in r_range)
    r = np.linspace(lo, hi, int(n))
    y = f(r)
    pos = np.isfinite(y) & (y > 0)
    out = []
    i = 0
    while i < r.size:
        if pos[i]:
            j = i
            while j + 1 < r.size and pos[j + 1]:
                j += 1
            a = lo if i == 0 else brentq(lambda s: float(f(s)[0]), r[i - 1], r[i], xtol=1e-14)
            b = hi if j == r.size - 1 else brentq(lambda s: float(f(s)[0]), r[j], r[j + 1], xtol=1e-14)
            out.append((a, b))
            i = j + 1
        else:
            i += 1
    return out
