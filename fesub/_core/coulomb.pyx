# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled kernels of the Coulomb-chain study (NumPy twin: ``coulomb_ref.py``).

* ``run_periods`` -- event-driven propagation of a piecewise-linear oscillator whose segments
  are sums of sinusoids (exact modal solution), with stick/slip switching, period by period until
  the Poincare map settles. Array layouts are documented in ``coulomb_ref.py``.
The kernels allocate nothing; the Python wrappers validate inputs and allocate outputs.
"""

from libc.math cimport sin, cos, fabs, ceil, fmin, fmax, M_PI, INFINITY


cdef inline double _fval(double t, double tau0, const double* om, Py_ssize_t m, const double* A,
                         const double* B, double C0, double C1, double C2) noexcept nogil:
    cdef double f = C0 + C1 * cos(tau0 + t) + C2 * sin(tau0 + t)
    cdef Py_ssize_t i
    for i in range(m):
        f += A[i] * cos(om[i] * t) + B[i] * sin(om[i] * t)
    return f


cdef inline double _fder(double t, double tau0, const double* om, Py_ssize_t m, const double* A,
                         const double* B, double C0, double C1, double C2) noexcept nogil:
    cdef double f = -C1 * sin(tau0 + t) + C2 * cos(tau0 + t)
    cdef Py_ssize_t i
    for i in range(m):
        f += om[i] * (-A[i] * sin(om[i] * t) + B[i] * cos(om[i] * t))
    return f


cdef double _refine(double lo, double hi, double sgn, double thr, double tau0, const double* om,
                    Py_ssize_t m, const double* A, const double* B, double C0, double C1,
                    double C2) noexcept nogil:
    """Root of sgn f(t) - thr in [lo, hi], G(lo) < 0 <= G(hi): safeguarded Newton."""
    cdef double scale = fabs(C0) + fabs(C1) + fabs(C2) + fabs(thr)
    cdef Py_ssize_t i, it
    cdef double t, g, d, tn
    for i in range(m):
        scale += fabs(A[i]) + fabs(B[i])
    t = 0.5 * (lo + hi)
    for it in range(100):
        g = sgn * _fval(t, tau0, om, m, A, B, C0, C1, C2) - thr
        if g < 0.0:
            lo = t
        else:
            hi = t
        if fabs(g) <= 4e-16 * scale or hi - lo <= 4e-16 * (1.0 + hi):
            break
        d = sgn * _fder(t, tau0, om, m, A, B, C0, C1, C2)
        if d != 0.0:
            tn = t - g / d
        else:
            tn = 0.5 * (lo + hi)
        if not (lo < tn and tn < hi):
            tn = 0.5 * (lo + hi)
        t = tn
    if sgn * _fval(hi, tau0, om, m, A, B, C0, C1, C2) - thr >= 0.0 and hi - t < 1e-14:
        return hi
    return t


def run_periods(double[::1] x, double[::1] v, long[::1] istate, double[::1] dstate,
                const double[::1] om1, const double[:, ::1] B1, const double[:, ::1] P1,
                const double[::1] cv1, const double[::1] H1, const double[::1] K1,
                const double[::1] om2, const double[:, ::1] B2, const double[:, ::1] P2,
                const double[::1] d2, const double[::1] H2, const double[::1] K2,
                const double[::1] lrow, const double[::1] w, const double[::1] kw,
                const double[::1] params, const long[::1] iparams, double[:, ::1] seglog,
                long[::1] counts, double[::1] work):
    """Propagate whole forcing periods until the Poincare map settles (see coulomb_ref.py)."""
    cdef Py_ssize_t n = x.shape[0], n2 = om2.shape[0]
    cdef double bamp = params[0], Lc0 = params[1], Lc = params[2], L0 = params[3]
    cdef double mubeta = params[4], kick = params[5], h1 = params[6], h2 = params[7], tol = params[8]
    cdef long max_periods = iparams[0], min_periods = iparams[1], max_seg = iparams[2]
    cdef long mode = istate[0], mode_old, nper = 0, nseg, nstick, nrev, nslip, status = 0, conv = 0
    cdef double c0 = dstate[0], delta = INFINITY, delta_prev = INFINITY, rho = 1.0
    cdef double tau, T, h, t_end, te, lo, hi, sg, thr, fk, f0, tk, tprev, g0, gd0, ph, cph, sph
    cdef double C0, C1, C2, acc, scale, lam, te_abs
    cdef Py_ssize_t i, k, nm, nk, kk
    cdef bint hit
    cdef const double* om
    cdef const double* Hm
    # workspace layout
    cdef double* y0 = &work[0]
    cdef double* yd0 = &work[n]
    cdef double* a = &work[2 * n]
    cdef double* b = &work[3 * n]
    cdef double* Pc = &work[4 * n]
    cdef double* A = &work[5 * n]
    cdef double* B = &work[6 * n]
    cdef double* zold = &work[7 * n]       # 2n
    cdef double* xs = &work[9 * n]
    cdef double* vs = &work[10 * n]
    cdef double* tmp = &work[11 * n]
    cdef double* tmp2 = &work[12 * n]
    with nogil:
        for i in range(n):
            xs[i] = x[i]
            vs[i] = v[i]
        nper = 0
        while nper < max_periods:
            nper += 1
            for i in range(n):
                zold[i] = xs[i]
                zold[n + i] = vs[i]
            mode_old = mode
            tau = 0.0
            nseg = 0
            nstick = 0
            nrev = 0
            nslip = 0
            while True:
                if nseg >= max_seg:
                    status = 2
                    break
                seglog[nseg, 0] = tau
                seglog[nseg, 1] = <double> mode
                seglog[nseg, 2] = c0
                for i in range(n):
                    seglog[nseg, 3 + i] = xs[i]
                    seglog[nseg, 3 + n + i] = vs[i]
                nseg += 1
                # ---- segment set-up: modal coordinates, particular and event coefficients
                if mode != 0:
                    nm = n
                    om = &om1[0]
                    Hm = &H1[0]
                    for k in range(n):
                        acc = 0.0
                        sph = 0.0
                        for i in range(n):
                            acc += P1[k, i] * xs[i]
                            sph += P1[k, i] * vs[i]
                        y0[k] = acc
                        yd0[k] = sph
                        Pc[k] = mode * K1[k]
                else:
                    nm = n2
                    om = &om2[0] if n2 > 0 else &om1[0]
                    Hm = &H2[0] if n2 > 0 else &H1[0]
                    g0 = bamp * cos(tau) + c0
                    gd0 = -bamp * sin(tau)
                    for i in range(n):
                        tmp[i] = xs[i] - d2[i] * g0
                        tmp2[i] = vs[i] - d2[i] * gd0
                    for k in range(n2):
                        acc = 0.0
                        sph = 0.0
                        for i in range(n):
                            acc += P2[k, i] * tmp[i]
                            sph += P2[k, i] * tmp2[i]
                        y0[k] = acc
                        yd0[k] = sph
                        Pc[k] = c0 * K2[k]
                for k in range(nm):
                    a[k] = y0[k] - Pc[k] - Hm[k] * cos(tau)
                    b[k] = (yd0[k] + Hm[k] * sin(tau)) / om[k]
                if mode != 0:
                    acc = 0.0
                    for k in range(nm):
                        A[k] = cv1[k] * om[k] * b[k]
                        B[k] = -cv1[k] * om[k] * a[k]
                        acc += cv1[k] * Hm[k]
                    C0 = 0.0
                    C1 = 0.0
                    C2 = bamp - acc
                else:
                    C0 = L0 * c0
                    C1 = Lc
                    for k in range(nm):
                        A[k] = lrow[k] * a[k]
                        B[k] = lrow[k] * b[k]
                        C0 += lrow[k] * Pc[k]
                        C1 += lrow[k] * Hm[k]
                    C2 = 0.0
                # ---- bracket the first event on the grid, then refine
                T = 2.0 * M_PI - tau
                h = h1 if mode != 0 else h2
                nk = <Py_ssize_t> ceil(T / h)
                if nk < 1:
                    nk = 1
                hit = False
                tprev = 0.0
                fk = 0.0
                for kk in range(1, nk + 1):
                    tk = fmin(kk * h, T)
                    fk = _fval(tk, tau, om, nm, A, B, C0, C1, C2)
                    if mode != 0:
                        hit = -mode * fk >= 0.0
                    else:
                        hit = fabs(fk) - mubeta >= 0.0
                    if hit:
                        break
                    tprev = tk
                if hit:
                    lo = tprev
                    hi = tk
                    if mode != 0:
                        sg = -(<double> mode)
                        thr = 0.0
                    else:
                        sg = 1.0 if fk > 0 else -1.0
                        thr = mubeta
                    if lo == 0.0 and sg * _fval(0.0, tau, om, nm, A, B, C0, C1, C2) - thr >= 0.0:
                        te = 0.0
                    else:
                        te = _refine(lo, hi, sg, thr, tau, om, nm, A, B, C0, C1, C2)
                    t_end = te
                else:
                    t_end = T
                # ---- state at the end of the segment
                te_abs = tau + t_end
                for k in range(nm):
                    ph = om[k] * t_end
                    cph = cos(ph)
                    sph = sin(ph)
                    y0[k] = a[k] * cph + b[k] * sph + Pc[k] + Hm[k] * cos(te_abs)
                    yd0[k] = om[k] * (-a[k] * sph + b[k] * cph) - Hm[k] * sin(te_abs)
                if mode != 0:
                    for i in range(n):
                        acc = 0.0
                        sph = 0.0
                        for k in range(n):
                            acc += B1[i, k] * y0[k]
                            sph += B1[i, k] * yd0[k]
                        xs[i] = acc
                        vs[i] = sph
                else:
                    g0 = bamp * cos(te_abs) + c0
                    gd0 = -bamp * sin(te_abs)
                    for i in range(n):
                        acc = d2[i] * g0
                        sph = d2[i] * gd0
                        for k in range(n2):
                            acc += B2[i, k] * y0[k]
                            sph += B2[i, k] * yd0[k]
                        xs[i] = acc
                        vs[i] = sph
                if not hit:
                    break
                # ---- transition
                if mode != 0:
                    lam = Lc0 * cos(te_abs)
                    acc = 0.0
                    for i in range(n):
                        lam -= kw[i] * xs[i]
                        acc += w[i] * vs[i]
                    acc += bamp * sin(te_abs)
                    for i in range(n):
                        vs[i] -= d2[i] * acc
                    if fabs(lam) <= mubeta:
                        mode = 0
                        acc = 0.0
                        for i in range(n):
                            acc += w[i] * xs[i]
                        c0 = acc - bamp * cos(te_abs)
                        nstick += 1
                    else:
                        mode = 1 if lam > 0 else -1
                        for i in range(n):
                            vs[i] += mode * kick * d2[i]
                        nrev += 1
                else:
                    lam = _fval(t_end, tau, om, nm, A, B, C0, C1, C2)
                    mode = 1 if lam > 0 else -1
                    for i in range(n):
                        vs[i] += mode * kick * d2[i]
                    nslip += 1
                tau = te_abs
            if status != 0:
                break
            scale = 1e-300
            acc = 0.0
            for i in range(n):
                scale = fmax(scale, fmax(fabs(xs[i]), fabs(vs[i])))
                acc = fmax(acc, fmax(fabs(xs[i] - zold[i]), fabs(vs[i] - zold[n + i])))
            delta = acc / scale
            if delta_prev > 0:
                rho = fmin(fmax(delta / delta_prev, 0.0), 0.999)
            else:
                rho = 0.0
            delta_prev = delta
            counts[2] = nstick
            counts[3] = nrev
            counts[4] = nslip
            counts[5] = nseg
            if nper >= min_periods and mode == mode_old and delta / (1.0 - rho) < tol:
                conv = 1
                break
        for i in range(n):
            x[i] = xs[i]
            v[i] = vs[i]
    istate[0] = mode
    dstate[0] = c0
    dstate[1] = delta
    dstate[2] = rho
    counts[0] = nper
    counts[1] = conv
    counts[6] = status
    return status
