# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node sets of the multibody march (``multibody.pyx``): modal rows, driven parts, stamped caches
of master node displacements, contact frames, the segment walk, the one-node Gram matrix and
update, and the force series. Raw C arrays; the kernel validates nothing here (its caller did).
"""

from libc.math cimport fabs, sqrt

cdef extern from *:
    # pointers the compiler may take as not overlapping (the passes over the modal coordinates
    # read and write distinct arrays): lets it vectorise a pass with many arrays
    ctypedef double* dptr_r "double * __restrict__"
    ctypedef const double* cdptr_r "const double * __restrict__"


cdef struct Nodes:
    const double* R     # (k, 2, nm) modal rows
    const long* win     # (k, 2) first and last+1 modal column of the rows
    const double* X     # (k, 2) reference positions
    const double* dv    # (k, 2) driven velocity
    const double* ds    # (n_steps + 2, k, 2) sampled driven displacement, or NULL
    Py_ssize_t k
    Py_ssize_t nm


cdef inline void _six_rows(Nodes* ss, Nodes* ms, Py_ssize_t ia, Py_ssize_t ib, const double** R) noexcept nogil:
    """The modal rows of slave node 0 (x, y) and of master nodes ia and ib (x, y), in that order."""
    cdef Py_ssize_t nm = ss.nm
    R[0] = &ss.R[0]
    R[1] = &ss.R[nm]
    R[2] = &ms.R[2 * ia * nm]
    R[3] = &ms.R[(2 * ia + 1) * nm]
    R[4] = &ms.R[2 * ib * nm]
    R[5] = &ms.R[(2 * ib + 1) * nm]


cdef struct Series:
    const double* row   # (ns, nm) modal rows of the force series
    const long* win     # (ns, 2) first and last+1 modal column of each row
    const double* val   # (n_steps, ns) values per step (N)
    Py_ssize_t ns
    Py_ssize_t nm
    bint track          # one node, no sampled forces: the projections below are kept
    double* xd          # (ns, 6) row . (the six rows of the slave node and its segment xa, xb)
    double* xs          # (ns,) row . e* of the step
    double* xe          # (ns, 3) row . each of the three rotating states
    long xa
    long xb


cdef inline void _series_add(Series* X, Py_ssize_t s, double h2, double* Es) noexcept nogil:
    """e* += h^2 val[s, r] row_r for each series, and (tracked) row_r . e* into xs."""
    cdef Py_ssize_t r, k
    cdef const double* xr
    cdef double v, e, d
    for r in range(X.ns):
        v = h2 * X.val[s * X.ns + r]
        xr = &X.row[r * X.nm]
        if X.track:
            d = 0.0
            for k in range(X.win[2 * r], X.win[2 * r + 1]):
                e = Es[k] + v * xr[k]
                Es[k] = e
                d += xr[k] * e
            X.xs[r] = d
        elif v != 0.0:
            for k in range(X.win[2 * r], X.win[2 * r + 1]):
                Es[k] += v * xr[k]


cdef inline void _series_dots(Series* X, Nodes* ss, Nodes* ms, long ia, long ib) noexcept nogil:
    """xd for the segment (ia, ib) (kept: computed again only when the segment changes)."""
    cdef Py_ssize_t r, p, k
    cdef const double* R[6]
    cdef const double* xr
    cdef double d
    if X.xa == ia and X.xb == ib:
        return
    _six_rows(ss, ms, ia, ib, R)
    for r in range(X.ns):
        xr = &X.row[r * X.nm]
        for p in range(6):
            d = 0.0
            for k in range(X.win[2 * r], X.win[2 * r + 1]):
                d += R[p][k] * xr[k]
            X.xd[6 * r + p] = d
    X.xa = ia
    X.xb = ib


cdef inline void _series_move(Series* X, Nodes* ss, Nodes* ms, Py_ssize_t s, double h2, long ia, long ib,
                              double* sx, double* sy, double* mc) noexcept nogil:
    """What the series added to e* moves the predicted slave node 0 (sx, sy) and master nodes
    ia, ib (cache mc) by: h^2 val times the products xd, without a pass over the modes."""
    cdef Py_ssize_t r
    cdef double v
    _series_dots(X, ss, ms, ia, ib)
    for r in range(X.ns):
        v = h2 * X.val[s * X.ns + r]
        sx[0] += v * X.xd[6 * r]
        sy[0] += v * X.xd[6 * r + 1]
        mc[2 * ia] += v * X.xd[6 * r + 2]
        mc[2 * ia + 1] += v * X.xd[6 * r + 3]
        mc[2 * ib] += v * X.xd[6 * r + 4]
        mc[2 * ib + 1] += v * X.xd[6 * r + 5]


cdef inline double _series_work(Series* X, Nodes* ss, Nodes* ms, Py_ssize_t s, long ia, long ib,
                                const double* c6, const double* Ex, const double* Ep, long slot_p,
                                long slot_x) noexcept nogil:
    """Work of the series over the step, val[s, r] row_r . (e_next - e_prev) / 2 (J). Tracked:
    row . e_next from xs and, with ``c6`` (e_next = e* + sum c6 rows, the fused update), the
    products xd, else by a pass; kept in the state ring xe for the step after next."""
    cdef Py_ssize_t r, p, k
    cdef const double* xr
    cdef double w = 0.0, d, v
    for r in range(X.ns):
        v = X.val[s * X.ns + r]
        xr = &X.row[r * X.nm]
        if X.track:
            if c6 != NULL:
                _series_dots(X, ss, ms, ia, ib)
                d = X.xs[r]
                for p in range(6):
                    d += c6[p] * X.xd[6 * r + p]
            else:
                d = 0.0
                for k in range(X.win[2 * r], X.win[2 * r + 1]):
                    d += xr[k] * Ex[k]
            w += v * (0.5 * (d - X.xe[3 * r + slot_p]))
            X.xe[3 * r + slot_x] = d
        elif v != 0.0:
            d = 0.0
            for k in range(X.win[2 * r], X.win[2 * r + 1]):
                d += xr[k] * (0.5 * (Ex[k] - Ep[k]))
            w += v * d
    return w


cdef inline void _series_start(Series* X, const double* E0, const double* E1) noexcept nogil:
    """Tracked: row . e of the states in slots 0 and 1 (the chunk's first two)."""
    cdef Py_ssize_t r, k
    cdef const double* xr
    cdef double a, b
    if not X.track:
        return
    for r in range(X.ns):
        xr = &X.row[r * X.nm]
        a = 0.0
        b = 0.0
        for k in range(X.win[2 * r], X.win[2 * r + 1]):
            a += xr[k] * E0[k]
            b += xr[k] * E1[k]
        X.xe[3 * r] = a
        X.xe[3 * r + 1] = b


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
    unit normal and tangent (``interface.frames``). alpha = (r . d) / |d|^2, its division beside
    the root and the tangent's (the step's chain of dependent operations runs through here: a
    division after the tangent's would lengthen it); the tangent d / |d| (exact for a segment
    along an axis)."""
    cdef double dx = bx - ax, dy = by - ay
    cdef double l2 = dx * dx + dy * dy  # (no over- or underflow at lengths of a mesh)
    cdef double ln = sqrt(l2)
    cdef double rx = px - ax, ry = py - ay
    alpha[0] = (rx * dx + ry * dy) / l2
    tx[0] = dx / ln
    ty[0] = dy / ln
    nx[0] = -ty[0]
    ny[0] = tx[0]
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


cdef inline void _gram_quad(const double* G, double* Q) noexcept nogil:
    """The one node's W as a quadratic in the contact coordinate alpha, from its Gram matrix G
    (6 x 6: slave x, y; master a x, y; master b x, y). A row c = [d; -(1 - alpha) d; -alpha d]
    (d the unit normal or tangent) has c' G c' = d' M d' with, B(X, Y) the 2 x 2 blocks of G and
    sym(B) = B + B', beta = 1 - alpha,

        M = B(s,s) - beta sym(B(s,a)) - alpha sym(B(s,b)) + beta^2 B(a,a) + alpha beta sym(B(a,b))
            + alpha^2 B(b,b).

    Q = the six symmetric 2 x 2 matrices (entries 00, 01, 11) in that order."""
    cdef Py_ssize_t k, i, j
    cdef int X[6]
    cdef int Y[6]
    cdef bint sym
    X[0] = 0; Y[0] = 0    # B(s,s)
    X[1] = 0; Y[1] = 2    # sym B(s,a)
    X[2] = 0; Y[2] = 4    # sym B(s,b)
    X[3] = 2; Y[3] = 2    # B(a,a)
    X[4] = 2; Y[4] = 4    # sym B(a,b)
    X[5] = 4; Y[5] = 4    # B(b,b)
    for k in range(6):
        sym = X[k] != Y[k]
        i = X[k]
        j = Y[k]
        Q[3 * k] = G[6 * i + j] * (2.0 if sym else 1.0)
        Q[3 * k + 1] = G[6 * i + j + 1] + G[6 * (i + 1) + j] if sym else G[6 * i + j + 1]
        Q[3 * k + 2] = G[6 * (i + 1) + j + 1] * (2.0 if sym else 1.0)


cdef inline void _w_one(const double* Q, double al, double nx, double ny, double tx, double ty, double h2,
                        double* W) noexcept nogil:
    """W = h^2 J J' of the one node (nn, nt, tt) at contact coordinate ``al`` and frame (n, t),
    from ``_gram_quad``'s Q: about thirty operations instead of the 6 x 6 products."""
    cdef double be = 1.0 - al, m0, m1, m2
    cdef double f1 = -be, f2 = -al, f3 = be * be, f4 = al * be, f5 = al * al
    m0 = Q[0] + f1 * Q[3] + f2 * Q[6] + f3 * Q[9] + f4 * Q[12] + f5 * Q[15]
    m1 = Q[1] + f1 * Q[4] + f2 * Q[7] + f3 * Q[10] + f4 * Q[13] + f5 * Q[16]
    m2 = Q[2] + f1 * Q[5] + f2 * Q[8] + f3 * Q[11] + f4 * Q[14] + f5 * Q[17]
    W[0] = h2 * (m0 * nx * nx + 2.0 * m1 * nx * ny + m2 * ny * ny)
    W[1] = h2 * (m0 * nx * tx + m1 * (nx * ty + ny * tx) + m2 * ny * ty)
    W[2] = h2 * (m0 * tx * tx + 2.0 * m1 * tx * ty + m2 * ty * ty)


