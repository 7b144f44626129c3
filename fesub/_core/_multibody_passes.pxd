# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The passes of the multibody march over the modal coordinates: the predictor and the advance of
a step, split into the windows of a slave node's and its master's rows (fused passes). Raw C
arrays, validated by the caller.
"""

from fesub._core._multibody_nodes cimport Nodes, six_rows


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


cdef inline void predict_pass(const Step* P, const double* En, const double* Ep, double* Es, Py_ssize_t k0,
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


cdef inline bint node_passes(Nodes* ss, Nodes* ms, Py_ssize_t ia, Py_ssize_t ib, Passes* F, double* copy,
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
    six_rows(ss, ms, ia, ib, S)
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


cdef inline void predict_one(const Step* P, const double* En, const double* Ep, double* Es, const Passes* F,
                              double* d6) noexcept nogil:
    """Predictor in one pass, with the modal parts of the predicted displacements of the slave
    node and of the two master nodes (d6, in the order of ``Passes``)."""
    cdef double w[8]
    cdef Py_ssize_t r
    for r in range(8):
        w[r] = 0.0
    predict_pass(P, En, Ep, Es, F.cut[0], F.cut[1], 0, F.rows, w)
    predict_pass(P, En, Ep, Es, F.cut[1], F.cut[2], F.nr[0], F.rows, w)
    predict_pass(P, En, Ep, Es, F.cut[2], F.cut[3], 0, F.rows, w)
    predict_pass(P, En, Ep, Es, F.cut[3], F.cut[4], F.nr[1], &F.rows[F.nr[0]], &w[4])
    predict_pass(P, En, Ep, Es, F.cut[4], F.cut[5], 0, F.rows, w)
    for r in range(F.nr[0]):
        d6[F.off[0] + r] = w[r]
    for r in range(F.nr[1]):
        d6[F.off[1] + r] = w[4 + r]


cdef inline void advance_one(const Step* P, const double* Ep, const double* En, const double* Es, double* Ex,
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
