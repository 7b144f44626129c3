"""Craig-Bampton reduction with an explicit interior/boundary partition.

``u = T q`` with ``q = [eta; u_b]``: ``k`` fixed-interface normal modes (amplitudes eta) and the
boundary DOFs kept physical (what a contact needs).

    T = [[Phi_i, Psi], [0, I]],  Psi = -K_ii^-1 K_ib,  (K_ii - w^2 M_ii) Phi_i = 0, Phi_i' M_ii Phi_i = I

(interior rows first). The free-interface variant (Craig-Chang / MacNeal residual flexibility)
keeps the same coordinate layout: ``u = (Phi - G_b G_bb^-1 Phi_b) eta + G_b G_bb^-1 u_b`` with free
modes Phi and residual flexibility G = K^-1 - Phi W^-2 Phi'.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ModelError, ParameterError, check_positive
from ..fe.assembly import check_pair, factor_stiffness, modes
from .fixed_interface import FixedInterfaceBasis

__all__ = ["CraigBampton"]


class CraigBampton:
    """Reduced model of a substructure.

    Parameters
    ----------
    K, M : sparse or dense (n, n)
        Stiffness (N/m) and mass (kg) of the substructure (clamped DOFs already removed);
        a :class:`~fesub.substructure.Substructure` may be given instead as ``K`` (then ``M`` is None).
    boundary : int array
        DOFs kept physical (model numbering).
    n_modes : int
        Number of normal modes kept (0 gives a Guyan reduction).
    free_interface : bool
        Use free-interface modes with residual flexibility instead of fixed-interface modes.
        Requires a non-singular K (a substructure that is held by clamps).
    method : {"factored", "reference"}
        Fixed-interface algorithm. ``"factored"`` (default): K_ii factored once for the constraint
        modes and the shift-invert eigensolver, T kept implicit (blocks Psi, Phi), reduced
        matrices by sparse block products (:class:`~fesub.substructure.FixedInterfaceBasis`).
        ``"reference"``: the textbook construction (dense T, two factorisations, ``T' K T``),
        kept as the check of the first. The free-interface variant has one algorithm.
    factorisation : {"auto", "cholmod", "pardiso", "superlu"}
        Sparse factorisation of K_ii for ``method="factored"`` (:func:`fesub.fe.factor.factorize`);
        the one used is ``info["factorisation"]``.
    eigensolver : {"auto", "dense", "lanczos"}
        Fixed-interface modes for ``method="factored"``: dense LAPACK for small interiors or many
        modes, shift-invert Lanczos on the shared factor otherwise (``"auto"``).
    jobs : int, optional
        Processes of the factored method (default: 2 where two cores are free to this process):
        with 2, a large model's constraint modes are computed in a forked process beside the
        modes (:class:`~fesub.substructure.FixedInterfaceBasis`; the same numbers).

    Attributes
    ----------
    Kr, Mr : (k + nb, k + nb) dense reduced matrices; Cr via :meth:`rayleigh`.
    T : (n, k + nb) transformation u = T q, as a dense array (built on each access for the
        factored method: use :meth:`recover` and :meth:`project` on large models).
    mode_freqs_hz : frequencies of the kept normal modes (Hz).
    info : dict
        ``method``, ``factorisation``, ``eigensolver``, timings (s) and peak memory (bytes) of the
        reduction (factored method; the other methods report ``method`` only).
    """

    def __init__(self, K, M=None, boundary=(), n_modes: int = 20, *, free_interface: bool = False,
                 method: str = "factored", factorisation: str = "auto", eigensolver: str = "auto",
                 jobs: int | None = None):
        self.substructure = None
        if M is None and hasattr(K, "K"):
            self.substructure = K
            K, M = K.K, K.M
        K = sp.csr_matrix(K)
        M = sp.csr_matrix(M)
        n = K.shape[0]
        check_pair(K, M)
        b = np.asarray(boundary).ravel()
        if b.size and (b.dtype.kind not in "iu" and not (
                b.dtype.kind == "f" and np.all(np.abs(b) < 2.0**53) and np.all(b == np.round(b)))):
            raise ModelError(f"boundary DOFs must be integer indices, got {boundary!r}")
        b = b.astype(np.int64)
        if b.size == 0:
            raise ModelError("Craig-Bampton needs at least one boundary DOF")
        if b.min() < 0 or b.max() >= n or np.unique(b).size != b.size:
            raise ModelError(f"boundary DOFs must be distinct indices in 0..{n - 1}")
        i = np.setdiff1d(np.arange(n), b)
        if not isinstance(n_modes, (int, np.integer)) or isinstance(n_modes, bool) or \
                n_modes < 0 or n_modes > i.size:
            raise ModelError(f"n_modes must be an integer in 0..{i.size} (number of interior DOFs), got {n_modes!r}")
        k = int(n_modes)
        self.boundary, self.interior, self.n_modes = b, i, k
        self.free_interface = free_interface
        self._K, self._M = K, M
        if method not in ("factored", "reference"):
            raise ParameterError(f"method must be 'factored' or 'reference', got {method!r}")
        self._basis = None
        if free_interface or method == "reference":
            self.info = {"method": "reference"}
        else:
            self._basis = FixedInterfaceBasis(K, M, b, i, k, factorisation=factorisation,
                                              eigensolver=eigensolver, jobs=jobs)
            self.mode_freqs_hz = self._basis.freq_hz
            self.Kr, self.Mr, self.info = self._basis.Kr, self._basis.Mr, self._basis.info
            return
        if free_interface:
            T = self._free_interface_T(K, M, b, k)
        else:
            T = self._fixed_interface_T(K, M, b, i, k)
        self._T = T
        KT = K @ T
        MT = M @ T
        self.Kr = 0.5 * ((T.T @ KT) + (T.T @ KT).T)
        self.Mr = 0.5 * ((T.T @ MT) + (T.T @ MT).T)

    @classmethod
    def from_reduced(cls, substructure, boundary, n_modes: int, Kr, Mr, T, mode_freqs_hz, *,
                     info: dict | None = None) -> "CraigBampton":
        """A fixed-interface reduction computed before (no solve): its substructure, boundary
        DOFs (model numbering), number of modes, reduced matrices ``Kr`` (N/m), ``Mr`` (kg), the
        transformation ``T`` (n, n_modes + nb) and the modes' frequencies (Hz). The cache of
        :mod:`fesub.substructure.reduction` restores reductions this way."""
        self = cls.__new__(cls)
        n = substructure.n_dofs
        b = np.asarray(boundary, np.int64).ravel()
        T = np.asarray(T, float)
        k = int(n_modes)
        if T.shape != (n, k + b.size) or np.shape(Kr) != (k + b.size,) * 2 or np.shape(Mr) != np.shape(Kr) or \
                b.size == 0 or b.min() < 0 or b.max() >= n:
            raise ModelError(f"a stored reduction of {substructure.name!r} does not fit its substructure "
                             f"({n} DOFs): T {T.shape}, Kr {np.shape(Kr)}, {b.size} boundary DOFs, {k} modes")
        self.substructure, self.boundary, self.n_modes = substructure, b, k
        self.interior = np.setdiff1d(np.arange(n), b)
        self.free_interface, self._basis, self._T = False, None, T
        self._K, self._M = substructure.K, substructure.M
        self.Kr, self.Mr = np.asarray(Kr, float), np.asarray(Mr, float)
        self.mode_freqs_hz = np.asarray(mode_freqs_hz, float)
        self.info = dict(info or {"method": "stored"})
        return self

    def _fixed_interface_T(self, K, M, b, i, k):
        n = K.shape[0]
        Kii = sp.csc_matrix(K[i][:, i])
        Kib = K[i][:, b].toarray()
        # a boundary that does not hold the interior (one node of a floating body: it can still
        # rotate about it) leaves a mechanism in K_ii: constraint modes are then undefined
        lu = factor_stiffness(Kii, "the interior DOFs with the boundary fixed",
                              "the boundary DOFs do not hold the substructure; add boundary DOFs")
        Psi = -lu.solve(Kib)
        if k > 0:
            f, Phi = modes(Kii, M[i][:, i], k)
        else:
            f, Phi = np.zeros(0), np.zeros((i.size, 0))
        self.mode_freqs_hz = f
        T = np.zeros((n, k + b.size))
        T[np.ix_(i, np.arange(k))] = Phi
        T[np.ix_(i, k + np.arange(b.size))] = Psi
        T[b, k + np.arange(b.size)] = 1.0
        return T

    def _free_interface_T(self, K, M, b, k):
        n = K.shape[0]
        try:
            lu = spla.splu(sp.csc_matrix(K))
        except RuntimeError as exc:
            raise ModelError("free-interface reduction needs a non-singular K (a clamped substructure); "
                             "use the fixed-interface variant for a floating one") from exc
        if k > 0:
            f, Phi = modes(K, M, k)
            if np.any(f <= 0):
                raise ModelError("free-interface reduction: K has rigid-body modes")
        else:
            f, Phi = np.zeros(0), np.zeros((n, 0))
        self.mode_freqs_hz = f
        E = np.zeros((n, b.size))
        E[b, np.arange(b.size)] = 1.0
        G = lu.solve(E) - Phi @ (Phi[b].T / (2 * np.pi * f[:, None]) ** 2)  # residual flexibility, columns b
        Gbb = G[b]
        try:
            A = sla.solve(Gbb, np.eye(b.size), assume_a="sym")
        except sla.LinAlgError as exc:
            raise ModelError("free-interface reduction: residual flexibility at the boundary is singular "
                             "(too many modes kept for the boundary size)") from exc
        GA = G @ A
        T = np.hstack([Phi - GA @ Phi[b], GA])
        T[b] = 0.0
        T[b, k + np.arange(b.size)] = 1.0
        return T

    # ------------------------------------------------------------------
    @property
    def T(self) -> np.ndarray:
        """Transformation u = T q, (n, k + nb) dense (built on access for the factored method)."""
        return self._T if self._basis is None else self._basis.dense_T()

    @property
    def n_dofs(self) -> int:
        return self.n_modes + self.boundary.size

    @property
    def boundary_slice(self) -> slice:
        """Position of the physical boundary DOFs inside q."""
        return slice(self.n_modes, self.n_dofs)

    def coordinate_index(self, model_dofs) -> np.ndarray:
        """Positions in the coordinates q = [eta; u_b] of boundary model DOFs (int64 array);
        :class:`ModelError` for a DOF that is not on the boundary."""
        pos = {int(d): i for i, d in enumerate(self.boundary)}
        try:
            return np.array([self.n_modes + pos[int(d)] for d in np.atleast_1d(model_dofs)], dtype=np.int64)
        except KeyError as exc:
            d = int(exc.args[0])
            sub, what = self.substructure, f"model DOF {d}"
            if sub is not None and 0 <= d < sub.retained.size:
                dm = sub.dofmap
                node, comp = divmod(int(sub.retained[d]), dm.ndpn)
                xyz = ", ".join(f"{v:.6g}" for v in sub.mesh.points[node][:sub.dim])
                what = f"model DOF {d} (node {node} at ({xyz}) m, {dm.components[comp]}) of {sub.name!r}"
            raise ModelError(f"{what} is not a boundary DOF of the Craig-Bampton reduction: keep it physical "
                             f"(add it to the boundary DOFs of CraigBampton) to load, drive or observe it, or to "
                             f"put its node in a contact") from None

    def rayleigh(self, alpha: float, beta: float) -> np.ndarray:
        """Reduced Rayleigh damping T' C T = alpha Mr + beta Kr (alpha in 1/s, beta in s)."""
        check_positive("Rayleigh alpha (1/s)", alpha, strict=False, error=ModelError)
        check_positive("Rayleigh beta (s)", beta, strict=False, error=ModelError)
        return alpha * self.Mr + beta * self.Kr

    def frequencies(self, n: int | None = None) -> np.ndarray:
        """Natural frequencies (Hz) of the reduced model (lowest ``n``)."""
        lam = sla.eigh(self.Kr, self.Mr, eigvals_only=True)
        f = np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi)
        return f if n is None else f[:n]

    def validate(self, n: int = 10) -> dict:
        """Compare the lowest ``n`` frequencies of the reduced and full models.

        Returns a dict with ``full_hz``, ``reduced_hz`` and ``rel_error`` arrays.
        """
        n = min(int(n), self.n_dofs)
        full, _ = modes(self._K, self._M, n)
        red = self.frequencies(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            err = np.where(full > 0, (red - full) / full, red - full)
        return {"full_hz": full, "reduced_hz": red, "rel_error": err}

    def recover(self, q) -> np.ndarray:
        """Full displacement field u = T q (q of shape (k + nb,) or (k + nb, nt))."""
        q = np.asarray(q)
        if q.shape[0] != self.n_dofs:
            raise ModelError(f"reduced vector has {q.shape[0]} rows, expected {self.n_dofs}")
        return self.T @ q if self._basis is None else self._basis.recover(q)

    def project(self, f) -> np.ndarray:
        """Generalised forces ``T' f`` of a load ``f`` (N) of shape (n,) or (n, nt)."""
        f = np.asarray(f)
        if f.shape[0] != self._K.shape[0]:
            raise ModelError(f"load has {f.shape[0]} rows, expected {self._K.shape[0]}")
        return self.T.T @ f if self._basis is None else self._basis.project(f)

    def summary(self) -> str:
        fr = self.mode_freqs_hz
        rng = f"{fr.min():.4g}-{fr.max():.4g} Hz" if fr.size else "none"
        kind = "free-interface" if self.free_interface else "fixed-interface"
        return (f"Craig-Bampton ({kind}): {self.n_modes} modes ({rng}) + {self.boundary.size} boundary DOFs "
                f"= {self.n_dofs} DOFs (from {self._K.shape[0]})")