cdef inline void _one_rows(double al, double nx, double ny, double tx, double ty, double* c) noexcept nogil:
    """The one node's normal and tangential rows over its six node coordinates (slave x, y,
    master a x, y, b x, y), at contact coordinate ``al``: c[0:6] normal, c[6:12] tangential."""
    cdef Py_ssize_t r
    cdef double ex, ey
    for r in range(2):
        ex = nx if r == 0 else tx
        ey = ny if r == 0 else ty
        c[6 * r] = ex
        c[6 * r + 1] = ey
        c[6 * r + 2] = -(1 - al) * ex
        c[6 * r + 3] = -(1 - al) * ey
        c[6 * r + 4] = -al * ex
        c[6 * r + 5] = -al * ey


cdef inline void _update_one(Nodes* ss, Nodes* ms, Py_ssize_t ia, Py_ssize_t ib, const double* Es, double* Ex, double h2,
                      const double* lam, const double* cNT, const double* G, bint solved, double sx, double sy,
                      double ax, double ay, double bx, double by, double* su, double* mc, long* mst,
                      long stamp, double* cout) noexcept nogil:
    """e_next = e* + h^2 J' lam for one slave node (rows of node 0), and the displacements after
    the step of the slave and of its master nodes, through the Gram matrix G. With ``cout``, the
    coefficients c of the rows (slave x, y, master ia x, y, ib x, y; e_next = e* + sum c_r row_r)
    go there and e_next is left to the caller (``_advance``); the fused passes apply only where
    the slave's and the master's windows are disjoint, so that with it G's blocks between the
    slave and the master rows are zero and are skipped (the same sums: their terms are zeros)."""
    cdef Py_ssize_t k, p, nm = ss.nm
    cdef double c[6]
    cdef double d[6]
    cdef const double* r0
    cdef const double* r1
    cdef const double* r2
    cdef const double* r3
    for p in range(6):
        d[p] = 0.0
        c[p] = 0.0
    if solved:
        for p in range(6):
            c[p] = h2 * (lam[0] * cNT[p] + lam[1] * cNT[6 + p])
        if cout != NULL:
            for p in range(2):
                for k in range(2):
                    d[p] += G[6 * p + k] * c[k]
            for p in range(2, 6):
                for k in range(2, 6):
                    d[p] += G[6 * p + k] * c[k]
        else:
            for p in range(6):
                for k in range(6):
                    d[p] += G[6 * p + k] * c[k]
    if cout != NULL:
        for p in range(6):
            cout[p] = c[p]
    else:
        for k in range(nm):
            Ex[k] = Es[k]
    if solved and cout == NULL:
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
    su[0] = sx + d[0]
    su[1] = sy + d[1]
    mc[2 * ia] = ax + d[2]
    mc[2 * ia + 1] = ay + d[3]
    mc[2 * ib] = bx + d[4]
    mc[2 * ib + 1] = by + d[5]
    mst[ia] = stamp
    mst[ib] = stamp


