# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Unilateral constraints with Coulomb friction at one time step: projected Gauss-Seidel, compiled.

Twin: ``friction_lcp_ref.py`` (same function and signature). Inputs are validated by the caller.

Problem. ``m`` constraints act on ``n`` generalised coordinates with a diagonal inverse "mass"
``w``. Constraint ``i`` has a normal row ``J[2i]`` and a tangential row ``J[2i+1]``; with impulses
``lam`` the constraint values are ``y = b + W lam``, ``W = J diag(w) J'``. The solution satisfies

* normal:      ``lam_n >= 0``, ``y_n >= 0``, ``lam_n y_n = 0``;
* tangential:  ``|lam_t| <= mu lam_n``; ``|lam_t| < mu lam_n`` implies ``y_t = 0`` (stick);
  ``y_t != 0`` implies ``lam_t = -mu lam_n sign(y_t)`` (slip opposes the motion).

Method: projected Gauss-Seidel over the rows, normal then tangential for each constraint. Each
row update is exact for its own row given all the others, ``lam_r <- P(lam_r - y_r / W_rr)``, with
``P`` the projection on ``[0, inf)`` (normal) or ``[-mu lam_n, mu lam_n]`` (tangential, with the
``lam_n`` just updated), and ``z = diag(w) J' lam`` is kept up to date after every update, so
``y_r = b_r + J_r . z`` costs one dot product. ``W`` is never formed: a sweep costs O(m n) (two
passes over each row of ``J``), the diagonal ``W_rr`` O(m n) once per call, and a warm start from
the previous step's impulses usually needs a few sweeps. A pivoting method (Lemke, active set)
would need ``W`` itself, O(m^2 n) to form and O(m^3) to factor, which is what the contact step
must avoid when many constraints are active; for the frictionless case the sweep is the
Gauss-Seidel method on a convex quadratic programme and converges, with friction it is the
usual fixed-point iteration whose converged point satisfies every condition above.

Convergence: the largest change of y that one row update produced during a sweep,
``|delta lam_r| W_rr`` (units of ``b``), at most ``tol``. A row with ``W_rr = 0`` (no coordinate
moves it) takes the limit of its update: a tangential one slips (``lam_t = -mu lam_n sign(b_t)``),
a normal one carries no impulse, and a negative normal value on it cannot be corrected, so the
call then never reports convergence (largest change ``inf``).
"""

cdef double _INF = float("inf")


cdef inline double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    cdef double s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s


def solve(const double[:, ::1] J, const double[::1] w, const double[::1] b, const double[::1] mu,
          double[::1] lam, double[::1] z, double tol, long max_iter, double[::1] status):
    """Projected Gauss-Seidel solution of the frictional contact problem, in place; see the
    module docstring, and the twin ``friction_lcp_ref.solve`` for every argument and its units."""
    cdef Py_ssize_t m2 = J.shape[0], n = J.shape[1]
    cdef Py_ssize_t r, k
    cdef long sweeps = 0
    cdef int infeasible = 0
    cdef double change = _INF, converged = 0.0
    cdef double y, old, new, delta, lo, hi, s, dl
    cdef double[::1] d
    cdef const double* Jr
    cdef double* zp
    import numpy as np
    d = np.empty(m2)
    if n == 0 or m2 == 0:  # no constraint, or rows with no entry: no impulse
        lam[:] = 0.0
        status[0] = 0
        status[1] = 0.0
        status[2] = 1.0
        return
    zp = &z[0]
    with nogil:
        for k in range(n):
            z[k] = 0.0
        for r in range(m2):
            s = 0.0
            for k in range(n):
                s += J[r, k] * J[r, k] * w[k]
            d[r] = s
            dl = lam[r]
            if dl != 0.0:
                for k in range(n):
                    z[k] += J[r, k] * dl
        for k in range(n):
            z[k] *= w[k]
        sweeps = 0
        while sweeps < max_iter:
            sweeps += 1
            change = 0.0
            infeasible = 0
            for r in range(m2):
                lo = 0.0
                hi = _INF
                if r % 2:
                    hi = mu[r // 2] * lam[r - 1]
                    lo = -hi
                old = lam[r]
                Jr = &J[r, 0]
                y = b[r] + _dot(Jr, zp, n)
                if d[r] > 0.0:
                    new = old - y / d[r]
                elif y == 0.0:  # a zero row: y_r = b_r whatever lam_r; the limit as W_rr -> 0
                    new = old
                elif y > 0.0:
                    new = -_INF
                elif r % 2:
                    new = _INF
                else:  # a negative normal value no impulse can change
                    new = 0.0
                    infeasible = 1
                if new < lo:
                    new = lo
                if new > hi:
                    new = hi
                delta = new - old
                if delta != 0.0:
                    lam[r] = new
                if delta != 0.0 and d[r] > 0.0:
                    for k in range(n):
                        zp[k] += (delta * w[k]) * Jr[k]
                    if delta < 0.0:
                        delta = -delta
                    if delta * d[r] > change:
                        change = delta * d[r]
            if infeasible:
                change = _INF
            if change <= tol:
                converged = 1.0
                break
    status[0] = sweeps
    status[1] = change
    status[2] = converged
