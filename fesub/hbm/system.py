"""Harmonic-balance system ``R(Q, w, alpha) = D(w) Q + F_nl(Q) - alpha F_ex (- F_s)``.

Ordering is harmonic-major (``Q = [Q^c1; Q^s1; ...; Q^sNh]``, blocks of the n structural DOFs).

With the constant term (``constant=True``) the mean block comes first (``Q = [Q^0; Q^c1; ...]``)
and the static preload ``f_s`` (N) is balanced together with the dynamics:
``R^0 = K Q^0 + F_nl^0(Q) - f_s``, ``F_nl^0`` the mean contact force. The default
(``constant=None``) switches it on when a contact law that can take it is asymmetric (not odd,
``f(-u, -v) != -f(u, v)``: its mean force depends on the motion) and no law present lacks it.

``constant=True`` also takes :class:`~fesub.hbm.friction3d.Friction3D` contacts (their static
normal loads ``max(n0, 0)`` at rest are balanced by a static load, as in the time integration);
the default leaves them in the decoupled scheme below. On a free structure the mean block ``K``
is singular (its rigid-body modes ``R``, and parts held only by the contacts); ``mean_support``
adds a stiffness to the mean block alone, ``M R s R^T M`` (:meth:`fesub.hbm.BoltedJoint.hb_system`
builds it), which changes nothing when the loads and contact forces are self-equilibrated: the
mean is then the free structure's, without rigid motion (``R^T M Q^0 = 0``).

Without the constant term (the friction elements of :mod:`fesub.hbm.contact`, which have none)
the static preload is given and the mean of every force is discarded, the paper's
static/dynamic decoupled scheme; a preload ``f_s`` given then is balanced once, statically
(``K q_s + G^T f(G q_s, 0) = f_s``, laws of :mod:`fesub.hbm.laws` at rest), and those laws see
the dynamics about ``q_s``. The decoupled scheme is exact for 1D Jenkins contacts (the play
operator is shift invariant) and for 2D contacts that never separate nor keep a stuck offset; in
the time domain, separation and stuck interfaces leave mean contact forces that move the mean
normal loads (blade model at 30 N near its resonance: mean normal load 56 N instead of 50 N,
fundamental 4-6 % above the decoupled harmonic balance in Newmark integration).

Dynamic stiffness (spec 1.3; the stray ``M`` in the printed eq. 5 is a typo and is not used)::

    D(w) = blockdiag_k [[K - (k w)^2 M,  k w C], [-k w C,  K - (k w)^2 M]]
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..errors import ConvergenceError, ModelError, ParameterError, check_count
from ..limits import check_memory
from .fourier import basis, check_nh, n_rows
from .friction3d import Friction3D, evaluate_many
from .newton import damped_newton

__all__ = ["HBSystem", "ContactElement", "wants_constant"]


@functools.lru_cache(maxsize=8)
def _grid_basis(nh, ngrid):
    """Fourier rows at ``ngrid`` equispaced phases of the cycle (read-only, kept per size)."""
    Hb = basis(nh, 2 * math.pi * np.arange(ngrid) / ngrid)
    Hb.flags.writeable = False
    return Hb


@dataclass
class ContactElement:
    """A contact law placed in the structure (an entry of ``HBSystem(..., contacts)``).

    Parameters
    ----------
    element : Jenkins, StickSlipSeparation, Friction3D or a law of :mod:`fesub.hbm.laws`
        The contact law (:mod:`fesub.hbm.contact`, :mod:`fesub.hbm.friction3d`,
        :mod:`fesub.hbm.laws`).
    G : (ncomp, n) array
        Gather matrix (-): local relative displacement ``u = G q`` (m; the tangential
        components first (one, or two for :class:`~fesub.hbm.friction3d.Friction3D`), then the
        normal).
    name : str
        Label of the contact in figures and messages.
    """

    element: object
    G: np.ndarray
    name: str = ""


def _margin_3d(el, Hb, p, m):
    """Stuck margin (N) of a :class:`~fesub.hbm.friction3d.Friction3D`: ``2 max (|kt (u_t -
    c)| - mu N)`` with ``c`` the centre of the tangential orbit's bounding box (> 0: it cannot
    stay stuck about that centre; an upper bound of the margin about the best centre), or
    ``-min N`` when larger (separation)."""
    ut = np.column_stack([Hb @ p[:m], Hb @ p[m:2 * m]])
    N = el.n0 + el.kn * (Hb @ p[2 * m:])
    c = 0.5 * (ut.max(axis=0) + ut.min(axis=0))
    slip = 2.0 * np.max(el.kt * np.hypot(*(ut - c).T) - el.mu * N)
    return max(slip, -np.min(N))


def _has_constant(law) -> bool:
    """True for a law that takes the constant term (the laws of :mod:`fesub.hbm.laws`)."""
    return bool(getattr(law, "has_constant", False))


def wants_constant(contacts) -> bool:
    """Default of ``HBSystem(constant=None)``: True when some law is asymmetric (not odd) and
    every law present takes the constant term (the friction elements of
    :mod:`fesub.hbm.contact` do not: their mean normal load is the given preload ``n0``)."""
    laws = [c.element for c in contacts]
    return (all(_has_constant(el) for el in laws)
            and any(not getattr(el, "symmetric", True) for el in laws))


def _takes_constant(law) -> bool:
    """True for a law whose force has a mean in this system's basis: the laws of
    :mod:`fesub.hbm.laws` and :class:`~fesub.hbm.friction3d.Friction3D`."""
    return _has_constant(law) or isinstance(law, Friction3D)


def _constant_choice(constant, contacts) -> bool:
    if constant is None:
        return wants_constant(contacts)
    if constant not in (True, False):
        raise ParameterError(f"constant must be True, False or None, got {constant!r}")
    if constant:
        lacking = [type(c.element).__name__ for c in contacts if not _takes_constant(c.element)]
        if lacking:
            raise ModelError(f"constant=True: the contact laws {lacking} have no constant term "
                             "(static/dynamic decoupled scheme); use constant=False")
    return bool(constant)


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
        DOF of the amplitude monitor ``Am = (sqrt 2 / 2) |Q_dof|`` (RMS of the harmonics, m).
    constant : bool or None
        Constant (0th) term in the harmonic basis. None (default): on when a law present is
        asymmetric and every law present has the term (:func:`wants_constant`).
    fstatic : (n,) array, optional
        Static preload (N), a constant force vector on the structure.
    mean_support : (n, n) array, optional
        Stiffness (N/m) added to the mean block only (with the constant term): for a free
        structure ``M R diag(s) R^T M`` on its rigid-body modes ``R`` (mass-normalised), which
        makes the mean block regular. When the static load and the contact forces are
        self-equilibrated (``R^T f = 0``, internal forces) the mean it gives is the free
        structure's, ``R^T M Q^0 = 0`` (no rigid motion), whatever ``s``.
    """

    def __init__(self, M, C, K, nh, contacts=(), fex=0, dof=0, *, constant=None, fstatic=None,
                 mean_support=None):
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
        self.contacts = list(contacts)
        self.constant = _constant_choice(constant, self.contacts)
        self.mean_support = None if mean_support is None else _check_matrix("mean_support", mean_support, n)
        #: stiffness of the mean block (N/m): K, plus the mean support of a free structure
        self.K0 = self.K if self.mean_support is None else self.K + self.mean_support
        self.h0 = 1 if self.constant else 0          # rows before the first harmonic
        self.m = n_rows(self.nh, self.constant)      # coefficients per scalar
        self.N = self.m * n
        # the dense Jacobian and its factor (two N x N), the residual work and every contact's
        # gather matrix: what one Newton iteration holds
        check_memory(f"a harmonic balance with nh = {self.nh} harmonics of {n} DOFs",
                     self.memory_bytes(2.0), hint="use fewer harmonics")
        self.P = []
        self._gather = []
        for i, c in enumerate(self.contacts):
            G = np.atleast_2d(np.asarray(c.G, float))
            if G.shape != (c.element.ncomp, n):
                raise ModelError(f"contact {i}: gather matrix must have shape "
                                 f"({c.element.ncomp}, {n}), got {G.shape}")
            m = self.m
            P = np.zeros((G.shape[0] * m, self.N))
            for comp in range(G.shape[0]):
                for h in range(m):
                    P[comp * m + h, h * n:(h + 1) * n] = G[comp]
            self.P.append(P)
            cols = np.flatnonzero(np.any(G != 0, axis=0))
            rows = (np.arange(m)[:, None] * n + cols[None, :]).ravel()
            self._gather.append((G[:, cols], cols, rows))
        self._keys3d = None
        self._groups()
        f = np.zeros(self.N)
        h = self.h0 * n
        if np.ndim(fex) == 0:
            k = check_count("fex (force DOF)", fex, 0, n - 1)
            f[h + k] = 1.0
        else:
            try:
                fe = np.asarray(fex, float).ravel()
            except (TypeError, ValueError):
                raise ParameterError(f"fex must be a DOF index or a force vector (N), got {fex!r}") from None
            if not np.all(np.isfinite(fe)):
                raise ParameterError("fex (force vector, N) must be finite")
            if fe.size == n:
                f[h:h + n] = fe
            elif fe.size == 2 * self.nh * n:
                f[h:] = fe
            else:
                raise ParameterError(f"fex must have length n={n} or 2*nh*n={2 * self.nh * n}")
        self.fex = f
        self._set_static(fstatic)
        self.set_dof(dof)

    # ------------------------------------------------------------------ static preload
    def memory_bytes(self, square_arrays: float) -> float:
        """Bytes (float64) that an analysis of this system holds at its peak: ``square_arrays``
        arrays of N x N (N harmonic unknowns) and every contact's gather matrix (its
        components times 2 nh + 1 rows of N, 2 nh without the constant term).
        :func:`~fesub.hbm.dnnm` counts 5 N x N arrays, :func:`~fesub.hbm.forced_response` 8
        (measured 4.6 and 7.6) and refuses a system beyond :mod:`fesub.limits`' memory limit
        before its first step.

        Parameters
        ----------
        square_arrays : float
            How many N x N float64 arrays the analysis holds at once (-).

        Returns
        -------
        float
            Bytes.
        """
        m, N = self.m, self.N
        ncomp = sum(int(getattr(getattr(c, "element", None), "ncomp", 1) or 1) for c in self.contacts)
        return 8.0 * (float(square_arrays) * N * N + ncomp * m * N)

    def _set_static(self, fstatic):
        n = self.n
        fs = np.zeros(n) if fstatic is None else np.asarray(fstatic, float).ravel()
        if fs.size != n or not np.all(np.isfinite(fs)):
            raise ParameterError(f"fstatic (static preload, N) must be {n} finite values")
        self.fstatic = fs
        self.fs = np.zeros(self.N)    # preload in the global residual (the mean block)
        self.q_static = np.zeros(n)   # decoupled scheme: static state the dynamics is about
        self._offsets = [0.0] * len(self.contacts)
        if self.constant:
            # a Friction3D contact carries its static normal load max(n0, 0) at rest; a static
            # load balances it there (the time integration's convention), so that the mean of
            # its force is what the motion adds
            self.fs[:n] = fs + sum((max(c.element.n0, 0.0) * np.atleast_2d(c.G)[2]
                                    for c in self.contacts if isinstance(c.element, Friction3D)),
                                   np.zeros(n))
        elif np.any(fs != 0):
            self.q_static = self._static_solution(fs)
            self._offsets = [float((np.atleast_2d(c.G) @ self.q_static)[0])
                             if _has_constant(c.element) else 0.0 for c in self.contacts]

    def _static_solution(self, fs, tol=1e-12, max_iter=100):
        """``q_s`` (m) of ``K q + sum G^T f(G q, 0) = f_s`` by the damped Newton method of
        :mod:`fesub.hbm.newton` (laws of :mod:`fesub.hbm.laws`; the friction elements carry no
        static force here). Converged when ``|R_k| <= max(tol max|f_s|, rtol s_k)``, ``s`` the
        rounding scale ``|K| |q| + |f_s| + sum |G|^T |f|`` of the residual."""
        laws = [(el, G, np.abs(G)) for el, G in ((c.element, np.atleast_2d(c.G))
                                                 for c in self.contacts if _has_constant(c.element))]
        aK = np.abs(self.K)

        def resid(q):
            R, J, sc = self.K @ q - fs, self.K.copy(), aK @ np.abs(q) + np.abs(fs)
            for el, G, aG in laws:
                f, k = el.static(G @ q)
                R += G.T @ f
                J += G.T @ (k[:, None] * G)
                sc += aG.T @ np.abs(f)
            return R, J, sc

        q, st = damped_newton(resid, np.zeros(self.n), atol=tol * max(np.abs(fs).max(), 1e-300),
                              max_iter=max_iter)
        if not st.converged:
            raise ConvergenceError(f"static preload: no equilibrium found ({st.describe()})")
        return q

    def mean(self, Q, dof=None):
        """Mean displacement (m) of a DOF (default: the monitor): ``Q^0`` with the constant
        term, the static solution ``q_s`` without it."""
        dof = self.dof if dof is None else check_count("dof", dof, 0, self.n - 1)
        return float(np.asarray(Q)[dof]) if self.constant else float(self.q_static[dof])

    # ------------------------------------------------------------------ monitor
    def set_dof(self, dof):
        dof = check_count("dof (monitor)", dof, 0, self.n - 1)
        self.dof = dof
        self.idx = (np.arange(2 * self.nh) + self.h0) * self.n + dof

    def amplitude(self, Q, dof=None):
        """RMS amplitude ``(sqrt 2/2) |Q_dof|`` (m) of the harmonics of a DOF (default: the
        monitor; the mean is not part of it)."""
        idx = self.idx if dof is None else \
            (np.arange(2 * self.nh) + self.h0) * self.n + check_count("dof", dof, 0, self.n - 1)
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
        out = np.zeros((self.N, self.N))
        self.add_D(out, w, d, extra_xi)
        return out

    def _blocks(self, w, d, extra_xi):
        """Per harmonic ``k``: the slices of its cosine and sine rows and the blocks ``A``
        (on the diagonal) and ``B`` (``+B`` cosine-sine, ``-B`` sine-cosine) of ``D``'s
        ``d``-th derivative."""
        n = self.n
        Cx = self.C + extra_xi * self.M if extra_xi else self.C
        for k in range(1, self.nh + 1):
            i = (2 * (k - 1) + self.h0) * n
            c, s = slice(i, i + n), slice(i + n, i + 2 * n)
            if d == 0:
                A, B = self.K - (k * w) ** 2 * self.M, k * w * Cx
            elif d == 1:
                A, B = -2 * k * k * w * self.M, k * Cx
            elif d == 2:
                A, B = -2 * k * k * self.M, None
            else:
                raise ParameterError("d must be 0, 1 or 2")
            yield c, s, A, B

    def add_D(self, out, w, d: int = 0, extra_xi: float = 0.0):
        """Add ``D(w, d, extra_xi)`` to the (N, N) array ``out`` in place (its blocks only:
        no N x N temporary) and return ``out``."""
        n = self.n
        if self.constant and d == 0:
            out[:n, :n] += self.K0
        for c, s, A, B in self._blocks(w, d, extra_xi):
            out[c, c] += A
            out[s, s] += A
            if B is not None:
                out[c, s] += B
                out[s, c] -= B
        return out

    def D_dot(self, w, v, d: int = 0, extra_xi: float = 0.0):
        """``D(w, d, extra_xi) @ v`` block by block, without forming ``D`` (N)."""
        v = np.asarray(v, float)
        out = np.zeros(self.N)
        n = self.n
        if self.constant and d == 0:
            out[:n] = self.K0 @ v[:n]
        for c, s, A, B in self._blocks(w, d, extra_xi):
            out[c] = A @ v[c]
            out[s] = A @ v[s]
            if B is not None:
                out[c] += B @ v[s]
                out[s] -= B @ v[c]
        return out

    def D_xi(self, w):
        """Derivative of ``D`` w.r.t. the extra damping ``xi`` (1/s)."""
        n = self.n
        out = np.zeros((self.N, self.N))
        for k in range(1, self.nh + 1):
            i = (2 * (k - 1) + self.h0) * n
            c, s = slice(i, i + n), slice(i + n, i + 2 * n)
            out[c, s] = k * w * self.M
            out[s, c] = -k * w * self.M
        return out

    def D_xi_dot(self, w, v):
        """``D_xi(w) @ v`` block by block, without forming ``D_xi`` (N)."""
        v = np.asarray(v, float)
        n = self.n
        out = np.zeros(self.N)
        for k in range(1, self.nh + 1):
            i = (2 * (k - 1) + self.h0) * n
            c, s = slice(i, i + n), slice(i + n, i + 2 * n)
            out[c] = k * w * (self.M @ v[s])
            out[s] = -k * w * (self.M @ v[c])
        return out

    # ------------------------------------------------------------------ contacts
    def local(self, Q):
        """Local coefficient vectors ``p_e = P_e Q`` of every contact."""
        return [P @ Q for P in self.P]

    def evaluate_contact(self, i, p, *, lam=None, method="event", nt=None, w=None):
        """Contact ``i``'s law at its local coefficients ``p = P_i Q`` (m), in this system's
        basis (constant term, static offset of the decoupled scheme, frequency ``w`` in rad/s
        for velocity-dependent laws): a :class:`fesub.hbm.contact.ContactResult`."""
        el = self.contacts[i].element
        if getattr(el, "aft_only", False):
            return el.evaluate(p, self.nh, lam=lam, nt=nt)
        if not _has_constant(el):
            return el.evaluate(p, self.nh, lam=lam, method=method, nt=nt)
        return el.evaluate(p, self.nh, lam=lam, constant=self.constant, offset=self._offsets[i],
                           w=w, nt=nt)

    def fnl(self, Q, *, lam=None, method="event", nt=None, w=None, dw=False, K_out=None):
        """Contact forces ``F_nl`` (N), ``K_f = dF_nl/dQ`` and optionally ``d(K_f^T lam)/dQ``.

        Assembly ``P_e^T (.) P_e`` is done on the few structural DOFs each contact touches
        (``P_e = G_e (x) I_m`` in the harmonic-major ordering), never with dense ``P_e``.
        ``w`` (rad/s) is needed by velocity-dependent laws (:mod:`fesub.hbm.laws`; ``method``
        applies to the friction elements, the other laws are evaluated by AFT with their own
        ``nt`` unless ``nt`` is given). With ``dw=True`` a fourth value ``dF_nl/dw``
        (N s/rad) is returned. ``K_out``: a zero-filled (N, N) array (a view into a larger
        matrix may do) into which ``K_f`` is assembled and returned, for callers that place it
        in a bordered Jacobian without a copy.
        """
        F = np.zeros(self.N)
        K = np.zeros((self.N, self.N)) if K_out is None else K_out
        HL = np.zeros((self.N, self.N)) if lam is not None else None
        Fw = np.zeros(self.N)
        m = self.m
        Qm = np.asarray(Q).reshape(m, self.n)
        Lm = None if lam is None else np.asarray(lam).reshape(m, self.n)
        Fm = F.reshape(m, self.n)
        Fwm = Fw.reshape(m, self.n)
        done = self._batched(Q, F, K, lam, nt)
        for i, (Gs, cols, rows) in enumerate(self._gather):
            if i in done:
                continue
            p = (Gs @ Qm[:, cols].T).ravel()
            ll = None if Lm is None else (Gs @ Lm[:, cols].T).ravel()
            r = self.evaluate_contact(i, p, lam=ll, method=method, nt=nt, w=w)
            nc = Gs.shape[0]
            if getattr(r, "F_w", None) is not None:
                Fwm[:, cols] += (Gs.T @ r.F_w.reshape(nc, m)).T
            Fm[:, cols] += (Gs.T @ r.F.reshape(nc, m)).T
            ix = np.ix_(rows, rows)
            K[ix] += self._expand(r.K, Gs, m)
            if HL is not None:
                HL[ix] += self._expand(r.hess_lam, Gs, m)
        return (F, K, HL, Fw) if dw else (F, K, HL)

    def _batched(self, Q, F, K, lam, nt):
        """Add the forces (N) and stiffness (N/m) of the
        :class:`~fesub.hbm.friction3d.Friction3D` contacts to ``F`` and ``K``: one compiled
        call per group of equal AFT settings, gathered and scattered by one sparse ``P_g`` per
        group (``p = P_g Q``, ``F += P_g^T F_l``, ``K += P_g^T blockdiag(K_l) P_g``). Returns
        the indices of the contacts done (none with multipliers: they have no Hessian, and
        the per-contact route names the error)."""
        if lam is not None or not self._groups():
            return set()
        done = set()
        for (nt_el, tol, per), (idx, Pg) in self._groups3d.items():
            ne, m3 = len(idx), Pg.shape[0] // len(idx)
            Fl, Kl, _, _ = evaluate_many([self.contacts[i].element for i in idx],
                                         (Pg @ Q).reshape(ne, m3), self.nh,
                                         nt=nt if nt is not None else nt_el, tol=tol,
                                         max_periods=per)
            F += Pg.T @ Fl.ravel()
            Kb = sparse.bsr_matrix((Kl, np.arange(ne), np.arange(ne + 1)),
                                   shape=(ne * m3, ne * m3))
            Kg = (Pg.T @ (Kb @ Pg)).tocoo()
            Kg.sum_duplicates()
            K[Kg.row, Kg.col] += Kg.data
            done.update(idx)
        return done

    def _groups(self):
        """The :class:`~fesub.hbm.friction3d.Friction3D` contacts grouped by their AFT settings
        ``(nt, tol, max_periods)`` as they are now (regrouped when an element's were changed
        after the system was built), each group with its ``P_g``."""
        keys = [(c.element.nt, c.element.tol, c.element.max_periods)
                if isinstance(c.element, Friction3D) else None for c in self.contacts]
        if keys != self._keys3d:
            groups = {}
            for i, key in enumerate(keys):
                if key is not None:
                    groups.setdefault(key, []).append(i)
            self._keys3d = keys
            self._groups3d = {k: (idx, self._group_gather(idx)) for k, idx in groups.items()}
        return self._groups3d

    def _group_gather(self, idx):
        """Sparse ``P_g`` (len(idx) 3 m, N): the rows ``P_e`` of the contacts ``idx`` stacked."""
        m, n = self.m, self.n
        r, c, v = [], [], []
        for j, i in enumerate(idx):
            Gs, cols, _ = self._gather[i]
            nc = Gs.shape[0]
            comp, h, a = np.meshgrid(np.arange(nc), np.arange(m), np.arange(cols.size),
                                     indexing="ij")
            r.append(j * nc * m + comp * m + h)
            c.append(h * n + cols[a])
            v.append(Gs[comp, a])
        rows = np.concatenate([x.ravel() for x in r])
        return sparse.csr_matrix((np.concatenate([x.ravel() for x in v]),
                                  (rows, np.concatenate([x.ravel() for x in c]))),
                                 shape=(len(idx) * 3 * m, self.N))

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
        for i, P in enumerate(self.P):
            r = self.evaluate_contact(i, P @ Q)
            out.append((r.tau, r.from_state, r.to_state, r.state0))
        return out

    def stuck_margin(self, Q, ngrid=2048):
        """Per contact: > 0 when the element cannot stay stuck over the cycle (slip or
        separation must occur), < 0 when it can (m-scaled force margin, N)."""
        Hb = _grid_basis(self.nh, check_count("ngrid", ngrid, 8))
        out = []
        for c, P in zip(self.contacts, self.P):
            el = c.element
            if _has_constant(el):   # no stick/slip state: margin undefined
                out.append(math.nan)
                continue
            p = P @ Q
            if el.ncomp == 3:
                Hc = np.column_stack([np.ones(len(Hb)), Hb]) if self.constant else Hb
                out.append(_margin_3d(el, Hc, p, self.m))
                continue
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
        """``R = D(w) Q + F_nl(Q) - alpha F_ex - F_s`` (N), ``F_s`` the static preload (mean
        block, constant term only)."""
        F, _, _ = self.fnl(Q, w=w)
        return self.D(w) @ Q + F - alpha * self.fex - self.fs

    def jacobian(self, Q, w, alpha):
        """``(R, R_Q, R_w, R_alpha)``."""
        F, K, _, Fw = self.fnl(Q, w=w, dw=True)
        Dw = self.D(w)
        R = Dw @ Q + F - alpha * self.fex - self.fs
        return R, Dw + K, self.D(w, 1) @ Q + Fw, -self.fex

    def _linear_stiffness(self, el):
        """Per component the stiffness (N/m) of a law in the linear guesses."""
        if _has_constant(el):
            return [el.linear_stiffness]
        return list(el.stiffnesses)

    def linear_response(self, w, alpha=1.0, stuck=True):
        """Linear response with all contacts stuck (contact stiffness added) or free (absent);
        the laws of :mod:`fesub.hbm.laws` add their ``linear_stiffness`` (N/m) when stuck."""
        Dw = self.D(w)
        if stuck:
            for c, P in zip(self.contacts, self.P):
                kl = np.repeat(self._linear_stiffness(c.element), self.m)
                Dw = Dw + P.T @ (kl[:, None] * P)
        return np.linalg.solve(Dw, alpha * self.fex + self.fs)

    def spring_matrix(self, stuck=True, slip=False):
        """Stiffness (N/m, n x n) the contacts add to the linear structure: stuck (``kt``,
        ``kn`` springs, ``linear_stiffness`` of the laws of :mod:`fesub.hbm.laws`), sliding
        (``kn`` only) or free (none)."""
        Ks = np.zeros((self.n, self.n))
        for c in self.contacts:
            G = np.atleast_2d(c.G)
            if _has_constant(c.element):
                if stuck:
                    Ks += c.element.linear_stiffness * np.outer(G[0], G[0])
                continue
            nc = c.element.normal_component
            if stuck:
                for k, g in zip(c.element.stiffnesses, G):
                    Ks += k * np.outer(g, g)
            elif slip and nc is not None:
                Ks += c.element.kn * np.outer(G[nc], G[nc])
        return Ks

    def linear_matrices(self, stuck=True, slip=False):
        """(M, C, K) with the contacts stuck (kt, kn springs), sliding (kn only), or free."""
        return self.M, self.C, self.K + self.spring_matrix(stuck, slip)

    def linear_harmonic(self, W, f, stuck=True, slip=False):
        """Complex amplitudes (m) of the linear response ``(K_s - W^2 M + i W C) x = f`` to the
        complex load ``f`` (N) at circular frequency ``W`` (rad/s), contacts as in
        :meth:`linear_matrices` (harmonic ``k``: ``x = Q^ck - i Q^sk``)."""
        M, C, K = self.linear_matrices(stuck, slip)
        return np.linalg.solve(K - W * W * M + 1j * W * C, f)

    def energy_dissipated(self, Q, w=None):
        """Friction dissipation per cycle ``pi sum_k k (F^ck . Q^sk - F^sk . Q^ck)`` (J);
        ``w`` (rad/s) for velocity-dependent laws."""
        F, _, _ = self.fnl(Q, w=w)
        n = self.n
        E = 0.0
        for k in range(1, self.nh + 1):
            i = (2 * (k - 1) + self.h0) * n
            E += k * (F[i:i + n] @ Q[i + n:i + 2 * n] - F[i + n:i + 2 * n] @ Q[i:i + n])
        return math.pi * E