cdef inline long _node_state(double ln, double lt, double mu, double rt) noexcept nogil:
    """State of a node after its step: 0 open (no normal force), 2 / 3 slip in the + / - sense
    of its tangent (the tangential force on the cone's edge; the sense that of the step's slip
    ``rt``, or against the force where the slip is zero), 1 stick."""
    if not ln > 0:
        return 0
    if fabs(lt) >= mu * ln * (1 - 1e-12):
        return 2 if (rt if rt != 0 else -lt) >= 0 else 3
    return 1


cdef inline void _count_change(long st, long old, long* changes, long* stop_lift,
                               long* stop_stick) noexcept nogil:
    """Count a node's change of state (``old`` -> ``st``) and flag a lift-off (closed -> open) and
    the end of a slip (slip -> anything else)."""
    if st != old:
        changes[0] += 1
    if old > 0 and st == 0:
        stop_lift[0] = 1
    if old >= 2 and st != old:
        stop_stick[0] = 1


cdef inline bint _split(const long* sw, const long* mw, Py_ssize_t nm, Py_ssize_t* cut, bint* slave_first) noexcept nogil:
    """Cut 0..nm at the slave window ``sw`` and the master window ``mw`` (disjoint, else False):
    ranges [cut[0], cut[1]) plain, [cut[1], cut[2]) first window, [cut[2], cut[3]) plain,
    [cut[3], cut[4]) second window, [cut[4], nm) plain, in ascending order of the coordinates."""
    slave_first[0] = sw[0] <= mw[0]
    if slave_first[0]:
        if sw[1] > mw[0]:
            return False
        cut[1] = sw[0]; cut[2] = sw[1]; cut[3] = mw[0]; cut[4] = mw[1]
    else:
        if mw[1] > sw[0]:
            return False
        cut[1] = mw[0]; cut[2] = mw[1]; cut[3] = sw[0]; cut[4] = sw[1]
    cut[0] = 0
    cut[5] = nm
    return True


cdef struct Step:
    # coefficients of the predictor e* = 2 e - e_prev + h^2 (fc + t fr - c (e - e_prev)/h - w2 e)
    const double* fc
    const double* fr
    const double* cd
    const double* w2
    double t
    double h2
    double inv_h


cdef struct Cols:
    # the arrays of a pass, held by value: the stores of the pass cannot force them to be read again
    const double* fc
    const double* fr
    const double* cd
    const double* w2
    const double* r0
    const double* r1
    const double* r2
    const double* r3


cdef inline Cols _cols(const Step* P, const double** rows, Py_ssize_t nr) noexcept nogil:
    """The arrays of the step ``P`` and the ``nr`` (0, 2 or 4) node rows of a pass."""
    cdef Cols c
    c.fc = P.fc
    c.fr = P.fr
    c.cd = P.cd
    c.w2 = P.w2
    c.r0 = rows[0] if nr >= 2 else NULL
    c.r1 = rows[1] if nr >= 2 else NULL
    c.r2 = rows[2] if nr == 4 else NULL
    c.r3 = rows[3] if nr == 4 else NULL
    return c


cdef inline void _predict(const Step* P, const double* En, const double* Ep, double* Es, Py_ssize_t k0,
                          Py_ssize_t k1, Py_ssize_t nr, const double** rows, double* d) noexcept nogil:
    """Predictor over the coordinates k0..k1, with the dot products of ``nr`` (0, 2 or 4) node rows
    with e* accumulated in d (the predicted node displacements in the same pass)."""
    cdef Py_ssize_t k
    cdef double e, d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, h2 = P.h2, t = P.t, ih = P.inv_h
    cdef Cols c = _cols(P, rows, nr)
    if nr == 0:
        for k in range(k0, k1):
            Es[k] = 2 * En[k] - Ep[k] + h2 * ((c.fc[k] + t * c.fr[k]) - c.cd[k] * (En[k] - Ep[k]) * ih - c.w2[k] * En[k])
    elif nr == 2:
        for k in range(k0, k1):
            e = 2 * En[k] - Ep[k] + h2 * ((c.fc[k] + t * c.fr[k]) - c.cd[k] * (En[k] - Ep[k]) * ih - c.w2[k] * En[k])
            Es[k] = e
            d0 += c.r0[k] * e
            d1 += c.r1[k] * e
    else:
        for k in range(k0, k1):
            e = 2 * En[k] - Ep[k] + h2 * ((c.fc[k] + t * c.fr[k]) - c.cd[k] * (En[k] - Ep[k]) * ih - c.w2[k] * En[k])
            Es[k] = e
            d0 += c.r0[k] * e
            d1 += c.r1[k] * e
            d2 += c.r2[k] * e
            d3 += c.r3[k] * e
    d[0] += d0
    d[1] += d1
    d[2] += d2
    d[3] += d3


