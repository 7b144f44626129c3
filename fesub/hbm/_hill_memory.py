"""The memory of friction contacts in Hill's method (used by :mod:`fesub.hbm.stability`).

A 1D Jenkins element in a stick interval started at ``t_j`` answers a perturbation ``dq`` with
``kt (du(t) - du(t_j))``: the offset frozen at the start. For a Floquet perturbation
``du = e^{lambda t} p(t)`` that offset is ``e^{lambda t_j} p(t_j)``, so the Hill problem becomes
nonlinear in the exponent ``lambda``: ``T(lambda) v = 0`` with the memory term ``K_mem(lambda)``
(stick-interval integrals in closed form). Its roots are found by Newton from the estimates of
the quadratic Hill problem (whose Jacobian is the one of periodic perturbations, ``lambda = 0``).
Basis: ``[0; c1; s1; ...; sNh]`` with blocks of the n DOFs (the constant harmonic first).
"""

from __future__ import annotations

import math

import numpy as np

from .contact import STICK, Jenkins
from .fourier import basis, interval_w

__all__ = ["stick_intervals", "memory", "mean_row", "refine", "h0", "galerkin_weights",
           "exp_integrals"]


def h0(sys) -> int:
    """1 when the system carries the constant harmonic in its unknowns, else 0."""
    return int(getattr(sys, "h0", 0))


def galerkin_weights(nh):
    """Row weights ``1/(2 pi)`` (mean) and ``1/pi`` (harmonics) of the projections (1/rad)."""
    c = np.full(2 * nh + 1, 1.0 / math.pi)
    c[0] = 0.5 / math.pi
    return c


def stick_intervals(sys, Q):
    """Per 1D Jenkins contact that slips: ``(kt, g, starts, ends)``, the stick intervals
    ``[tau_j, tau_j')`` (rad, ``tau_j' > tau_j``, may pass 2 pi) and their gather row."""
    out = []
    for c, P in zip(sys.contacts, sys.P):
        if not isinstance(c.element, Jenkins):
            continue
        r = c.element.evaluate(P @ Q, sys.nh)       # the transitions of its cycle
        tau, to = r.tau, r.to_state
        if len(tau) == 0:
            continue
        ends = np.append(tau[1:], tau[0] + 2 * math.pi)
        j = np.flatnonzero(np.asarray(to) == STICK)
        out.append((c.element.kt, np.atleast_2d(np.asarray(c.G, float))[0], tau[j], ends[j]))
    return out


#: the series of E and G where ``|mu L|`` is small: powers 0..11 and their coefficients
#: ``1 / (n! (n + 1))`` and ``1 / (n! (n + 2))``
_N = np.arange(12)
_FACT = np.cumprod(np.append(1.0, np.arange(1, 12)))
_CE, _CG = 1.0 / (_FACT * (_N + 1)), 1.0 / (_FACT * (_N + 2))


def exp_integrals(mu, L):
    """``E = int_0^L e^{mu s} ds`` and ``G = int_0^L s e^{mu s} ds`` in closed form (series
    where ``|mu L| < 0.1``, whose closed forms cancel); ``mu`` complex, broadcast with ``L``."""
    z = np.asarray(mu * L, complex)
    L = L + np.zeros(z.shape)
    E, G = np.empty(z.shape, complex), np.empty(z.shape, complex)
    small = np.abs(z) < 0.1
    big = ~small
    zb, Lb = z[big], L[big]
    with np.errstate(over="ignore", invalid="ignore"):
        E[big] = np.expm1(zb) / zb * Lb
        G[big] = (np.exp(zb) * (zb - 1) + 1) / (zb * zb) * Lb * Lb
    if small.any():
        pw = z[small][:, None] ** _N
        Ls = L[small]
        E[small] = Ls * (pw @ _CE)
        G[small] = Ls * Ls * (pw @ _CG)
    return E, G


def _kron(A, B):
    """``np.kron`` of two 2-D arrays, without its general set-up (called per Newton step)."""
    return (A[:, None, :, None] * B[None, :, None, :]).reshape(A.shape[0] * B.shape[0], A.shape[1] * B.shape[1])


