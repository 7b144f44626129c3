"""Harmonic basis of the harmonic balance, with or without the constant (0th) term.

Ordering (per scalar): ``X = [X^c1, X^s1, ..., X^cNh, X^sNh]`` and
``H(tau) = [cos tau, sin tau, ..., cos Nh tau, sin Nh tau]``. Global vectors are harmonic-major:
``Q = [Q^c1; Q^s1; ...; Q^sNh]``, each block of length ``n`` (structural DOFs).

With the constant term (``constant=True``) the mean comes first: ``X = [X^0, X^c1, ..., X^sNh]``,
``H(tau) = [1, cos tau, ..., sin Nh tau]`` and ``Q = [Q^0; Q^c1; ...; Q^sNh]``, so that
``x(tau) = H(tau)^T X`` in both layouts. Force coefficients are the Galerkin projections
``F_k = c_k int_0^{2 pi} H_k f dtau`` with ``c_k = 1/pi`` for the harmonics and ``1/(2 pi)`` for
the mean (:func:`row_weights`): the mean row is then the static balance in newtons, and without
the constant term every function here gives the numbers it gave before the term existed.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import ParameterError, check_count

__all__ = ["check_nh", "basis", "interval_w", "interval_W", "aft_matrix", "harmonic_amplitudes",
           "global_index", "n_rows", "row_weights", "aft_projection"]


def check_nh(nh) -> int:
    """Validate the number of harmonics: an integer >= 1 (``2.0`` and ``1.7`` are refused, not
    truncated); how much memory a system with that many needs is checked where it is built
    (:class:`fesub.hbm.HBSystem`)."""
    return check_count("nh (number of harmonics)", nh, 1)


def n_rows(nh: int, constant: bool = False) -> int:
    """Coefficients per scalar: ``2 nh`` harmonics, plus one for the constant term."""
    return 2 * nh + (1 if constant else 0)


def row_weights(nh: int, constant: bool = False) -> np.ndarray:
    """Galerkin weights ``c_k`` (1/rad) of ``F_k = c_k int H_k f dtau``: ``1/(2 pi)`` for the
    mean, ``1/pi`` for the harmonics; shape (:func:`n_rows`,)."""
    c = np.full(n_rows(nh, constant), 1.0 / math.pi)
    if constant:
        c[0] = 0.5 / math.pi
    return c


def basis(nh: int, tau, d: int = 0, constant: bool = False) -> np.ndarray:
    """``d``-th derivative of ``H(tau)`` w.r.t. tau; shape (rows,) or (len(tau), rows), rows =
    ``2 nh`` (+ 1 leading constant column, 1 for d = 0 and 0 for d > 0, with ``constant``)."""
    if constant:
        h = basis(nh, tau, d)
        return np.concatenate([np.full(h.shape[:-1] + (1,), 1.0 if d == 0 else 0.0), h],
                              axis=-1)
    tau = np.asarray(tau, dtype=float)
    k = np.arange(1, nh + 1, dtype=float)
    th = np.multiply.outer(tau, k) + d * 0.5 * math.pi
    kd = k ** d
    out = np.empty(tau.shape + (2 * nh,))
    out[..., 0::2] = kd * np.cos(th)
    out[..., 1::2] = kd * np.sin(th)
    return out


def interval_w(nh: int, a, b) -> np.ndarray:
    """``w = (1/pi) int_a^b H dtau``; a, b scalars or (m,) arrays -> (2nh,) or (m, 2nh)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    k = np.arange(1, nh + 1, dtype=float)
    ka = np.multiply.outer(a, k)
    kb = np.multiply.outer(b, k)
    out = np.empty(np.broadcast(a, b).shape + (2 * nh,))
    out[..., 0::2] = (np.sin(kb) - np.sin(ka)) / (k * math.pi)
    out[..., 1::2] = (np.cos(ka) - np.cos(kb)) / (k * math.pi)
    return out