cdef inline void _advance(const Step* P, const double* Ep, const double* En, const double* Es, double* Ex,
                          Py_ssize_t k0, Py_ssize_t k1, Py_ssize_t nr, const double** rows, const double* cf,
                          bint energy, double* sums) noexcept nogil:
    """e_next = e* + sum_r cf[r] rows[r] over the coordinates k0..k1 (nr = 0, 2 or 4 rows), and in
    the same pass the works of the damping and of the modal forces over the step (sums[0], [1])
    and, when ``energy``, twice the kinetic and strain energies after it (sums[2], [3])."""
    cdef Py_ssize_t k
    cdef double x, ex, ey, a1 = 0.0, val = 0.0, kin = 0.0, strn = 0.0, t = P.t, ih = P.inv_h
    cdef double c0 = cf[0], c1 = cf[1], c2 = cf[2] if nr == 4 else 0.0, c3 = cf[3] if nr == 4 else 0.0
    cdef Cols c = _cols(P, rows, nr)
    if not energy:  # the update and the works in one pass (the same arithmetic as below)
        if nr == 2:
            for k in range(k0, k1):
                x = Es[k] + c0 * c.r0[k] + c1 * c.r1[k]
                Ex[k] = x
                ex = 0.5 * (x - Ep[k])
                a1 += c.cd[k] * (En[k] - Ep[k]) * ih * ex
                val += (c.fc[k] + t * c.fr[k]) * ex
        elif nr == 4:
            for k in range(k0, k1):
                x = Es[k] + c0 * c.r0[k] + c1 * c.r1[k] + c2 * c.r2[k] + c3 * c.r3[k]
                Ex[k] = x
                ex = 0.5 * (x - Ep[k])
                a1 += c.cd[k] * (En[k] - Ep[k]) * ih * ex
                val += (c.fc[k] + t * c.fr[k]) * ex
        else:
            for k in range(k0, k1):
                x = Es[k]
                Ex[k] = x
                ex = 0.5 * (x - Ep[k])
                a1 += c.cd[k] * (En[k] - Ep[k]) * ih * ex
                val += (c.fc[k] + t * c.fr[k]) * ex
        sums[0] += a1
        sums[1] += val
        return
    if nr == 2:
        for k in range(k0, k1):
            Ex[k] = Es[k] + c0 * c.r0[k] + c1 * c.r1[k]
    elif nr == 4:
        for k in range(k0, k1):
            Ex[k] = Es[k] + c0 * c.r0[k] + c1 * c.r1[k] + c2 * c.r2[k] + c3 * c.r3[k]
    else:
        for k in range(k0, k1):
            Ex[k] = Es[k]
    if energy:
        for k in range(k0, k1):
            x = Ex[k]
            ex = 0.5 * (x - Ep[k])
            a1 += c.cd[k] * (En[k] - Ep[k]) * ih * ex
            val += (c.fc[k] + t * c.fr[k]) * ex
            ey = (x - En[k]) * ih
            kin += ey * ey
            ey = 0.5 * (En[k] + x)
            strn += c.w2[k] * (ey * ey)
    sums[0] += a1
    sums[1] += val
    sums[2] += kin
    sums[3] += strn


cdef struct Passes:
    # fused passes of one slave node over the modes: ranges and the node rows of its windows
    Py_ssize_t cut[6]
    const double* rows[6]   # first window's rows, then the second's
    Py_ssize_t nr[2]        # rows in each window (2 slave, 4 master)
    Py_ssize_t off[2]       # their first place in the order (slave x, y, master a x, y, b x, y)


cdef inline bint _passes(Nodes* ss, Nodes* ms, Py_ssize_t ia, Py_ssize_t ib, Passes* F, double* copy,
                         Py_ssize_t stride) noexcept nogil:
    """Ranges and rows of the fused passes of slave node 0 on the master segment (ia, ib); False
    when they do not apply (the windows overlap, or those of ia and ib differ). With ``copy``
    (6 rows of ``stride`` doubles) the six rows are copied there and the passes read the copies
    (aligned as the caller's state buffers: the vector loads of a pass then never straddle two
    cache lines, which the rows of an (k, 2, nm) array would, nm being any number)."""
    cdef bint sfirst
    cdef Py_ssize_t nm = ss.nm, r, k
    cdef const double* S[6]
    cdef double* c
    if ms.win[2 * ia] != ms.win[2 * ib] or ms.win[2 * ia + 1] != ms.win[2 * ib + 1]:
        return False
    if not _split(ss.win, &ms.win[2 * ia], nm, F.cut, &sfirst):
        return False
    _six_rows(ss, ms, ia, ib, S)
    if copy != NULL:
        for r in range(6):
            c = &copy[r * stride]
            for k in range(nm):
                c[k] = S[r][k]
            S[r] = c
    F.nr[0] = 2 if sfirst else 4
    F.nr[1] = 6 - F.nr[0]
    F.off[0] = 0 if sfirst else 2
    F.off[1] = 2 if sfirst else 0
    for r in range(F.nr[0]):
        F.rows[r] = S[F.off[0] + r]
    for r in range(F.nr[1]):
        F.rows[F.nr[0] + r] = S[F.off[1] + r]
    return True


cdef inline void _predict_one(const Step* P, const double* En, const double* Ep, double* Es, const Passes* F,
                              double* d6) noexcept nogil:
    """Predictor in one pass, with the modal parts of the predicted displacements of the slave
    node and of the two master nodes (d6, in the order of ``Passes``)."""
    cdef double w[8]
    cdef Py_ssize_t r
    for r in range(8):
        w[r] = 0.0
    _predict(P, En, Ep, Es, F.cut[0], F.cut[1], 0, F.rows, w)
    _predict(P, En, Ep, Es, F.cut[1], F.cut[2], F.nr[0], F.rows, w)
    _predict(P, En, Ep, Es, F.cut[2], F.cut[3], 0, F.rows, w)
    _predict(P, En, Ep, Es, F.cut[3], F.cut[4], F.nr[1], &F.rows[F.nr[0]], &w[4])
    _predict(P, En, Ep, Es, F.cut[4], F.cut[5], 0, F.rows, w)
    for r in range(F.nr[0]):
        d6[F.off[0] + r] = w[r]
    for r in range(F.nr[1]):
        d6[F.off[1] + r] = w[4 + r]


cdef inline void _advance_one(const Step* P, const double* Ep, const double* En, const double* Es, double* Ex,
                              const Passes* F, const double* c6, bint energy, double* sums) noexcept nogil:
    """e_next = e* + sum_r c6[r] row_r and the works and energies of the step (``_advance``) in
    one pass; sums = damping work, work of the modal forces, twice kinetic, twice strain."""
    cdef Py_ssize_t r
    for r in range(4):
        sums[r] = 0.0
    _advance(P, Ep, En, Es, Ex, F.cut[0], F.cut[1], 0, F.rows, c6, energy, sums)
    _advance(P, Ep, En, Es, Ex, F.cut[1], F.cut[2], F.nr[0], F.rows, &c6[F.off[0]], energy, sums)
    _advance(P, Ep, En, Es, Ex, F.cut[2], F.cut[3], 0, F.rows, c6, energy, sums)
    _advance(P, Ep, En, Es, Ex, F.cut[3], F.cut[4], F.nr[1], &F.rows[F.nr[0]], &c6[F.off[1]], energy, sums)
    _advance(P, Ep, En, Es, Ex, F.cut[4], F.cut[5], 0, F.rows, c6, energy, sums)

