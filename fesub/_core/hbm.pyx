# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Transition-time march of a stick-slip-separation friction element (compiled twin of
``hbm_ref.py``; same function, same algorithm, see the docstring there).

The caller validates the inputs and allocates ``work`` (>= 10 nh), ``tau_out``, ``from_out``,
``to_out`` (same length, the capacity) and ``info`` (>= 2).

Compiled details (same results up to rounding): ``cos(k tau)``, ``sin(k tau)`` come from
``cos tau``, ``sin tau`` by angle addition and are tabulated once per grid point, shared by
every test function and derivative there (the end of a grid step is the start of the next);
the separation test is skipped when ``ky Y == 0`` (the 1D element: ``f = -N0 < 0`` never
crosses).
"""

from libc.math cimport cos, sin, fabs, M_PI

cdef double TWO_PI = 2.0 * M_PI


cdef inline double _phase(const double* g, int k, double ck, double sk, int r) noexcept nogil:
    """``d^r/dtau^r`` of ``g_c cos + g_s sin`` at ``k tau`` over ``k^r`` (``r = d mod 4``)."""
    if r == 0:
        return g[2 * k - 2] * ck + g[2 * k - 1] * sk
    if r == 1:
        return g[2 * k - 1] * ck - g[2 * k - 2] * sk
    if r == 2:
        return -(g[2 * k - 2] * ck + g[2 * k - 1] * sk)
    return g[2 * k - 2] * sk - g[2 * k - 1] * ck


cdef double _trig(const double* g, int nh, double tau, int d) noexcept nogil:
    """``d``-th tau-derivative of ``g^T H(tau)``; ``cos(k tau)``, ``sin(k tau)`` by the
    angle-addition recurrence from ``cos tau``, ``sin tau`` (error ~k eps)."""
    cdef int k, j, r = d % 4
    cdef double kd, acc = 0.0, c1 = cos(tau), s1 = sin(tau), ck = c1, sk = s1, tmp
    for k in range(1, nh + 1):
        kd = 1.0
        for j in range(d):
            kd *= k
        acc += kd * _phase(g, k, ck, sk, r)
        tmp = ck * c1 - sk * s1
        sk = sk * c1 + ck * s1
        ck = tmp
    return acc


cdef double _bisect_deriv(const double* g, int nh, int d, double s, double lo, double hi) noexcept nogil:
    cdef double flo = s * _trig(g, nh, lo, d + 1), m, fm
    cdef int it
    for it in range(80):
        m = 0.5 * (lo + hi)
        if m <= lo or m >= hi:
            break
        fm = s * _trig(g, nh, m, d + 1)
        if (fm > 0) == (flo > 0):
            lo = m
            flo = fm
        else:
            hi = m
    return 0.5 * (lo + hi)


cdef void _table(int nh, double tau, double* cs) noexcept nogil:
    """``cs[2k-2], cs[2k-1] = cos(k tau), sin(k tau)``, k = 1..nh (shared by every test
    function and derivative at ``tau``)."""
    cdef int k
    cdef double c1 = cos(tau), s1 = sin(tau)
    cs[0] = c1
    cs[1] = s1
    for k in range(2, nh + 1):   # angle addition (error ~k eps)
        cs[2 * k - 2] = cs[2 * k - 4] * c1 - cs[2 * k - 3] * s1
        cs[2 * k - 1] = cs[2 * k - 3] * c1 + cs[2 * k - 4] * s1


cdef double _trig_tab(const double* g, int nh, const double* cs, int d) noexcept nogil:
    """``d``-th tau-derivative of ``g^T H`` from the table ``cs`` of :func:`_table`
    (``d/dtau (cos, sin) = k (-sin, cos)``)."""
    cdef int k, j, r = d % 4
    cdef double kd, acc = 0.0
    for k in range(1, nh + 1):
        kd = 1.0
        for j in range(d):
            kd *= k
        acc += kd * _phase(g, k, cs[2 * k - 2], cs[2 * k - 1], r)
    return acc


cdef double _first_up(const double* g, int nh, int d, double a0, double s, double lo, double hi,
                      double tol, const double* tlo, const double* thi) noexcept nogil:
    """As the twin's ``_first_up``; the values at ``lo`` and ``hi`` come from the tables
    ``tlo``, ``thi`` (:func:`_table` at those times)."""
    cdef double dl = s * _trig_tab(g, nh, tlo, d + 1)
    cdef double dr = s * _trig_tab(g, nh, thi, d + 1)
    cdef double pa[2]
    cdef double pb[2]
    cdef double fpa[2]
    cdef double fpb[2]
    cdef int npieces = 1, p, it
    cdef double a, b, fa, fb, la, hb, m, tc, ftc
    pa[0] = lo
    pb[0] = hi
    fpa[0] = a0 + s * _trig_tab(g, nh, tlo, d)
    fpb[0] = a0 + s * _trig_tab(g, nh, thi, d)
    if ((dl > 0) != (dr > 0)) and dl != 0 and dr != 0:
        tc = _bisect_deriv(g, nh, d, s, lo, hi)
        ftc = a0 + s * _trig(g, nh, tc, d)
        pb[0] = tc
        fpb[1] = fpb[0]
        fpb[0] = ftc
        pa[1] = tc
        fpa[1] = ftc
        pb[1] = hi
        npieces = 2
    for p in range(npieces):
        a = pa[p]
        b = pb[p]
        fa = fpa[p]
        fb = fpb[p]
        if fb > tol and fa < fb:
            la = a
            hb = b
            for it in range(80):
                m = 0.5 * (la + hb)
                if m <= la or m >= hb:
                    break
                if a0 + s * _trig(g, nh, m, d) > 0:
                    hb = m
                else:
                    la = m
            return hb
    return -1.0


def march(const double[::1] X, const double[::1] Y, int nh, double kx, double ky, double mu,
          double n0, int ngrid, double tol, double[::1] work, double[::1] tau_out,
          int[::1] from_out, int[::1] to_out, int[::1] info):
    cdef int m = 2 * nh
    cdef int cap = tau_out.shape[0]
    cdef int i, j, period, state, old, kind, nev, n = 0, count1 = 0, ncand, q, overflow = 0
    cdef double c, N, h, t, b, best, r, ts, xi, xd, yd, tl_t = -1.0
    cdef int normal = 0
    if work.shape[0] < 5 * m:
        raise ValueError(f"work must hold >= 10 nh = {5 * m} values, got {work.shape[0]}")
    cdef double* g0 = &work[0]
    cdef double* g1 = &work[m]
    cdef double* g2 = &work[2 * m]
    cdef double* tl = &work[3 * m]
    cdef double* tb = &work[4 * m]
    cdef double* tmp
    cdef const double* gs[3]
    cdef const double* cg[3]
    cdef int cd[3]
    cdef double ca[3]
    cdef double cs[3]
    cdef int ck[3]
    with nogil:
        for j in range(m):
            g0[j] = kx * X[j] - mu * ky * Y[j]
            g1[j] = kx * X[j] + mu * ky * Y[j]
            g2[j] = ky * Y[j]
            if g2[j] != 0:
                normal = 1
        N = n0 + _trig(g2, nh, 0.0, 0)
        if N <= 0:
            state = 3
            c = 0.0
        else:
            state = 0
            c = -kx * _trig(&X[0], nh, 0.0, 0)
        h = TWO_PI / ngrid
        for period in range(2):
            if overflow:
                break
            if period == 1:
                info[0] = state
            nev = 0
            for i in range(ngrid):
                if overflow:
                    break
                t = i * h
                b = TWO_PI if i == ngrid - 1 else (i + 1) * h
                if tl_t != t:
                    _table(nh, t, tl)
                    tl_t = t
                _table(nh, b, tb)
                while True:
                    best = -1.0
                    kind = -1
                    if state == 0:
                        ncand = 2 + normal
                        cg[0] = g0; cd[0] = 0; ca[0] = c - mu * n0; cs[0] = 1.0; ck[0] = 0
                        cg[1] = g1; cd[1] = 0; ca[1] = -c - mu * n0; cs[1] = -1.0; ck[1] = 1
                        cg[2] = g2; cd[2] = 0; ca[2] = -n0; cs[2] = -1.0; ck[2] = 2
                    elif state == 1:
                        ncand = 1 + normal
                        cg[0] = g0; cd[0] = 1; ca[0] = 0.0; cs[0] = -1.0; ck[0] = 3
                        cg[1] = g2; cd[1] = 0; ca[1] = -n0; cs[1] = -1.0; ck[1] = 2
                    elif state == 2:
                        ncand = 1 + normal
                        cg[0] = g1; cd[0] = 1; ca[0] = 0.0; cs[0] = 1.0; ck[0] = 4
                        cg[1] = g2; cd[1] = 0; ca[1] = -n0; cs[1] = -1.0; ck[1] = 2
                    else:
                        ncand = 1
                        cg[0] = g2; cd[0] = 0; ca[0] = n0; cs[0] = 1.0; ck[0] = 5
                    for q in range(ncand):
                        r = _first_up(cg[q], nh, cd[q], ca[q], cs[q], t, b, tol, tl, tb)
                        if r >= 0 and (best < 0 or r < best):
                            best = r
                            kind = ck[q]
                    if best < 0:
                        break
                    ts = best
                    old = state
                    if kind == 0:
                        state = 1
                    elif kind == 1:
                        state = 2
                    elif kind == 2:
                        state = 3
                    elif kind == 3 or kind == 4:
                        xi = 1.0 if kind == 3 else -1.0
                        state = 0
                        c = xi * mu * (n0 + _trig(g2, nh, ts, 0)) - kx * _trig(&X[0], nh, ts, 0)
                    else:
                        xd = _trig(&X[0], nh, ts, 1)
                        yd = _trig(g2, nh, ts, 1)
                        if kx * fabs(xd) <= mu * yd:
                            state = 0
                            c = -kx * _trig(&X[0], nh, ts, 0)
                        elif xd > 0:
                            state = 1
                        else:
                            state = 2
                    nev += 1
                    if period == 1:
                        if n >= cap:
                            overflow = 1
                            break
                        tau_out[n] = ts
                        from_out[n] = old
                        to_out[n] = state
                        n += 1
                    elif nev > cap:
                        overflow = 1
                        break
                    t = ts
                    _table(nh, t, tl)
                    tl_t = t
                tmp = tl
                tl = tb
                tb = tmp
                tl_t = b
            if period == 0:
                count1 = nev
                info[1] = count1
                if count1 == 0:
                    info[0] = state
                    break
    if overflow:
        return -1
    if count1 == 0:
        return 0
    return n


cdef void _interval_integrals(int nh, double a, double b, double* tab, double* w,
                              double* W) noexcept nogil:
    """``w = (1/pi) int_a^b H`` (2 nh) and ``W = (1/pi) int_a^b H H^T`` (2 nh x 2 nh, row
    major) in closed form; ``tab`` holds >= 2 (2 nh + 1) values."""
    cdef int k, n, q, m = 2 * nh, kmax = 2 * nh + 1, dn, sg
    cdef double* C = tab
    cdef double* S = &tab[kmax]
    cdef double ipi = 1.0 / M_PI, cd, ca, sd, sa
    C[0] = b - a
    S[0] = 0.0
    for k in range(1, kmax):
        C[k] = (sin(k * b) - sin(k * a)) / k
        S[k] = (cos(k * a) - cos(k * b)) / k
    for n in range(1, nh + 1):
        w[2 * n - 2] = C[n] * ipi
        w[2 * n - 1] = S[n] * ipi
        for q in range(1, nh + 1):
            dn = n - q if n >= q else q - n
            sg = 1 if n > q else (-1 if n < q else 0)
            cd = C[dn]
            ca = C[n + q]
            sd = sg * S[dn]
            sa = S[n + q]
            W[(2 * n - 2) * m + 2 * q - 2] = 0.5 * (cd + ca) * ipi
            W[(2 * n - 1) * m + 2 * q - 1] = 0.5 * (cd - ca) * ipi
            W[(2 * n - 2) * m + 2 * q - 1] = 0.5 * (sa - sd) * ipi
            W[(2 * n - 1) * m + 2 * q - 2] = 0.5 * (sa + sd) * ipi


def cycle_forces(const double[::1] X, const double[::1] Y, int nh, double kx, double ky,
                 double mu, double n0, const double[::1] tau, const int[::1] fr,
                 const int[::1] to, double[::1] F, double[:, ::1] K, double[::1] work):
    cdef int m = 2 * nh, mp = 4 * nh, nev = tau.shape[0]
    cdef int j, s, a_, b_, k, q
    cdef double ta, tb, xi, c, x, y, xd, yd, cs, sn, acc, accy
    if work.shape[0] < 4 * nh * nh + 12 * nh + 2:
        raise ValueError(f"work must hold >= 4 nh^2 + 12 nh + 2 = {4 * nh * nh + 12 * nh + 2} "
                         f"values, got {work.shape[0]}")
    if F.shape[0] != mp or K.shape[0] != mp or K.shape[1] != mp:
        raise ValueError(f"F must be ({mp},) and K ({mp}, {mp})")
    cdef double* tab = &work[0]
    cdef double* w = &work[4 * nh + 2]
    cdef double* W = &work[6 * nh + 2]
    cdef double* Hs = &work[4 * nh * nh + 6 * nh + 2]
    cdef double* dc = &work[4 * nh * nh + 8 * nh + 2]
    with nogil:
        for a_ in range(mp):
            F[a_] = 0.0
            for b_ in range(mp):
                K[a_, b_] = 0.0
        for j in range(nev):
            s = to[j]
            if s == 3:
                continue
            ta = tau[j]
            tb = tau[j + 1] if j + 1 < nev else tau[0] + TWO_PI
            _interval_integrals(nh, ta, tb, tab, w, W)
            if s == 0:
                # offset of the stick interval and its gradient, from the transition at ta
                x = 0.0
                y = 0.0
                xd = 0.0
                yd = 0.0
                for k in range(1, nh + 1):
                    cs = cos(k * ta)
                    sn = sin(k * ta)
                    Hs[2 * k - 2] = cs
                    Hs[2 * k - 1] = sn
                    x += X[2 * k - 2] * cs + X[2 * k - 1] * sn
                    y += Y[2 * k - 2] * cs + Y[2 * k - 1] * sn
                    xd += k * (X[2 * k - 1] * cs - X[2 * k - 2] * sn)
                    yd += k * (Y[2 * k - 1] * cs - Y[2 * k - 2] * sn)
                if fr[j] == 1 or fr[j] == 2:
                    xi = 1.0 if fr[j] == 1 else -1.0
                    c = xi * mu * (n0 + ky * y) - kx * x
                    for a_ in range(m):
                        dc[a_] = -kx * Hs[a_]
                        dc[m + a_] = xi * mu * ky * Hs[a_]
                else:  # re-contact in stick (N0 + ky y = 0 at ta)
                    c = -kx * x
                    for a_ in range(m):
                        dc[a_] = -kx * Hs[a_]
                        dc[m + a_] = kx * xd * Hs[a_] / yd
                for a_ in range(m):
                    acc = 0.0
                    for b_ in range(m):
                        acc += W[a_ * m + b_] * X[b_]
                        K[a_, b_] += kx * W[a_ * m + b_]
                    F[a_] += kx * acc + c * w[a_]
                    for b_ in range(mp):
                        K[a_, b_] += w[a_] * dc[b_]
            else:
                xi = 1.0 if s == 1 else -1.0
                for a_ in range(m):
                    accy = 0.0
                    for b_ in range(m):
                        accy += W[a_ * m + b_] * Y[b_]
                        K[a_, m + b_] += xi * mu * ky * W[a_ * m + b_]
                    F[a_] += xi * mu * (n0 * w[a_] + ky * accy)
            for a_ in range(m):
                accy = 0.0
                for b_ in range(m):
                    accy += W[a_ * m + b_] * Y[b_]
                    K[m + a_, m + b_] += ky * W[a_ * m + b_]
                F[m + a_] += n0 * w[a_] + ky * accy


cdef void _point(int nh, const double[::1] X, const double[::1] Y, double tau, double* Hs,
                 double* Hd, double* v) noexcept nogil:
    """Rows ``H(tau)``, ``H'(tau)`` and ``v = [x, x', x'', y, y', y'']`` at ``tau``."""
    cdef int k, j
    cdef double cs, sn
    for j in range(6):
        v[j] = 0.0
    for k in range(1, nh + 1):
        cs = cos(k * tau)
        sn = sin(k * tau)
        Hs[2 * k - 2] = cs
        Hs[2 * k - 1] = sn
        Hd[2 * k - 2] = -k * sn
        Hd[2 * k - 1] = k * cs
        v[0] += X[2 * k - 2] * cs + X[2 * k - 1] * sn
        v[1] += X[2 * k - 2] * Hd[2 * k - 2] + X[2 * k - 1] * Hd[2 * k - 1]
        v[2] -= k * k * (X[2 * k - 2] * cs + X[2 * k - 1] * sn)
        v[3] += Y[2 * k - 2] * cs + Y[2 * k - 1] * sn
        v[4] += Y[2 * k - 2] * Hd[2 * k - 2] + Y[2 * k - 1] * Hd[2 * k - 1]
        v[5] -= k * k * (Y[2 * k - 2] * cs + Y[2 * k - 1] * sn)


