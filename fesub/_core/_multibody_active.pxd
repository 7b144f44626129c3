# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The contact problem of several slave nodes in the multibody march (``multibody.pyx``): the
active-set passes. Each pass solves the rows of the active nodes (``_pgs.pgs_solve``, or with
laws beyond one coefficient ``_laws.pgs_laws``), then the nodes the solution pushes through
(gap < -tol) join and the pass is taken again. Raw C arrays of the march's work space, validated
by the caller.
"""

from fesub._core._pgs cimport pgs_solve
from fesub._core._laws cimport pgs_laws


cdef struct Active:
    # the work arrays of the passes (set once, after the work layout of the march)
    const double* J     # (2 na, nm) rows of the nodes on their master surface (normal, tangential)
    double* Ja          # (2 nd, nm) ... of the active ones
    const double* b     # (2 na) gap and slip of the step of each row
    double* ba          # (2 nd) ... of the active rows
    double* lall        # (2 na) forces (in: warm start, out: the solution, 0 on an inactive node)
    double* la          # (2 nd) ... of the active rows
    double* z           # (nm) out: h^2 J' lam
    const double* w     # (nm) h^2
    const double* muo   # (na) coefficient of each node on its surface
    double* mua         # (nd) ... of each active node
    double* mue         # (na) with ``laws``: the edge coefficient of each solved node, in order
    double* mun         # (m) ... of each slave node (its stick limit where not solved)
    long* act           # (na) active flag (1; 2: joins after this pass)
    const long* idx     # (na) slave node of each node on its surface
    long* lidx          # (nd) ... of each active node
    const long* lcode   # (m) law code of each slave node (``_laws.pxd``)
    const double* lpar  # (m, 3) its parameters
    Py_ssize_t nm
    double h
    double tol
    long max_iter
    long max_passes     # most passes in one step
    bint laws           # the block sweeps with each node's law (``pgs_laws``)


cdef inline void solve_rows(Active* A, const double* J, Py_ssize_t n, const double* b, const double* mu,
                            const long* idx, double* lam, double* st3) noexcept nogil:
    """Solve the rows ``J`` (2 n, nm) of ``n`` nodes (slave nodes ``idx``, coefficients ``mu``, gap
    and slip ``b``) for their forces ``lam`` (in: warm start) and ``z = h^2 J' lam``: by the block
    sweeps with each node's law (``pgs_laws``, the edge coefficients into ``mun``) or by the sweeps
    (``pgs_solve``); no modal coordinates: the forces are 0."""
    cdef Py_ssize_t p, k
    if n and A.nm and A.laws:
        pgs_laws(J, n, A.nm, A.w, b, idx, A.lcode, A.lpar, A.h, lam, A.z, A.tol, A.max_iter, st3, A.mue)
        for p in range(n):
            A.mun[idx[p]] = A.mue[p]
    elif n and A.nm:
        pgs_solve(J, 2 * n, A.nm, A.w, b, mu, lam, A.z, A.tol, A.max_iter, st3, NULL)
    elif n:
        for k in range(2 * n):
            lam[k] = 0.0


cdef inline bint active_passes(Active* A, Py_ssize_t na, double* st3, long* passes, double* sweeps) noexcept nogil:
    """The active-set passes over the ``na`` nodes on their master surface: ``st3`` (out) the
    sweeps, last largest change and convergence (1/0) of the last solve, ``passes`` (in/out) and
    ``sweeps`` (in/out) counted on; False when the passes reached ``max_passes``."""
    cdef Py_ssize_t p, r, k, nd, nm = A.nm
    cdef bint allact, any_new
    cdef double g, a1
    cdef const double* Jn
    while True:
        passes[0] += 1
        for k in range(nm):
            A.z[k] = 0.0
        st3[0] = 0.0
        st3[1] = 0.0
        st3[2] = 1.0
        allact = True
        for p in range(na):
            if not A.act[p]:
                allact = False
                break
        if allact:
            solve_rows(A, A.J, na, A.b, A.muo, A.idx, A.lall, st3)
            sweeps[0] += st3[0]
            return True
        nd = 0
        for p in range(na):
            if A.act[p]:
                for r in range(2):
                    for k in range(nm):
                        A.Ja[(2 * nd + r) * nm + k] = A.J[(2 * p + r) * nm + k]
                    A.ba[2 * nd + r] = A.b[2 * p + r]
                    A.la[2 * nd + r] = A.lall[2 * p + r]
                A.mua[nd] = A.muo[p]
                A.lidx[nd] = A.idx[p]
                nd += 1
        solve_rows(A, A.Ja, nd, A.ba, A.mua, A.lidx, A.la, st3)
        nd = 0
        for p in range(na):
            if A.act[p]:
                A.lall[2 * p] = A.la[2 * nd]
                A.lall[2 * p + 1] = A.la[2 * nd + 1]
                nd += 1
            else:
                A.lall[2 * p] = 0.0
                A.lall[2 * p + 1] = 0.0
        sweeps[0] += st3[0]
        any_new = False
        for p in range(na):
            if not A.act[p]:
                g = A.b[2 * p]
                Jn = &A.J[2 * p * nm]
                a1 = 0.0
                for k in range(nm):
                    a1 += Jn[k] * A.z[k]
                if g + a1 < -A.tol:
                    A.act[p] = 2  # joins after this pass
                    any_new = True
        if st3[2] != 1.0 or not any_new:
            return True
        if passes[0] == A.max_passes:
            return False
        for p in range(na):
            if A.act[p] == 2:
                A.act[p] = 1
