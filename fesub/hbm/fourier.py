"""Harmonic basis of the harmonic balance (no constant term: static/dynamic decoupled scheme).

Ordering (per scalar): ``X = [X^c1, X^s1, ..., X^cNh, X^sNh]`` and
``H(tau) = [cos tau, sin tau, ..., cos Nh tau, sin Nh tau]``. Global vectors are harmonic-major:
``Q = [Q^c1; Q^s1; ...; Q^sNh]``, each block of length ``n`` (structural DOFs).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError

__all__ = ["check_nh", "basis", "interval_w", "interval_W", "aft_matrix", "harmonic_amplitudes",
           "global_index"]


def check_nh(nh) -> int:
    """Validate the number of harmonics (integer >= 1)."""
    try:
        v = int(nh)
    except (TypeError, ValueError):
        raise ParameterError(
            f"nh (number of harmonics) must be an integer >= 1, got {nh!r}") from None
    if v != nh or v < 1:
        raise ParameterError(f"nh (number of harmonics) must be an integer >= 1, got {nh!r}")
    return v


def basis(nh: int, tau, d: int = 0) -> np.ndarray:
    """``d``-th derivative of ``H(tau)`` w.r.t. tau; shape (2nh,) or (len(tau), 2nh)."""
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

    def C(j):
        return Ck[..., np.abs(j)]

    def S(j):  # S_{-j} = -S_j
        return np.sign(j) * Sk[..., np.abs(j)]

    n = np.arange(1, nh + 1)
    N_, M_ = np.meshgrid(n, n, indexing="ij")
    out = np.empty(shp + (2 * nh, 2 * nh))
    out[..., 0::2, 0::2] = 0.5 * (C(N_ - M_) + C(N_ + M_))
    out[..., 1::2, 1::2] = 0.5 * (C(N_ - M_) - C(N_ + M_))
    out[..., 0::2, 1::2] = 0.5 * (S(N_ + M_) + S(M_ - N_))   # cos n * sin m
    out[..., 1::2, 0::2] = 0.5 * (S(N_ + M_) + S(N_ - M_))   # sin n * cos m
    return out / math.pi


def aft_matrix(nh: int, nt: int) -> np.ndarray:
    """``E`` (nt, 2nh): rows ``H(2 pi i / nt)^T``; ``x = E X`` samples, ``X = (2/nt) E^T x``."""
    return basis(nh, 2 * math.pi * np.arange(nt) / nt)


def global_index(n: int, nh: int, dof: int, harmonic: int, part: str) -> int:
    """Index in the harmonic-major global vector of (dof, harmonic >= 1, 'c' | 's')."""
    return (2 * (harmonic - 1) + (0 if part == "c" else 1)) * n + dof


def harmonic_amplitudes(Q, n: int, nh: int, dof: int) -> np.ndarray:
    """Amplitudes ``hypot(Q^ck, Q^sk)`` of one DOF for k = 1..nh (same units as Q)."""
    Qm = np.asarray(Q).reshape(2 * nh, n)
    return np.hypot(Qm[0::2, dof], Qm[1::2, dof])
