# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Simultaneous roots of a rational function's numerator by the Aberth-Ehrlich iteration (compiled).

Same functions and signatures as ``aberth_ref.py``. The function is
g(z) = sum_k r_k / ((z - a_k)(z - b_k)) and its numerator N(z) = g(z) prod_k (z - a_k)(z - b_k), a
polynomial whose leading coefficient is ``lead`` = sum_k r_k. One pass per root over the poles and
one over the other roots; no allocation. Inputs are validated by the caller.
"""

from libc.math cimport log, exp, sqrt, fabs, isfinite


cdef inline double complex _inv(double complex w) noexcept nogil:
    """1 / w by one real division (w != 0)."""
    cdef double x = w.real, y = w.imag, d = x * x + y * y
    return (x / d) - 1j * (y / d)


def aberth_steps(const double complex[::1] z, const long[::1] active, const double[::1] r,
                 const double complex[::1] a, const double complex[::1] b, double complex[::1] step):
    """Aberth correction step[i] = 1 / (N'/N(z_i) - sum_{j != i} 1 / (z_i - z_j)) of each root
    index i in ``active`` (N'/N = g'/g + sum_k (1/(z_i - a_k) + 1/(z_i - b_k))). Returns the number
    of non-finite steps (a root on a pole or on another root, or g = 0 to the last bit)."""
    cdef Py_ssize_t ii, i, j, k, m = r.shape[0], D = z.shape[0]
    cdef double complex zi, u, v, q, t, h, g, dg, s, ab, st
    cdef int bad = 0
    with nogil:
        for ii in range(active.shape[0]):
            i = active[ii]
            zi = z[i]
            g = 0
            dg = 0
            s = 0
            for k in range(m):
                u = zi - a[k]
                v = zi - b[k]
                q = _inv(u * v)
                t = r[k] * q
                h = (u + v) * q
                g = g + t
                dg = dg - t * h
                s = s + h
            ab = 0
            for j in range(D):
                if j != i:
                    ab = ab + _inv(zi - z[j])
            st = _inv(dg * _inv(g) + s - ab)
            if not (isfinite(st.real) and isfinite(st.imag)):
                bad += 1
            step[i] = st
    return bad


def inclusion_radii(const double complex[::1] z, const double[::1] r, const double complex[::1] a,
                    const double complex[::1] b, double lead, double[::1] rad):
    """Radii D |W_i| of the Weierstrass inclusion disks, W_i = N(z_i) / (lead prod_{j != i}
    (z_i - z_j)), D the number of roots; the products are kept as mantissa and binary exponent
    (no overflow). Returns True when the disks are pairwise disjoint."""
    cdef Py_ssize_t i, j, k, m = r.shape[0], D = z.shape[0]
    cdef double complex zi, u, v, q, g
    cdef double p2, d2, lg, x, y
    cdef bint disjoint = True
    with nogil:
        for i in range(D):
            zi = z[i]
            g = 0
            lg = 0.0
            for k in range(m):
                u = zi - a[k]
                v = zi - b[k]
                q = u * v
                p2 = q.real * q.real + q.imag * q.imag
                g = g + r[k] * _inv(q)
                lg = lg + log(p2)
            for j in range(D):
                if j != i:
                    x = zi.real - z[j].real
                    y = zi.imag - z[j].imag
                    lg = lg - log(x * x + y * y)
            rad[i] = D * sqrt(g.real * g.real + g.imag * g.imag) * exp(0.5 * lg) / fabs(lead)
            if not isfinite(rad[i]):
                rad[i] = 1.0 / 0.0
        for i in range(D):
            for j in range(i + 1, D):
                x = z[i].real - z[j].real
                y = z[i].imag - z[j].imag
                d2 = rad[i] + rad[j]
                if d2 * d2 >= x * x + y * y:
                    disjoint = False
                    break
            if not disjoint:
                break
    return disjoint
