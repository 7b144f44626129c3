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


cdef inline double _renorm(double prod, int* e) noexcept nogil:
    """``prod`` brought back into [2^-500, 2^500] by a power of two, its exponent added to e[0]."""
    if prod > 3.273390607896142e+150:  # 2^500
        e[0] += 500
        return prod * 3.054936363499605e-151
    if prod < 3.054936363499605e-151:
        e[0] -= 500
        return prod * 3.273390607896142e+150
    return prod


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


def inclusion_radii(const double complex[::1] z, const long[::1] idx, const double[::1] r,
                    const double complex[::1] a, const double complex[::1] b, double lead, double[::1] rad):
    """Radii rad[i] = D |W_i| of the Weierstrass inclusion disks for each i in ``idx``,
    W_i = N(z_i) / (lead prod_{j != i} (z_i - z_j)), D the number of roots. The product of squared
    moduli is renormalised by powers of two when it leaves [2^-500, 2^500] (no overflow, one
    logarithm per root)."""
    cdef Py_ssize_t ii, i, j, k, m = r.shape[0], D = z.shape[0]
    cdef double complex zi, q, g
    cdef double prod, x, y, lg, w
    cdef double ln2 = 0.6931471805599453
    cdef int e
    with nogil:
        for ii in range(idx.shape[0]):
            i = idx[ii]
            zi = z[i]
            g = 0
            prod = 1.0
            e = 0
            for k in range(m):
                q = (zi - a[k]) * (zi - b[k])
                g = g + r[k] * _inv(q)
                prod = prod * (q.real * q.real + q.imag * q.imag)
                prod = _renorm(prod, &e)
            for j in range(D):
                if j != i:
                    x = zi.real - z[j].real
                    y = zi.imag - z[j].imag
                    w = x * x + y * y
                    if w == 0:
                        prod = 1.0 / 0.0
                        break
                    prod = prod / w
                    prod = _renorm(prod, &e)
            lg = 0.5 * (log(prod) + e * ln2)
            rad[i] = D * sqrt(g.real * g.real + g.imag * g.imag) * exp(lg) / fabs(lead)
            if not isfinite(rad[i]):
                rad[i] = 1.0 / 0.0


def disjoint(const double complex[::1] z, const double[::1] rad):
    """True when the disks |w - z_i| <= rad[i] are pairwise disjoint."""
    cdef Py_ssize_t i, j, D = z.shape[0]
    cdef double x, y, s
    cdef bint ok = True
    with nogil:
        for i in range(D):
            for j in range(i + 1, D):
                x = z[i].real - z[j].real
                y = z[i].imag - z[j].imag
                s = rad[i] + rad[j]
                if not (s * s < x * x + y * y):
                    ok = False
                    break
            if not ok:
                break
    return ok