def memory(sys, intervals, lam, w):
    """``K_mem(lambda)`` (N/m) and its derivative in lambda (N s/m) in the Hill basis.

    In a stick interval started at ``t_j`` the Jenkins force of a perturbation ``dq`` is
    ``kt (du(t) - du(t_j))``; for ``du = e^{lambda t} p(t)`` the frozen part, divided by
    ``e^{lambda t}``, is ``kt e^{-sigma (tau - tau_j)} p(tau_j)``, ``sigma = lambda / w``:
    ``K_mem[i, a] = -c_i kt sum_j int_{I_j} H_i(tau) e^{-sigma (tau - tau_j)} dtau H_a(tau_j)``,
    integrated in closed form through ``cos k tau = (e^{ik tau} + e^{-ik tau}) / 2`` (exact for
    any sigma, however fast the exponential varies over the interval).
    """
    nh, n = sys.nh, sys.n
    Nf = (2 * nh + 1) * n
    K = np.zeros((Nf, Nf), complex)
    dK = np.zeros((Nf, Nf), complex)
    cw = galerkin_weights(nh)
    sigma = lam / w
    k = np.arange(1, nh + 1)
    for kt, g, a, b in intervals:
        gg = np.outer(g, g)
        L = (b - a)[:, None]                                          # (nI, 1)
        # the exponents i k - sigma, -i k - sigma (k = 1..nh) and -sigma in one call: (nI, 2 nh + 1)
        E, G = exp_integrals(np.concatenate([1j * k - sigma, -1j * k - sigma, [-sigma]]), L)
        Ep, Em, E0 = E[:, :nh], E[:, nh:2 * nh], E[:, 2 * nh:]
        Gp, Gm, G0 = G[:, :nh], G[:, nh:2 * nh], G[:, 2 * nh:]
        ep = np.exp(1j * np.outer(a, k))
        em = ep.conj()                                               # the start times are real
        beta = np.empty((a.size, 2 * nh + 1), complex)
        dbeta = np.empty_like(beta)
        for out, e_p, e_m, e_0 in ((beta, Ep, Em, E0), (dbeta, -Gp, -Gm, -G0)):
            out[:, 0] = e_0[:, 0]
            out[:, 1::2] = 0.5 * (ep * e_p + em * e_m)
            out[:, 2::2] = -0.5j * (ep * e_p - em * e_m)
        beta *= cw
        dbeta *= cw / w
        Ha = np.column_stack([np.ones(a.size), basis(nh, a)])           # (nI, m+1)
        K -= kt * _kron(beta.T @ Ha, gg)
        dK -= kt * _kron(dbeta.T @ Ha, gg)
    return K, dK


def mean_row(sys, intervals):
    """The mean-force row the harmonic balance leaves out (no constant term):
    ``(1/2 pi) kt sum_j int_{I_j} H_a(tau) dtau`` of the stuck part, in the Hill basis (N/m)."""
    nh, n = sys.nh, sys.n
    row = np.zeros((n, (2 * nh + 1) * n))
    for kt, g, a, b in intervals:
        ints = np.concatenate([[np.sum(b - a)], math.pi * interval_w(nh, a, b).sum(axis=0)])
        row += kt / (2 * math.pi) * np.kron(ints, np.outer(g, g))
    return row


def refine(sys, Q, w, D, lam0, V0, intervals, tol=1e-12, max_iter=30):
    """Newton on ``T(lambda) v = 0`` with the exact memory of the stuck intervals, from the
    Hill estimates ``lam0`` (eigenvectors ``V0``, columns) in turn; yields each converged
    ``(lambda, v)`` (a candidate that diverges, leaving the strip's width per step after
    three steps, or does not converge is dropped)."""
    D0, D1, D2 = D
    K0, _ = memory(sys, intervals, 0.0, w)
    base = D0 - K0                     # D0 holds K_mem(0) but for its mean row
    if not h0(sys):
        base[:sys.n] += mean_row(sys, intervals) + K0[:sys.n].real
    Nf = D0.shape[0]
    J = np.zeros((Nf + 1, Nf + 1), complex)
    for lam, v in zip(lam0, V0.T):
        u = v.conj() / np.vdot(v, v)
        v = v / (u @ v)
        J[Nf, :Nf] = u
        for it in range(max_iter):
            Km, dKm = memory(sys, intervals, lam, w)
            T = lam * lam * D2 + lam * D1 + base + Km
            J[:Nf, :Nf] = T
            J[:Nf, Nf] = (2 * lam * D2 + D1 + dKm) @ v
            r = np.append(T @ v, u @ v - 1)
            if not np.all(np.isfinite(J)) or not np.all(np.isfinite(r)):
                break
            try:
                d = np.linalg.solve(J, -r)
            except np.linalg.LinAlgError:
                break
            v, lam = v + d[:Nf], lam + d[Nf]
            if abs(d[Nf]) <= tol * w:
                yield lam, v
                break
            if it >= 3 and abs(d[Nf]) > w:
                break
