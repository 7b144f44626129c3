"""Harmonic-balance system ``R(Q, w, alpha) = D(w) Q + F_nl(Q) - alpha F_ex``.

Ordering is harmonic-major (``Q = [Q^c1; Q^s1; ...; Q^sNh]``, blocks of the n structural DOFs);
no constant term (the static preload is given and the mean of every force is discarded, the
paper's static/dynamic decoupled scheme). This is exact for 1D Jenkins contacts (the play
operator is shift invariant) and for 2D contacts that never separate nor keep a stuck offset; in
the time domain, separation and stuck interfaces leave mean contact forces that move the mean
normal loads (blade model at 30 N near its resonance: mean normal load 56 N instead of 50 N,
fundamental 4-6 % above the decoupled harmonic balance in Newmark integration).

Dynamic stiffness (spec 1.3; the stray ``M`` in the printed eq. 5 is a typo and is not used)::

    D(w) = blockdiag_k [[K - (k w)^2 M,  k w C], [-k w C,  K - (k w)^2 M]]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, ParameterError
from .fourier import check_nh

__all__ = ["HBSystem", "ContactElement"]


@dataclass
class ContactElement:
    """A contact law placed in the structure (an entry of ``HBSystem(..., contacts)``).

    Attributes
    ----------
    element : Jenkins or StickSlipSeparation
        The contact law (:mod:`fesub.hbm.contact`).
    G : (ncomp, n) array
        Gather matrix (-): local relative displacement ``u = G q`` (m; tangential first, then
        normal).
    name : str
        Label of the contact in figures and messages.
    """

    element: object
    G: np.ndarray
    name: str = ""


def _check_matrix(name, A, n=None):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ModelError(f"{name} must be a square matrix, got shape {A.shape}")
    if n is not None and A.shape[0] != n:
        raise ModelError(f"{name} must have shape ({n}, {n}), got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ModelError(f"{name} contains NaN or inf")
    return A


class HBSystem:
    """Harmonic balance of ``M q'' + C q' + K q + f_nl = alpha f_ex cos(w t)``.

    Parameters
    ----------
    M, C, K : (n, n) arrays
        Mass (kg), damping (N s/m) and stiffness (N/m) matrices of the structure (without the
        contact stiffness, which the contact elements carry).
    nh : int
        Number of harmonics (>= 1).
    contacts : list of ContactElement
    fex : (n,) array or int
        Unit-load pattern (N per unit of alpha) applied as a cosine at the fundamental, or the
        index of the single DOF loaded with 1 N (paper eq. 14).
    dof : int
        DOF of the amplitude monitor ``Am = (sqrt 2 / 2) |Q_dof|`` (RMS, m).
    """

    def __init__(self, M, C, K, nh, contacts=(), fex=0, dof=0):
        self.K = _check_matrix("K", K)
        n = self.K.shape[0]
        self.M = _check_matrix("M", M, n)
        self.C = _check_matrix("C", C, n)
        ev = np.linalg.eigvalsh(0.5 * (self.K + self.K.T))
        if ev.min() < -1e-9 * max(abs(ev).max(), 1.0):
            raise ModelError("K must be positive semi-definite "
                             f"(smallest eigenvalue {ev.min():.3e})")
        em = np.linalg.eigvalsh(0.5 * (self.M + self.M.T))
        if em.min() <= 0:
            raise ModelError(f"M must be positive definite (smallest eigenvalue {em.min():.3e})")
        self.n = n
        self.nh = check_nh(nh)
        self.N = 2 * self.nh * n
        self.contacts = list(contacts)
        self.P = []
        self._gather = []
        for i, c in enumerate(self.contacts):
            G = np.atleast_2d(np.asarray(c.G, float))
            if G.shape != (c.element.ncomp, n):
                raise ModelError(f"contact {i}: gather matrix must have shape "
                                 f"({c.element.ncomp}, {n}), got {G.shape}")
            m = 2 * self.nh
            P = np.zeros((G.shape[0] * m, self.N))
            for comp in range(G.shape[0]):
                for h in range(m):
                    P[comp * m + h, h * n:(h + 1) * n] = G[comp]
            self.P.append(P)
            cols = np.flatnonzero(np.any(G != 0, axis=0))
            rows = (np.arange(m)[:, None] * n + cols[None, :]).ravel()
            self._gather.append((G[:, cols], cols, rows))
        f = np.zeros(self.N)
        if np.ndim(fex) == 0:
            k = int(fex)
            if not 0 <= k < n:
                raise ParameterError(f"fex (force DOF) must lie in [0, {n - 1}], got {fex}")
            f[k] = 1.0
        else:
            fe = np.asarray(fex, float).ravel()
            if fe.size == n:
                f[:n] = fe
            elif fe.size == self.N:
                f[:] = fe
            else:
                raise ParameterError(f"fex must have length n={n} or 2*nh*n={self.N}")
        self.fex = f
        self.set_dof(dof)

    # ------------------------------------------------------------------ monitor
    def set_dof(self, dof):
        dof = int(dof)
        if not 0 <= dof < self.n:
            raise ParameterError(f"dof (monitor) must lie in [0, {self.n - 1}], got {dof}")
        self.dof = dof
        self.idx = np.arange(2 * self.nh) * self.n + dof

    def amplitude(self, Q, dof=None):
        """RMS amplitude ``(sqrt 2/2) |Q_dof|`` (m) of a DOF (default: the monitor)."""
        idx = self.idx if dof is None else np.arange(2 * self.nh) * self.n + int(dof)
        return math.sqrt(0.5) * float(np.linalg.norm(np.asarray(Q)[..., idx]))

    def amp_grad(self, Q):
        g = np.zeros(self.N)
        qk = Q[self.idx]
        nq = np.linalg.norm(qk)
        g[self.idx] = math.sqrt(0.5) * qk / nq
        return g

    def amp_hess(self, Q):
        Hm = np.zeros((self.N, self.N))
        qk = Q[self.idx]
        nq = np.linalg.norm(qk)
        Hm[np.ix_(self.idx, self.idx)] = math.sqrt(0.5) * (np.eye(qk.size) / nq
                                                           - np.outer(qk, qk) / nq ** 3)
        return Hm

    # ------------------------------------------------------------------ linear part
    def D(self, w, d: int = 0, extra_xi: float = 0.0):
        """``d``-th derivative (d = 0, 1, 2) of the dynamic stiffness w.r.t. w.

        ``extra_xi`` (1/s) adds ``xi M`` to the damping matrix (dNNM, spec eq. 8).
        """
        n, nh = self.n, self.nh
        Cx = self.C + extra_xi * self.M
        out = np.zeros((self.N, self.N))
        for k in range(1, nh + 1):
            i = 2 * (k - 1) * n
            c, s = slice(i, i + n), slice(i + n, i + 2 * n)
            if d == 0:
                A = self.K - (k * w) ** 2 * self.M
                B = k * w * Cx
            elif d == 1:
                A = -2 * k * k * w * self.M
                B = k * Cx
            elif d == 2:
                A = -2 * k * k * self.M
                B = 0 * Cx
            else:
                raise ParameterError("d must be 0, 1 or 2")
            out[c, c] = A
            out[s, s] = A
            out[c, s] = B
            out[s, c] = -B
        return out

    def D_xi(self, w):
        """Derivative of ``D`` w.r.t. the extra damping ``xi`` (1/s)."""
        n = self.n
        out = np.zeros((self.N, self.N))
        for k in range(1, self.nh + 1):
            i = 2 * (k - 1) * n
            c, s = slice(i, i + n), slice(i + n, i + 2 * n)
            out[c, s] = k * w * self.M
            out[s, c] = -k * w * self.M
        return out

    # ------------------------------------------------------------------ contacts
    def local(self, Q):
        """Local coefficient vectors ``p_e = P_e Q`` of every contact."""
        return [P @ Q for P in self.P]

    def fnl(self, Q, *, lam=None, method="event", nt=None):
        """Contact forces ``F_nl`` (N), ``K_f = dF_nl/dQ`` and optionally ``d(K_f^T lam)/dQ``.

        Assembly ``P_e^T (.) P_e`` is done on the few structural DOFs each contact touches
        (``P_e = G_e (x) I_2nh`` in the harmonic-major ordering), never with dense ``P_e``.
        """
        F = np.zeros(self.N)
        K = np.zeros((self.N, self.N))
        HL = np.zeros((self.N, self.N)) if lam is not None else None
        m = 2 * self.nh
        Qm = np.asarray(Q).reshape(m, self.n)
        Lm = None if lam is None else np.asarray(lam).reshape(m, self.n)
        Fm = F.reshape(m, self.n)
        for c, (Gs, cols, rows) in zip(self.contacts, self._gather):
            p = (Gs @ Qm[:, cols].T).ravel()
            ll = None if Lm is None else (Gs @ Lm[:, cols].T).ravel()
            r = c.element.evaluate(p, self.nh, lam=ll, method=method, nt=nt)
            nc = Gs.shape[0]
            Fm[:, cols] += (Gs.T @ r.F.reshape(nc, m)).T
            ix = np.ix_(rows, rows)
            K[ix] += self._expand(r.K, Gs, m)
            if HL is not None:
                HL[ix] += self._expand(r.hess_lam, Gs, m)
        return F, K, HL

    @staticmethod
    def _expand(Kl, Gs, m):
        """``P^T Kl P`` restricted to the touched DOFs: rows ordered (harmonic, dof)."""
        nc, na = Gs.shape
        K4 = Kl.reshape(nc, m, nc, m)
        # tiny operands (nc <= 2, na = touched DOFs): the plain C loop beats a contraction
        # path search (3 us vs 46 us per call for the beam's tip contact)
        out = np.einsum("ca,chdk,db->hakb", Gs, K4, Gs)
        return out.reshape(m * na, m * na)

    def contact_states(self, Q):
        """Per contact: (tau, from, to, state0) of the event march at ``Q``."""
        out = []
        for c, P in zip(self.contacts, self.P):
            r = c.element.evaluate(P @ Q, self.nh)
            out.append((r.tau, r.from_state, r.to_state, r.state0))
        return out

    def stuck_margin(self, Q, ngrid=2048):
        """Per contact: > 0 when the element cannot stay stuck over the cycle (slip or
        separation must occur), < 0 when it can (m-scaled force margin, N)."""
        tau = 2 * math.pi * np.arange(ngrid) / ngrid
        from .fourier import basis
        Hb = basis(self.nh, tau)
        out = []
        for c, P in zip(self.contacts, self.P):
            el = c.element
            p = P @ Q
            m = 2 * self.nh
            x = Hb @ p[:m]
            if el.ncomp == 2:
                N = el.n0 + el.kn * (Hb @ p[m:])
            else:
                N = el.n0 + 0 * x
            slip = np.max(el.kt * x - el.mu * N) - np.min(el.kt * x + el.mu * N)
            out.append(max(slip, -np.min(N)))
        return np.array(out)

    # ------------------------------------------------------------------ residual
    def residual(self, Q, w, alpha):
        """``R = D(w) Q + F_nl(Q) - alpha F_ex`` (N)."""
        F, _, _ = self.fnl(Q)
        return self.D(w) @ Q + F - alpha * self.fex

    def jacobian(self, Q, w, alpha):
        """``(R, R_Q, R_w, R_alpha)``."""
        F, K, _ = self.fnl(Q)
        Dw = self.D(w)
        R = Dw @ Q + F - alpha * self.fex
        return R, Dw + K, self.D(w, 1) @ Q, -self.fex

    def linear_response(self, w, alpha=1.0, stuck=True):
        """Linear response with all contacts stuck (contact stiffness added) or free (absent)."""
        Dw = self.D(w)
        if stuck:
            for c, P in zip(self.contacts, self.P):
                m = 2 * self.nh
                kl = np.concatenate([np.full(m, c.element.kt)]
                                    + ([np.full(m, c.element.kn)] if c.element.ncomp == 2 else []))
                Dw = Dw + P.T @ (kl[:, None] * P)
        return np.linalg.solve(Dw, alpha * self.fex)

    def linear_matrices(self, stuck=True, slip=False):
        """(M, C, K) with the contacts stuck (kt, kn springs), sliding (kn only), or free."""
        K = self.K.copy()
        for c in self.contacts:
            G = np.atleast_2d(c.G)
            if stuck:
                K += c.element.kt * np.outer(G[0], G[0])
                if c.element.ncomp == 2:
                    K += c.element.kn * np.outer(G[1], G[1])
            elif slip and c.element.ncomp == 2:
                K += c.element.kn * np.outer(G[1], G[1])
        return self.M, self.C, K

    def energy_dissipated(self, Q):
        """Friction dissipation per cycle ``pi sum_k k (F^ck . Q^sk - F^sk . Q^ck)`` (J)."""
        F, _, _ = self.fnl(Q)
        n = self.n
        E = 0.0
        for k in range(1, self.nh + 1):
            i = 2 * (k - 1) * n
            E += k * (F[i:i + n] @ Q[i + n:i + 2 * n] - F[i + n:i + 2 * n] @ Q[i:i + n])
        return math.pi * E
