# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Fixed-step batch RK4 for the forced two-mass free-play oscillator (many initial conditions).

Kernel only: the Python wrapper (fesub.nonsmooth.batch) validates every input and allocates the
outputs. See fesub/_core/freeplay_ref.py for the NumPy twin and the full description.

prm = [m, c, k, mu, cd, kd, mud, kp, a, Q1, Q2, delta]; law 0 = exact piecewise law with in-step
event location, law 1 = logistic sigmoid law.
"""

from libc.math cimport cos, exp, fabs, isfinite

cdef inline double _expit_neg(double y) noexcept nogil:
    # 1/(1+exp(y)) without overflow; beyond |y| = 40 the value is 0 (below 4.3e-18) or exactly 1
    cdef double e
    if y > 40.0:
        return 0.0
    if y < -40.0:
        return 1.0
    if y >= 0.0:
        e = exp(-y)
        return e / (1.0 + e)
    return 1.0 / (1.0 + exp(y))


cdef inline int _region(double x, double a) noexcept nogil:
    if x > a:
        return 1
    if x < -a:
        return -1
    return 0


cdef inline void _rhs(const double* z, double cw, const double* p, int law, int s,
                      double* dz) noexcept nogil:
    cdef double x1 = z[0], y1 = z[1], x2 = z[2], y2 = z[3]
    cdef double r = x2 - x1, rv = y2 - y1
    cdef double coup = p[5] * r + p[6] * r * r * r + p[4] * rv
    cdef double F, z1, z2, a = p[8], d = p[11]
    if law == 1:
        z1 = a + x1
        z2 = a - x1
        F = p[7] * (z1 * _expit_neg(d * z1) - z2 * _expit_neg(d * z2))
    elif s == 0:
        F = 0.0
    else:
        F = p[7] * (x1 - s * a)
    dz[0] = y1
    dz[1] = (p[9] * cw - p[1] * y1 - p[2] * x1 - p[3] * x1 * x1 * x1 + coup - F) / p[0]
    dz[2] = y2
    dz[3] = (p[10] * cw - p[1] * y2 - p[2] * x2 - p[3] * x2 * x2 * x2 - coup) / p[0]


cdef inline void _rk4(const double* z, double h, double c0, double c1, double c2,
                      const double* p, int law, int s, double* out) noexcept nogil:
    cdef double k1[4]
    cdef double k2[4]
    cdef double k3[4]
    cdef double k4[4]
    cdef double w[4]
    cdef int i
    _rhs(z, c0, p, law, s, k1)
    for i in range(4):
        w[i] = z[i] + 0.5 * h * k1[i]
    _rhs(w, c1, p, law, s, k2)
    for i in range(4):
        w[i] = z[i] + 0.5 * h * k2[i]
    _rhs(w, c1, p, law, s, k3)
    for i in range(4):
        w[i] = z[i] + h * k3[i]
    _rhs(w, c2, p, law, s, k4)
    for i in range(4):
        out[i] = z[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


cdef inline int _mismatch(int s, double x, double a) noexcept nogil:
    # the end point lies strictly outside the closed region s
    if s == 0:
        return x > a or x < -a
    if s == 1:
        return x < a
    return x > -a


cdef inline int _sync(int s, double x, double a) noexcept nogil:
    # keep s on a boundary point (it was set by the crossing), else the region of x
    if x == a or x == -a:
        return s
    return _region(x, a)


cdef int _exact_step(double* z, int* sp, double t, double h, double W, double c0, double c1,
                     double c2, const double* p) noexcept nogil:
    """One RK4 step of the exact law with in-step event location; returns the switch count."""
    cdef double a = p[8]
    cdef double zn[4]
    cdef double zt[4]
    cdef int s = _sync(sp[0], z[0], a)
    cdef int nsw = 0, it, side, i
    cdef double rem = h, tc = t, b, lo, hi, flo, fhi, th, f, hh
    _rk4(z, rem, c0, c1, c2, p, 0, s, zn)
    while _mismatch(s, zn[0], a) and nsw < 4:
        if s == 0:
            b = a if zn[0] > a else -a
        elif s == 1:
            b = a
        else:
            b = -a
        lo = 0.0
        hi = 1.0
        flo = z[0] - b
        fhi = zn[0] - b
        side = 0
        th = 0.0
        for i in range(4):
            zt[i] = z[i]
        if flo != 0.0:
            for it in range(100):
                th = (lo * fhi - hi * flo) / (fhi - flo)
                hh = th * rem
                _rk4(z, hh, cos(W * tc), cos(W * (tc + 0.5 * hh)), cos(W * (tc + hh)), p, 0, s, zt)
                f = zt[0] - b
                if fabs(f) < 1e-14:
                    break
                if (f > 0.0) == (fhi > 0.0):
                    hi = th
                    fhi = f
                    if side == -1:
                        flo *= 0.5
                    side = -1
                else:
                    lo = th
                    flo = f
                    if side == 1:
                        fhi *= 0.5
                    side = 1
                if hi - lo < 1e-15:
                    break
        for i in range(4):
            z[i] = zt[i]
        z[0] = b
        tc = tc + th * rem
        rem = rem * (1.0 - th)
        if s == 0:
            s = 1 if b > 0 else -1
        else:
            s = 0
        nsw += 1
        _rk4(z, rem, cos(W * tc), cos(W * (tc + 0.5 * rem)), cos(W * (tc + rem)), p, 0, s, zn)
    for i in range(4):
        z[i] = zn[i]
    sp[0] = s
    return nsw


def batch_rk4(const double[:, ::1] X0, const double[::1] W, const double[::1] prm, int law,
              int n_transient, int n_record, int steps, int sec_dir, const double[::1] costab,
              double[:, :, ::1] strobe, double[:, ::1] ext, double[:, :, ::1] sec,
              int[::1] nsec, int[::1] nswitch, double conv_tol, int conv_pmax,
              int[::1] n_used):
    """Advance B initial conditions with fixed-step RK4 (see freeplay_ref.batch_rk4)."""
    cdef Py_ssize_t B = X0.shape[0], nsmax = sec.shape[1]
    cdef Py_ssize_t b, per, j, i, k, q, kk
    cdef double hist[9][4]
    cdef double dmax
    cdef int conv
    cdef double z[4]
    cdef double zs[4]
    cdef double p[12]
    cdef double Wb, h, T, th, t2, t3, x1h, nan = float("nan")
    cdef int s, rec, nsw, d
    cdef int N = steps
    for i in range(12):
        p[i] = prm[i]
    with nogil:
        for b in range(B):
            Wb = W[b]
            T = 6.283185307179586 / Wb
            h = T / N
            for i in range(4):
                z[i] = X0[b, i]
            s = _region(z[0], p[8])
            nsec[b] = 0
            nswitch[b] = 0
            ext[b, 0] = -1e300
            ext[b, 1] = 1e300
            n_used[b] = n_transient
            for i in range(4):
                hist[0][i] = z[i]
            per = 0
            while per < n_transient + n_record:
                rec = per >= n_transient
                if per == n_transient:
                    for i in range(4):
                        strobe[b, 0, i] = z[i]
                    ext[b, 0] = z[0]
                    ext[b, 1] = z[0]
                for j in range(N):
                    for i in range(4):
                        zs[i] = z[i]
                    if law == 1:
                        _rk4(zs, h, costab[2 * j], costab[2 * j + 1], costab[2 * j + 2], p, 1, 0, z)
                    else:
                        nsw = _exact_step(z, &s, j * h, h, Wb, costab[2 * j], costab[2 * j + 1],
                                          costab[2 * j + 2], p)
                        if rec:
                            nswitch[b] += nsw
                    if rec:
                        if z[0] > ext[b, 0]:
                            ext[b, 0] = z[0]
                        if z[0] < ext[b, 1]:
                            ext[b, 1] = z[0]
                        d = 0
                        if zs[1] > 0.0 and z[1] <= 0.0:
                            d = -1
                        elif zs[1] < 0.0 and z[1] >= 0.0:
                            d = 1
                        if d != 0:
                            th = zs[1] / (zs[1] - z[1])
                            t2 = th * th
                            t3 = t2 * th
                            x1h = ((2 * t3 - 3 * t2 + 1) * zs[0] + (t3 - 2 * t2 + th) * h * zs[1]
                                   + (-2 * t3 + 3 * t2) * z[0] + (t3 - t2) * h * z[1])
                            if x1h > ext[b, 0]:
                                ext[b, 0] = x1h
                            if x1h < ext[b, 1]:
                                ext[b, 1] = x1h
                            if sec_dir == 0 or sec_dir == d:
                                k = nsec[b]
                                if k < nsmax:
                                    sec[b, k, 0] = x1h
                                    sec[b, k, 1] = zs[2] + th * (z[2] - zs[2])
                                    sec[b, k, 2] = zs[3] + th * (z[3] - zs[3])
                                    sec[b, k, 3] = (j + th) / N
                                    sec[b, k, 4] = d
                                nsec[b] += 1
                if not (isfinite(z[0]) and isfinite(z[1]) and isfinite(z[2]) and isfinite(z[3])
                        and fabs(z[0]) < 1e6 and fabs(z[2]) < 1e6):
                    for k in range(n_record + 1):
                        for i in range(4):
                            strobe[b, k, i] = nan
                    ext[b, 0] = nan
                    ext[b, 1] = nan
                    break
                if rec:
                    for i in range(4):
                        strobe[b, per - n_transient + 1, i] = z[i]
                elif conv_tol > 0.0:
                    # optional early end of the transient: z_k = z_{k-q} within conv_tol
                    kk = per + 1
                    for i in range(4):
                        hist[kk % (conv_pmax + 1)][i] = z[i]
                    if kk > conv_pmax:
                        conv = 0
                        for q in range(1, conv_pmax + 1):
                            dmax = 0.0
                            for i in range(4):
                                if fabs(z[i] - hist[(kk - q) % (conv_pmax + 1)][i]) > dmax:
                                    dmax = fabs(z[i] - hist[(kk - q) % (conv_pmax + 1)][i])
                            if dmax < conv_tol:
                                conv = 1
                                break
                        if conv:
                            n_used[b] = <int>kk
                            per = n_transient - 1
                per += 1


# ------------------------------------------------------------------- basins that stop early ---
# A hash table of cells of a coarse grid of the stroboscopic section (state at t = k T): keys are
# the four integer cell coordinates packed in 16 bits each, values a * 8 + i (attractor a, orbit
# point i), _CONFLICT (cell seen on two attractors or phases: never used) or _EMPTY.

cdef enum:
    _EMPTY_KEY = -1
    _EMPTY = -1
    _CONFLICT = -2


cdef inline long long _cell_key(const double* z, double cell) noexcept nogil:
    cdef long long key = 0, c
    cdef int i
    cdef double f
    for i in range(4):
        f = z[i] / cell
        if not (f > -32767.0 and f < 32767.0):
            return _EMPTY_KEY
        c = <long long>(f + 32768.0)  # floor, as f + 32768 > 0
        key |= c << (16 * i)
    return key


cdef inline Py_ssize_t _slot(long long key, long long[::1] tkeys) noexcept nogil:
    # linear probing; the slot holding key, or the empty slot where it would go
    cdef Py_ssize_t mask = tkeys.shape[0] - 1
    cdef unsigned long long u = (<unsigned long long>key) * 11400714819323198485ULL
    cdef Py_ssize_t j = <Py_ssize_t>(u >> 40) & mask
    while tkeys[j] != key and tkeys[j] != _EMPTY_KEY:
        j = (j + 1) & mask
    return j


cdef inline int _lookup(long long key, long long[::1] tkeys, int[::1] tvals) noexcept nogil:
    if key == _EMPTY_KEY:
        return _EMPTY
    cdef Py_ssize_t j = _slot(key, tkeys)
    if tkeys[j] == _EMPTY_KEY:
        return _EMPTY
    return tvals[j]


cdef inline void _mark(long long key, int v, long long[::1] tkeys, int[::1] tvals,
                       int[::1] counters) noexcept nogil:
    # counters[1] = cells in the table; the table is never filled beyond one half
    if key == _EMPTY_KEY:
        return
    cdef Py_ssize_t j = _slot(key, tkeys)
    if tkeys[j] == _EMPTY_KEY:
        if 2 * (counters[1] + 1) > tkeys.shape[0]:
            return
        tkeys[j] = key
        tvals[j] = v
        counters[1] += 1
    elif tvals[j] != v:
        tvals[j] = _CONFLICT


cdef inline void _advance_period(double* z, int* s, double Wb, double h, int N, int law,
                                 const double* p, const double[::1] costab) noexcept nogil:
    cdef double zs[4]
    cdef int j, i
    for j in range(N):
        if law == 1:
            for i in range(4):
                zs[i] = z[i]
            _rk4(zs, h, costab[2 * j], costab[2 * j + 1], costab[2 * j + 2], p, 1, 0, z)
        else:
            _exact_step(z, s, j * h, h, Wb, costab[2 * j], costab[2 * j + 1], costab[2 * j + 2], p)


cdef void _mark_path(long long[:, ::1] path, Py_ssize_t b, int k, int a, int i, int q,
                     long long[::1] tkeys, int[::1] tvals, int[::1] counters) noexcept nogil:
    # the trajectory b is at orbit point i of attractor a (period q) at period k
    cdef int kk
    for kk in range(k + 1):
        _mark(path[b, kk], a * 8 + ((i - (k - kk)) % q + q) % q, tkeys, tvals, counters)


def basin_transient(double[:, ::1] Z, double W, const double[::1] prm, int law, int n_transient,
                    int steps, const double[::1] costab, double conv_tol, int conv_pmax,
                    double match_tol, double cell, int n_confirm, long long[::1] tkeys,
                    int[::1] tvals, double[:, :, ::1] att_pts, int[::1] att_per,
                    int[::1] att_cell, int[::1] counters, int[::1] status, int[::1] how,
                    int[::1] n_used, long long[:, ::1] path, double[:, :, ::1] hist):
    """Transients of B cells of a basin, in step, stopped on recognition (see freeplay_ref)."""
    cdef Py_ssize_t B = Z.shape[0], b
    cdef int per, k, q, i, a, v, qa, P = conv_pmax, Amax = att_pts.shape[0]
    cdef double p[12]
    cdef double z[4]
    cdef double h = 6.283185307179586 / W / steps, dmax
    cdef int s
    cdef int[::1] S, hits, last, alignq
    S = _int_zeros(B)
    hits = _int_zeros(B)
    last = _int_zeros(B)
    alignq = _int_zeros(B)
    for i in range(12):
        p[i] = prm[i]
    with nogil:
        for a in range(counters[0]):
            for i in range(att_per[a]):
                _mark(_cell_key(&att_pts[a, i, 0], cell), a * 8 + i, tkeys, tvals, counters)
        for b in range(B):
            S[b] = _region(Z[b, 0], p[8])
            status[b] = -1
            how[b] = 0
            n_used[b] = n_transient
            path[b, 0] = _cell_key(&Z[b, 0], cell)
            for i in range(4):
                hist[b, 0, i] = Z[b, i]
        for per in range(n_transient):
            k = per + 1
            for b in range(B):
                if how[b] != 0 or status[b] != -1:
                    continue
                for i in range(4):
                    z[i] = Z[b, i]
                s = S[b]
                _advance_period(z, &s, W, h, steps, law, p, costab)
                S[b] = s
                for i in range(4):
                    Z[b, i] = z[i]
                if not (isfinite(z[0]) and isfinite(z[1]) and isfinite(z[2]) and isfinite(z[3])
                        and fabs(z[0]) < 1e6 and fabs(z[2]) < 1e6):
                    status[b] = -2
                    how[b] = 3
                    n_used[b] = k
                    continue
                path[b, k] = _cell_key(z, cell)
                for i in range(4):
                    hist[b, k % (P + 1), i] = z[i]
                if alignq[b] == 0:
                    # recognition: n_confirm successive marked cells along one orbit
                    v = _lookup(path[b, k], tkeys, tvals)
                    if v >= 0:
                        qa = att_per[v // 8]
                        if hits[b] > 0 and v == (last[b] // 8) * 8 + (last[b] % 8 + 1) % qa:
                            hits[b] += 1
                        else:
                            hits[b] = 1
                        last[b] = v
                        if hits[b] >= n_confirm:
                            a = v // 8
                            status[b] = a * 8 + ((v % 8 + n_transient - k) % qa)
                            how[b] = 2
                            n_used[b] = k
                            _mark_path(path, b, k, a, v % 8, qa, tkeys, tvals, counters)
                            continue
                    else:
                        hits[b] = 0
                    # convergence: z_k = z_{k-q} within conv_tol, smallest q
                    if conv_tol > 0.0 and k > P:
                        for q in range(1, P + 1):
                            dmax = 0.0
                            for i in range(4):
                                if fabs(z[i] - hist[b, (k - q) % (P + 1), i]) > dmax:
                                    dmax = fabs(z[i] - hist[b, (k - q) % (P + 1), i])
                            if dmax < conv_tol:
                                alignq[b] = q
                                break
                if alignq[b] == 0 or (n_transient - k) % alignq[b] != 0:
                    continue
                # converged and in phase with the end of the full transient: which attractor?
                q = alignq[b]
                n_used[b] = k
                how[b] = 1
                a = -1
                for qa in range(counters[0]):
                    if att_per[qa] != q:
                        continue
                    for i in range(q):
                        dmax = 0.0
                        for v in range(4):
                            if fabs(z[v] - att_pts[qa, i, v]) > dmax:
                                dmax = fabs(z[v] - att_pts[qa, i, v])
                        if dmax < match_tol:
                            a = qa
                            break
                    if a >= 0:
                        break
                if a < 0:
                    if counters[0] >= Amax:
                        continue  # no room: recorded, never shared
                    a = counters[0]
                    counters[0] += 1
                    att_per[a] = q
                    att_cell[a] = <int>b
                    for v in range(4):
                        att_pts[a, 0, v] = z[v]
                    for i in range(1, q):
                        for v in range(4):
                            att_pts[a, i, v] = hist[b, (k - q + i) % (P + 1), v]
                    for i in range(q):
                        _mark(_cell_key(&att_pts[a, i, 0], cell), a * 8 + i, tkeys, tvals,
                              counters)
                    i = 0
                status[b] = a * 8 + i
                _mark_path(path, b, k, a, i, q, tkeys, tvals, counters)


def _int_zeros(Py_ssize_t n):
    import numpy as np
    return np.zeros(n, dtype=np.intc)