cdef struct Lean:
    # per-mode coefficients of the lean pass (precomputed once per chunk): q = h^2 w2, p = h c,
    # H = h^2 fc, Hr = h^2 fr, and whether each range of a ``Passes`` has a non-zero Hr
    const double* q
    const double* p
    const double* H
    const double* Hr
    const double* A     # 2 - q - p and p - 1: the predictor as A x + B e_n + H (+ tn Hr), for the
    const double* B     # pass without the works (``_lean_bare``), which then needs neither q nor p
    bint fr[5]
    long xrange     # the range of a ``Passes`` that is the window of the one force series (-1: none)
    bint works      # the pass sums the works of the damping and the modal forces (False: no accounts)
    bint tight      # the two windows are the whole of the coordinates (``_tight_next``)


cdef inline void _lean_ranges(Lean* L, const Passes* F, const Series* X) noexcept nogil:
    """Which of the five ranges of ``F`` carry a time-proportional force (Hr not zero), which
    node-row range is the window of the force series when there is one, tracked (-1 otherwise),
    and whether ``_tight_next`` applies."""
    cdef Py_ssize_t r, k
    L.xrange = -1
    if X.track and X.ns == 1:
        for r in range(1, 4, 2):
            if X.win[0] == F.cut[r] and X.win[1] == F.cut[r + 1] and F.cut[r] < F.cut[r + 1]:
                L.xrange = r
    for r in range(5):
        L.fr[r] = False
        for k in range(F.cut[r], F.cut[r + 1]):
            if L.Hr[k] != 0.0:
                L.fr[r] = True
                break
    L.tight = F.cut[0] == F.cut[1] and F.cut[2] == F.cut[3] and F.cut[4] == F.cut[5]


cdef inline void _bare_window(const Lean* L, double tn, dptr_r S, cdptr_r En, dptr_r O, Py_ssize_t k0,
                               Py_ssize_t k1, bint four, const double** rows, const double* cf, bint with_fr,
                               double* d, cdptr_r xr, double hx, double* dx) noexcept nogil:
    """``_lean_bare`` on a window of two or four (``four``) rows; d[0:2] (``four``: d[0:4]) = its
    rows' products with the next predictor. Inlined in ``_tight_next`` with ``four`` a constant:
    the loops of its case alone, and no call."""
    cdef Py_ssize_t k
    cdef double x, e, vx = 0.0, d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0
    cdef double c0 = cf[0], c1 = cf[1], c2 = cf[2] if four else 0.0, c3 = cf[3] if four else 0.0
    cdef cdptr_r A = L.A
    cdef cdptr_r B = L.B
    cdef cdptr_r H = L.H
    cdef cdptr_r Hr = L.Hr
    cdef cdptr_r r0 = rows[0]
    cdef cdptr_r r1 = rows[1]
    cdef cdptr_r r2 = rows[2] if four else rows[0]
    cdef cdptr_r r3 = rows[3] if four else rows[0]
    if not four:
        if xr != NULL:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k]) + hx * xr[k]
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                vx += xr[k] * e
            dx[0] = vx
        else:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k])
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
    elif xr != NULL:
        for k in range(k0, k1):
            x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
            S[k] = x
            e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k]) + hx * xr[k]
            O[k] = e
            d0 += r0[k] * e
            d1 += r1[k] * e
            d2 += r2[k] * e
            d3 += r3[k] * e
            vx += xr[k] * e
        dx[0] = vx
    elif with_fr:
        for k in range(k0, k1):
            x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
            S[k] = x
            e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k])
            O[k] = e
            d0 += r0[k] * e
            d1 += r1[k] * e
            d2 += r2[k] * e
            d3 += r3[k] * e
    else:
        for k in range(k0, k1):
            x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
            S[k] = x
            e = A[k] * x + B[k] * En[k] + H[k]
            O[k] = e
            d0 += r0[k] * e
            d1 += r1[k] * e
            d2 += r2[k] * e
            d3 += r3[k] * e
    d[0] = d0
    d[1] = d1
    if four:
        d[2] = d2
        d[3] = d3


cdef inline void _energy_window(const Lean* L, double tn, dptr_r S, cdptr_r En, dptr_r O, Py_ssize_t k0,
                                 Py_ssize_t k1, bint four, const double** rows, const double* cf, bint with_fr,
                                 double* sums, double* d, cdptr_r xr, double hx, double* dx) noexcept nogil:
    """``_bare_window`` on the output grid: also sums[3] += v^2 and sums[4] += q (e_n + e_next)^2 / 4
    (twice the kinetic and strain energies after the step, times h^2), as ``_lean_range``; loops
    of their own (with the energies in the loops of ``_bare_window`` behind a test, the passes off
    the grid ran slower: 5 ns a step in the study's transient)."""
    cdef Py_ssize_t k
    cdef double x, e, v, y, vx = 0.0, kin = 0.0, strn = 0.0, d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0
    cdef double c0 = cf[0], c1 = cf[1], c2 = cf[2] if four else 0.0, c3 = cf[3] if four else 0.0
    cdef cdptr_r A = L.A
    cdef cdptr_r B = L.B
    cdef cdptr_r H = L.H
    cdef cdptr_r Hr = L.Hr
    cdef cdptr_r q = L.q
    cdef cdptr_r r0 = rows[0]
    cdef cdptr_r r1 = rows[1]
    cdef cdptr_r r2 = rows[2] if four else rows[0]
    cdef cdptr_r r3 = rows[3] if four else rows[0]
    if not four:
        if xr != NULL:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                v = x - En[k]
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k]) + hx * xr[k]
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                vx += xr[k] * e
            dx[0] = vx
        else:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                v = x - En[k]
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k])
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
    elif xr != NULL:
        for k in range(k0, k1):
            x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
            S[k] = x
            v = x - En[k]
            kin += v * v
            y = 0.5 * (En[k] + x)
            strn += q[k] * (y * y)
            e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k]) + hx * xr[k]
            O[k] = e
            d0 += r0[k] * e
            d1 += r1[k] * e
            d2 += r2[k] * e
            d3 += r3[k] * e
            vx += xr[k] * e
        dx[0] = vx
    elif with_fr:
        for k in range(k0, k1):
            x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
            S[k] = x
            v = x - En[k]
            kin += v * v
            y = 0.5 * (En[k] + x)
            strn += q[k] * (y * y)
            e = A[k] * x + B[k] * En[k] + (H[k] + tn * Hr[k])
            O[k] = e
            d0 += r0[k] * e
            d1 += r1[k] * e
            d2 += r2[k] * e
            d3 += r3[k] * e
    else:
        for k in range(k0, k1):
            x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
            S[k] = x
            v = x - En[k]
            kin += v * v
            y = 0.5 * (En[k] + x)
            strn += q[k] * (y * y)
            e = A[k] * x + B[k] * En[k] + H[k]
            O[k] = e
            d0 += r0[k] * e
            d1 += r1[k] * e
            d2 += r2[k] * e
            d3 += r3[k] * e
    sums[3] += kin
    sums[4] += strn
    d[0] = d0
    d[1] = d1
    if four:
        d[2] = d2
        d[3] = d3


