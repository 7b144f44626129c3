# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Closed-form friction profiles of a circular contact, one pass per element (compiled).

Same functions and signatures as ``circular_ref.py``. ``law`` is 0 (uniform) or 1 (Hertz).
The complete elliptic integrals are evaluated by the arithmetic-geometric mean from the
complementary parameter ``1 - m``, formed without cancellation as ``(1 - e)(1 + e)``.
Inputs are validated by the Python wrapper (fesub.circular.friction); nothing is allocated here.
"""

from libc.math cimport sqrt, fabs, asin, hypot, M_PI


cdef inline void _ellip_KE(double m, double mc, double* K, double* E) noexcept nogil:
    """K(m), E(m) for 0 <= m < 1 given mc = 1 - m (AGM with the c_n sum)."""
    cdef double a = 1.0, b = sqrt(mc), c = sqrt(m), an
    cdef double s = 0.5 * m, p = 0.5
    cdef int it
    for it in range(60):
        an = 0.5 * (a + b)
        c = 0.5 * (a - b)
        b = sqrt(a * b)
        a = an
        p *= 2.0
        s += p * c * c
        if c < 1e-9 * a:
            break
    K[0] = 0.5 * M_PI / a
    E[0] = K[0] * (1.0 - s)


cdef inline void _uniform_lo(double e, double eps_small, double* Q, double* T) noexcept nogil:
    cdef double m, mc, K, E, emK, e2
    if e < eps_small:
        e2 = e * e
        Q[0] = e * (1.0 - e2 * (1.0 / 8.0 + e2 * (1.0 / 64.0 + e2 * (5.0 / 1024.0))))
        T[0] = 1.0 + e2 * (-0.75 + e2 * (9.0 / 64.0 + e2 * (5.0 / 256.0 + e2 * (105.0 / 16384.0))))
        return
    m = e * e
    mc = (1.0 - e) * (1.0 + e)
    if mc > 0.0:
        _ellip_KE(m, mc, &K, &E)
        emK = -mc * K
    else:
        E = 1.0
        emK = 0.0
    Q[0] = (4.0 / 3.0) * ((m + 1.0) * E + emK) / (e * M_PI)
    T[0] = (2.0 / 3.0) * ((4.0 - 2.0 * m) * E + emK) / M_PI


cdef inline void _uniform_hi(double x, double eps_large, double* Q, double* T) noexcept nogil:
    cdef double m, mc, K, E, omK, x2
    if x < 1.0 / eps_large:
        x2 = x * x
        Q[0] = 1.0 - x2 * (1.0 / 8.0 + x2 * (1.0 / 64.0 + x2 * (5.0 / 1024.0 + x2 * (
            35.0 / 16384.0 + x2 * (147.0 / 131072.0)))))
        T[0] = x * (3.0 / 8.0 + x2 * (1.0 / 32.0 + x2 * (9.0 / 1024.0 + x2 * (
            15.0 / 4096.0 + x2 * (245.0 / 131072.0 + x2 * (567.0 / 524288.0))))))
        return
    m = x * x
    mc = (1.0 - x) * (1.0 + x)
    if mc > 0.0:
        _ellip_KE(m, mc, &K, &E)
        omK = mc * K
    else:
        E = 1.0
        omK = 0.0
    Q[0] = (4.0 / 3.0) * ((1.0 + m) * E - omK) / (m * M_PI)
    T[0] = (2.0 / 3.0) * ((4.0 * m - 2.0) * E + omK * (2.0 - 3.0 * m)) / (m * x * M_PI)


cdef inline void _hertz_lo(double e, double* Q, double* T) noexcept nogil:
    cdef double e2 = e * e
    Q[0] = (3.0 * M_PI / 32.0) * e * (4.0 - e2)
    T[0] = (3.0 * e2 * e2 - 8.0 * e2 + 8.0) / 8.0


cdef inline void _hertz_hi(double x, double eps_large, double* Q, double* T) noexcept nogil:
    cdef double x2 = x * x, asn, sq, y
    if x < 1.0 / eps_large:
        y = x2
        Q[0] = 1.0 - y * (1.0 / 10.0 + y * (3.0 / 280.0 + y * (1.0 / 336.0 + y * (
            5.0 / 4224.0 + y * (21.0 / 36608.0)))))
        T[0] = x * (16.0 / 15.0 + y * (8.0 / 105.0 + y * (2.0 / 105.0 + y * (
            5.0 / 693.0 + y * (35.0 / 10296.0 + y * (21.0 / 11440.0)))))) / M_PI
        return
    asn = asin(x)
    sq = sqrt((1.0 - x) * (1.0 + x))
    Q[0] = (3.0 / 16.0) * ((4.0 * x2 - 1.0) * asn / (x2 * x) + (1.0 + 2.0 * x2) * sq / x2)
    T[0] = ((3.0 - 8.0 * x2 + 8.0 * x2 * x2) * asn / (x2 * x2)
            + (6.0 * x2 - 3.0) * sq / (x2 * x)) / (4.0 * M_PI)


cdef inline void _profile(int law, double a, double b, double eps_small, double eps_large,
                          double* Q, double* T) noexcept nogil:
    if a <= b:
        if law == 0:
            _uniform_lo(a / b, eps_small, Q, T)
        else:
            _hertz_lo(a / b, Q, T)
    else:
        if law == 0:
            _uniform_hi(b / a, eps_large, Q, T)
        else:
            _hertz_hi(b / a, eps_large, Q, T)


def profile_ab(int law, const double[::1] a, const double[::1] b, double eps_small,
               double eps_large, double[::1] Q, double[::1] T):
    """Profiles ``(Q_eps, T_eps)`` at ``eps = a/b`` (a, b >= 0, not both zero) into Q, T."""
    cdef Py_ssize_t i, n = a.shape[0]
    cdef double q, t
    with nogil:
        for i in range(n):
            _profile(law, a[i], b[i], eps_small, eps_large, &q, &t)
            Q[i] = q
            T[i] = t


def force_torque(int law, const double[::1] ux, const double[::1] uy, const double[::1] om,
                 double R, double muP, double kappa, double eps_small, double eps_large,
                 double[::1] Qx, double[::1] Qy, double[::1] Tz, unsigned char[::1] set_valued):
    """Resultant friction of the exact model for slip (ux, uy) and spin om (all length n)."""
    cdef Py_ssize_t i, n = ux.shape[0]
    cdef double speed, spin, q, t, f
    with nogil:
        for i in range(n):
            speed = hypot(ux[i], uy[i])
            spin = R * fabs(om[i])
            if speed == 0.0 and spin == 0.0:
                Qx[i] = 0.0
                Qy[i] = 0.0
                Tz[i] = 0.0
                set_valued[i] = 1
                continue
            set_valued[i] = 0
            _profile(law, speed, spin, eps_small, eps_large, &q, &t)
            if speed > 0.0:
                f = q / speed
            else:
                f = 0.0
            Qx[i] = -muP * f * ux[i]
            Qy[i] = -muP * f * uy[i]
            if om[i] > 0.0:
                Tz[i] = -muP * kappa * t
            elif om[i] < 0.0:
                Tz[i] = muP * kappa * t
            else:
                Tz[i] = 0.0
