# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Projected Gauss-Seidel sweeps of the frictional contact problem, shared by the kernels that
solve it (``friction_lcp.solve`` and the multibody march): one routine, the same arithmetic;
``pgs_solve_one`` the same sweeps for a single constraint whose 2 x 2 W is known, and
``coulomb_one`` the exact solution of a single constraint's problem where it is unique (what the
sweeps converge to; ``pgs_solve`` uses it for one constraint), ``coulomb_closed`` that solution
alone (False where it does not apply, without the sweeps).

The method, its convergence test and its limits are described in ``friction_lcp.pyx``. Here on
raw C-contiguous arrays: ``J`` (m2, n) row-major, ``w`` (n), ``b`` (m2), ``mu`` (m2 / 2), ``lam``
(m2, in: warm start, out: impulses), ``z`` (n, out: diag(w) J' lam), ``status`` (3, out: sweeps,
last largest change, converged 1/0). The caller has checked ``m2 > 0`` and ``n > 0``.
"""

from libc.math cimport INFINITY


cdef inline double pgs_update(double old, double y, double dr, bint tangential, double lo, double hi,
                              int* infeasible) noexcept nogil:
    """New impulse of one row: the exact update for its own row, ``old - y / W_rr``, projected
    on [lo, hi]; a row with ``W_rr = 0`` takes the limit of the update (see friction_lcp)."""
    cdef double new
    if dr > 0.0:
        new = old - y / dr
    elif y == 0.0:  # a zero row: y_r = b_r whatever lam_r; the limit as W_rr -> 0
        new = old
    elif y > 0.0:
        new = -INFINITY
    elif tangential:
        new = INFINITY
    else:  # a negative normal value no impulse can change
        new = 0.0
        infeasible[0] = 1
    if new < lo:
        new = lo
    if new > hi:
        new = hi
    return new


cdef inline void pgs_solve_one(const double* W, const double* b, double mu, double* lam, double tol,
                               long max_iter, double* status) noexcept nogil:
    """The same sweeps on one constraint whose 2 x 2 matrix ``W = J diag(w) J'`` is known
    (``W[0]`` normal, ``W[1]`` coupling, ``W[2]`` tangential): ``y_r = b_r + W_r . lam`` replaces
    ``b_r + J_r . z``, without a pass over the coordinates; ``z`` is left to the caller."""
    cdef long sweeps = 0
    cdef int infeasible = 0, r
    cdef double change = INFINITY, converged = 0.0
    cdef double y, dr, old, new, delta, lo, hi
    while sweeps < max_iter:
        sweeps += 1
        change = 0.0
        infeasible = 0
        for r in range(2):
            lo = 0.0
            hi = INFINITY
            if r:
                hi = mu * lam[0]
                lo = -hi
            old = lam[r]
            y = b[r] + W[r] * lam[0] + W[r + 1] * lam[1]
            dr = W[2 * r]
            new = pgs_update(old, y, dr, r, lo, hi, &infeasible)
            delta = new - old
            if delta != 0.0:
                lam[r] = new
            if delta != 0.0 and dr > 0.0:
                if delta < 0.0:
                    delta = -delta
                if delta * dr > change:
                    change = delta * dr
        if infeasible:
            change = INFINITY
        if change <= tol:
            converged = 1.0
            break
    status[0] = sweeps
    status[1] = change
    status[2] = converged


cdef inline bint coulomb_closed(const double* W, const double* b, double mu, double* lam) noexcept nogil:
    """The solution of one constraint's problem in closed form (what ``pgs_solve_one``'s sweeps
    converge to), into ``lam``; False (``lam`` untouched) where the closed form does not apply.

    With ``W[0] > 0``, ``mu |W[1]| < W[0]`` and ``W[0] W[2] > W[1]^2`` the problem has exactly
    one solution: open (``lam = 0``) when ``b[0] >= 0``; otherwise, along the normal row's
    equality ``lam_n = -(b_n + W_nt lam_t) / W_nn`` the tangential value ``y_t`` grows strictly
    with ``lam_t`` (its slope is the Schur complement ``W_tt - W_nt^2 / W_nn``) over the cone's
    interval of ``lam_t``, which contains 0: slip in the positive sense when ``y_t <= 0`` at the
    upper end (``lam_t = mu lam_n``), in the negative sense when ``y_t >= 0`` at the lower end,
    else stick where ``y_t = 0`` (both rows' equalities)."""
    cdef double wn = W[0], wc = W[1], wt = W[2], bn = b[0], bt = b[1], ln, yt, det, sense
    cdef int k
    if not (wn > 0.0 and mu * (wc if wc >= 0.0 else -wc) < wn and wn * wt - wc * wc > 0.0 and mu >= 0.0):
        return False
    if not (bn < 0.0):
        lam[0] = 0.0
        lam[1] = 0.0
        return True
    # slip in each sense, that of the last step's tangential force first (a sliding node keeps it)
    sense = 1.0 if lam[1] >= 0.0 else -1.0
    for k in range(2):
        ln = -bn / (wn + sense * mu * wc)
        yt = bt + (wc + sense * mu * wt) * ln
        if (yt <= 0.0) if sense > 0.0 else (yt >= 0.0):
            lam[0] = ln
            lam[1] = sense * mu * ln
            return True
        sense = -sense
    det = wn * wt - wc * wc
    lam[0] = (wc * bt - wt * bn) / det
    lam[1] = (wc * bn - wn * bt) / det
    return True


cdef inline void coulomb_one(const double* W, const double* b, double mu, double* lam, double tol,
                             long max_iter, double* status) noexcept nogil:
    """``coulomb_closed``, falling back to the sweeps (``pgs_solve_one``) where the closed form
    does not apply. ``status`` = [1, 0, 1] (one exact solve, converged); the sweeps' status
    otherwise."""
    if coulomb_closed(W, b, mu, lam):
        status[0] = 1.0
        status[1] = 0.0
        status[2] = 1.0
    else:
        pgs_solve_one(W, b, mu, lam, tol, max_iter, status)


cdef inline void pgs_solve(const double* J, Py_ssize_t m2, Py_ssize_t n, const double* w, const double* b,
                           const double* mu, double* lam, double* z, double tol, long max_iter,
                           double* status, double* diag) noexcept nogil:
    """The sweeps (see the module docstring). ``diag``: NULL, or room for the m2 values ``W_rr``,
    which the first sweep then stores for the later ones (their passes over a row then read ``J``
    and ``z`` only, one product a coordinate instead of two); NULL recomputes them every sweep."""
    cdef Py_ssize_t r, k
    cdef long sweeps = 0
    cdef int infeasible = 0
    cdef double change = INFINITY, converged = 0.0
    cdef double y, dr, old, new, delta, lo, hi, dl
    cdef const double* Jr
    cdef double W[3]
    if m2 == 2 and tol >= 0.0 and max_iter >= 1:
        # one constraint: its 2 x 2 W in one pass over the rows, the closed form of
        # ``coulomb_one`` (the sweeps where it does not apply), then z
        W[0] = 0.0
        W[1] = 0.0
        W[2] = 0.0
        for k in range(n):
            W[0] += J[k] * J[k] * w[k]
            W[1] += J[k] * J[n + k] * w[k]
            W[2] += J[n + k] * J[n + k] * w[k]
        coulomb_one(W, b, mu[0], lam, tol, max_iter, status)
        for k in range(n):
            z[k] = w[k] * (J[k] * lam[0] + J[n + k] * lam[1])
        return
    for k in range(n):
        z[k] = 0.0
    for r in range(m2):
        dl = lam[r]
        if dl != 0.0:
            Jr = &J[r * n]
            for k in range(n):
                z[k] += Jr[k] * dl
    for k in range(n):
        z[k] *= w[k]
    while sweeps < max_iter:
        sweeps += 1
        change = 0.0
        infeasible = 0
        for r in range(m2):
            lo = 0.0
            hi = INFINITY
            if r % 2:
                hi = mu[r // 2] * lam[r - 1]
                lo = -hi
            old = lam[r]
            Jr = &J[r * n]
            y = 0.0
            if diag != NULL and sweeps > 1:
                dr = diag[r]
                for k in range(n):
                    y += Jr[k] * z[k]
            else:
                dr = 0.0
                for k in range(n):  # y_r and W_rr in one pass over the row
                    y += Jr[k] * z[k]
                    dr += Jr[k] * Jr[k] * w[k]
                if diag != NULL:
                    diag[r] = dr
            y += b[r]
            new = pgs_update(old, y, dr, r % 2, lo, hi, &infeasible)
            delta = new - old
            if delta != 0.0:
                lam[r] = new
            if delta != 0.0 and dr > 0.0:
                for k in range(n):
                    z[k] += (delta * w[k]) * Jr[k]
                if delta < 0.0:
                    delta = -delta
                if delta * dr > change:
                    change = delta * dr
        if infeasible:
            change = INFINITY
        if change <= tol:
            converged = 1.0
            break
    status[0] = sweeps
    status[1] = change
    status[2] = converged
