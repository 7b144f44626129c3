"""Fixed-interface Craig-Bampton basis with one factorisation and an implicit transformation.

With the interior DOFs ``i`` and the boundary DOFs ``b``, ``u = T q``, ``q = [eta; u_b]``::

    u_i = Phi eta + Psi u_b,   u_b = u_b,
    Psi = -K_ii^-1 K_ib              (constraint modes, n_i x n_b)
    K_ii Phi = M_ii Phi diag(w^2),   Phi' M_ii Phi = I   (fixed-interface modes, n_i x k)

``K_ii`` is factored once (:func:`fesub.fe.factor.factorize`); the factor gives the constraint
modes and is the shift-invert operator of the Lanczos eigensolver (shift 0, which is exact for
``K_ii``: the boundary holds the interior, so ``K_ii`` is positive definite). ``T`` is never
formed: only the blocks ``Psi`` and ``Phi`` are stored, and the reduced matrices are assembled
block by block with sparse products,

    Kr = [[Phi' K_ii Phi, 0], [0, K_bb + K_bi Psi]]
    Mr = [[Phi' M_ii Phi, Phi' X], [X' Phi, M_bb + A + A' + Psi' M_ii Psi]],
    X = M_ii Psi + M_ib,  A = M_bi Psi

(``K_ii Psi + K_ib = 0`` makes the coupling block of Kr vanish and its boundary block the Schur
complement; ``Psi' M_ii Psi`` is symmetric: with Psi stored, only its upper triangle of blocks
is multiplied). The columns of ``Psi`` are treated in blocks so that no other ``n_i x n_b`` array
is ever held.

With a Cholesky factor ``K_ii = P' L L' P`` (CHOLMOD) the modes come from the symmetric standard
problem ``L^-1 P M_ii P' L^-T y = y / w^2`` by block Lanczos (:func:`_block_lanczos`: blocks of
:data:`LANCZOS_BLOCK` vectors: a block of triangular solves costs less a vector than one).
Measured phases on the 1e5-DOF strip of
``benchmarks/test_bench_craig_bampton.py`` (50 modes, 400 boundary DOFs), CPU seconds at load
~6: modes 8.9 (ARPACK, 154 single solves) -> 6.0 (block Lanczos, 196 vectors in blocks of 4,
half of it re-orthogonalisation), constraint modes 2.8-3.5, reduced matrices 1.7, factor 0.6.
At load ~1: the recurrence before one full re-orthogonalisation pass (instead of two full
passes) took the modes from 5.6-5.8 to 4.8-5.1 s; with a second process for the constraint
modes (``jobs=2``) the whole reduction takes 6.4 s (median of 5) against 10.1 s in one.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ParameterError, check_count
from ..fe.assembly import dense_modes, modes
from ..fe.factor import factorize, one_blas_thread
from ..parallel import ForkedCall, spare_cores

__all__ = ["FixedInterfaceBasis", "DENSE_BELOW"]

#: interior sizes below which the fixed-interface modes are found by dense LAPACK (``eigh``).
#: Measured (strip meshes, one BLAS thread, loaded two-core machine): at 1 920 interior DOFs the
#: dense solve took 11-15 s, Lanczos on the shared factor 0.3 s (10 modes) and 1.4 s (50 modes);
#: at 3 920, 100 s against 0.9-2.4 s. Dense grows as n_i^3, Lanczos about as n_i, so they meet
#: near a few hundred DOFs: the same limit as :func:`fesub.fe.modes`
DENSE_BELOW = 400
#: largest interior size that the dense solver is allowed when many modes are asked (k > n_i / 4:
#: Lanczos then needs ncv = 2k + 1 > n_i / 2 vectors, as much memory and more work than LAPACK);
#: two dense n_i x n_i matrices and work space are ~1.5 GB at 8000
DENSE_MAX = 8000
#: largest Psi (bytes) stored by default: 1 GB (n_i n_b = 1.25e8, e.g. 400 boundary DOFs on 3e5
#: interior ones); beyond it the factor is kept instead (smaller: 2.3e7 SuperLU entries against
#: Psi's 4e7 on the 1e5-DOF strip of the benchmark) and Psi applied by solves
PSI_BYTES = 1_000_000_000
#: vectors per block of the block Lanczos eigensolver on a Cholesky factor. Measured (1e5-DOF
#: strip, 50 modes, one BLAS thread, CPU time on the shared two-core machine): two triangular
#: solves cost ~30 ms for one vector, ~14 ms a vector in blocks of 4 and ~9 ms in blocks of 8,
#: while the basis needed grows (133 vectors for 1, 196 for 4, 264 for 8) and with it the
#: re-orthogonalisation (4 n d^2 flops for d vectors): blocks of 4 were the fastest
LANCZOS_BLOCK = 4
#: residual estimate of the accepted Ritz pairs, relative to their Ritz values (ARPACK's default,
#: machine precision, gave the same residuals |K x - lam M x| / |K x| of ~9e-12 on that strip;
#: 1e-10 saved 16 of 196 vectors and let them grow to 3e-10)
LANCZOS_TOL = 1e-13
#: largest block Lanczos basis (bytes; the basis needed was 196 vectors, 160 MB, for 50 modes at
#: 1e5 DOFs): beyond it ARPACK, whose basis is 2k + 1 vectors, takes over
LANCZOS_BYTES = 2_000_000_000
#: a full re-orthogonalisation pass is repeated when it leaves a vector shorter than this
#: fraction of its length before the pass (1/sqrt(2), the usual choice: the pass then removed a
#: component as large as what is left, and the round-off of that removal is no longer small)
REORTH_DROP = 2 ** -0.5
#: interior sizes from which, with ``jobs`` >= 2, the constraint modes are computed in a forked
#: process beside the modes (the fork and the shared result cost ~10 ms; at 1e5 DOFs the two
#: phases take ~5 and ~4 s)
FORK_ABOVE = 20_000
_EIGENSOLVERS = ("auto", "dense", "lanczos")


def _max_rss_bytes() -> int | None:
    """High-water mark of the resident set of this process (bytes), None where unknown."""
    try:
        import resource

        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ImportError, AttributeError, OSError):  # pragma: no cover - not a Unix system
        return None
    return int(r) if sys.platform == "darwin" else int(r) * 1024  # Linux reports KiB


def _block_lanczos(op, n, k, *, block=LANCZOS_BLOCK, tol=LANCZOS_TOL, max_dim=None):
    """Largest ``k`` eigenpairs of a symmetric positive semi-definite operator (n x n).

    Block Lanczos without restart and with full re-orthogonalisation. Each new block
    ``W = op(V_j)`` is first orthogonalised against the last two blocks (the three-term recurrence:
    ``W -= V_j A_j + V_{j-1} B_j'``, products with 2 ``block`` columns), then against every basis
    vector by classical Gram-Schmidt (BLAS-3 products), which removes the round-off that the
    recurrence lets back in. That pass is repeated only for a block it shrank by more than
    :data:`REORTH_DROP` (the criterion of Daniel, Gragg, Kaufman and Stewart): after the
    recurrence the components left along the basis are at round-off level, so one pass almost
    always suffices, where orthogonalising the raw block against the whole basis needs two
    (the large recurrence coefficients cancel digits). The coefficients fill the projected matrix
    ``H = V' op V``; the Ritz pairs of H are accepted when every residual estimate
    ``|R_j S_last|`` is at most ``tol`` times its Ritz value. ``op`` applied to ``block``
    vectors at once costs a fraction of ``block`` single applications when it is a pair of
    supernodal triangular solves (measured in :data:`LANCZOS_BLOCK`).

    Returns ``(theta, Y, info)`` (descending Ritz values, orthonormal Ritz vectors n x k, dict with
    ``dimension`` and ``full_passes``, the passes over the whole basis) or None when the basis
    would exceed ``max_dim`` vectors (default ``max(8 k, 200)`` and at most
    :data:`LANCZOS_BYTES`) or the Krylov space stops growing (breakdown): the caller then uses
    ARPACK.
    """
    p = int(block)
    max_dim = min(n - p, max_dim or min(max(8 * k, 200), LANCZOS_BYTES // (8 * n)))
    if k + p > max_dim:
        return None
    rng = np.random.default_rng(0)  # reproducible modes
    V = np.empty((n, max_dim), order="F")  # columns not yet reached are never touched
    V[:, :p] = np.linalg.qr(rng.standard_normal((n, p)))[0]
    H = np.zeros((max_dim, max_dim))
    j, passes = 0, 0
    while True:
        d = j + p
        W = np.array(op(V[:, j:d]), dtype=float, order="F")
        # the recurrence: the coefficients of the last two blocks (B_j' = H[j-p:j, j:d], known)
        lo = max(0, j - p)
        C = V[:, lo:d].T @ W
        W -= V[:, lo:d] @ C
        H[lo:d, j:d] = C
        Vd = V[:, :d]
        for _ in range(2):  # full passes: the second only when the first cancelled digits
            before = np.einsum("ij,ij->j", W, W)
            C = Vd.T @ W
            W -= Vd @ C
            H[:d, j:d] += C
            passes += 1
            if np.all(np.einsum("ij,ij->j", W, W) >= REORTH_DROP ** 2 * before):
                break
        Q, R = np.linalg.qr(W)
        if d >= k:
            Hs = H[:d, :d]
            theta, S = sla.eigh(0.5 * (Hs + Hs.T), subset_by_index=[d - k, d - 1])
            theta, S = theta[::-1], S[:, ::-1]
            res = np.linalg.norm(R @ S[j:d], axis=0)
            if np.all(res <= tol * theta):
                return theta, Vd @ S, {"dimension": d, "full_passes": passes}
        # a Krylov space that no longer grows (R ~ 0) or a basis at its size limit: give up
        if d + p > max_dim or np.abs(np.diag(R)).min() <= 1e-10 * np.abs(H[:d, :d]).max():
            return None
        H[d:d + p, j:d] = R
        V[:, d:d + p] = Q
        j = d


def _split_lanczos(Mii, F, k):
    """Lowest ``k`` modes of (K_ii, M_ii) from the Cholesky factor ``K_ii = P' L L' P``.

    ``K x = lam M x`` is the symmetric standard problem ``L^-1 P M P' L^-T y = y / lam`` with
    ``x = P' L^-T y``: per step one product with M and the two triangular solves of one
    ``K^-1`` application, where the generalised shift-invert mode adds two products with M and
    M-inner products (measured, 3e4 DOFs, 50 modes: 6.6 s against 8.0 s, same eigenvalues to
    4e-15). Solved by :func:`_block_lanczos` (blocks of :data:`LANCZOS_BLOCK` vectors), or by
    ARPACK's regular mode when it does not converge within its basis size.

    Returns ``(freq_hz, X, form)``, ``form`` naming the solver used.
    """
    perm, solve_l, solve_lt = F.split
    Mp = sp.csr_matrix(Mii[perm][:, perm])

    def op(y):
        return solve_l(Mp @ solve_lt(y))

    n = perm.size
    found = _block_lanczos(op, n, k)
    if found is not None:
        mu, Y, st = found
        form = (f"symmetric, Cholesky halves; block Lanczos ({LANCZOS_BLOCK} vectors a block, "
                f"basis of {st['dimension']})")
    else:
        A = spla.LinearOperator((n, n), matvec=op, matmat=op, dtype=float)
        v0 = np.random.default_rng(0).standard_normal(n)  # reproducible modes
        mu, Y = spla.eigsh(A, k=k, which="LA", v0=v0)
        order = np.argsort(-mu)
        mu, Y = mu[order], Y[:, order]
        form = "symmetric, Cholesky halves; ARPACK (block Lanczos did not converge)"
    lam, Z = 1.0 / mu, solve_lt(Y)
    X = np.empty_like(Z)
    X[perm] = Z
    X /= np.sqrt(np.einsum("ij,ij->j", X, Mii @ X))
    return np.sqrt(lam) / (2 * np.pi), X, form


def _use_dense(n_i: int, k: int, eigensolver: str) -> bool:
    if eigensolver == "dense":
        return True
    if eigensolver == "lanczos":
        return False
    return n_i < DENSE_BELOW or (dense_modes(n_i, k) and n_i <= DENSE_MAX)


class FixedInterfaceBasis:
    """Constraint modes and fixed-interface modes of a substructure, and its reduced matrices.

    Parameters
    ----------
    K, M : scipy.sparse (n, n)
        Stiffness (N/m) and mass (kg).
    b, i : int arrays
        Boundary and interior DOFs (disjoint, together 0..n-1).
    k : int
        Number of fixed-interface modes (0..n_i).
    factorisation : {"auto", "cholmod", "pardiso", "superlu"}
        Sparse factorisation of K_ii (:func:`fesub.fe.factor.factorize`).
    eigensolver : {"auto", "dense", "lanczos"}
        ``"auto"``: dense LAPACK below :data:`DENSE_BELOW` interior DOFs or for more than a quarter
        of the modes (up to :data:`DENSE_MAX`), shift-invert Lanczos on the shared factor otherwise
        (on the symmetric form ``L^-1 P M P' L^-T`` by block Lanczos when the factor is a Cholesky
        one; ``info["lanczos_form"]`` says which).
    block : int
        Columns of Psi handled at once (bounds the temporaries to n_i x block).
    store_psi : bool, optional
        Keep Psi as a dense n_i x n_b array (default when it fits in :data:`PSI_BYTES`), or keep
        the factor instead and apply Psi = -K_ii^-1 K_ib by solves when needed (one more solve per
        boundary DOF in the reduction, one per use of :meth:`recover` / :meth:`project`).
    jobs : int, optional
        Processes (1 or more; default: 2 where this process may use two cores, 1 inside a pool's
        worker). With 2, from :data:`FORK_ABOVE` interior DOFs and a Lanczos eigensolver, the
        constraint modes and their products are computed in a forked process while this one
        finds the modes (POSIX only; ``info["concurrent"]``): the same numbers, bit for bit.

    Attributes
    ----------
    Psi : (n_i, n_b) constraint modes (m/m, column-major), or None when not stored; Phi : (n_i, k) modes (1/sqrt(kg)).
    freq_hz : (k,) fixed-interface natural frequencies (Hz).
    Kr, Mr : (k + n_b, k + n_b) reduced stiffness (N/m) and mass (kg).
    info : dict with ``factorisation``, ``eigensolver``, timings (s) and memory (bytes).
    """

    def __init__(self, K, M, b, i, k: int, *, factorisation: str = "auto", eigensolver: str = "auto",
                 block: int = 64, store_psi: bool | None = None, jobs: int | None = None):
        if eigensolver not in _EIGENSOLVERS:
            raise ParameterError(f"eigensolver must be one of {_EIGENSOLVERS}, got {eigensolver!r}")
        jobs = min(2, spare_cores()) if jobs is None else check_count("jobs (processes)", jobs, 1)
        with one_blas_thread():
            self._build(K, M, b, i, k, factorisation, eigensolver, block, store_psi, jobs)

    def _build(self, K, M, b, i, k, factorisation, eigensolver, block, store_psi, jobs):
        rss0 = _max_rss_bytes()
        t = [time.perf_counter()]
        self.n, self.b, self.i, self.k = K.shape[0], b, i, k
        K, M = sp.csr_matrix(K), sp.csr_matrix(M)
        Ki, Mi = K[i], M[i]
        Kii, Kib = sp.csc_matrix(Ki[:, i]), sp.csc_matrix(Ki[:, b])
        Mii, Mib = sp.csc_matrix(Mi[:, i]), sp.csc_matrix(Mi[:, b])
        del Ki, Mi
        Kb, Mb = K[b], M[b]
        F = factorize(Kii, method=factorisation, where="the interior DOFs with the boundary fixed",
                      remedy="the boundary DOFs do not hold the substructure; add boundary DOFs")
        fname, split = F.name, F.split is not None
        t.append(time.perf_counter())
        nb = b.size
        self._Kib, self._F, self.Psi = Kib, F, None
        if store_psi is None:
            store_psi = i.size * nb * 8 <= PSI_BYTES
        dense = k > 0 and _use_dense(i.size, k, eigensolver)
        Kbi, Mbi = Kb[:, i], Mb[:, i]
        # the constraint modes and their products need the factor but not the modes: with a
        # second core they are computed in a forked child while this process finds the modes
        # (threads would not do: CHOLMOD holds the GIL, and two threads took longer than one)
        concurrent = jobs > 1 and ForkedCall.available and not dense and k > 0 and i.size >= FORK_ABOVE
        child_rss, child_growth, t_psi = None, None, None
        if concurrent:
            shapes = {"KP": (nb, nb), "A": (nb, nb), "G": (nb, nb)}
            if store_psi:
                shapes["PsiT"] = (nb, i.size)  # its transpose: Psi column-major, blocks contiguous
            with ForkedCall(lambda out: self._products_into(out, Mii, Kbi, Mbi, block, store_psi),
                            shapes) as task:
                self.freq_hz, self.Phi, form = self._modes(Kii, Mii, F, k, dense, split)
                t.append(time.perf_counter())
                out = task.result()
            products = out["KP"], out["A"], out["G"], None
            if store_psi:
                self.Psi = out["PsiT"].T
            child_rss, child_growth, t_psi = task.child_max_rss_bytes, task.child_growth_bytes, task.child_seconds
        else:
            # modes first: the Lanczos vectors are freed before Psi exists
            self.freq_hz, self.Phi, form = self._modes(Kii, Mii, F, k, dense, split)
            t.append(time.perf_counter())
            products = self._constraint_modes(Mii, Kbi, Mbi, block) if store_psi else \
                self._boundary_products(Mii, Kbi, Mbi, block)
        if store_psi:
            self._F = None
        del F
        t.append(time.perf_counter())
        self.Kr, self.Mr = self._reduce(Kii, Mii, Mib, Kb[:, b], Mb[:, b], products)
        t.append(time.perf_counter())
        rss1 = _max_rss_bytes()
        self.info = {
            "method": "factored",
            "factorisation": fname,
            "eigensolver": "none" if k == 0 else ("dense-eigh" if dense else "lanczos-shift-invert"),
            "lanczos_form": form,
            "psi": "stored" if store_psi else "implicit (factor kept)",
            "concurrent": concurrent,
            "time_factor_s": t[1] - t[0], "time_modes_s": t[2] - t[1],
            # Psi with its products K_bi Psi, M_bi Psi and Psi' M_ii Psi: in the forked child
            # (its own wall time, beside the modes) or after the modes; the parent's wait for
            # the child is time_wait_s
            "time_constraint_modes_s": t_psi if concurrent else t[3] - t[2],
            "time_wait_s": t[3] - t[2] if concurrent else 0.0,
            "time_reduce_s": t[4] - t[3], "time_s": t[4] - t[0],
            "peak_rss_bytes": rss1,
            "peak_rss_delta_bytes": None if rss0 is None else rss1 - rss0,
            "peak_rss_child_bytes": child_rss,
            "peak_rss_child_growth_bytes": child_growth,
            "memory_measure": "getrusage max RSS of the process (all allocations, C and Fortran "
                              "included); the delta is how far the reduction raised the high-water "
                              "mark (0 if an earlier peak of the process was higher); the child's "
                              "is that of the forked process of the constraint modes (the pages it "
                              "shares with this one counted in both), its growth how far it rose "
                              "above its resident set at the fork (its own allocations)",
        }

    @staticmethod
    def _modes(Kii, Mii, F, k, dense, split):
        """(freq_hz, Phi, form of the Lanczos run) of the ``k`` lowest fixed-interface modes."""
        if k == 0:
            return np.zeros(0), np.zeros((Kii.shape[0], 0)), "generalised"
        if dense:
            return (*modes(Kii, Mii, k, dense_below=Kii.shape[0] + 1), "generalised")
        if split:
            return _split_lanczos(Mii, F, k)
        return (*modes(Kii, Mii, k, factor=F, dense_below=0), "generalised")

    def _products_into(self, out, Mii, Kbi, Mbi, block, store_psi):
        """The forked child's work: Psi (stored) into ``out["PsiT"]`` and the boundary products
        into ``out["KP"]``, ``out["A"]``, ``out["G"]``."""
        if store_psi:
            KP, A, G, _ = self._constraint_modes(Mii, Kbi, Mbi, block, out["PsiT"].T)
        else:
            KP, A, G, _ = self._boundary_products(Mii, Kbi, Mbi, block)
        out["KP"][...], out["A"][...], out["G"][...] = KP, A, G

    def _constraint_modes(self, Mii, Kbi, Mbi, block, Psi=None):
        """All constraint modes ``Psi = -K_ii^-1 K_ib`` (blocks of ``block`` solves) stored in
        ``Psi`` (n_i x n_b, column-major: its blocks contiguous; allocated when None), and the
        products of :meth:`_boundary_products`."""
        nb = self.b.size
        if Psi is None:
            Psi = np.empty((nb, self.i.size)).T
        for j0 in range(0, nb, block):
            j1 = min(nb, j0 + block)
            np.negative(self._F.solve(self._Kib[:, j0:j1].toarray(order="F")), out=Psi[:, j0:j1])
        self.Psi = Psi
        return self._boundary_products(Mii, Kbi, Mbi, block)

    def _psi(self, j0, j1):
        """Columns j0:j1 of Psi: stored, or solved again with the kept factor."""
        if self.Psi is not None:
            return self.Psi[:, j0:j1]
        P = self._F.solve(self._Kib[:, j0:j1].toarray(order="F"))
        return np.negative(P, out=P)  # in place: one n_i x block array fewer at the peak

    def _psi_t(self, X):
        """``Psi' X`` (Psi' = -K_ib' K_ii^-1: one solve per column of X when Psi is not stored)."""
        if self.Psi is not None:
            return self.Psi.T @ X
        return -(self._Kib.T @ self._F.solve(X))

    def _boundary_products(self, Mii, Kbi, Mbi, block):
        """``K_bi Psi``, ``M_bi Psi`` and ``Psi' M_ii Psi`` (n_b x n_b each), Psi taken block by
        block (stored or solved), and None in place of ``Phi' M_ii Psi`` (:meth:`_reduce` forms
        it)."""
        nb = self.b.size
        KP, A, G = np.zeros((nb, nb)), np.zeros((nb, nb)), np.zeros((nb, nb))
        # K_bi and M_bi touch only the interior DOFs next to the boundary: their rows of Psi
        Kbi, Mbi = sp.csr_matrix(Kbi), sp.csr_matrix(Mbi)
        near = np.union1d(Kbi.indices, Mbi.indices)
        Kbi, Mbi = Kbi[:, near], Mbi[:, near]
        for j0 in range(0, nb, block):
            j1 = min(nb, j0 + block)
            P = self._psi(j0, j1)
            MP = Mii @ P
            Pn = P[near]
            KP[:, j0:j1] = Kbi @ Pn
            A[:, j0:j1] = Mbi @ Pn
            if self.Psi is not None:  # rows 0..j1 only: half the products of the full block
                G[:j1, j0:j1] = self.Psi[:, :j1].T @ MP
            else:
                del P  # (a solved block, not a view of Psi) freed before the next solve
                G[:, j0:j1] = self._psi_t(MP)
        G = np.triu(G) + np.triu(G, 1).T if self.Psi is not None else 0.5 * (G + G.T)
        return KP, A, G, None

    def _reduce(self, Kii, Mii, Mib, Kbb, Mbb, products):
        Phi, k, nb = self.Phi, self.k, self.b.size
        KP, A, G, _ = products
        if self.Psi is not None:  # Phi' M_ii Psi from the stored Psi
            C = (Mii @ Phi).T @ self.Psi
        else:
            # without Psi: K_ii^-1 M_ii Phi = Phi diag(1/w^2) turns Phi' M_ii Psi = -Phi' M_ii
            # K_ii^-1 K_ib into -diag(1/w^2) Phi' K_ib, no solve (its error is the modes'
            # residual, |K Phi - M Phi w^2| ~ 1e-11 of |K Phi| by Lanczos, times Psi)
            w2 = (2 * np.pi * self.freq_hz) ** 2
            C = -(self._Kib.T @ Phi).T / w2[:, None]
        Kr = np.zeros((k + nb, k + nb))
        Mr = np.zeros((k + nb, k + nb))
        Kr[:k, :k] = Phi.T @ (Kii @ Phi)
        Mr[:k, :k] = Phi.T @ (Mii @ Phi)
        Kr[k:, k:] = Kbb.toarray() + KP
        Mr[k:, k:] = Mbb.toarray() + A + A.T + G
        Mr[:k, k:] = C + (Mib.T @ Phi).T  # Phi' M_ib: a sparse product
        Mr[k:, :k] = Mr[:k, k:].T
        return 0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T)

    # ------------------------------------------------------------------
    def recover(self, q) -> np.ndarray:
        """``u = T q`` for q of shape (k + n_b,) or (k + n_b, nt)."""
        k = self.k
        u = np.empty((self.n,) + q.shape[1:], dtype=np.result_type(q, float))
        qb = q[k:]
        psi_qb = self.Psi @ qb if self.Psi is not None else -self._F.solve(self._Kib @ qb)
        u[self.i] = self.Phi @ q[:k] + psi_qb
        u[self.b] = q[k:]
        return u

    def project(self, f) -> np.ndarray:
        """``T' f`` for f of shape (n,) or (n, nt) (a load, N, to generalised forces)."""
        fi = f[self.i]
        return np.concatenate([self.Phi.T @ fi, self._psi_t(fi) + f[self.b]])

    def dense_T(self) -> np.ndarray:
        """The transformation as a dense (n, k + n_b) array (n (k + n_b) floats: small models)."""
        k, nb = self.k, self.b.size
        T = np.zeros((self.n, k + nb))
        T[self.i, :k] = self.Phi
        for j0 in range(0, nb, 64):
            T[self.i, k + j0:k + min(nb, j0 + 64)] = self._psi(j0, min(nb, j0 + 64))
        T[self.b, k + np.arange(nb)] = 1.0
        return T
