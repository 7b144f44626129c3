# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Sampled return map of many 3-component friction elements (compiled twin of ``hbm3d_ref.py``;
same function, same algorithm, see the docstring there).

Compiled details (same results up to rounding): the elements are done one after the other; per
element the three sampled histories are formed once in ``work``, a first march of values only
finds the number of periods, a second one carries the derivative row pair ``D`` (2, 3m) and
projects the last period: only the ``m`` columns of the predictor's block change in a stick step
(``D += kt (e_i - e_prev)``), the full rows only in slip and after re-contact. ``K`` is
accumulated as ``(2/nt) e_i D_a^T`` per sample. The march starts from rest (slider at the
origin, its basis row a row of zeros in ``work``).
"""

from libc.math cimport sqrt


cdef inline void _values(int nt, const double* a1, const double* a2, const double* nn,
                         double kt, double mu, int periods, int first,
                         double* f) noexcept nogil:
    """March ``periods`` periods of values only from the state ``f`` (2); ``first``: the
    first of them starts from the rest state (slider at the origin) unless separated."""
    cdef int p, i
    cdef double up1, up2, Np, Ni, th, t1, t2, tn, lim, s
    for p in range(periods):
        up1 = a1[nt - 1]
        up2 = a2[nt - 1]
        Np = nn[nt - 1]
        if first and p == 0 and Np > 0:
            up1 = 0.0
            up2 = 0.0
        for i in range(nt):
            Ni = nn[i]
            if Ni <= 0:
                f[0] = 0.0
                f[1] = 0.0
            else:
                if Np <= 0:
                    th = -Np / (Ni - Np)
                    t1 = kt * (1.0 - th) * (a1[i] - up1)
                    t2 = kt * (1.0 - th) * (a2[i] - up2)
                else:
                    t1 = f[0] + kt * (a1[i] - up1)
                    t2 = f[1] + kt * (a2[i] - up2)
                lim = mu * Ni
                tn = sqrt(t1 * t1 + t2 * t2)
                s = lim / tn if tn > lim else 1.0
                f[0] = s * t1
                f[1] = s * t2
            up1 = a1[i]
            up2 = a2[i]
            Np = Ni


def aft_march(const double[:, ::1] P, const double[:, ::1] par, const double[:, ::1] E,
              double tol, int max_periods, double[:, ::1] F, double[:, :, ::1] K,
              double[:, :, ::1] H, int[::1] info, double[::1] res, double[::1] work):
    cdef int ne = P.shape[0], nt = E.shape[0], m = E.shape[1], m3 = 3 * m
    cdef int e, i, j, a, b, period, periods, record, hist = H.shape[0] > 0
    cdef double kt, kn, mu, n0, scale, r, c = 2.0 / nt
    cdef double up1, up2, Np, Ni, th, t1, t2, tn, lim, q, h1, h2, proj, den, ei, dth, fn, w
    cdef double s0, s1, fa, fb
    cdef double f[2]
    cdef double* a1 = &work[0]
    cdef double* a2 = &work[nt]
    cdef double* nn = &work[2 * nt]
    cdef double* D0 = &work[3 * nt]
    cdef double* D1 = &work[3 * nt + m3]
    cdef double* Z = &work[3 * nt + 2 * m3]     # the rest state's basis row (zeros)
    cdef const double* Ei
    cdef const double* Ep
    with nogil:
        for j in range(m):
            Z[j] = 0.0
        for e in range(ne):
            kt = par[e, 0]
            kn = par[e, 1]
            mu = par[e, 2]
            n0 = par[e, 3]
            # sampled histories
            for i in range(nt):
                t1 = 0.0
                t2 = 0.0
                tn = 0.0
                for j in range(m):
                    t1 = t1 + E[i, j] * P[e, j]
                    t2 = t2 + E[i, j] * P[e, m + j]
                    tn = tn + E[i, j] * P[e, 2 * m + j]
                a1[i] = t1
                a2[i] = t2
                nn[i] = n0 + kn * tn
            scale = nn[0]
            for i in range(nt):
                if nn[i] > scale:
                    scale = nn[i]
            scale = mu * (scale if scale > 0 else 0.0)
            # values only: periods until the end value repeats the start value
            f[0] = 0.0
            f[1] = 0.0
            periods = 0
            r = 0.0
            for period in range(1, max_periods + 1):
                s0 = f[0]
                s1 = f[1]
                if period == 1 and nn[nt - 1] > 0:
                    # the rest state gives sample 0 the predictor of f = kt a_-1 held at a_-1:
                    # a period ending there repeats (a contact stuck throughout: one period)
                    s0 = kt * a1[nt - 1]
                    s1 = kt * a2[nt - 1]
                _values(nt, a1, a2, nn, kt, mu, 1, period == 1, f)
                periods = period
                r = sqrt((f[0] - s0) * (f[0] - s0) + (f[1] - s1) * (f[1] - s1))
                if r <= tol * scale:
                    break
            info[e] = periods
            res[e] = r
            # values and derivatives; the last period projected
            for j in range(m3):
                F[e, j] = 0.0
                D0[j] = 0.0
                D1[j] = 0.0
                for a in range(m3):
                    K[e, j, a] = 0.0
            f[0] = 0.0
            f[1] = 0.0
            for period in range(1, periods + 1):
                record = period == periods
                up1 = a1[nt - 1]
                up2 = a2[nt - 1]
                Np = nn[nt - 1]
                Ep = &E[nt - 1, 0]
                if period == 1 and Np > 0:   # from rest: slider at the origin
                    up1 = 0.0
                    up2 = 0.0
                    Ep = Z
                for i in range(nt):
                    Ni = nn[i]
                    Ei = &E[i, 0]
                    if Ni <= 0:
                        f[0] = 0.0
                        f[1] = 0.0
                        for j in range(m3):
                            D0[j] = 0.0
                            D1[j] = 0.0
                    else:
                        if Np <= 0:   # re-contact: D_prev = 0, interpolated origin
                            th = -Np / (Ni - Np)
                            w = kt * (1.0 - th)
                            fa = a1[i] - up1
                            fb = a2[i] - up2
                            t1 = w * fa
                            t2 = w * fb
                            den = (Ni - Np) * (Ni - Np)
                            for j in range(m3):
                                D0[j] = 0.0
                                D1[j] = 0.0
                            for j in range(m):
                                D0[j] = w * (Ei[j] - Ep[j])
                                D1[m + j] = w * (Ei[j] - Ep[j])
                                dth = kn * (Np * Ei[j] - Ni * Ep[j]) / den
                                D0[2 * m + j] = -kt * fa * dth
                                D1[2 * m + j] = -kt * fb * dth
                        else:
                            t1 = f[0] + kt * (a1[i] - up1)
                            t2 = f[1] + kt * (a2[i] - up2)
                            for j in range(m):
                                D0[j] += kt * (Ei[j] - Ep[j])
                                D1[m + j] += kt * (Ei[j] - Ep[j])
                        lim = mu * Ni
                        tn = sqrt(t1 * t1 + t2 * t2)
                        if tn > lim:   # radial return and its derivative
                            h1 = t1 / tn
                            h2 = t2 / tn
                            q = lim / tn
                            for j in range(m3):
                                proj = h1 * D0[j] + h2 * D1[j]
                                D0[j] = q * (D0[j] - h1 * proj)
                                D1[j] = q * (D1[j] - h2 * proj)
                            for j in range(m):
                                D0[2 * m + j] += mu * kn * h1 * Ei[j]
                                D1[2 * m + j] += mu * kn * h2 * Ei[j]
                            f[0] = q * t1
                            f[1] = q * t2
                        else:
                            f[0] = t1
                            f[1] = t2
                    if record:
                        fn = Ni if Ni > 0 else 0.0
                        for j in range(m):
                            ei = c * Ei[j]
                            F[e, j] += ei * f[0]
                            F[e, m + j] += ei * f[1]
                            F[e, 2 * m + j] += ei * fn
                            for a in range(m3):
                                K[e, j, a] += ei * D0[a]
                                K[e, m + j, a] += ei * D1[a]
                            if Ni > 0:
                                for b in range(m):
                                    K[e, 2 * m + j, 2 * m + b] += ei * kn * Ei[b]
                        if hist:
                            H[e, i, 0] = f[0]
                            H[e, i, 1] = f[1]
                            H[e, i, 2] = fn
                    up1 = a1[i]
                    up2 = a2[i]
                    Np = Ni
                    Ep = Ei
