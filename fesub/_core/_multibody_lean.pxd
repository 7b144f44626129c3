# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The step of one sliding node from its own locals (the lean passes over the modal coordinates,
with and without the work accounts, off and on the output grid). One cohesive piece: the
windows and their inlined variants share one set of coefficients (``Lean``). Raw C arrays,
validated by the caller.
"""

from fesub._core._multibody_series cimport Series, series_add
from fesub._core._multibody_passes cimport Step, predict_pass, Passes, predict_one, advance_one

cdef extern from *:
    # pointers the compiler may take as not overlapping (the passes over the modal coordinates
    # read and write distinct arrays): lets it vectorise a pass with many arrays
    ctypedef double* dptr_r "double * __restrict__"
    ctypedef const double* cdptr_r "const double * __restrict__"


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
    bint tight      # the two windows are the whole of the coordinates (``tight_next``)


cdef inline void lean_ranges(Lean* L, const Passes* F, const Series* X) noexcept nogil:
    """Which of the five ranges of ``F`` carry a time-proportional force (Hr not zero), which
    node-row range is the window of the force series when there is one, tracked (-1 otherwise),
    and whether ``tight_next`` applies."""
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
    rows' products with the next predictor. Inlined in ``tight_next`` with ``four`` a constant:
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
    """One range of ``lean_next``: over the coordinates k0..k1, e_next = e* + sum_r cf[r] rows[r]
    written over e* (S), the next predictor into O,

        e*' = x + v - (q x - H - tn Hr + p v),   x = e_next,  v = x - e_n

    (the arithmetic of ``predict_pass`` regrouped: 2 x - e_n + h^2 (fc + tn fr - c v / h - w2 x)),
    the dot products of the ``nr`` (0, 2 or 4) rows with e*' into d, and the sums of the works
    with u + v = e_next - e_prev (u = e_n - e_prev): sums[0] += p u (u + v), sums[1] += H (u + v),
    sums[2] += Hr (u + v) (the caller scales them by 1 / (2 h^2)); with ``energy`` also
    sums[3] += v^2 and sums[4] += q (e_n + e_next)^2 / 4 (twice the kinetic and strain energies
    after the step times h^2: the caller divides by h^2). With a force series row ``xr`` (not
    NULL; nr = 2 or 4), e*' += hx xr (its next value, as ``series_add`` adds it) and dx = xr . e*'."""
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


cdef inline void tight_next(const Lean* L, double tn, double* S, const double* En, double* O, const Passes* F,
                             const double* c6, double* d6, const double* xr, double hx, double* dx) noexcept nogil:
    """``lean_next`` without the works, off the output grid, where the two windows are the whole
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


cdef inline void tight_energy(const Lean* L, const Step* P, double tn, double* S, const double* En, double* O,
                               const Passes* F, const double* c6, double* sums, double* d6, const double* xr,
                               double hx, double* dx) noexcept nogil:
    """``tight_next`` on the output grid (``_energy_window``), with ``lean_next``'s sums."""
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
    """The five ranges of ``lean_next`` with the works (``energy`` a constant at each call: one
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


cdef inline void lean_next(const Lean* L, const Step* P, double tn, double* S, const double* En, const double* Ep,
                            double* O, const Passes* F, const double* c6, bint energy, double* sums,
                            double* d6, const double* xr, double hx, double* dx) noexcept nogil:
    """``advance_one`` and the predictor of the next step (time ``tn``, ``predict_one``: the
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