cdef inline void _lean_bare(const Lean* L, double tn, dptr_r S, cdptr_r En, dptr_r O, Py_ssize_t k0, Py_ssize_t k1,
                            Py_ssize_t nr, const double** rows, const double* cf, bint with_fr, double* d,
                            cdptr_r xr, double hx, double* dx) noexcept nogil:
    """``_lean_range`` without the works and energies (a run that keeps no work accounts, off the
    output grid): the update, the next predictor, its products with the rows and the series row,
    without e_prev; the predictor in the form e*' = A x + B e_n + H (+ tn Hr) (``Lean``): two
    operations fewer than the regrouped one of ``_lean_range``, whose velocity term the works
    share (equal to round-off)."""
    cdef Py_ssize_t k
    if nr:
        _bare_window(L, tn, S, En, O, k0, k1, nr == 4, rows, cf, with_fr, d, xr, hx, dx)
        return
    for k in range(k0, k1):
        O[k] = L.A[k] * S[k] + L.B[k] * En[k] + (L.H[k] + tn * L.Hr[k])


cdef inline void _lean_bare_energy(const Lean* L, double tn, dptr_r S, cdptr_r En, dptr_r O, Py_ssize_t k0,
                                   Py_ssize_t k1, Py_ssize_t nr, const double** rows, const double* cf,
                                   bint with_fr, double* sums, double* d, cdptr_r xr, double hx,
                                   double* dx) noexcept nogil:
    """``_lean_bare`` on the output grid (``_energy_window``): also sums[3] += v^2 and sums[4] +=
    q (e_n + e_next)^2 / 4 (twice the kinetic and strain energies after the step, times h^2)."""
    cdef Py_ssize_t k
    cdef double x, v, y, kin = 0.0, strn = 0.0
    if nr:
        _energy_window(L, tn, S, En, O, k0, k1, nr == 4, rows, cf, with_fr, sums, d, xr, hx, dx)
        return
    for k in range(k0, k1):
        x = S[k]
        v = x - En[k]
        kin += v * v
        y = 0.5 * (En[k] + x)
        strn += L.q[k] * (y * y)
        O[k] = L.A[k] * x + L.B[k] * En[k] + (L.H[k] + tn * L.Hr[k])
    sums[3] += kin
    sums[4] += strn


cdef inline void _lean_range(const Lean* L, double t, double tn, dptr_r S, cdptr_r En, cdptr_r Ep, dptr_r O,
                             Py_ssize_t k0, Py_ssize_t k1, Py_ssize_t nr, const double** rows, const double* cf,
                             bint with_fr, bint energy, double* sums, double* d, cdptr_r xr, double hx,
                             double* dx) noexcept nogil:
    """One range of ``_lean_next``: over the coordinates k0..k1, e_next = e* + sum_r cf[r] rows[r]
    written over e* (S), the next predictor into O,

        e*' = x + v - (q x - H - tn Hr + p v),   x = e_next,  v = x - e_n

    (the arithmetic of ``_predict`` regrouped: 2 x - e_n + h^2 (fc + tn fr - c v / h - w2 x)),
    the dot products of the ``nr`` (0, 2 or 4) rows with e*' into d, and the sums of the works
    with u + v = e_next - e_prev (u = e_n - e_prev): sums[0] += p u (u + v), sums[1] += H (u + v),
    sums[2] += Hr (u + v) (the caller scales them by 1 / (2 h^2)); with ``energy`` also
    sums[3] += v^2 and sums[4] += q (e_n + e_next)^2 / 4 (twice the kinetic and strain energies
    after the step times h^2: the caller divides by h^2). With a force series row ``xr`` (not
    NULL; nr = 2 or 4), e*' += hx xr (its next value, as ``_series_add`` adds it) and dx = xr . e*'."""
    cdef Py_ssize_t k
    cdef double x, v, u, w, e, y, a1 = 0.0, vc = 0.0, vr = 0.0, kin = 0.0, strn = 0.0, vx = 0.0
    cdef double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0
    cdef double c0 = cf[0] if nr else 0.0, c1 = cf[1] if nr else 0.0
    cdef double c2 = cf[2] if nr == 4 else 0.0, c3 = cf[3] if nr == 4 else 0.0
    cdef cdptr_r q = L.q
    cdef cdptr_r p = L.p
    cdef cdptr_r H = L.H
    cdef cdptr_r Hr = L.Hr
    cdef cdptr_r r0 = rows[0] if nr >= 2 else NULL
    cdef cdptr_r r1 = rows[1] if nr >= 2 else NULL
    cdef cdptr_r r2 = rows[2] if nr == 4 else NULL
    cdef cdptr_r r3 = rows[3] if nr == 4 else NULL
    # one loop per case, none with a test inside: a test of a flag or of nr in a loop would be
    # if-converted (both sides computed, or masked loads of absent rows, slow on some CPUs)
    if xr != NULL and nr == 2:  # a force series on this window, in the same pass
        if energy:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                e = e + hx * xr[k]
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                vx += xr[k] * e
            dx[0] = vx
        else:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                e = e + hx * xr[k]
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                vx += xr[k] * e
            dx[0] = vx
    elif xr != NULL:
        if energy:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                e = e + hx * xr[k]
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                d2 += r2[k] * e
                d3 += r3[k] * e
                vx += xr[k] * e
            dx[0] = vx
        else:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                e = e + hx * xr[k]
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                d2 += r2[k] * e
                d3 += r3[k] * e
                vx += xr[k] * e
            dx[0] = vx
    elif nr == 4 and not with_fr:  # a master body's window (the hot loop)
        if energy:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                a1 += (p[k] * u) * w
                vc += H[k] * w
                e = (x + v) - ((q[k] * x - H[k]) + p[k] * v)
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                d2 += r2[k] * e
                d3 += r3[k] * e
        else:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                a1 += (p[k] * u) * w
                vc += H[k] * w
                e = (x + v) - ((q[k] * x - H[k]) + p[k] * v)
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                d2 += r2[k] * e
                d3 += r3[k] * e
    elif nr == 4:
        if energy:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                d2 += r2[k] * e
                d3 += r3[k] * e
        else:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
                d2 += r2[k] * e
                d3 += r3[k] * e
    elif nr == 2:
        if energy:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
        else:
            for k in range(k0, k1):
                x = S[k] + c0 * r0[k] + c1 * r1[k]
                S[k] = x
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                O[k] = e
                d0 += r0[k] * e
                d1 += r1[k] * e
    else:
        if energy:
            for k in range(k0, k1):
                x = S[k]
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                kin += v * v
                y = 0.5 * (En[k] + x)
                strn += q[k] * (y * y)
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                O[k] = e
        else:
            for k in range(k0, k1):
                x = S[k]
                v = x - En[k]
                u = En[k] - Ep[k]
                w = u + v
                a1 += (p[k] * u) * w
                vc += H[k] * w
                vr += Hr[k] * w
                e = (x + v) - ((q[k] * x - (H[k] + tn * Hr[k])) + p[k] * v)
                O[k] = e
    sums[0] += a1
    sums[1] += vc
    sums[2] += vr
    sums[3] += kin
    sums[4] += strn
    d[0] += d0
    d[1] += d1
    d[2] += d2
    d[3] += d3


