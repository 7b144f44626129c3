# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One contact constraint's frictional problem with a friction law beyond one coefficient, in
closed form (the multibody march's one-node step; ``coulomb_closed`` of ``_pgs.pxd`` is the
one-coefficient case and stays the path of law code 0).

A law is a code and three numbers ``p`` (``fesub.contact.engine.friction.law_arrays``): stick
limit ``p[0]`` (mu_s), slip coefficient ``p[1]`` (mu_k, code 1) or
``p[1] + (p[0] - p[1]) exp(-v / p[2])`` (code 2, Stribeck) of the slip speed ``v = |y_t| / h``
of the step. ``W`` (3: normal, coupling, tangential) and ``b`` (2) as in ``coulomb_closed``;
``y = b + W lam`` is the relative displacement of the step (m).

The solution: open when ``b[0] >= 0``; else stick (``y = 0``) when it is admissible with
``lam_n > 0`` and ``|lam_t| <= mu_s lam_n`` (static friction holds where it can); else slip. The
sense of slip is that of the Coulomb problem at ``mu_s`` (it exists and is unique under the
conditions below); along the normal row's equality ``y_t`` grows strictly with ``lam_t`` and
``lam_t = s mu lam_n(mu)`` grows with ``mu``, so ``y_t`` keeps that sense for every ``mu`` in
``[mu_k, mu_s]``. Code 1 slips at ``mu_k``. Code 2 solves the step's slip speed implicitly: the
root of ``F(mu) = mu_law(|y_t(mu)| / h) - mu``, bracketed since ``F(mu_k) >= 0 >= F(mu_s)``,
closed by regula falsi (Illinois) to a few ulps of ``mu_s``.
"""

from libc.math cimport fabs, exp, INFINITY


cdef inline double _slip_yt(double wn, double wc, double wt, double bn, double bt, double s,
                            double mu) noexcept nogil:
    """The tangential relative displacement of the step when slipping in sense ``s`` at ``mu``."""
    return bt + (wc + s * mu * wt) * (-bn / (wn + s * mu * wc))


cdef inline bint law_closed(const double* W, const double* b, long code, const double* p, double h,
                            double* lam, double* mu_used) noexcept nogil:
    """The solution into ``lam`` and the coefficient it reached the cone's edge at into
    ``mu_used`` (``mu_s`` when open or stuck); False (both untouched) where the closed form does
    not apply (``W[0] > 0``, ``mu_s |W[1]| < W[0]``, ``W[0] W[2] > W[1]^2`` needed)."""
    cdef double wn = W[0], wc = W[1], wt = W[2], bn = b[0], bt = b[1]
    cdef double ms = p[0], mk = p[1], det, ln, lt, yt, s, a, c, fa, fc, m, fm
    cdef int k, side = 0
    if not (wn > 0.0 and ms * fabs(wc) < wn and wn * wt - wc * wc > 0.0 and mk >= 0.0 and mk <= ms):
        return False
    if not (bn < 0.0):
        lam[0] = 0.0
        lam[1] = 0.0
        mu_used[0] = ms
        return True
    det = wn * wt - wc * wc
    ln = (wc * bt - wt * bn) / det
    lt = (wc * bn - wn * bt) / det
    if ln > 0.0 and fabs(lt) <= ms * ln:
        lam[0] = ln
        lam[1] = lt
        mu_used[0] = ms
        return True
    s = 1.0 if lam[1] >= 0.0 else -1.0
    for k in range(2):
        yt = _slip_yt(wn, wc, wt, bn, bt, s, ms)
        if (yt <= 0.0) if s > 0.0 else (yt >= 0.0):
            break
        s = -s
    else:
        return False
    m = mk
    if code == 2 and ms > mk:
        a = mk
        c = ms
        fa = mk + (ms - mk) * exp(-fabs(_slip_yt(wn, wc, wt, bn, bt, s, a)) / (h * p[2])) - a
        fc = mk + (ms - mk) * exp(-fabs(_slip_yt(wn, wc, wt, bn, bt, s, c)) / (h * p[2])) - c
        m = a
        if fa > 0.0 and fc < 0.0:
            for k in range(200):
                m = (a * fc - c * fa) / (fc - fa)
                if not (m > a and m < c):
                    m = 0.5 * (a + c)
                fm = mk + (ms - mk) * exp(-fabs(_slip_yt(wn, wc, wt, bn, bt, s, m)) / (h * p[2])) - m
                if fm == 0.0:
                    break
                if fm > 0.0:
                    a = m
                    fa = fm
                    if side == 1:
                        fc *= 0.5
                    side = 1
                else:
                    c = m
                    fc = fm
                    if side == -1:
                        fa *= 0.5
                    side = -1
                if c - a <= 4e-16 * ms:
                    break
        elif fc >= 0.0:
            m = c
    ln = -bn / (wn + s * m * wc)
    lam[0] = ln
    lam[1] = s * m * ln
    mu_used[0] = m
    return True


cdef inline void pgs_laws(const double* J, Py_ssize_t k, Py_ssize_t n, const double* w, const double* b,
                          const long* node, const long* code, const double* par, double h, double* lam,
                          double* z, double tol, long max_iter, double* status, double* mu_used) noexcept nogil:
    """Projected block Gauss-Seidel over ``k`` coupled constraints, each with its own law: every
    constraint's problem solved by ``law_closed`` with the others' forces frozen (code 0 is the
    law of one coefficient ``par[1]``; ``law_closed`` then gives ``coulomb_closed``'s solution).

    ``J`` (2k, n) rows (normal, tangential per constraint), ``w`` (n), ``b`` (2k), ``node`` (k)
    the index of each constraint's law in ``code`` and ``par`` (3 a law), ``lam`` (2k, in: warm
    start, out: forces), ``z`` (n, out: ``diag(w) J' lam``), ``status`` (3, out: sweeps, last
    largest change ``|W_ii d_i|`` (m) of a sweep, converged 1/0), ``mu_used`` (k, out: the
    coefficient each reached the cone's edge at). A constraint without the closed form (see
    ``law_closed``) stops the sweeps unconverged. The caller has checked ``k > 0``, ``n > 0``."""
    cdef Py_ssize_t p, kk
    cdef long sweeps = 0, c
    cdef double change = INFINITY, converged = 0.0, wk, yn, yt, d0, d1, dv
    cdef double W[3]
    cdef double bb[2]
    cdef double l2[2]
    cdef const double* Jn
    cdef const double* Jt
    for kk in range(n):
        z[kk] = 0.0
    for p in range(k):
        d0 = lam[2 * p]
        d1 = lam[2 * p + 1]
        if d0 != 0.0 or d1 != 0.0:
            Jn = &J[2 * p * n]
            Jt = &J[(2 * p + 1) * n]
            for kk in range(n):
                z[kk] += Jn[kk] * d0 + Jt[kk] * d1
    for kk in range(n):
        z[kk] *= w[kk]
    while sweeps < max_iter:
        sweeps += 1
        change = 0.0
        for p in range(k):
            Jn = &J[2 * p * n]
            Jt = &J[(2 * p + 1) * n]
            W[0] = 0.0
            W[1] = 0.0
            W[2] = 0.0
            yn = 0.0
            yt = 0.0
            for kk in range(n):  # the node's block and its relative displacement in one pass
                wk = w[kk]
                W[0] += Jn[kk] * Jn[kk] * wk
                W[1] += Jn[kk] * Jt[kk] * wk
                W[2] += Jt[kk] * Jt[kk] * wk
                yn += Jn[kk] * z[kk]
                yt += Jt[kk] * z[kk]
            l2[0] = lam[2 * p]
            l2[1] = lam[2 * p + 1]
            # the free displacement of this node: the others' forces in, its own out
            bb[0] = b[2 * p] + yn - (W[0] * l2[0] + W[1] * l2[1])
            bb[1] = b[2 * p + 1] + yt - (W[1] * l2[0] + W[2] * l2[1])
            c = node[p]
            if not law_closed(W, bb, code[c], &par[3 * c], h, l2, &mu_used[p]):
                change = INFINITY
                break
            d0 = l2[0] - lam[2 * p]
            d1 = l2[1] - lam[2 * p + 1]
            if d0 != 0.0 or d1 != 0.0:
                lam[2 * p] = l2[0]
                lam[2 * p + 1] = l2[1]
                for kk in range(n):
                    z[kk] += w[kk] * (Jn[kk] * d0 + Jt[kk] * d1)
                dv = fabs(W[0] * d0 + W[1] * d1)
                if dv > change:
                    change = dv
                dv = fabs(W[1] * d0 + W[2] * d1)
                if dv > change:
                    change = dv
        if change == INFINITY:
            break
        if change <= tol:
            converged = 1.0
            break
    status[0] = sweeps
    status[1] = change
    status[2] = converged
