# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Unilateral constraints with Coulomb friction at one time step: projected Gauss-Seidel, compiled.

Twin: ``friction_lcp_ref.py`` (same function and signature). The arguments' dtypes, layouts and
shapes are checked here (by the twin in debug mode).

Problem. ``m`` constraints act on ``n`` generalised coordinates with a diagonal inverse "mass"
``w``. Constraint ``i`` has a normal row ``J[2i]`` and a tangential row ``J[2i+1]``; with impulses
``lam`` the constraint values are ``y = b + W lam``, ``W = J diag(w) J'``. The solution satisfies

* normal:      ``lam_n >= 0``, ``y_n >= 0``, ``lam_n y_n = 0``;
* tangential:  ``|lam_t| <= mu lam_n``; ``|lam_t| < mu lam_n`` implies ``y_t = 0`` (stick);
  ``y_t != 0`` implies ``lam_t = -mu lam_n sign(y_t)`` (slip opposes the motion).

Method: projected Gauss-Seidel over the rows, normal then tangential for each constraint. Each
row update is exact for its own row given all the others, ``lam_r <- P(lam_r - y_r / W_rr)``, with
``P`` the projection on ``[0, inf)`` (normal) or ``[-mu lam_n, mu lam_n]`` (tangential, with the
``lam_n`` just updated), and ``z = diag(w) J' lam`` is kept up to date after every update, so
``y_r = b_r + J_r . z`` costs one dot product. Why this method: ``W`` is never formed, a sweep
costs O(m n) (one pass over each row of ``J`` for ``y_r``, which the first sweep also takes for
``W_rr`` and keeps it, one more for the update of ``z``), the kernel allocates nothing beyond the
rows' ``W_rr`` (on the stack up to 64 rows), and the previous step's impulses are a warm start
that shortens the iteration. A pivoting method (Lemke, active set) needs ``W`` itself, O(m^2 n)
to form and O(m^3) to factor: the cost of a step would then grow faster than the number of active
constraints. Without friction a sweep is the Gauss-Seidel method on the convex quadratic programme
``min 1/2 lam' W lam + b' lam, lam >= 0`` and converges; with friction it is a fixed-point
iteration whose converged point satisfies every condition above, but which can cycle when the
normal and tangential rows are strongly coupled and ``mu`` is large (then ``status`` says so).

Convergence: the largest change of y that one row update produced during a sweep,
``|delta lam_r| W_rr`` (units of ``b``), at most ``tol``. A row with ``W_rr = 0`` (no coordinate
moves it) takes the limit of its update: a tangential one slips (``lam_t = -mu lam_n sign(b_t)``),
a normal one carries no impulse, and a negative normal value on it cannot be corrected, so the
call then never reports convergence (largest change ``inf``).

One constraint (``m = 1``, ``tol >= 0``): its 2 x 2 ``W`` is formed in one pass and the problem
solved in closed form (``_pgs.coulomb_one``), the point the sweeps converge to, exactly. With
``W_nn > 0``, ``mu |W_nt| < W_nn`` and ``det W > 0`` the solution is unique: open when
``b_n >= 0``; otherwise, on the normal row's equality, ``y_t`` grows strictly with ``lam_t``
across the cone's interval, so exactly one of slip in the positive sense (``y_t <= 0`` at
``lam_t = mu lam_n``), slip in the negative sense, or stick (both equalities) holds. The status
is then one sweep, change 0, converged. Outside those conditions (several solutions may exist)
the sweeps run as above.
"""

cimport numpy as cnp
from libc.stdlib cimport free, malloc

from fesub._core._pgs cimport pgs_solve

cnp.import_array()

cdef enum:
    STACK_ROWS = 64   # rows whose W_rr the sweeps keep on the stack (more: a buffer for the call)


cdef double* _data(object a, str name, int ndim, Py_ssize_t size, bint out) except NULL:
    """The data of ``a``, a float64, aligned, C-contiguous NumPy array of ``ndim`` dimensions and
    ``size`` elements (writeable when ``out``); ValueError or TypeError otherwise, as the twin's
    checks and NumPy's would raise (a wrong size would read or write past the array). Taken
    directly from the array: about 50 ns for the nine arguments, against a microsecond for
    acquiring as many typed memoryviews, on calls that take a few microseconds for one node."""
    cdef cnp.ndarray arr
    if not cnp.PyArray_Check(a):
        raise TypeError(f"{name} must be a NumPy array of float64, got {type(a).__name__}")
    arr = <cnp.ndarray> a
    if cnp.PyArray_TYPE(arr) != cnp.NPY_DOUBLE:
        raise TypeError(f"{name} must be of dtype float64, got {a.dtype}")
    if arr.ndim != ndim or cnp.PyArray_SIZE(arr) != size:
        raise ValueError(f"{name} must have {ndim} dimension(s) and {size} elements for the rows J, "
                         f"got shape {a.shape}")
    if not (cnp.PyArray_IS_C_CONTIGUOUS(arr) and cnp.PyArray_ISALIGNED(arr)):
        raise ValueError(f"{name} must be C-contiguous and aligned")
    if out and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name} is written to but is read-only")
    return <double*> cnp.PyArray_DATA(arr)


def solve(J, w, b, mu, lam, z, double tol, long max_iter, status):
    """Projected Gauss-Seidel solution of the frictional contact problem, in place; see the
    module docstring, and the twin ``friction_lcp_ref.solve`` for every argument and its units
    (float64 NumPy arrays, C-contiguous; their shapes are checked). The sweeps are
    ``_pgs.pgs_solve`` (shared with the multibody march); the rows' ``W_rr``, found in the first
    sweep, are kept for the later ones (on the stack up to 64 rows)."""
    cdef Py_ssize_t m2, n, i
    cdef double st[3]
    cdef double room[STACK_ROWS]
    cdef double* diag = room
    cdef double *pJ
    cdef double *pw
    cdef double *pb
    cdef double *pmu
    cdef double *plam
    cdef double *pz
    cdef double *pst
    if not cnp.PyArray_Check(J) or (<cnp.ndarray> J).ndim != 2:
        raise ValueError(f"J must be a (2m, n) NumPy array, got {getattr(J, 'shape', type(J).__name__)}")
    m2 = cnp.PyArray_DIM(<cnp.ndarray> J, 0)
    n = cnp.PyArray_DIM(<cnp.ndarray> J, 1)
    if m2 % 2:
        raise ValueError(f"J must be (2m, n) with an even number of rows, got shape {J.shape}")
    pJ = _data(J, "J", 2, m2 * n, False)
    pw = _data(w, "w", 1, n, False)
    pb = _data(b, "b", 1, m2, False)
    pmu = _data(mu, "mu", 1, m2 // 2, False)
    plam = _data(lam, "lam", 1, m2, True)
    pz = _data(z, "z", 1, n, True)
    pst = _data(status, "status", 1, 3, True)
    if n == 0 or m2 == 0:  # no constraint, or rows with no entry: no impulse
        for i in range(m2):
            plam[i] = 0.0
        pst[0] = 0.0
        pst[1] = 0.0
        pst[2] = 1.0
        return
    if m2 > STACK_ROWS:
        diag = <double*> malloc(m2 * sizeof(double))
        if diag == NULL:
            raise MemoryError(f"no room for the {m2} rows' W_rr")
    with nogil:
        pgs_solve(pJ, m2, n, pw, pb, pmu, plam, pz, tol, max_iter, st, diag)
    if m2 > STACK_ROWS:
        free(diag)
    pst[0] = st[0]
    pst[1] = st[1]
    pst[2] = st[2]