cdef inline void _tight_next(const Lean* L, double tn, double* S, const double* En, double* O, const Passes* F,
                             const double* c6, double* d6, const double* xr, double hx, double* dx) noexcept nogil:
    """``_lean_next`` without the works, off the output grid, where the two windows are the whole
    of the modal coordinates (``F.cut`` 0, 0, a, a, nm, nm: the bodies of one contact pair;
    ``L.tight``): the two windows' loops inlined, each place of d6 written once."""
    if F.nr[0] == 2:
        _bare_window(L, tn, S, En, O, F.cut[1], F.cut[2], False, F.rows, &c6[F.off[0]], L.fr[1], &d6[F.off[0]],
                      xr if L.xrange == 1 else NULL, hx, dx)
        _bare_window(L, tn, S, En, O, F.cut[3], F.cut[4], True, &F.rows[2], &c6[F.off[1]], L.fr[3], &d6[F.off[1]],
                      xr if L.xrange == 3 else NULL, hx, dx)
    else:
        _bare_window(L, tn, S, En, O, F.cut[1], F.cut[2], True, F.rows, &c6[F.off[0]], L.fr[1], &d6[F.off[0]],
                      xr if L.xrange == 1 else NULL, hx, dx)
        _bare_window(L, tn, S, En, O, F.cut[3], F.cut[4], False, &F.rows[4], &c6[F.off[1]], L.fr[3], &d6[F.off[1]],
                      xr if L.xrange == 3 else NULL, hx, dx)


cdef inline void _tight_energy(const Lean* L, const Step* P, double tn, double* S, const double* En, double* O,
                               const Passes* F, const double* c6, double* sums, double* d6, const double* xr,
                               double hx, double* dx) noexcept nogil:
    """``_tight_next`` on the output grid (``_energy_window``), with ``_lean_next``'s sums."""
    cdef double acc[5]
    acc[3] = 0.0
    acc[4] = 0.0
    if F.nr[0] == 2:
        _energy_window(L, tn, S, En, O, F.cut[1], F.cut[2], False, F.rows, &c6[F.off[0]], L.fr[1], acc,
                       &d6[F.off[0]], xr if L.xrange == 1 else NULL, hx, dx)
        _energy_window(L, tn, S, En, O, F.cut[3], F.cut[4], True, &F.rows[2], &c6[F.off[1]], L.fr[3], acc,
                       &d6[F.off[1]], xr if L.xrange == 3 else NULL, hx, dx)
    else:
        _energy_window(L, tn, S, En, O, F.cut[1], F.cut[2], True, F.rows, &c6[F.off[0]], L.fr[1], acc,
                       &d6[F.off[0]], xr if L.xrange == 1 else NULL, hx, dx)
        _energy_window(L, tn, S, En, O, F.cut[3], F.cut[4], False, &F.rows[4], &c6[F.off[1]], L.fr[3], acc,
                       &d6[F.off[1]], xr if L.xrange == 3 else NULL, hx, dx)
    sums[0] = 0.0
    sums[1] = 0.0
    sums[2] = acc[3] * (P.inv_h * P.inv_h)
    sums[3] = acc[4] / P.h2


cdef inline void _lean_bare5(const Lean* L, double tn, double* S, const double* En, double* O, const Passes* F,
                             const double* c6, const double* xr, double hx, double* w, double* w2,
                             double* dx) noexcept nogil:
    """``_lean_ranges5`` with ``_lean_bare`` (no works, no energies); the sums of the first
    window's rows into w[0:nr], of the second's into w2[0:nr] (the energy pass adds them)."""
    if F.cut[0] < F.cut[1]:
        _lean_bare(L, tn, S, En, O, F.cut[0], F.cut[1], 0, F.rows, c6, True, w, NULL, 0.0, dx)
    if F.cut[1] < F.cut[2]:
        _lean_bare(L, tn, S, En, O, F.cut[1], F.cut[2], F.nr[0], F.rows, &c6[F.off[0]], L.fr[1], w,
                   xr if L.xrange == 1 else NULL, hx, dx)
    if F.cut[2] < F.cut[3]:
        _lean_bare(L, tn, S, En, O, F.cut[2], F.cut[3], 0, F.rows, c6, True, w, NULL, 0.0, dx)
    if F.cut[3] < F.cut[4]:
        _lean_bare(L, tn, S, En, O, F.cut[3], F.cut[4], F.nr[1], &F.rows[F.nr[0]], &c6[F.off[1]], L.fr[3],
                   w2, xr if L.xrange == 3 else NULL, hx, dx)
    if F.cut[4] < F.cut[5]:
        _lean_bare(L, tn, S, En, O, F.cut[4], F.cut[5], 0, F.rows, c6, True, w, NULL, 0.0, dx)


