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

from libc.math cimport fabs, exp


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