cdef void _sym_update(double[:, ::1] HL, int mp, double coef, const double* p,
                      const double* d, double q) noexcept nogil:
    """``HL += coef (p d^T + d p^T + q d d^T)``."""
    cdef int a, b
    for a in range(mp):
        for b in range(mp):
            HL[a, b] += coef * (p[a] * d[b] + d[a] * p[b] + q * d[a] * d[b])


def cycle_hess_lam(const double[::1] X, const double[::1] Y, int nh, double kx, double ky,
                   double mu, double n0, const double[::1] tau, const int[::1] fr,
                   const int[::1] to, const double[::1] lam, double[:, ::1] HL,
                   double[::1] work):
    cdef int m = 2 * nh, mp = 4 * nh, nev = tau.shape[0]
    cdef int j, t, jb, sb, sa, s_, a_, k
    cdef double xi, ta, tb, aj, gt, coef, lx, ly, ipi = 1.0 / M_PI
    cdef double v[6]
    if work.shape[0] < (nev + 7) * mp:
        raise ValueError(f"work must hold >= (transitions + 7) 4 nh = {(nev + 7) * mp} values, "
                         f"got {work.shape[0]}")
    if lam.shape[0] != mp or HL.shape[0] != mp or HL.shape[1] != mp:
        raise ValueError(f"lam must be ({mp},) and HL ({mp}, {mp})")
    cdef double* dc = &work[0]
    cdef double* Hs = &work[nev * mp]
    cdef double* Hd = &work[(nev + 1) * mp]
    cdef double* dt = &work[(nev + 2) * mp]
    cdef double* p = &work[(nev + 3) * mp]
    cdef double* jx = &work[(nev + 4) * mp]
    cdef double* jy = &work[(nev + 5) * mp]
    cdef double* u = &work[(nev + 6) * mp]
    with nogil:
        for a_ in range(mp):
            for k in range(mp):
                HL[a_, k] = 0.0
        # ---- stick intervals: offset gradients dc_j and the curvature lam.w_j d2c_j
        for j in range(nev):
            for a_ in range(mp):
                dc[j * mp + a_] = 0.0
            if to[j] != 0:
                continue
            ta = tau[j]
            tb = tau[j + 1] if j + 1 < nev else tau[0] + TWO_PI
            aj = 0.0
            for k in range(1, nh + 1):
                aj += lam[2 * k - 2] * (sin(k * tb) - sin(k * ta)) / (k * M_PI)
                aj += lam[2 * k - 1] * (cos(k * ta) - cos(k * tb)) / (k * M_PI)
            _point(nh, X, Y, ta, Hs, Hd, v)
            if fr[j] == 1 or fr[j] == 2:   # slip -> stick
                xi = 1.0 if fr[j] == 1 else -1.0
                gt = xi * kx * v[2] - mu * ky * v[5]
                for a_ in range(m):
                    dc[j * mp + a_] = -kx * Hs[a_]
                    dc[j * mp + m + a_] = xi * mu * ky * Hs[a_]
                    dt[a_] = -xi * kx * Hd[a_] / gt
                    dt[m + a_] = mu * ky * Hd[a_] / gt
                    p[a_] = -kx * Hd[a_]
                    p[m + a_] = xi * mu * ky * Hd[a_]
                _sym_update(HL, mp, aj, p, dt, xi * mu * ky * v[5] - kx * v[2])
            else:                          # re-contact in stick (N0 + ky y = 0)
                for a_ in range(m):
                    dc[j * mp + a_] = -kx * Hs[a_]
                    dc[j * mp + m + a_] = kx * v[1] * Hs[a_] / v[4]
                    dt[a_] = 0.0
                    dt[m + a_] = -Hs[a_] / v[4]
                    p[a_] = Hd[a_]
                    p[m + a_] = -(v[1] / v[4]) * Hd[a_]
                _sym_update(HL, mp, -kx * aj, p, dt, v[2] - v[1] * v[5] / v[4])
        # ---- transitions: jump of the law's gradient times the time sensitivity
        for t in range(nev):
            jb = t - 1 if t > 0 else nev - 1
            sb = fr[t]
            sa = to[t]
            if (sb == 1 or sb == 2) and sa == 0:
                continue                   # slip -> stick: the law is C1 there
            _point(nh, X, Y, tau[t], Hs, Hd, v)
            if sb == 0 and (sa == 1 or sa == 2):
                xi = 1.0 if sa == 1 else -1.0
                gt = kx * v[1] - xi * mu * ky * v[4]
                for a_ in range(m):
                    dt[a_] = -(kx * Hs[a_] + dc[jb * mp + a_]) / gt
                    dt[m + a_] = -(dc[jb * mp + m + a_] - xi * mu * ky * Hs[a_]) / gt
            else:                          # transitions set by N0 + ky y = 0
                for a_ in range(m):
                    dt[a_] = 0.0
                    dt[m + a_] = -Hs[a_] / v[4]
            # law gradients before (state sb, interval jb) minus after (sa, interval t)
            for a_ in range(mp):
                jx[a_] = 0.0
                jy[a_] = 0.0
            for k in range(2):
                j = jb if k == 0 else t
                coef = 1.0 if k == 0 else -1.0
                s_ = sb if k == 0 else sa
                if s_ == 3:
                    continue
                for a_ in range(m):
                    jy[m + a_] += coef * ky * Hs[a_]
                if s_ == 0:
                    for a_ in range(m):
                        jx[a_] += coef * kx * Hs[a_]
                    for a_ in range(mp):
                        jx[a_] += coef * dc[j * mp + a_]
                else:
                    xi = 1.0 if s_ == 1 else -1.0
                    for a_ in range(m):
                        jx[m + a_] += coef * xi * mu * ky * Hs[a_]
            lx = 0.0
            ly = 0.0
            for a_ in range(m):
                lx += lam[a_] * Hs[a_]
                ly += lam[m + a_] * Hs[a_]
            for a_ in range(mp):
                u[a_] = ipi * (lx * jx[a_] + ly * jy[a_])
            for a_ in range(mp):
                for k in range(mp):
                    HL[a_, k] += u[a_] * dt[k]
