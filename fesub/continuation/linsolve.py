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

    def solve(self, A, b):
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


class ReusedFactorization:
    """Dense solves with the LU factors of an earlier matrix as GMRES preconditioner (module
    doc); scipy sparse matrices are solved directly.

    Parameters
    ----------
    rtol : float
        Relative residual ``|b - A x| / |b|`` (-) at which GMRES stops.
    max_krylov : int
        GMRES iterations before the matrix is factored afresh.

    Attributes
    ----------
    factorizations : int
        LU factorisations done.
    krylov_iterations : int
        GMRES iterations done (each one product with ``A`` and one preconditioner solve).
    """

    def __init__(self, rtol=1e-12, max_krylov=30):
        self.rtol = float(rtol)
        self.max_krylov = int(max_krylov)
        self.factorizations = 0
        self.krylov_iterations = 0
        self._lu = None
        self._stale = False

    def _factor(self, A):
        from scipy.linalg import LinAlgWarning, lu_factor

        self._lu = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LinAlgWarning)
            lu, piv = lu_factor(A, check_finite=False)
        self.factorizations += 1
        if not np.all(np.isfinite(lu)) or np.any(np.diag(lu) == 0.0):
            # the direct solve's test: an exactly zero pivot (or a non-finite factor)
            raise np.linalg.LinAlgError("singular matrix")
        self._lu = (lu, piv)
        self._stale = False

    def _psolve(self, v):
        from scipy.linalg import lu_solve

        return lu_solve(self._lu, v, check_finite=False)

    def solve(self, A, b):
        import scipy.sparse as sp

        if sp.issparse(A):
            return DirectSolver().solve(A, b)
        A = np.asarray(A, dtype=float)
        b = np.asarray(b, dtype=float)
        if self._lu is None or self._stale or self._lu[0].shape != A.shape:
            self._factor(A)
            return self._psolve(b)
        x, ok, its = gmres_right(A, b, self._psolve, self._psolve(b), rtol=self.rtol,
                                 maxiter=self.max_krylov)
        self.krylov_iterations += its
        if ok and np.all(np.isfinite(x)):
            self._stale = its > self.max_krylov // 2
            return x
        self._factor(A)
        return self._psolve(b)
