# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node sets of the multibody march (``multibody.pyx``): modal rows, driven parts, stamped caches
of master node displacements, contact frames, the segment walk, and the one-node Gram matrix
and update. Raw C arrays; the kernel validates nothing here (its caller did).
"""

from libc.math cimport hypot, fabs, sqrt


cdef struct Nodes:
    const double* R     # (k, 2, nm) modal rows
    const long* win     # (k, 2) first and last+1 modal column of the rows
    const double* X     # (k, 2) reference positions
    const double* dv    # (k, 2) driven velocity
    const double* ds    # (n_steps + 2, k, 2) sampled driven displacement, or NULL
    Py_ssize_t k
    Py_ssize_t nm


cdef inline double _time(long i, double h) noexcept nogil:
    """Time of index i as the Python stepper forms it: (i - 1) h + h."""
    return (i - 1) * h + h


cdef inline void _driven(Nodes* s, Py_ssize_t j, double tt, Py_ssize_t row, double* dx, double* dy) noexcept nogil:
    """Driven displacement of node j at time tt (sample row ``row`` of ds)."""
    dx[0] = s.dv[2 * j] * tt
    dy[0] = s.dv[2 * j + 1] * tt
    if s.ds != NULL:
        dx[0] += s.ds[(row * s.k + j) * 2]
        dy[0] += s.ds[(row * s.k + j) * 2 + 1]


cdef inline void _disp(Nodes* s, Py_ssize_t j, const double* e, double tt, Py_ssize_t row,
                       double* ux, double* uy) noexcept nogil:
    """Total displacement of node j: modal rows times e plus the driven part."""
    cdef const double* r0 = &s.R[2 * j * s.nm]
    cdef const double* r1 = &s.R[(2 * j + 1) * s.nm]
    cdef Py_ssize_t k
    cdef double sx = 0.0, sy = 0.0, dx, dy
    for k in range(s.win[2 * j], s.win[2 * j + 1]):
        sx += r0[k] * e[k]
        sy += r1[k] * e[k]
    _driven(s, j, tt, row, &dx, &dy)
    ux[0] = sx + dx
    uy[0] = sy + dy


cdef inline void _cached(Nodes* s, Py_ssize_t j, const double* e, double tt, Py_ssize_t row, long stamp,
                         double* C, long* S, double* ux, double* uy) noexcept nogil:
    """Displacement of master node j from the cache of the state ``stamp`` (computed once)."""
    if S[j] != stamp:
        _disp(s, j, e, tt, row, &C[2 * j], &C[2 * j + 1])
        S[j] = stamp
    ux[0] = C[2 * j]
    uy[0] = C[2 * j + 1]


cdef inline void _frame(double px, double py, double ax, double ay, double bx, double by,
                        double* alpha, double* gap, double* nx, double* ny, double* tx, double* ty) noexcept nogil:
    """Coordinate alpha of the projection of P on A -> B, signed gap along the left normal,
    unit normal and tangent (``interface.frames``)."""
    cdef double dx = bx - ax, dy = by - ay
    cdef double ln = hypot(dx, dy)
    cdef double rx = px - ax, ry = py - ay
    tx[0] = dx / ln
    ty[0] = dy / ln
    nx[0] = -ty[0]
    ny[0] = tx[0]
    alpha[0] = (rx * tx[0] + ry * ty[0]) / ln
    gap[0] = rx * nx[0] + ry * ny[0]


cdef inline double _walk_alpha(double px, double py, double x1, double y1, double x2, double y2,
                               double* gap) noexcept nogil:
    """Projection parameter and gap as the search kernel computes them (``contact._alpha``)."""
    cdef double dx = x2 - x1, dy = y2 - y1
    cdef double l2 = dx * dx + dy * dy
    cdef double l = sqrt(l2)
    gap[0] = (-(dy) * (px - x1) + dx * (py - y1)) / l
    return ((px - x1) * dx + (py - y1) * dy) / l2


cdef inline long _walk(Nodes* ms, const long* segs, long lo, long m, double px, double py, long start,
                const double* e, double tt, Py_ssize_t row, long stamp, double* C, long* S) noexcept nogil:
    """Segment (local index in lo..lo+m) under P by the local walk from ``start`` over the master
    positions of state e, full scan as a fallback (``contact._search_pos``); -1 when off."""
    cdef long k = start, prev = -2, steps = 0, best = -1
    cdef double a, g, bestg = 1e300, x1, y1, x2, y2
    cdef const long* sg
    if 0 <= k < m:
        while steps < m:
            sg = &segs[2 * (lo + k)]
            _cached(ms, sg[0], e, tt, row, stamp, C, S, &x1, &y1)
            _cached(ms, sg[1], e, tt, row, stamp, C, S, &x2, &y2)
            a = _walk_alpha(px, py, ms.X[2 * sg[0]] + x1, ms.X[2 * sg[0] + 1] + y1,
                            ms.X[2 * sg[1]] + x2, ms.X[2 * sg[1] + 1] + y2, &g)
            steps += 1
            if a < 0.0 and k > 0 and segs[2 * (lo + k - 1) + 1] == sg[0]:
                if prev == k - 1:
                    break
                prev = k
                k -= 1
            elif a >= 1.0 and k < m - 1 and segs[2 * (lo + k + 1)] == sg[1]:
                if prev == k + 1:
                    break
                prev = k
                k += 1
            else:
                if 0.0 <= a < 1.0:
                    return k
                if (a < 0.0 and prev == k - 1) or (a >= 1.0 and prev == k + 1):
                    return k
                break
    for k in range(m):
        sg = &segs[2 * (lo + k)]
        _cached(ms, sg[0], e, tt, row, stamp, C, S, &x1, &y1)
        _cached(ms, sg[1], e, tt, row, stamp, C, S, &x2, &y2)
        a = _walk_alpha(px, py, ms.X[2 * sg[0]] + x1, ms.X[2 * sg[0] + 1] + y1,
                        ms.X[2 * sg[1]] + x2, ms.X[2 * sg[1] + 1] + y2, &g)
        if 0.0 <= a <= 1.0 and fabs(g) < bestg:
            bestg = fabs(g)
            best = k
    return best


cdef inline void _gram(Nodes* ss, Nodes* ms, Py_ssize_t i, Py_ssize_t ia, Py_ssize_t ib, double* G) noexcept nogil:
    """Gram matrix (6 x 6) of the modal rows [slave x, y; master ia x, y; master ib x, y]."""
    cdef const double* rows[6]
    cdef Py_ssize_t p, q, k, nm = ss.nm
    cdef double acc
    rows[0] = &ss.R[2 * i * nm]
    rows[1] = &ss.R[(2 * i + 1) * nm]
    rows[2] = &ms.R[2 * ia * nm]
    rows[3] = &ms.R[(2 * ia + 1) * nm]
    rows[4] = &ms.R[2 * ib * nm]
    rows[5] = &ms.R[(2 * ib + 1) * nm]
    for p in range(6):
        for q in range(p, 6):
            acc = 0.0
            for k in range(nm):
                acc += rows[p][k] * rows[q][k]
            G[6 * p + q] = acc
            G[6 * q + p] = acc


cdef inline void _update_one(Nodes* ss, Nodes* ms, Py_ssize_t ia, Py_ssize_t ib, const double* Es, double* Ex, double h2,
                      const double* lam, const double* cNT, const double* G, bint solved, double sx, double sy,
                      double ax, double ay, double bx, double by, double* su, double* mc, long* mst,
                      long stamp) noexcept nogil:
    """e_next = e* + h^2 J' lam for one slave node (rows of node 0), and the displacements after
    the step of the slave and of its master nodes, through the Gram matrix G."""
    cdef Py_ssize_t k, p, nm = ss.nm
    cdef double c[6]
    cdef double d[6]
    cdef const double* r0
    cdef const double* r1
    cdef const double* r2
    cdef const double* r3
    for k in range(nm):
        Ex[k] = Es[k]
    for p in range(6):
        d[p] = 0.0
    if solved:
        for p in range(6):
            c[p] = h2 * (lam[0] * cNT[p] + lam[1] * cNT[6 + p])
        r0 = &ss.R[0]
        r1 = &ss.R[nm]
        for k in range(ss.win[0], ss.win[1]):
            Ex[k] += c[0] * r0[k] + c[1] * r1[k]
        r0 = &ms.R[2 * ia * nm]
        r1 = &ms.R[(2 * ia + 1) * nm]
        r2 = &ms.R[2 * ib * nm]
        r3 = &ms.R[(2 * ib + 1) * nm]
        for k in range(ms.win[2 * ia], ms.win[2 * ia + 1]):
            Ex[k] += c[2] * r0[k] + c[3] * r1[k] + c[4] * r2[k] + c[5] * r3[k]
        for p in range(6):
            for k in range(6):
                d[p] += G[6 * p + k] * c[k]
    su[0] = sx + d[0]
    su[1] = sy + d[1]
    mc[2 * ia] = ax + d[2]
    mc[2 * ia + 1] = ay + d[3]
    mc[2 * ib] = bx + d[4]
    mc[2 * ib + 1] = by + d[5]
    mst[ia] = stamp
    mst[ib] = stamp
