# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Force series of the multibody march: one value per step on a body coordinate, added to the
predictor, its products with the node rows and its work. Raw C arrays, validated by the caller.
"""

from fesub._core._multibody_nodes cimport Nodes, six_rows


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


cdef inline void series_add(Series* X, Py_ssize_t s, double h2, double* Es) noexcept nogil:
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
    six_rows(ss, ms, ia, ib, R)
    for r in range(X.ns):
        xr = &X.row[r * X.nm]
        for p in range(6):
            d = 0.0
            for k in range(X.win[2 * r], X.win[2 * r + 1]):
                d += R[p][k] * xr[k]
            X.xd[6 * r + p] = d
    X.xa = ia
    X.xb = ib


cdef inline void series_move(Series* X, Nodes* ss, Nodes* ms, Py_ssize_t s, double h2, long ia, long ib,
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


cdef inline double series_work(Series* X, Nodes* ss, Nodes* ms, Py_ssize_t s, long ia, long ib,
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


cdef inline void series_start(Series* X, const double* E0, const double* E1) noexcept nogil:
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
