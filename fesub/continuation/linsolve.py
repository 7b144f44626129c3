"""Linear solves of the continuation's Newton corrector and tangent.

:class:`DirectSolver` factors every matrix (LAPACK through :func:`numpy.linalg.solve`, or
SuperLU for a scipy sparse matrix). :class:`ReusedFactorization` is for large dense systems
whose matrix changes little from one solve to the next (the Newton iterations of a step, the
tangent, the next step): the LU factors of an earlier matrix ``A_0`` precondition GMRES on the
current ``A`` (right preconditioning, so the residual it reports is the true ``|b - A x|``);
``A`` is factored again only when GMRES does not reach the tolerance within ``max_krylov``
iterations, or when the last solve needed more than half of them. One iteration costs a
matrix-vector product and a pair of triangular solves, ``O(n^2)``, against ``O(n^3)`` for a
factorisation: at ``n = 3700`` about 10 ms against 1 s.

The factors are kept in single precision by default (``single=True``): a preconditioner needs
only to be near ``A^-1``, and the factors of an earlier matrix already differ from ``A`` by far
more than single precision's rounding (``6e-8`` relative). Half the bytes halve the memory
traffic of the triangular solves, which are bound by it at these sizes (``n = 4300``: 4 ms
against 9.5 ms a solve; the factorisation 0.6 s against 1.2 s on one core). A freshly factored
matrix is therefore solved by GMRES as well (one or two iterations), and a matrix whose
single-precision factors do not bring GMRES to the tolerance is factored again in double
precision.

The answer of a Newton iteration does not depend on how its linear system was solved beyond
the solve's residual: GMRES stops at ``|b - A x| <= rtol |b|`` (default ``1e-12``, a
backward error of the order of a direct solve's on these systems), so the iterates are those
of the direct solve to that accuracy and the converged points meet the same residual test.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["DirectSolver", "ReusedFactorization", "gmres_right"]


class DirectSolver:
    """Factor every matrix: ``solve(A, b)`` with :func:`numpy.linalg.solve` (dense) or
    :func:`scipy.sparse.linalg.spsolve` (scipy sparse); raises
    :class:`numpy.linalg.LinAlgError` for a singular dense matrix."""

    factorizations = 0
    krylov_iterations = 0

    def solve(self, A, b, atol=None):
        """``A^-1 b``; ``atol`` (accepted for the solvers' common signature) is not needed by a
        direct solve."""
        import scipy.sparse as sp

        if sp.issparse(A):
            import scipy.sparse.linalg as spla

            return spla.spsolve(A.tocsc(), b)
        return np.linalg.solve(A, b)


def gmres_right(A, b, psolve, x0, *, rtol, maxiter):
    """GMRES on ``A x = b`` with right preconditioning ``psolve(v) ~ A^-1 v`` from ``x0``,
    without restart.

    Returns ``(x, converged, iterations)``; converged when the true residual
    ``|b - A x|_2 <= rtol |b|_2`` (checked on ``x``, not only on the Arnoldi estimate).
    The Krylov basis is orthogonalised twice by classical Gram-Schmidt (as accurate as the
    modified one, and in matrix products)."""
    nb = float(np.linalg.norm(b))
    if nb == 0.0:
        return np.zeros_like(b), True, 0
    target = rtol * nb
    x = x0
    r = b - A @ x
    beta = float(np.linalg.norm(r))
    if beta <= target:
        return x, True, 0
    n = b.size
    V = np.empty((maxiter + 1, n))
    Z = np.empty((maxiter, n))
    H = np.zeros((maxiter + 1, maxiter))
    V[0] = r / beta
    e1 = np.zeros(maxiter + 1)
    e1[0] = beta
    for j in range(maxiter):
        Z[j] = psolve(V[j])
        w = A @ Z[j]
        h = V[:j + 1] @ w
        w -= V[:j + 1].T @ h
        h2 = V[:j + 1] @ w
        w -= V[:j + 1].T @ h2
        H[:j + 1, j] = h + h2
        hn = float(np.linalg.norm(w))
        H[j + 1, j] = hn
        y, *_ = np.linalg.lstsq(H[:j + 2, :j + 1], e1[:j + 2], rcond=None)
        est = float(np.linalg.norm(H[:j + 2, :j + 1] @ y - e1[:j + 2]))
        if est <= 0.5 * target or hn <= 1e-300 or j == maxiter - 1:
            xn = x + Z[:j + 1].T @ y
            res = float(np.linalg.norm(b - A @ xn))
            if res <= target:
                return xn, True, j + 1
            if hn <= 1e-300 or j == maxiter - 1:
                return xn, False, j + 1
        V[j + 1] = w / hn
    return x, False, maxiter  # pragma: no cover (the loop returns)


#: entries of a matrix below this fraction of its largest are left out of its single-precision
#: factors (:class:`ReusedFactorization`)
SINGLE_DROP = 1e-12


class ReusedFactorization:
    """Dense solves with the LU factors of an earlier matrix as GMRES preconditioner (module
    doc); scipy sparse matrices are solved directly.

    Parameters
    ----------
    rtol : float
        Relative residual ``|b - A x| / |b|`` (-) at which GMRES stops.
    max_krylov : int
        GMRES iterations before the matrix is factored afresh.
    single : bool
        Keep the factors in single precision (module doc; default True); a matrix they do
        not precondition well enough is factored again in double precision.

    Attributes
    ----------
    factorizations : int
        LU factorisations done.
    krylov_iterations : int
        GMRES iterations done (each one product with ``A`` and one preconditioner solve).
    """

    def __init__(self, rtol=1e-12, max_krylov=30, single=True):
        self.rtol = float(rtol)
        self.max_krylov = int(max_krylov)
        self.single = bool(single)
        self.factorizations = 0
        self.krylov_iterations = 0
        self._lu = None
        self._stale = False

    def _factor(self, A, single):
        from scipy.linalg import LinAlgWarning, lu_factor

        self._lu = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LinAlgWarning)
            if single:
                # the cast is the factorisation's own copy (lu_factor copies a double matrix).
                # Entries below 1e-12 of the largest (rounding residue of the assembled blocks,
                # far below single precision's 6e-8) are dropped: in single precision they and
                # their fill-in are subnormal numbers, whose arithmetic is 30x slower (the
                # bolted joint's Jacobian: 11.9 s against 0.37 s, the same preconditioner)
                big = float(max(A.max(initial=0.0), -A.min(initial=0.0)))  # no |A| temporary
                if not big < float(np.finfo(np.float32).max):
                    return False
                B = A.astype(np.float32)
                B[np.abs(B) < SINGLE_DROP * big] = 0.0
                lu, piv = lu_factor(B, overwrite_a=True, check_finite=False)
            else:
                lu, piv = lu_factor(A, check_finite=False)
        self.factorizations += 1
        if not np.all(np.isfinite(lu)) or np.any(np.diag(lu) == 0.0):
            # the direct solve's test: an exactly zero pivot (or a non-finite factor); in
            # single precision (entries beyond its range, pivots below it) the double factors
            # decide
            if single:
                return False
            raise np.linalg.LinAlgError("singular matrix")
        self._lu = (lu, piv)
        self._stale = False
        return True

    def _psolve(self, v):
        from scipy.linalg import lu_solve

        lu = self._lu[0]
        # a single-precision right-hand side keeps the solve in single precision (a double
        # one would promote the factors, a copy of the whole matrix per solve)
        return lu_solve(self._lu, v.astype(lu.dtype, copy=False), check_finite=False).astype(float)

    def _gmres(self, A, b, atol):
        rtol = self.rtol
        if atol is not None:
            rtol = max(rtol, float(atol) / max(float(np.linalg.norm(b)), 1e-300))
        x, ok, its = gmres_right(A, b, self._psolve, self._psolve(b), rtol=min(rtol, 1e-2),
                                 maxiter=self.max_krylov)
        self.krylov_iterations += its
        ok = ok and bool(np.all(np.isfinite(x)))
        if ok:
            self._stale = its > self.max_krylov // 2
        return x, ok

    def solve(self, A, b, atol=None):
        """``x`` with ``|b - A x|_2 <= max(rtol |b|_2, atol)`` (``atol`` in the units of ``b``,
        None: the relative test alone). Newton's corrections ask for ``atol`` a tenth of its
        tolerance on the residual: the next residual's part from the linear solve is then
        below it, and the iterates converge in the same iterations as with exact solves
        (inexact Newton), with fewer GMRES iterations (the bolted joint's first 40 steps:
        1323 against 1897)."""
        import scipy.sparse as sp

        if sp.issparse(A):
            return DirectSolver().solve(A, b)
        A = np.asarray(A, dtype=float)
        b = np.asarray(b, dtype=float)
        fresh = self._lu is None or self._stale or self._lu[0].shape != A.shape
        if not fresh:
            x, ok = self._gmres(A, b, atol)
            if ok:
                return x
        if self.single and self._factor(A, True):
            x, ok = self._gmres(A, b, atol)
            if ok:
                return x
        # double-precision factors of A itself: the direct solve
        self._factor(A, False)
        return self._psolve(b)
