"""Harmonic expansions of the friction profiles (Sect. 6, eqs. 82-94) and their power forms.

``Q(theta) ~ sum c_i cos((2i-1) theta)``, ``T(theta) ~ sum s_i sin((2i-1) theta)`` (82)-(83), and
the power coefficients of ``C(w3)``, ``S(w3)`` that :class:`fesub.circular.HarmonicFriction`
evaluates; the endpoint-preserving fits are fesub's own (not from the paper).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError

__all__ = ["chebyshev_to_power", "harmonic_coefficients"]


def chebyshev_to_power(c, s):
    """Power coefficients ``C_k``, ``S_k`` of ``C(w3) = sum C_k w3^(2k-2)``, ``S = sum S_k w3^(2k-2)``.

    Uses ``cos((2i-1) th) = cos(th) (-1)^(i-1) U_{2i-2}(sin th)`` and
    ``sin((2i-1) th) = (-1)^(i-1) T_{2i-1}(sin th)``.

    Parameters
    ----------
    c, s : array_like (N,)
        Coefficients of the odd harmonics ``cos((2i-1) th)`` of C and ``sin((2i-1) th)`` of S
        (dimensionless, like C and S).

    Returns
    -------
    (C, S) : numpy.ndarray (N,)
        Power coefficients ``C_k``, ``S_k`` (dimensionless).
    """
    from numpy.polynomial import chebyshev as Ch
    from numpy.polynomial import polynomial as Po

    c = np.asarray(c, float)
    s = np.asarray(s, float)
    N = c.size
    Cp = np.zeros(2 * N - 1)
    Sp = np.zeros(2 * N)
    # U_n power series by recurrence
    U = [np.array([1.0]), np.array([0.0, 2.0])]
    for n in range(2, 2 * N - 1):
        U.append(Po.polysub(Po.polymulx(2.0 * U[-1]), U[-2]))
    for i in range(1, N + 1):
        sign = (-1.0) ** (i - 1)
        u = U[2 * i - 2]
        Cp[: u.size] += sign * c[i - 1] * u
        t = Ch.cheb2poly(np.eye(2 * i)[2 * i - 1])      # T_{2i-1}
        Sp[: t.size] += sign * s[i - 1] * t
    C = Cp[0::2]          # even powers
    S = Sp[1::2]          # T_odd / w3 -> even powers
    return C, S


def harmonic_coefficients(source, N: int, fit: str = "fourier"):
    """Harmonic coefficients ``c_i, s_i`` (i = 1..N) of the profiles of ``source`` (eq. 83).

    Parameters
    ----------
    source : fesub.circular.FrictionModel
        Model to expand (its ``rho`` is used: the coefficients depend on it).
    N : int
        Number of odd harmonics, >= 1.
    fit : {'fourier', 'endpoint', 'endpoint+slope'}
        ``'fourier'``: the truncated Fourier series of the paper (eq. 83), computed with adaptive
        quadrature and a breakpoint at ``theta_1 = arctan(rho/R)`` (``eps = 1``).
        ``'endpoint'`` (fesub's own, not from the paper): the L2-closest order-``N`` expansion that
        reproduces the endpoint values of the source exactly, ``C(0) = 1`` and ``S(1) = 1`` (the
        pure-slip force and the pure-spin torque, hence the stick threshold ``F_T``).
        ``'endpoint+slope'`` (fesub's own, ``N >= 2``): also ``C(1)`` and ``S(0)`` (the slopes at
        the ends, which fix the pitchfork value ``F_P``); with ``N = 2`` this leaves no freedom and
        the fit is the interpolation of the four conditions.
        The harmonics are orthogonal on [0, pi/2] with equal norms, so both constrained fits are
        the Euclidean projection of the Fourier coefficients onto the constraints.
    """
    from scipy.integrate import quad_vec

    if int(N) != N or N < 1:
        raise ParameterError(f"N (harmonic order) must be an integer >= 1, got {N!r}")
    N = int(N)
    if fit not in ("fourier", "endpoint", "endpoint+slope"):
        raise ParameterError(f"fit must be 'fourier', 'endpoint' or 'endpoint+slope', got {fit!r}")
    if fit == "endpoint+slope" and N < 2:
        raise ParameterError("fit 'endpoint+slope' needs N >= 2 (four conditions)")
    n = 2 * np.arange(1, N + 1) - 1

    def integrand(th):
        e = (source.rho / source.R) / math.tan(th) if th > 0 else np.inf
        Q, T = source.profile_eps(np.array([e]))
        return np.concatenate([Q[0] * np.cos(n * th), T[0] * np.sin(n * th)])

    th1 = math.atan(source.rho / source.R)
    tot = np.zeros(2 * N)
    for lo, hi in ((0.0, th1), (th1, 0.5 * math.pi)):
        val, _ = quad_vec(integrand, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=400)
        tot += val
    c = 4.0 / math.pi * tot[:N]
    s = 4.0 / math.pi * tot[N:]
    if fit.startswith("endpoint"):
        sign = (-1.0) ** np.arange(N)
        Aq = [np.ones(N)]
        dq = [1.0]
        At = [sign]
        dt = [1.0]
        if fit == "endpoint+slope":
            Cs1, Ss0 = source.CS(np.array([1.0, 0.0]))
            Aq.append(sign * n)
            dq.append(float(Cs1[0]))
            At.append(n.astype(float))
            dt.append(float(Ss0[1]))
        c = _project(c, np.array(Aq), np.array(dq))
        s = _project(s, np.array(At), np.array(dt))
    return c, s


def _project(x, A, d):
    """Closest point to ``x`` on ``A y = d``."""
    lam = np.linalg.solve(A @ A.T, d - A @ x)
    return x + A.T @ lam
