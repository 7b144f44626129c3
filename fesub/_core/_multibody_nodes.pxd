# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node sets of the multibody march (``multibody.pyx``): the modal rows of slave and master nodes,
their driven parts and the stamped caches of master node displacements. The other parts of the
march's helpers, by purpose: ``_multibody_series`` (force series), ``_multibody_search`` (contact
frames and the segment walk), ``_multibody_one`` (one node's Gram matrix, update and state),
``_multibody_passes`` (the passes over the modal coordinates), ``_multibody_lean`` (the step of
one sliding node from its own locals), ``_multibody_active`` (the active-set passes of several
nodes), ``_multibody_close`` (the close of a step of several nodes, or of one with the works,
and the works of a node's forces), ``_multibody_record`` (the output record). Raw C arrays; the kernel validates nothing here (its
caller did).
"""


cdef struct Nodes:
    const double* R     # (k, 2, nm) modal rows
    const long* win     # (k, 2) first and last+1 modal column of the rows
    const double* X     # (k, 2) reference positions
    const double* dv    # (k, 2) driven velocity
    const double* ds    # (n_steps + 2, k, 2) sampled driven displacement, or NULL
    Py_ssize_t k
    Py_ssize_t nm


cdef inline void six_rows(Nodes* ss, Nodes* ms, Py_ssize_t ia, Py_ssize_t ib, const double** R) noexcept nogil:
    """The modal rows of slave node 0 (x, y) and of master nodes ia and ib (x, y), in that order."""
    cdef Py_ssize_t nm = ss.nm
    R[0] = &ss.R[0]
    R[1] = &ss.R[nm]
    R[2] = &ms.R[2 * ia * nm]
    R[3] = &ms.R[(2 * ia + 1) * nm]
    R[4] = &ms.R[2 * ib * nm]
    R[5] = &ms.R[(2 * ib + 1) * nm]


cdef inline double step_time(long i, double h) noexcept nogil:
    """Time of index i as the Python stepper forms it: (i - 1) h + h."""
    return (i - 1) * h + h


cdef inline void driven_disp(Nodes* s, Py_ssize_t j, double tt, Py_ssize_t row, double* dx, double* dy) noexcept nogil:
    """Driven displacement of node j at time tt (sample row ``row`` of ds)."""
    dx[0] = s.dv[2 * j] * tt
    dy[0] = s.dv[2 * j + 1] * tt
    if s.ds != NULL:
        dx[0] += s.ds[(row * s.k + j) * 2]
        dy[0] += s.ds[(row * s.k + j) * 2 + 1]


cdef inline void node_disp(Nodes* s, Py_ssize_t j, const double* e, double tt, Py_ssize_t row,
                       double* ux, double* uy) noexcept nogil:
    """Total displacement of node j: modal rows times e plus the driven part."""
    cdef const double* r0 = &s.R[2 * j * s.nm]
    cdef const double* r1 = &s.R[(2 * j + 1) * s.nm]
    cdef Py_ssize_t k
    cdef double sx = 0.0, sy = 0.0, dx, dy
    for k in range(s.win[2 * j], s.win[2 * j + 1]):
        sx += r0[k] * e[k]
        sy += r1[k] * e[k]
    driven_disp(s, j, tt, row, &dx, &dy)
    ux[0] = sx + dx
    uy[0] = sy + dy


cdef inline void cached_disp(Nodes* s, Py_ssize_t j, const double* e, double tt, Py_ssize_t row, long stamp,
                         double* C, long* S, double* ux, double* uy) noexcept nogil:
    """Displacement of master node j from the cache of the state ``stamp`` (computed once)."""
    if S[j] != stamp:
        node_disp(s, j, e, tt, row, &C[2 * j], &C[2 * j + 1])
        S[j] = stamp
    ux[0] = C[2 * j]
    uy[0] = C[2 * j + 1]