cdef inline void _lean_bare5_energy(const Lean* L, double tn, double* S, const double* En, double* O,
                                    const Passes* F, const double* c6, const double* xr, double hx, double* acc,
                                    double* w, double* w2, double* dx) noexcept nogil:
    """``_lean_bare5`` with the energies (``_lean_bare_energy``; on the output grid)."""
    if F.cut[0] < F.cut[1]:
        _lean_bare_energy(L, tn, S, En, O, F.cut[0], F.cut[1], 0, F.rows, c6, True, acc, w, NULL, 0.0, dx)
    if F.cut[1] < F.cut[2]:
        _lean_bare_energy(L, tn, S, En, O, F.cut[1], F.cut[2], F.nr[0], F.rows, &c6[F.off[0]], L.fr[1], acc, w,
                          xr if L.xrange == 1 else NULL, hx, dx)
    if F.cut[2] < F.cut[3]:
        _lean_bare_energy(L, tn, S, En, O, F.cut[2], F.cut[3], 0, F.rows, c6, True, acc, w, NULL, 0.0, dx)
    if F.cut[3] < F.cut[4]:
        _lean_bare_energy(L, tn, S, En, O, F.cut[3], F.cut[4], F.nr[1], &F.rows[F.nr[0]], &c6[F.off[1]],
                          L.fr[3], acc, w2, xr if L.xrange == 3 else NULL, hx, dx)
    if F.cut[4] < F.cut[5]:
        _lean_bare_energy(L, tn, S, En, O, F.cut[4], F.cut[5], 0, F.rows, c6, True, acc, w, NULL, 0.0, dx)


cdef inline void _lean_ranges5(const Lean* L, const Step* P, double tn, double* S, const double* En,
                               const double* Ep, double* O, const Passes* F, const double* c6, bint energy,
                               double* acc, double* w, const double* xr, double hx, double* dx) noexcept nogil:
    """The five ranges of ``_lean_next`` with the works (``energy`` a constant at each call: one
    loop each), the empty ones skipped; the force series row ``xr`` (or NULL) in the range
    ``L.xrange``."""
    if F.cut[0] < F.cut[1]:
        _lean_range(L, P.t, tn, S, En, Ep, O, F.cut[0], F.cut[1], 0, F.rows, c6, True, energy, acc, w, NULL, 0.0,
                    dx)
    if F.cut[1] < F.cut[2]:
        _lean_range(L, P.t, tn, S, En, Ep, O, F.cut[1], F.cut[2], F.nr[0], F.rows, &c6[F.off[0]], L.fr[1], energy,
                    acc, w, xr if L.xrange == 1 else NULL, hx, dx)
    if F.cut[2] < F.cut[3]:
        _lean_range(L, P.t, tn, S, En, Ep, O, F.cut[2], F.cut[3], 0, F.rows, c6, True, energy, acc, w, NULL, 0.0,
                    dx)
    if F.cut[3] < F.cut[4]:
        _lean_range(L, P.t, tn, S, En, Ep, O, F.cut[3], F.cut[4], F.nr[1], &F.rows[F.nr[0]], &c6[F.off[1]],
                    L.fr[3], energy, acc, &w[4], xr if L.xrange == 3 else NULL, hx, dx)
    if F.cut[4] < F.cut[5]:
        _lean_range(L, P.t, tn, S, En, Ep, O, F.cut[4], F.cut[5], 0, F.rows, c6, True, energy, acc, w, NULL, 0.0,
                    dx)


cdef inline void _lean_next(const Lean* L, const Step* P, double tn, double* S, const double* En, const double* Ep,
                            double* O, const Passes* F, const double* c6, bint energy, double* sums,
                            double* d6, const double* xr, double hx, double* dx) noexcept nogil:
    """``_advance_one`` and the predictor of the next step (time ``tn``, ``_predict_one``: the
    modal parts of the predicted node displacements into d6) in one pass, with e_next written
    over e* (S) and the next predictor into O (the caller swaps the two buffers), from the
    coefficients of ``L``: fewer operations and arrays per coordinate than the two apart.
    sums = damping work, work of the modal forces, and on the output grid twice the kinetic and
    strain energies after the step (in the same pass). ``xr``: a force series row (window: the
    range ``L.xrange`` of ``F``) whose next value times h^2, ``hx``, the next predictor takes in
    the same pass (d6 then includes it), and dx = xr . e*' (else NULL, ``L.xrange`` -1)."""
    cdef double w[8]
    cdef double acc[5]
    cdef Py_ssize_t r
    cdef double s = 0.5 / P.h2
    for r in range(5):
        acc[r] = 0.0
    if not L.works:
        # the sums straight into d6 (the next step's search reads them: one way through memory
        # fewer on the step's chain of dependent operations); each window writes its own places
        # (zeros stay where a window is empty)
        for r in range(6):
            d6[r] = 0.0
        if energy:
            _lean_bare5_energy(L, tn, S, En, O, F, c6, xr, hx, acc, &d6[F.off[0]], &d6[F.off[1]], dx)
            sums[2] = acc[3] * (P.inv_h * P.inv_h)
            sums[3] = acc[4] / P.h2
        else:
            _lean_bare5(L, tn, S, En, O, F, c6, xr, hx, &d6[F.off[0]], &d6[F.off[1]], dx)
        sums[0] = 0.0
        sums[1] = 0.0
        return
    for r in range(8):
        w[r] = 0.0
    if energy:
        _lean_ranges5(L, P, tn, S, En, Ep, O, F, c6, True, acc, w, xr, hx, dx)
    else:
        _lean_ranges5(L, P, tn, S, En, Ep, O, F, c6, False, acc, w, xr, hx, dx)
    sums[0] = s * acc[0]
    sums[1] = s * (acc[1] + P.t * acc[2])
    if energy:
        sums[2] = acc[3] * (P.inv_h * P.inv_h)
        sums[3] = acc[4] / P.h2
    if F.off[0] == 0:  # the slave's window first (its two rows)
        for r in range(2):
            d6[r] = w[r]
        for r in range(4):
            d6[2 + r] = w[4 + r]
    else:
        for r in range(4):
            d6[2 + r] = w[r]
        for r in range(2):
            d6[r] = w[4 + r]