def interval_W(nh: int, a, b) -> np.ndarray:
    """``W = (1/pi) int_a^b H H^T dtau`` in closed form; (2nh, 2nh) or (m, 2nh, 2nh)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    shp = np.broadcast(a, b).shape
    kk = np.arange(0, 2 * nh + 1, dtype=float)
    ka = np.multiply.outer(a, kk)
    kb = np.multiply.outer(b, kk)
    with np.errstate(divide="ignore", invalid="ignore"):
        Ck = np.where(kk > 0, (np.sin(kb) - np.sin(ka)) / np.where(kk > 0, kk, 1), 0.0)
        Sk = np.where(kk > 0, (np.cos(ka) - np.cos(kb)) / np.where(kk > 0, kk, 1), 0.0)
    Ck[..., 0] = b - a

    dif, add, sgn = _pair_indices(nh)
    cd, ca = Ck[..., dif], Ck[..., add]
    sd, sa = sgn * Sk[..., dif], Sk[..., add]         # S_{n-m}, S_{n+m}
    out = np.empty(shp + (2 * nh, 2 * nh))
    out[..., 0::2, 0::2] = 0.5 * (cd + ca)
    out[..., 1::2, 1::2] = 0.5 * (cd - ca)
    out[..., 0::2, 1::2] = 0.5 * (sa - sd)   # cos n * sin m (S_{m-n} = -S_{n-m})
    out[..., 1::2, 0::2] = 0.5 * (sa + sd)   # sin n * cos m
    return out / math.pi


@functools.lru_cache(maxsize=16)
def _pair_indices(nh):
    """``|n - m|``, ``n + m`` and ``sign(n - m)`` over the harmonic pairs (n, m) of
    :func:`interval_W` (read-only arrays, kept per ``nh``)."""
    n = np.arange(1, nh + 1)
    N_, M_ = np.meshgrid(n, n, indexing="ij")
    out = (np.abs(N_ - M_), N_ + M_, np.sign(N_ - M_).astype(float))
    for a in out:
        a.flags.writeable = False
    return out


def aft_matrix(nh: int, nt: int, constant: bool = False, d: int = 0) -> np.ndarray:
    """``E`` (nt, rows): rows ``H^(d)(2 pi i / nt)^T``; ``x = E X`` samples, ``X = (2/nt) E^T x``
    (without the constant term; see :func:`aft_projection`)."""
    return basis(nh, 2 * math.pi * np.arange(nt) / nt, d, constant)


def aft_projection(nh: int, nt: int, constant: bool = False) -> np.ndarray:
    """``Pj`` (rows, nt) with ``F = Pj f``: the trapezoidal (exact for trigonometric polynomials
    of degree < nt - nh) quadrature of the Galerkin projections, ``(2 pi / nt) c_k E^T``."""
    return (2 * math.pi / nt) * row_weights(nh, constant)[:, None] * aft_matrix(nh, nt, constant).T


def global_index(n: int, nh: int, dof: int, harmonic: int, part: str,
                 constant: bool = False) -> int:
    """Index in the harmonic-major global vector of (dof, harmonic >= 1, 'c' | 's'), or of the
    mean of ``dof`` (``harmonic = 0``, with ``constant``)."""
    if harmonic == 0:
        if not constant:
            raise ParameterError("harmonic 0 (the mean) exists only with the constant term")
        return dof
    return (2 * (harmonic - 1) + (0 if part == "c" else 1) + (1 if constant else 0)) * n + dof


def harmonic_amplitudes(Q, n: int, nh: int, dof: int, constant: bool = False) -> np.ndarray:
    """Amplitudes ``hypot(Q^ck, Q^sk)`` of one DOF for k = 1..nh (same units as Q); with
    ``constant``, the mean ``Q^0`` (signed) first, shape (nh + 1,)."""
    Qm = np.asarray(Q).reshape(n_rows(nh, constant), n)
    if constant:
        return np.concatenate([Qm[:1, dof], np.hypot(Qm[1::2, dof], Qm[2::2, dof])])
    return np.hypot(Qm[0::2, dof], Qm[1::2, dof])
