"""One sparse factorisation of a symmetric positive definite matrix, by the best solver installed.

``factorize(A)`` returns a :class:`SparseFactor` whose ``solve`` applies ``(A - shift M)^-1`` to
one or many right-hand sides and whose ``name`` says which library factored it:

- ``"cholmod"``: supernodal Cholesky of SuiteSparse (``sksparse.cholmod``, the ``cholmod``
  extra), when importable; its halves ``K = P' L L' P`` are exposed (``SparseFactor.split``) for
  symmetric standard eigenproblems;
- ``"pardiso"``: Intel MKL PARDISO (``pypardiso``), when importable;
- ``"superlu"``: SciPy's SuperLU (always there), in symmetric mode (minimum-degree ordering of
  ``A + A'``, diagonal pivots preferred), which keeps the fill of a stiffness matrix far below
  the default column ordering (1e5-DOF plane strip: 1.1e7 entries in each of L and U against
  1.5e7 with COLAMD and 5.0e7 with a reverse Cuthill-McKee band; CHOLMOD's L: 8.7e6).

Neither optional library is a dependency: they are used only when they can be imported. The same
factor serves the static solves (constraint modes) and the shift-invert eigensolver
(:func:`fesub.fe.assembly.modes` with ``factor=``), so a model is factored once.

Measured on that strip (one BLAS thread, shared two-core machine): SuperLU solves 64 right-hand
sides in ~3.7 s (no gain over 64 single solves), CHOLMOD in ~0.5 s with OpenBLAS and ~2.4 s with
the reference BLAS: CHOLMOD's block solves are only as fast as the BLAS it was built against.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ModelError, ParameterError
from ..parallel import single_thread_blas

__all__ = ["SparseFactor", "factorize", "factorisations", "one_blas_thread"]

_ORDER = ("cholmod", "pardiso", "superlu")
_inside = threading.local()  # depth of one_blas_thread in this thread


def factorisations() -> tuple:
    """Names of the sparse factorisations usable here, preferred first (``"superlu"`` always)."""
    names = []
    try:
        import sksparse.cholmod  # noqa: F401
        names.append("cholmod")
    except Exception:  # noqa: BLE001 - missing, or a broken build of SuiteSparse
        pass
    try:
        import pypardiso  # noqa: F401
        names.append("pardiso")
    except Exception:  # noqa: BLE001 - missing, or MKL not loadable
        pass
    names.append("superlu")
    return tuple(names)


@contextlib.contextmanager
def one_blas_thread():
    """One BLAS thread inside (:func:`fesub.parallel.single_thread_blas`: every OpenBLAS loaded).

    The supernodal solves call BLAS on small blocks, where OpenBLAS threads cost more than they
    give; on a loaded machine a solve with 64 right-hand sides ran 9x slower with the default
    thread count than with one thread (measured, 19 200 DOFs, two cores, load 11). Nested uses
    cost nothing: only the outermost one looks up the loaded libraries (a scan of the process's
    memory map, ~4 ms, that the ~150 solves of a Lanczos run would otherwise each pay).
    """
    if getattr(_inside, "depth", 0):
        yield
        return
    _inside.depth = 1
    # load the optional solvers first: CHOLMOD brings its own BLAS (the system's OpenBLAS), which
    # the scan of single_thread_blas must see, or its first solves run with every thread (measured:
    # the first reduction of a process 10.3 s against 6.5 s, with 2 million context switches)
    factorisations()
    try:
        with single_thread_blas():
            yield
    finally:
        _inside.depth = 0


class SparseFactor:
    """A factor of ``A = K - shift M`` (square, n x n).

    Parameters
    ----------
    solve : callable
        ``solve(b)`` returns ``A^-1 b`` for ``b`` of shape (n,) or (n, m).
    name : str
        Library that factored it (see Attributes).
    shift : float
        The shift (rad^2/s^2) subtracted, ``A = K - shift M``; 0 for ``K`` itself.
    n : int
        Size of A (-).
    split : tuple, optional
        ``(perm, solve_l, solve_lt)`` when the factor is a Cholesky ``A = P' L L' P`` (``P b =
        b[perm]``): ``solve_l(b) = L^-1 b`` and ``solve_lt(b) = L^-T b`` (units of b over the
        square root of those of A); None for an LU factor.

    Attributes
    ----------
    name : str
        Library that factored it: ``"cholmod"``, ``"pardiso"`` or ``"superlu"``.
    shift : float
        The shift (rad^2/s^2) that was subtracted, ``A = K - shift M``; 0 for ``K`` itself.
    n : int
        Size of A.
    split : tuple or None
        The Cholesky factor's halves (see Parameters), for symmetric standard eigenproblems.
    """

    def __init__(self, solve, name: str, shift: float, n: int, split=None):
        self._solve = solve
        self.split = split
        self.name = name
        self.shift = float(shift)
        self.n = int(n)

    def solve(self, b) -> np.ndarray:
        """``A^-1 b`` for ``b`` of shape (n,) or (n, m) (units of b divided by those of A)."""
        b = np.asarray(b, dtype=float)
        if b.shape[0] != self.n:
            raise ModelError(f"right-hand side has {b.shape[0]} rows, the factor {self.n}")
        with one_blas_thread():
            return self._solve(b)

    def operator(self) -> spla.LinearOperator:
        """``A^-1`` as a :class:`scipy.sparse.linalg.LinearOperator` (e.g. ``eigsh(OPinv=...)``)."""
        return spla.LinearOperator((self.n, self.n), matvec=self.solve, matmat=self.solve,
                                   dtype=float)


def factorize(K, M=None, *, shift: float = 0.0, method: str = "auto",
              where: str = "the matrix", remedy: str = "check the supports") -> SparseFactor:
    """Factor ``K - shift M`` (symmetric positive definite) once.

    Parameters
    ----------
    K : sparse (n, n)
        Stiffness (N/m).
    M : sparse (n, n), optional
        Mass (kg); needed only when ``shift`` is not 0.
    shift : float
        Shift (rad^2/s^2) subtracted as ``K - shift M``.
    method : {"auto", "cholmod", "pardiso", "superlu"}
        ``"auto"`` takes the first of :func:`factorisations`.
    where, remedy : str
        Words for the error raised when the matrix is singular (a mechanism).

    Returns
    -------
    SparseFactor
        ``.name`` says which library was used.

    Raises
    ------
    ParameterError
        ``method`` unknown or not installed.
    ModelError
        The matrix is singular (exactly, or to round-off): a mechanism.
    """
    usable = factorisations()
    if method == "auto":
        method = usable[0]
    if method not in _ORDER:
        raise ParameterError(f"factorisation method must be one of {('auto',) + _ORDER}, got {method!r}")
    if method not in usable:
        raise ParameterError(f"factorisation {method!r} is not installed here; usable: {usable}")
    A = sp.csc_matrix(K, dtype=float)
    if shift != 0.0:
        if M is None:
            raise ParameterError("a shifted factor K - shift M needs the mass matrix M")
        A = sp.csc_matrix(A - float(shift) * sp.csc_matrix(M, dtype=float))
    singular = (f"stiffness is singular on {where}: the model is a mechanism; {remedy}")
    with one_blas_thread():
        solve, pivots, *split = _FACTORERS[method](A, singular)
    pivots = np.abs(pivots)
    # a mechanism leaves a round-off pivot (~1e-16 of the largest); supported models, even very
    # slender ones, stay above ~1e-8, so 1e-13 separates the two (as fesub.fe.factor_stiffness)
    if pivots.size and not pivots.min() > 1e-13 * pivots.max():
        raise ModelError(f"{singular} (pivot ratio {pivots.min() / pivots.max():.1e})")
    return SparseFactor(solve, method, shift, A.shape[0], split[0] if split else None)


def _superlu(A, singular):
    try:
        lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
    except RuntimeError as exc:  # exactly singular
        raise ModelError(f"{singular} ({exc})") from None
    return lu.solve, lu.U.diagonal()


def _cholmod(A, singular):
    from sksparse import cholmod

    try:
        F = cholmod.cholesky(A, mode="auto")
    except Exception as exc:  # noqa: BLE001 - not positive definite: a mechanism (or indefinite)
        raise ModelError(f"{singular} ({type(exc).__name__}: {exc})") from None
    d = F.D() if hasattr(F, "D") else F.L().diagonal() ** 2
    # a simplicial factor is LDL': the first use of the halves (LL') converts it in place, and the
    # solves after that differ from the solves before it by round-off (7e-16 measured). Converted
    # now, every solve sees one factor, whatever the order of the calls (or the process: a forked
    # child solving beside a parent that uses the halves)
    if hasattr(F, "solve_L"):
        try:
            F.solve_L(np.zeros((A.shape[0], 1), order="F"), use_LDLt_decomposition=False)
        except Exception as exc:  # noqa: BLE001 - a zero or negative pivot of D: a mechanism
            raise ModelError(f"{singular} ({type(exc).__name__}: {exc})") from None
    solve_a = F.solve_A if hasattr(F, "solve_A") else F

    def solve(b):
        # CHOLMOD keeps dense matrices column-major: a C-ordered block is copied first (measured,
        # 64 right-hand sides, 3e4 DOFs: 0.28 s C-ordered, 0.21 s column-major)
        return solve_a(np.asfortranarray(b))

    def half(system):
        return lambda b: system(np.asfortranarray(b), use_LDLt_decomposition=False)

    return solve, np.asarray(d), (np.asarray(F.P()), half(F.solve_L), half(F.solve_Lt))


def _pardiso(A, singular):
    import pypardiso

    # real symmetric positive definite (matrix type 2): PARDISO reads the upper triangle
    solver = pypardiso.PyPardisoSolver(mtype=2)
    U = sp.triu(A, format="csr")
    U.sort_indices()
    try:
        solver.factorize(U)
    except Exception as exc:  # noqa: BLE001 - PARDISO error codes (e.g. -4: zero pivot)
        raise ModelError(f"{singular} ({type(exc).__name__}: {exc})") from None

    def solve(b):
        return solver.solve(U, b)

    # PARDISO does not hand back its pivots: probe the factor with the diagonal of A instead (the
    # solve of a mechanism blows up by 1/round-off, which the finite check below catches)
    x = solve(np.ones(A.shape[0]))
    if not np.all(np.isfinite(x)):
        raise ModelError(singular)
    r = A @ x - 1.0
    return solve, np.array([1.0, 1.0 if np.abs(r).max() < 1e-6 else 0.0])


_FACTORERS = {"superlu": _superlu, "cholmod": _cholmod, "pardiso": _pardiso}
