# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One slave node's contact in the multibody march: the Gram matrix of its rows, the closed form
of its problem, its update and its state (open, stick, slip) and their changes. Raw C arrays,
validated by the caller.
"""

from libc.math cimport fabs
from fesub._core._multibody_nodes cimport Nodes


cdef inline void gram(Nodes* ss, Nodes* ms, Py_ssize_t i, Py_ssize_t ia, Py_ssize_t ib, double* G) noexcept nogil:
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


cdef inline void gram_quad(const double* G, double* Q) noexcept nogil:
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


cdef inline void w_one(const double* Q, double al, double nx, double ny, double tx, double ty, double h2,
                        double* W) noexcept nogil:
    """W = h^2 J J' of the one node (nn, nt, tt) at contact coordinate ``al`` and frame (n, t),
    from ``gram_quad``'s Q: about thirty operations instead of the 6 x 6 products."""
    cdef double be = 1.0 - al, m0, m1, m2
    cdef double f1 = -be, f2 = -al, f3 = be * be, f4 = al * be, f5 = al * al
    m0 = Q[0] + f1 * Q[3] + f2 * Q[6] + f3 * Q[9] + f4 * Q[12] + f5 * Q[15]
    m1 = Q[1] + f1 * Q[4] + f2 * Q[7] + f3 * Q[10] + f4 * Q[13] + f5 * Q[16]
    m2 = Q[2] + f1 * Q[5] + f2 * Q[8] + f3 * Q[11] + f4 * Q[14] + f5 * Q[17]
    W[0] = h2 * (m0 * nx * nx + 2.0 * m1 * nx * ny + m2 * ny * ny)
    W[1] = h2 * (m0 * nx * tx + m1 * (nx * ty + ny * tx) + m2 * ny * ty)
    W[2] = h2 * (m0 * tx * tx + 2.0 * m1 * tx * ty + m2 * ty * ty)


cdef inline void one_rows(double al, double nx, double ny, double tx, double ty, double* c) noexcept nogil:
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


cdef inline void update_one(Nodes* ss, Nodes* ms, Py_ssize_t ia, Py_ssize_t ib, const double* Es, double* Ex, double h2,
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


cdef inline long node_state(double ln, double lt, double mu, double rt) noexcept nogil:
    """State of a node after its step: 0 open (no normal force), 2 / 3 slip in the + / - sense
    of its tangent (the tangential force on the cone's edge; the sense that of the step's slip
    ``rt``, or against the force where the slip is zero), 1 stick."""
    if not ln > 0:
        return 0
    if fabs(lt) >= mu * ln * (1 - 1e-12):
        return 2 if (rt if rt != 0 else -lt) >= 0 else 3
    return 1


cdef inline void count_change(long st, long old, long* changes, long* stop_lift,
                               long* stop_stick) noexcept nogil:
    """Count a node's change of state (``old`` -> ``st``) and flag a lift-off (closed -> open) and
    the end of a slip (slip -> anything else)."""
    if st != old:
        changes[0] += 1
    if old > 0 and st == 0:
        stop_lift[0] = 1
    if old >= 2 and st != old:
        stop_stick[0] = 1
