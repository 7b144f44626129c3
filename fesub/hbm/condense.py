"""Harmonic balance condensed exactly onto the DOFs where something nonlinear or external acts.

The linear part of :class:`~fesub.hbm.system.HBSystem` is block-diagonal per harmonic: in the
complex form of harmonic ``k`` (``z = Q^ck - i Q^sk``) it is ``E(W) = K - W^2 M + i W C`` at
``W = k w``. The retained DOFs ``r`` are those of the contacts, of the load, of the static
preload and the amplitude monitor; every other DOF ``i`` carries no force, so eliminating it
is exact at every frequency (dynamic condensation, Schur complement)::

    S(W) = E_rr - E_ri E_ii^-1 E_ir,     Q_i = -E_ii^-1 E_ir Q_r

and the condensed residual ``S Q_r + F_nl(Q_r) - alpha F_ex,r`` has the same solutions, the
same Jacobian determinant up to the constant ``det E_ii`` and, for the backbone's optimality
system, the same multipliers on ``r`` (``lam_i = -E_ii^-T E_ri^T lam_r``; the phase condition
``lam^T D'(w) Q`` equals ``lam_r^T S'(w) Q_r``). Its frequency derivatives are exact:
with ``L = [I, -E_ri E_ii^-1]``, ``R = [I; -E_ii^-1 E_ir]`` (``L E = [S, 0]``, ``E R = [S; 0]``)::

    S'  = L E' R
    S'' = L E'' R - 2 (L E')_i E_ii^-1 (E' R)_i

(``E' = -2 W M + i C``, ``E'' = -2 M``), one complex LU of ``E_ii`` per harmonic and frequency
(kept for the last few frequencies: the corrector asks for ``D``, ``D'`` and ``D''`` at the
same ``w``). Any damping matrix works (no modal truncation, no proportional damping needed).

:class:`CondensedSystem` is an :class:`HBSystem` on the retained DOFs whose ``D(w, d)`` is
``S`` and its derivatives; every harmonic-balance analysis runs on it unchanged, with
unknowns of size ``(2 Nh) x (retained DOFs)`` instead of ``(2 Nh) x n``.
:meth:`CondensedSystem.expand` and :meth:`CondensedSystem.expand_multipliers` give back the
full harmonics and multipliers (the eliminated rows of the full ``D(w)``, or ``D(w)^T``,
solved per harmonic on the blocks of the full matrices, independently of the condensed
operator). :func:`fesub.hbm.backbone.backbone` uses it by default when the
retained DOFs are few (``condensed=None``).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, lu_factor, lu_solve

from ..errors import ModelError, ParameterError
from .system import ContactElement, HBSystem

__all__ = ["CondensedSystem", "retained_dofs", "worth_condensing"]

#: frequencies whose condensed operators are kept (the corrector revisits the last ones)
_CACHE = 8
#: largest off-diagonal of the modal damping ``Phi^T C Phi`` (relative to its diagonal) taken
#: as classical damping (round-off of ``C = a M + b K``: ~1e-15; a real coupling is far larger)
_CLASSICAL = 1e-11


def retained_dofs(sys: HBSystem) -> np.ndarray:
    """Sorted DOF indices a condensation of ``sys`` must keep: those the contacts touch, the
    loaded ones (any harmonic), those of the static preload and the amplitude monitor."""
    n = sys.n
    keep = {int(sys.dof)}
    for c in sys.contacts:
        keep.update(np.flatnonzero(np.any(np.atleast_2d(c.G) != 0, axis=0)).tolist())
    keep.update(np.flatnonzero(np.any(sys.fex.reshape(sys.m, n) != 0, axis=0)).tolist())
    keep.update(np.flatnonzero(sys.fstatic).tolist())
    return np.array(sorted(keep), dtype=int)


def worth_condensing(sys: HBSystem) -> bool:
    """True when the retained DOFs are at most a quarter of the DOFs (the condensed unknowns
    are then at least 4x fewer and each dense solve at least ~60x cheaper)."""
    return not isinstance(sys, CondensedSystem) and 4 * retained_dofs(sys).size <= sys.n


class CondensedSystem(HBSystem):
    """The harmonic balance of ``full`` condensed exactly onto its retained DOFs.

    Parameters
    ----------
    full : HBSystem
        The system on all its DOFs (matrices in kg, N s/m, N/m).
    method : {None, 'modal', 'factor'}
        How the condensed operator is formed: ``'modal'`` (receptance from the modes; needs
        symmetric matrices and classical damping, ``Phi^T C Phi`` diagonal), ``'factor'``
        (complex LU of ``E_ii`` per harmonic and frequency: any damping, ~1e-12 instead of
        ~6e-10 of ``S`` near a resonance, slower). None (default): modal when it applies.

    Attributes
    ----------
    full : HBSystem
    keep : (nr,) int array
        Retained DOFs of ``full`` (:func:`retained_dofs`), in increasing order; the condensed
        system's DOF ``j`` is ``full``'s DOF ``keep[j]``.
    inner : (n - nr,) int array
        The eliminated DOFs.
    modal : bool
        True when the operator is formed from the modes.

    ``K`` is the static condensation ``S(0)`` (N/m: the mean block and the static preload are
    exact); ``M`` and ``C`` are the retained blocks of the full matrices (kg, N s/m), used only
    as rounding scales of the residual: the condensed dynamics is ``D(w)``, frequency
    dependent, so :meth:`linear_matrices` is refused (:meth:`linear_harmonic` solves the linear
    responses) and so is the extra damping of :meth:`D_xi`.

    Raises
    ------
    ModelError
        When the eliminated DOFs have a singular stiffness block (a part of the structure held
        only through the retained DOFs) or nothing would be eliminated.
    """

    def __init__(self, full: HBSystem, method=None):
        if method not in (None, "modal", "factor"):
            raise ParameterError(f"method must be None, 'modal' or 'factor', got {method!r}")
        if isinstance(full, CondensedSystem):
            raise ModelError("the system is already condensed")
        keep = retained_dofs(full)
        inner = np.setdiff1d(np.arange(full.n), keep)
        if inner.size == 0:
            raise ModelError("condensation: every DOF is retained (contacts, load, preload and "
                             "monitor cover them all); use the full system")
        self.full, self.keep, self.inner = full, keep, inner
        self._cache = {}
        self._setup_operator(method)
        r, i = np.ix_(keep, keep), np.ix_(keep, inner)
        # the mean block's stiffness (a free structure's mean support included), condensed
        # statically: the condensed system's K serves its mean block only
        K0 = full.K0 if full.constant else full.K
        try:
            Kii = lu_factor(K0[np.ix_(inner, inner)], check_finite=False)
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise ModelError(f"condensation: stiffness of the eliminated DOFs unusable ({exc})")
        X = lu_solve(Kii, K0[np.ix_(inner, keep)])
        if not np.all(np.isfinite(X)):
            raise ModelError("condensation: the stiffness of the eliminated DOFs is singular "
                             "(a part held only through the retained DOFs); use the full system")
        Ks = K0[r] - K0[i] @ X
        Ks = 0.5 * (Ks + Ks.T) if np.allclose(K0, K0.T) else Ks
        m, n = full.m, full.n
        contacts = [ContactElement(c.element, np.atleast_2d(c.G)[:, keep], c.name)
                    for c in full.contacts]
        super().__init__(full.M[r], full.C[r], Ks, full.nh, contacts,
                         full.fex.reshape(m, n)[full.h0:, keep].ravel(),
                         int(np.searchsorted(keep, full.dof)), constant=full.constant,
                         fstatic=full.fstatic[keep])
        self._scatter = self._block_positions()
        self._kpow = [(np.arange(1, self.nh + 1) ** d)[:, None, None] for d in range(3)]

    def _block_positions(self):
        """Flat positions in the real ``(N, N)`` layout of :meth:`D` of the blocks ``cc``,
        ``ss`` (real part), ``cs`` (imaginary part) and ``sc`` (its opposite) of every
        harmonic, in the order of ``Z.ravel()`` for ``Z`` (nh, nr, nr): :meth:`D` fills them
        with one indexed assignment."""
        n, N = self.n, self.N
        base = ((2 * np.arange(self.nh) + self.h0) * n)[:, None, None]
        r, c = np.arange(n)[None, :, None], np.arange(n)[None, None, :]
        return np.concatenate([((base + r) * N + base + c).ravel(),
                               ((base + n + r) * N + base + n + c).ravel(),
                               ((base + r) * N + base + n + c).ravel(),
                               ((base + n + r) * N + base + c).ravel()])

    # ------------------------------------------------------------------ condensed operator
    def _setup_operator(self, method):
        """Modal form when the damping is classical (``Phi^T C Phi`` diagonal: the receptance
        of the retained DOFs is a sum over the modes), else the factorisation of ``E_ii``."""
        f, keep, inner = self.full, self.keep, self.inner
        self._blocks = {name: {"rr": A[np.ix_(keep, keep)], "ri": A[np.ix_(keep, inner)],
                               "ir": A[np.ix_(inner, keep)], "ii": A[np.ix_(inner, inner)]}
                        for name, A in (("K", f.K), ("M", f.M), ("C", f.C))}
        self.modal = False
        if method == "factor":
            return
        if all(np.allclose(A, A.T, rtol=0, atol=1e-14 * np.abs(A).max())
               for A in (f.K, f.M, f.C)):
            lam, Phi = eigh(0.5 * (f.K + f.K.T), 0.5 * (f.M + f.M.T))
            Cm = Phi.T @ f.C @ Phi
            off = Cm - np.diag(np.diag(Cm))
            if np.abs(off).max() <= _CLASSICAL * max(np.abs(np.diag(Cm)).max(), 1e-300):
                self.modal = True
                self._w2, self._cj, self._Phi_r = lam, np.diag(Cm).copy(), Phi[keep]
        if method == "modal" and not self.modal:
            raise ModelError("condensation: the modal form needs symmetric M, C, K and "
                             "classical damping (Phi^T C Phi diagonal); use method='factor'")

    def schur(self, W, extra_xi=0.0):
        """``(S, S', S'')`` at the circular frequency ``W`` (rad/s): the complex dynamic
        stiffness condensed on the retained DOFs (N/m) and its first and second derivatives
        w.r.t. ``W`` (N s/m, N s^2/m); ``extra_xi`` (1/s) adds ``xi M`` to the damping."""
        S = self._harmonics(W, extra_xi, 1)
        return S[0][0], S[1][0], S[2][0]

    def _harmonics(self, w, xi, nh):
        """``(S, S', S'')``, each ``(nh, nr, nr)`` complex, at ``W = k w``, ``k = 1..nh``
        (kept for the last few ``(w, xi)``)."""
        key = (float(w), float(xi), nh)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        Ws = w * np.arange(1, nh + 1)
        if self.modal:
            out = self._schur_modal(Ws, xi)
        else:
            out = tuple(np.array(x) for x in zip(*(self._schur_factored(W, xi) for W in Ws)))
        if len(self._cache) >= _CACHE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = out
        return out

    def _schur_modal(self, Ws, xi):
        """At the frequencies ``Ws`` (rad/s): ``S = H^-1``, ``H = Phi_r diag(1/g_j) Phi_r^T``
        the receptance of the retained DOFs, ``g_j = w_j^2 - W^2 + i W (c_j + xi)``;
        ``S' = -S H' S``, ``S'' = -S H'' S + 2 S H' S H' S``.

        Accuracy: the eigen-solver's absolute error on the low modes (~eps ||K||) reaches
        ~6e-10 of ``S`` near the stuck resonance of the beam (the complement cancels four
        orders of magnitude of the retained stiffness there); a refinement of ``H`` against
        ``E`` removes it there but is ruined by rounding near a resonance of ``E`` itself (a
        pole of ``H``), where the modal sum is at its best, so none is made."""
        c = self._cj + xi
        W = np.asarray(Ws, float)[:, None]
        g = self._w2 - W * W + 1j * W * c
        g1 = -2.0 * W + 1j * c
        dd = np.empty((3,) + g.shape, complex)   # 1/g and its first two W-derivatives
        d = dd[0] = 1.0 / g
        dd[1] = -g1 * d * d
        dd[2] = 2.0 * d * d * (1.0 + g1 * g1 * d)
        P = self._Phi_r
        H = (dd[:, :, None, :] * P) @ P.T   # (3, nW, nr, nr)
        S = np.linalg.inv(H[0])
        SH1 = S @ H[1]
        A = SH1 @ S
        return S, -A, 2.0 * SH1 @ A - S @ H[2] @ S

    def _schur_factored(self, W, xi):
        """Schur complement of ``E(W)`` by a complex LU of ``E_ii`` (any damping)."""
        K, M, C = self._blocks["K"], self._blocks["M"], self._blocks["C"]

        def E(p):
            return K[p] - W * W * M[p] + 1j * W * (C[p] + xi * M[p])

        def E1(p):
            return -2.0 * W * M[p] + 1j * (C[p] + xi * M[p])

        lu = lu_factor(E("ii"), check_finite=False)
        Y = lu_solve(lu, E("ir"), check_finite=False)                 # E_ii^-1 E_ir
        Yt = lu_solve(lu, E("ri").T, trans=1, check_finite=False).T  # E_ri E_ii^-1

        def sandwich(A):  # L A R, A given by its blocks
            return A("rr") - A("ri") @ Y - Yt @ A("ir") + Yt @ (A("ii") @ Y)

        S = E("rr") - E("ri") @ Y
        S1 = sandwich(E1)
        E1R = E1("ir") - E1("ii") @ Y
        LE1 = E1("ri") - Yt @ E1("ii")
        S2 = (sandwich(lambda p: -2.0 * M[p] + 0j)
              - 2.0 * LE1 @ lu_solve(lu, E1R, check_finite=False))
        return S, S1, S2

    def D(self, w, d: int = 0, extra_xi: float = 0.0):
        """``d``-th derivative (d = 0, 1, 2) w.r.t. ``w`` (rad/s) of the condensed dynamic
        stiffness (N/m, N s/m, N s^2/m), in the real harmonic-major layout of
        :meth:`HBSystem.D`."""
        if d not in (0, 1, 2):
            raise ParameterError("d must be 0, 1 or 2")
        n = self.n
        out = np.zeros((self.N, self.N))
        if self.constant and d == 0:
            out[:n, :n] = self.K
        Z = self._harmonics(w, extra_xi, self.nh)[d]
        if d:
            Z = Z * self._kpow[d]      # d/dw of S(k w) is k^d S^(d)(k w)
        zr, zi = Z.real.ravel(), Z.imag.ravel()
        # harmonic k's block [[Re, Im], [-Im, Re]] on the diagonal (see _block_positions)
        out.ravel()[self._scatter] = np.concatenate([zr, zr, zi, -zi])
        return out

    def D_xi(self, w):
        raise ModelError("the condensed system has no derivative w.r.t. extra damping; use the "
                         "full system (CondensedSystem.full)")

    def linear_matrices(self, stuck=True, slip=False):
        raise ModelError("the condensed dynamics is frequency dependent (no M, C, K of the "
                         "condensed DOFs); use linear_harmonic or the full system")

    def linear_harmonic(self, W, f, stuck=True, slip=False):
        """Complex amplitudes (m) on the retained DOFs of the linear response to the complex
        load ``f`` (N) at circular frequency ``W`` (rad/s), contacts stuck, sliding or free as
        in :meth:`HBSystem.linear_harmonic`."""
        Ks = self.spring_matrix(stuck, slip)
        if not self.modal:
            return np.linalg.solve(self._schur_factored(W, 0.0)[0] + Ks, f)
        # (H^-1 + Ks) x = f  <=>  (I + H Ks) x = H f, H the receptance (no inverse needed)
        P = self._Phi_r
        H = (P / (self._w2 - W * W + 1j * W * self._cj)) @ P.T
        return np.linalg.solve(np.eye(self.n) + H @ Ks, H @ f)

    # ------------------------------------------------------------------ back to the full DOFs
    def _inner_solves(self, V, w, adjoint):
        """``-E_ii^-1 E_ir V_r`` (``adjoint``: ``-E_ii^-H E_ri^H V_r``) per harmonic, from the
        blocks of the full matrices (``E = K - W^2 M + i W C``, ``W = k w``; the mean block
        with ``K`` alone): the eliminated rows of the full ``D(w)`` or ``D(w)^T``, solved
        harmonic by harmonic, independently of the condensed operator. ``V`` (m, nr) real
        harmonic-major rows; returns (m, n - nr)."""
        K, M, C = self._blocks["K"], self._blocks["M"], self._blocks["C"]
        out = np.empty((V.shape[0], self.inner.size))

        def solve(p, Wk):
            E = {q: K[q] - Wk * Wk * M[q] + 1j * Wk * C[q] for q in ("ii", "ir", "ri")}
            if adjoint:
                return np.linalg.solve(E["ii"].conj().T, -E["ri"].conj().T @ p)
            return np.linalg.solve(E["ii"], -E["ir"] @ p)

        if self.h0:
            out[0] = solve(V[0], 0.0).real
        for k in range(1, self.nh + 1):
            c = self.h0 + 2 * (k - 1)
            z = solve(V[c] - 1j * V[c + 1], k * w)   # complex form z = Q^ck - i Q^sk
            out[c], out[c + 1] = z.real, -z.imag
        return out

    def _expand_rows(self, Vr, w, adjoint):
        f = self.full
        V = np.zeros((f.m, f.n))
        Vr = np.asarray(Vr, float).reshape(f.m, self.n)
        V[:, self.keep] = Vr
        V[:, self.inner] = self._inner_solves(Vr, w, adjoint)
        return V.ravel()

    def expand(self, Qr, w):
        """Full harmonic coefficients (m) from the condensed ones ``Qr`` (m) at ``w`` (rad/s):
        ``Q_i = -D_ii^-1 D_ir Q_r`` (the eliminated DOFs carry no force), solved per harmonic
        with the blocks of the full matrices."""
        return self._expand_rows(Qr, w, False)

    def expand_multipliers(self, lam_r, w):
        """Full multipliers (m/N) of the optimality system from the condensed ones: the
        eliminated rows of ``R_Q^T lam = -grad Am`` give ``lam_i = -D_ii^-T D_ri^T lam_r``
        (per harmonic ``-E_ii^-H E_ri^H``: ``D^T`` is the real form of ``E^H``)."""
        return self._expand_rows(lam_r, w, True)
