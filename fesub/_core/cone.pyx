# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The exact friction-cone problem of one contact node in 3D, compiled: node by node, and by
projected block Gauss-Seidel over coupled nodes.

Twin: ``cone_ref.py`` (same functions, signatures and arithmetic). Inputs are validated by the
caller; the kernel allocates nothing.

Problem. A node has a 3 x 3 symmetric positive definite block ``W`` (rows: normal, then two
tangents) and a free value ``q``; with impulses ``lam`` its value is ``u = W lam + q``. Find
``lam`` in one of three cases:

* open:   ``lam = 0`` and ``u_n >= 0``;
* stick:  ``u = 0`` and ``|lam_t| <= p0 lam_n`` (``lam_t`` the 2-vector of tangential impulses);
* slip:   ``u_n = 0``, ``lam_n > 0``, ``u_t != 0`` and ``lam_t = -mu(|u_t|) lam_n u_t / |u_t|``.

Per node, a code and three numbers (p0, p1, p2) define the coefficients: the stick limit is p0;
the slip coefficient is p1 (codes 0 and 1) or ``p1 + (p0 - p1) exp(-|u_t| / p2)`` (code 2).

Local solver: enumeration of the three cases in that order, the slip case solved exactly.

* open when ``q_n >= 0``;
* stick: ``W lam = -q`` by a 3 x 3 Cholesky factorisation, accepted when ``lam`` lies in the cone
  of limit p0 (a relative slack of 1e-12 for round-off);
* slip at a constant coefficient ``mu``: with the slip direction ``d = (cos t, sin t)`` the
  impulses are ``lam = lam_n (1, -mu d)``, the normal equation gives ``lam_n = -q_n / A(t)``
  (``A = (W a)_n``, ``a = (1, -mu d)``) and the tangential value is ``u_t = V(t) / A(t)`` with
  ``V = A q_t - q_n (W a)_t``. Slip along ``d`` means ``V`` parallel to ``d``: the scalar equation
  ``h(t) = d x V(t) = 0``, a trigonometric polynomial of degree 2 in ``t`` (at most four roots),
  with ``A > 0`` (``lam_n > 0``) and ``d . V >= 0`` (the slip velocity along ``d``, so that the
  friction opposes it). Every root is bracketed by 64 samples of ``t`` on [0, 2 pi) and closed
  to 2e-15 rad by regula falsi (Illinois; a bisection step where it would leave the bracket);
  of the admissible roots, the one closest to the warm start's
  slip direction is taken (the problem has one solution when ``mu`` is small against the
  coupling of W; where it has several, the branch the node was on).
* slip under velocity weakening (code 2, p0 > p1): the outer root in ``mu`` of
  ``F(mu) = mu_law(v(mu)) - mu`` over [p1, p0], ``v(mu)`` the slip speed at the constant ``mu``:
  ``F(p1) >= 0 >= F(p0)`` as the law lies between p1 and p0, so a root is bracketed; regula
  falsi (Illinois) to a few ulps of p0.

Why this solver: the open and stick cases are linear; the slip case is, for a constant
coefficient, one equation in one unknown (the angle), so all its roots are found by bracketing
a function of known degree, without a starting point (a Newton iteration on the slip direction
converges to one root from a good start, but it can fail or land on the wrong branch from a bad
one, and a general solver cannot tell the admissible root). The velocity-dependent coefficient
adds a second scalar unknown; nesting it as a bracketed 1D root keeps each step exact and safe.
Cost per node: the stick solve, then 65 + ~8 x (roots) evaluations of h in slip, times ~10 for
velocity weakening. The limit: two roots closer than 2 pi / 64 rad with no sign change
between them (a tangency, where two solutions merge) are not bracketed; the node then reports
FAILED when none of its roots is admissible.

Block Gauss-Seidel: over m coupled nodes (W of size 3m), each node's problem solved exactly as
above with the others' impulses frozen, ``u = W lam + q`` kept up to date after each node. The
convergence measure is the largest ``|W_ii delta lam_i|`` (max norm, units of ``q``) of a sweep;
a node with no solution makes it infinite. ``status`` = [sweeps, last change, converged 1/0].

Block Gauss-Seidel on the rows (``block_gs_rows``): the same sweeps where ``W = J diag(w) J'``
is given by the nodes' rows ``J`` (3 per node) and column weights ``w`` and never formed. The
vector ``z = diag(w) J' lam`` is kept instead of ``u``: a node's value is ``u_i = J_i z + q_i``,
its block ``J_i diag(w) J_i'`` is formed once from its own rows (returned in ``blocks``), and
after its solve ``z += diag(w) J_i' delta lam_i``. A sweep costs O(rows x columns), against
O(rows^2 x columns) to form the dense ``W``; ``floor`` raises every block's diagonal to at least
that fraction of the largest diagonal entry (a row of zeros still gives a definite block).
``frame_rows`` forms such rows: each node's three directions (a 3 x 3) times its (3, ns)
component rows, added into a window of its columns.
``block_gs_frames`` runs the same sweeps on rows given that way without forming them:
``J_i = F_j D_j`` for the problem's node j (an index into D, F and the Gram matrices), over a
window of the columns, one for all nodes or each node its own (rows nonzero on a few of many
columns are swept over those only); the block is ``F_j G_j F_j'`` with ``G_j = D_j diag(w) D_j'`` the Gram
matrix of the components' rows, which does not depend on the frame (formed in the first pass,
or given by a caller whose component rows stay fixed). A caller that holds ``z`` of the warm
start (the same rows and impulses as the problem before) gives it too: the first pass over the
rows is then left out.

``close_nodes`` closes a step of node-to-surface contact in one pass over the nodes: each node's
gap from its point and its master point (the shape-value weighted sum of its master nodes), its
force from its components in its frame, the tangential part of its relative motion (its own
displacement less its master point's, between two states) and three sums of work.
"""

import numpy as np

from libc.math cimport sqrt, cos, sin, exp, fabs, INFINITY, NAN, M_PI

cdef enum:
    SAMPLES = 64      # angles sampled on [0, 2 pi) to bracket the roots of the slip equation
    ANGLE_ITER = 100  # Illinois steps on a bracket of the angle (~6-10 reach ANGLE_TOL)
    OUTER = 100       # iterations of the outer root in mu (Illinois converges in ~10)
    CONSTANT_ = 0
    STATIC_KINETIC_ = 1
    STRIBECK_ = 2
    FAILED_ = -1
    OPEN_ = 0
    STICK_ = 1
    SLIP_ = 2

ctypedef const double* cdptr  # a pointer into a read-only array
cdef double ANGLE_TOL = 2e-15  # rad: the bracket of a root closed to a few ulps of 2 pi

CONSTANT, STATIC_KINETIC, STRIBECK = 0, 1, 2
FAILED, OPEN, STICK, SLIP = -1, 0, 1, 2


cdef inline double _hcs(const double* W, const double* q, double mu, double c, double s, double* A,
                        double* g) noexcept nogil:
    cdef double b1, b2, v1, v2
    A[0] = W[0] - mu * (W[1] * c + W[2] * s)
    b1 = W[3] - mu * (W[4] * c + W[5] * s)
    b2 = W[6] - mu * (W[7] * c + W[8] * s)
    v1 = A[0] * q[1] - q[0] * b1
    v2 = A[0] * q[2] - q[0] * b2
    g[0] = c * v1 + s * v2
    return c * v2 - s * v1


cdef inline double _h(const double* W, const double* q, double mu, double th, double* A,
                      double* g) noexcept nogil:
    return _hcs(W, q, mu, cos(th), sin(th), A, g)


# cosines and sines of the sampled angles, computed once
cdef double _COS[SAMPLES + 1]
cdef double _SIN[SAMPLES + 1]
cdef int _k
for _k in range(SAMPLES + 1):
    _COS[_k] = cos(_k * (2.0 * M_PI / SAMPLES))
    _SIN[_k] = sin(_k * (2.0 * M_PI / SAMPLES))


cdef double _slip_fixed(const double* W, const double* q, double mu, double ref1, double ref2,
                        double* lam) noexcept nogil:
    cdef double step = 2.0 * M_PI / SAMPLES
    cdef double best = 0.0, best_dot = -INFINITY, best_s = -1.0, best_A = 0.0
    cdef double th0 = 0.0, th1, h0, h1, a, b, ha, hb, mid, hm, root, A, g, c, s, dot, qn2, ln
    cdef bint found = False, have
    cdef int k, it, side
    h0 = _hcs(W, q, mu, _COS[0], _SIN[0], &A, &g)
    qn2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2]
    for k in range(SAMPLES):
        th1 = (k + 1) * step
        h1 = _hcs(W, q, mu, _COS[k + 1], _SIN[k + 1], &A, &g)
        have = False
        if h0 == 0.0:
            root = th0
            have = True
        elif (h0 < 0.0 < h1) or (h1 < 0.0 < h0):
            # Illinois' regula falsi on the bracket (a bisection where it would leave it)
            a = th0
            b = th1
            ha = h0
            hb = h1
            side = 0
            root = 0.5 * (a + b)
            for it in range(ANGLE_ITER):
                mid = b - hb * (b - a) / (hb - ha)
                if not (a < mid < b):
                    mid = 0.5 * (a + b)
                hm = _h(W, q, mu, mid, &A, &g)
                root = mid
                if hm == 0.0:
                    break
                if (hm < 0.0) == (hb < 0.0):
                    b = mid
                    hb = hm
                    if side == 1:
                        ha *= 0.5
                    side = 1
                else:
                    a = mid
                    ha = hm
                    if side == -1:
                        hb *= 0.5
                    side = -1
                if b - a <= ANGLE_TOL:
                    root = 0.5 * (a + b)
                    break
            have = True
        if have:
            _h(W, q, mu, root, &A, &g)
            if A > 0.0 and g >= -1e-12 * A * sqrt(qn2):
                c = cos(root)
                s = sin(root)
                dot = c * ref1 + s * ref2
                if dot > best_dot:
                    best = root
                    best_dot = dot
                    best_s = g / A if g > 0.0 else 0.0
                    best_A = A
                    found = True
        th0 = th1
        h0 = h1
    if not found:
        return -1.0
    ln = -q[0] / best_A
    lam[0] = ln
    lam[1] = -mu * ln * cos(best)
    lam[2] = -mu * ln * sin(best)
    return best_s


cdef inline double _mu_slip(long code, const double* p, double v) noexcept nogil:
    if code == STRIBECK_:
        return p[1] + (p[0] - p[1]) * exp(-v / p[2])
    return p[1]


cdef inline void _ref_dir(const double* W, const double* q, const double* lam, double* r) noexcept nogil:
    """The slip direction to prefer: against the warm start's tangential impulse, or (none) the
    tangential velocity under the normal impulse alone."""
    cdef double t = sqrt(lam[1] * lam[1] + lam[2] * lam[2]), ln
    if t > 0.0:
        r[0] = -lam[1] / t
        r[1] = -lam[2] / t
    else:
        ln = -q[0] / W[0]
        r[0] = q[1] + W[3] * ln
        r[1] = q[2] + W[6] * ln


cdef int _solve_node(const double* W, const double* q, long code, const double* p,
                     double* lam) noexcept nogil:
    cdef double l00, l10, l20, l11, l21, l22, d1, d2, y0, y1, y2, x0, x1, x2
    cdef double r1, r2, s, a, b, fa, fb, m, fm, tol
    cdef double r[2]
    cdef int side = 0, it
    if q[0] >= 0.0:
        lam[0] = 0.0
        lam[1] = 0.0
        lam[2] = 0.0
        return OPEN_
    l00 = W[0]
    if not l00 > 0.0:
        return FAILED_
    l00 = sqrt(l00)
    l10 = W[3] / l00
    l20 = W[6] / l00
    d1 = W[4] - l10 * l10
    if not d1 > 0.0:
        return FAILED_
    l11 = sqrt(d1)
    l21 = (W[7] - l20 * l10) / l11
    d2 = W[8] - l20 * l20 - l21 * l21
    if not d2 > 0.0:
        return FAILED_
    l22 = sqrt(d2)
    y0 = -q[0] / l00
    y1 = (-q[1] - l10 * y0) / l11
    y2 = (-q[2] - l20 * y0 - l21 * y1) / l22
    x2 = y2 / l22
    x1 = (y1 - l21 * x2) / l11
    x0 = (y0 - l10 * x1 - l20 * x2) / l00
    if x0 >= 0.0 and sqrt(x1 * x1 + x2 * x2) <= (p[0] + 1e-12) * x0:
        lam[0] = x0
        lam[1] = x1
        lam[2] = x2
        return STICK_
    _ref_dir(W, q, lam, r)
    r1 = r[0]
    r2 = r[1]
    if code != STRIBECK_ or not p[0] > p[1]:
        s = _slip_fixed(W, q, p[1], r1, r2, lam)
        return FAILED_ if s < 0.0 else SLIP_
    a = p[1]
    b = p[0]
    s = _slip_fixed(W, q, a, r1, r2, lam)
    if s < 0.0:
        return FAILED_
    fa = _mu_slip(code, p, s) - a
    if fa <= 0.0:
        return SLIP_
    s = _slip_fixed(W, q, b, -lam[1], -lam[2], lam)
    if s < 0.0:
        return FAILED_
    fb = _mu_slip(code, p, s) - b
    if fb >= 0.0:
        return SLIP_
    tol = 4e-16 * p[0]
    for it in range(OUTER):
        m = (a * fb - b * fa) / (fb - fa)
        if not (a < m < b):
            m = 0.5 * (a + b)
        s = _slip_fixed(W, q, m, -lam[1], -lam[2], lam)
        if s < 0.0:
            return FAILED_
        fm = _mu_slip(code, p, s) - m
        if fabs(fm) <= tol or b - a <= tol:
            break
        if fm > 0.0:
            a = m
            fa = fm
            if side == 1:
                fb *= 0.5
            side = 1
        else:
            b = m
            fb = fm
            if side == -1:
                fa *= 0.5
            side = -1
        if b - a <= tol:
            break
    return SLIP_


cdef inline int _gs_node(const double* Wi, const double* qi, long code, const double* p, double* lam,
                         double* d, double* change) noexcept nogil:
    """One node's step of the block sweeps: its problem solved with the others frozen, ``lam``
    (its 3 impulses) updated, ``d`` the change (zero when FAILED_), ``change`` raised to the
    node's largest ``|Wi d|``; returns the case."""
    cdef double new[3]
    cdef double dv
    cdef int c, a
    new[0] = lam[0]
    new[1] = lam[1]
    new[2] = lam[2]
    d[0] = 0.0
    d[1] = 0.0
    d[2] = 0.0
    c = _solve_node(Wi, qi, code, p, new)
    if c == FAILED_:
        return c
    for a in range(3):
        d[a] = new[a] - lam[a]
        lam[a] = new[a]
    for a in range(3):
        dv = fabs(Wi[3 * a] * d[0] + Wi[3 * a + 1] * d[1] + Wi[3 * a + 2] * d[2])
        if dv > change[0]:
            change[0] = dv
    return c


def solve_nodes(const double[:, :, ::1] W, const double[:, ::1] q, const long[::1] code,
                const double[:, ::1] params, double[:, ::1] lam, long[::1] case):
    """Every node's exact friction-cone problem, independently; see the module docstring and
    the twin ``cone_ref.solve_nodes`` for every argument."""
    cdef Py_ssize_t i, m = q.shape[0]
    cdef double out[3]
    cdef int c
    with nogil:
        for i in range(m):
            out[0] = lam[i, 0]
            out[1] = lam[i, 1]
            out[2] = lam[i, 2]
            c = _solve_node(&W[i, 0, 0], &q[i, 0], code[i], &params[i, 0], out)
            case[i] = c
            if c != FAILED_:
                lam[i, 0] = out[0]
                lam[i, 1] = out[1]
                lam[i, 2] = out[2]


def slip_nodes(const double[:, :, ::1] W, const double[:, ::1] q, const double[::1] mu,
               double[:, ::1] lam, long[::1] case):
    """Each node's slip solution at the constant coefficient ``mu[i]``; see the twin
    ``cone_ref.slip_nodes``."""
    cdef Py_ssize_t i, m = q.shape[0]
    cdef double out[3]
    cdef double s
    cdef double r[2]
    cdef cdptr Wi, qi
    with nogil:
        for i in range(m):
            Wi = &W[i, 0, 0]
            qi = &q[i, 0]
            out[0] = lam[i, 0]
            out[1] = lam[i, 1]
            out[2] = lam[i, 2]
            _ref_dir(Wi, qi, out, r)
            s = _slip_fixed(Wi, qi, mu[i], r[0], r[1], out) if qi[0] < 0.0 else -1.0
            case[i] = FAILED_ if s < 0.0 else SLIP_
            if s >= 0.0:
                lam[i, 0] = out[0]
                lam[i, 1] = out[1]
                lam[i, 2] = out[2]


def block_gs(const double[:, ::1] W, const double[::1] q, const long[::1] code,
             const double[:, ::1] params, double[::1] lam, double[::1] u, long[::1] case,
             double tol, long max_iter, double[::1] status):
    """Projected block Gauss-Seidel over coupled nodes, each node's problem solved exactly;
    see the module docstring and the twin ``cone_ref.block_gs`` for every argument."""
    cdef Py_ssize_t m = code.shape[0], n = 3 * code.shape[0], i, k, j, o
    cdef long sweeps = 0
    cdef int c, a, failed
    cdef double change = INFINITY, converged = 0.0, acc
    cdef double Wi[9]
    cdef double qi[3]
    cdef double d[3]
    with nogil:
        for k in range(n):
            acc = q[k]
            for j in range(n):
                acc += W[k, j] * lam[j]
            u[k] = acc
        while sweeps < max_iter:
            sweeps += 1
            change = 0.0
            failed = 0
            for i in range(m):
                o = 3 * i
                for a in range(3):
                    Wi[3 * a] = W[o + a, o]
                    Wi[3 * a + 1] = W[o + a, o + 1]
                    Wi[3 * a + 2] = W[o + a, o + 2]
                for a in range(3):
                    qi[a] = u[o + a] - (Wi[3 * a] * lam[o] + Wi[3 * a + 1] * lam[o + 1]
                                        + Wi[3 * a + 2] * lam[o + 2])
                c = _gs_node(Wi, qi, code[i], &params[i, 0], &lam[o], d, &change)
                case[i] = c
                if c == FAILED_:
                    failed = 1
                elif d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
                    for k in range(n):
                        u[k] += W[o, k] * d[0] + W[o + 1, k] * d[1] + W[o + 2, k] * d[2]
            if failed:
                change = INFINITY
            if change <= tol:
                converged = 1.0
                break
    status[0], status[1], status[2] = sweeps, change, converged


cdef inline void _frame_block(const double* f, const double* G, double* Wi) noexcept nogil:
    """A node's block in its frame, ``Wi = F G F'`` (F the 3 x 3 directions by components, G the
    components' 3 x 3 Gram matrix, both row-major)."""
    cdef double FG[9]
    cdef int a, b
    for a in range(3):
        for b in range(3):
            FG[3 * a + b] = f[3 * a] * G[b] + f[3 * a + 1] * G[3 + b] + f[3 * a + 2] * G[6 + b]
    for a in range(3):
        for b in range(3):
            Wi[3 * a + b] = FG[3 * a] * f[3 * b] + FG[3 * a + 1] * f[3 * b + 1] + FG[3 * a + 2] * f[3 * b + 2]


def block_gs_rows(const double[:, ::1] J, const double[::1] w, const double[::1] q, const long[::1] code,
                  const double[:, ::1] params, double floor, double[::1] lam, double[::1] z,
                  double[:, :, ::1] blocks, long[::1] case, double tol, long max_iter,
                  double[::1] status):
    """Projected block Gauss-Seidel over coupled nodes given their rows ``J`` (the operator
    ``W = J diag(w) J'`` never formed): ``z = diag(w) J' lam`` kept up to date node by node, each
    node's 3 x 3 block from its own rows, its problem solved exactly. O(rows x columns) a sweep;
    see the module docstring and the twin ``cone_ref.block_gs_rows`` for every argument."""
    # the rows are the frames' special case: identity frames, each node its own component rows
    cdef Py_ssize_t m = code.shape[0]
    if J.shape[0] != 3 * m or blocks.shape[0] != m:
        raise ValueError("block_gs_rows: inconsistent shapes (see cone_ref.block_gs_rows)")
    block_gs_frames(np.asarray(J).reshape(m, 3, J.shape[1]), np.arange(m, dtype=np.int_), 0,
                    np.tile(np.eye(3), (m, 1, 1)), w, q, code, params, floor, lam, z, blocks, False, case,
                    tol, max_iter, status)


def block_gs_frames(const double[:, :, ::1] D, const long[::1] nodes, object c0,
                    const double[:, :, ::1] F, const double[::1] w, const double[::1] q,
                    const long[::1] code, const double[:, ::1] params, double floor, double[::1] lam,
                    double[::1] z, double[:, :, ::1] gram, int given, long[::1] case, double tol,
                    long max_iter, double[::1] status):
    """The sweeps of ``block_gs_rows`` on rows given as frames times component rows:
    ``J_i = F[j] D[j]`` (j = ``nodes[i]``) over a window of the columns of ``z``, never formed:
    ``c0 .. c0 + ns`` for every node (``c0`` an int), or ``c0[j, 0] .. c0[j, 0] + c0[j, 1]`` from
    the first ``c0[j, 1]`` columns of ``D[j]`` (``c0`` a (kd, 2) array); each node's block
    ``F[j] gram[j] F[j]'`` from its components' 3 x 3 Gram matrix ``gram[j] = D[j] diag(w) D[j]'``
    (formed here unless bit 1 of ``given``); bit 2: ``z`` already holds ``diag(w) J' lam`` on
    entry (not formed again). See the module docstring and the twin ``cone_ref.block_gs_frames``."""
    cdef Py_ssize_t m = code.shape[0], ns = D.shape[2], n = z.shape[0], i, j, k, o, cs = 0, nj = ns
    cdef long sweeps = 0
    cdef int c, a, failed
    cdef double change = INFINITY, converged = 0.0, top = 0.0, low, s0, s1, s2, wk, e0, e1, e2
    cdef double Wi[9]
    cdef double g[6]
    cdef double qi[3]
    cdef double d[3]
    cdef cdptr r0, r1, r2, ww, f
    cdef double* zz
    cdef const long[:, ::1] win = None
    cdef bint per = isinstance(c0, np.ndarray)
    if per:
        win = c0
    else:
        cs = c0
    # the indices reach memory unchecked below: refuse any that would leave the arrays
    if ((not per and (cs < 0 or cs + ns > n)) or (per and (win.shape[0] != D.shape[0] or win.shape[1] != 2))
            or w.shape[0] != n or F.shape[0] != D.shape[0] or gram.shape[0] != D.shape[0] or nodes.shape[0] != m
            or q.shape[0] != 3 * m or lam.shape[0] != 3 * m or params.shape[0] != m or case.shape[0] != m
            or status.shape[0] != 3):
        raise ValueError("block_gs_frames: inconsistent shapes (see cone_ref.block_gs_frames)")
    for i in range(m):
        j = nodes[i]
        if j < 0 or j >= D.shape[0]:
            raise ValueError(f"block_gs_frames: node {j} outside 0..{D.shape[0] - 1}")
        if per and (win[j, 0] < 0 or win[j, 1] < 0 or win[j, 1] > ns or win[j, 0] + win[j, 1] > n):
            raise ValueError(f"block_gs_frames: the window of node {j} leaves the columns")
    with nogil:
        # the Gram matrices (unless given) and z = diag(w) J' lam (unless given), in one pass
        # over the rows
        if not (given & 2):
            for k in range(n):
                z[k] = 0.0
        for i in range(m):
            o = 3 * i
            j = nodes[i]
            if per:
                cs, nj = win[j, 0], win[j, 1]
            ww = &w[0] + cs
            zz = &z[0] + cs
            r0 = &D[j, 0, 0]
            r1 = &D[j, 1, 0]
            r2 = &D[j, 2, 0]
            if not (given & 1):
                g[0] = g[1] = g[2] = g[3] = g[4] = g[5] = 0.0
                for k in range(nj):
                    wk = ww[k]
                    g[0] += r0[k] * wk * r0[k]
                    g[1] += r0[k] * wk * r1[k]
                    g[2] += r0[k] * wk * r2[k]
                    g[3] += r1[k] * wk * r1[k]
                    g[4] += r1[k] * wk * r2[k]
                    g[5] += r2[k] * wk * r2[k]
                for a in range(3):
                    gram[j, a, a] = g[(7 - a) * a // 2]
                gram[j, 0, 1], gram[j, 1, 0], gram[j, 0, 2] = g[1], g[1], g[2]
                gram[j, 2, 0], gram[j, 1, 2], gram[j, 2, 1] = g[2], g[4], g[4]
            # the node's block in its frame, F G F'
            f = &F[j, 0, 0]
            _frame_block(f, &gram[j, 0, 0], Wi)
            for a in range(3):
                if Wi[4 * a] > top:
                    top = Wi[4 * a]
            if not (given & 2) and (lam[o] != 0.0 or lam[o + 1] != 0.0 or lam[o + 2] != 0.0):
                e0 = f[0] * lam[o] + f[3] * lam[o + 1] + f[6] * lam[o + 2]
                e1 = f[1] * lam[o] + f[4] * lam[o + 1] + f[7] * lam[o + 2]
                e2 = f[2] * lam[o] + f[5] * lam[o + 1] + f[8] * lam[o + 2]
                for k in range(nj):
                    zz[k] += ww[k] * (r0[k] * e0 + r1[k] * e1 + r2[k] * e2)
        low = floor * top
        while sweeps < max_iter:
            sweeps += 1
            change = 0.0
            failed = 0
            for i in range(m):
                o = 3 * i
                j = nodes[i]
                if per:
                    cs, nj = win[j, 0], win[j, 1]
                ww = &w[0] + cs
                zz = &z[0] + cs
                r0 = &D[j, 0, 0]
                r1 = &D[j, 1, 0]
                r2 = &D[j, 2, 0]
                f = &F[j, 0, 0]
                s0 = s1 = s2 = 0.0
                for k in range(nj):
                    s0 += r0[k] * zz[k]
                    s1 += r1[k] * zz[k]
                    s2 += r2[k] * zz[k]
                _frame_block(f, &gram[j, 0, 0], Wi)
                # the node's free value: its value less its own block's part
                for a in range(3):
                    qi[a] = (q[o + a] + (f[3 * a] * s0 + f[3 * a + 1] * s1 + f[3 * a + 2] * s2)
                             - (Wi[3 * a] * lam[o] + Wi[3 * a + 1] * lam[o + 1] + Wi[3 * a + 2] * lam[o + 2]))
                for a in range(3):
                    if Wi[4 * a] < low:
                        Wi[4 * a] = low
                c = _gs_node(Wi, qi, code[i], &params[i, 0], &lam[o], d, &change)
                case[i] = c
                if c == FAILED_:
                    failed = 1
                elif d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
                    e0 = f[0] * d[0] + f[3] * d[1] + f[6] * d[2]
                    e1 = f[1] * d[0] + f[4] * d[1] + f[7] * d[2]
                    e2 = f[2] * d[0] + f[5] * d[1] + f[8] * d[2]
                    for k in range(nj):
                        zz[k] += ww[k] * (r0[k] * e0 + r1[k] * e1 + r2[k] * e2)
            if failed:
                change = INFINITY
            if change <= tol:
                converged = 1.0
                break
    status[0], status[1], status[2] = sweeps, change, converged

def frame_rows(const double[:, :, ::1] F, const double[:, :, ::1] S, double sign, Py_ssize_t c0,
               double[:, :, ::1] J):
    """Each node's rows in its frame: ``J[i, r, c0 + j] += sign * sum_c F[i, r, c] S[i, c, j]``
    (F (k, 3, 3) the directions by components, S (k, 3, ns) the components' rows over ns
    columns); see the twin ``cone_ref.frame_rows``."""
    cdef Py_ssize_t k = S.shape[0], ns = S.shape[2], i, j
    cdef int r
    cdef double f0, f1, f2
    cdef cdptr s0, s1, s2
    cdef double* out
    with nogil:
        for i in range(k):
            s0 = &S[i, 0, 0]
            s1 = &S[i, 1, 0]
            s2 = &S[i, 2, 0]
            for r in range(3):
                f0 = sign * F[i, r, 0]
                f1 = sign * F[i, r, 1]
                f2 = sign * F[i, r, 2]
                out = &J[i, r, c0]
                for j in range(ns):
                    out[j] += f0 * s0[j] + f1 * s1[j] + f2 * s2[j]

def close_nodes(const double[:, ::1] P, const double[:, ::1] Q, const long[:, :] conn, const double[:, :] N,
                const double[:, :, ::1] F, const double[:, ::1] lam, const unsigned char[::1] on,
                const double[:, :, ::1] S, const double[:, :, ::1] M, double[::1] gap, double[:, ::1] force,
                double[:, ::1] slip, double[::1] works):
    """The close of a step of node-to-surface contact, node by node, in one pass: gaps, forces in
    x, y, z, the tangential part of a relative motion and three sums of work; see the twin
    ``cone_ref.close_nodes`` for every argument."""
    cdef Py_ssize_t k = P.shape[0], w = conn.shape[1], nq = Q.shape[0], i, j, p
    cdef int a, c
    cdef double x[3]
    cdef double r[3][3]
    cdef double fo[3]
    cdef double ft[3]
    cdef double wj, s, l0, l1, l2, w0 = 0.0, w1 = 0.0, w2 = 0.0
    cdef long m
    cdef int pa[3]
    cdef int pb[3]
    pa[0], pb[0], pa[1], pb[1], pa[2], pb[2] = 0, 1, 0, 2, 3, 4
    # the indices reach memory unchecked below: refuse any that would leave the arrays
    if (N.shape[0] != k or N.shape[1] != w or conn.shape[0] != k or F.shape[0] != k or lam.shape[0] != k
            or on.shape[0] != k or S.shape[0] != 5 or S.shape[1] != k or M.shape[0] != 5 or M.shape[1] != nq
            or gap.shape[0] != k or force.shape[0] != k or slip.shape[0] != k or works.shape[0] != 3
            or P.shape[1] != 3 or Q.shape[1] != 3 or S.shape[2] != 3 or M.shape[2] != 3 or lam.shape[1] != 3
            or force.shape[1] != 3 or slip.shape[1] != 3):
        raise ValueError("close_nodes: inconsistent shapes (see cone_ref.close_nodes)")
    for i in range(k):
        for j in range(w):
            if conn[i, j] >= nq:
                raise ValueError(f"close_nodes: master node {conn[i, j]} outside 0..{nq - 1}")
    with nogil:
        for i in range(k):
            # the master point and the relative motions
            for c in range(3):
                x[c] = 0.0
                for a in range(3):
                    r[a][c] = 0.0
            for j in range(w):
                m = conn[i, j]
                if m < 0:
                    continue
                wj = N[i, j]
                for c in range(3):
                    x[c] += wj * Q[m, c]
                    for a in range(3):
                        r[a][c] += wj * (M[pa[a], m, c] - M[pb[a], m, c])
            for a in range(3):
                for c in range(3):
                    r[a][c] = (S[pa[a], i, c] - S[pb[a], i, c]) - r[a][c]
            if on[i]:
                gap[i] = (P[i, 0] - x[0]) * F[i, 0, 0] + (P[i, 1] - x[1]) * F[i, 0, 1] + (P[i, 2] - x[2]) * F[i, 0, 2]
            else:
                gap[i] = NAN
            l0 = lam[i, 0]
            l1 = lam[i, 1]
            l2 = lam[i, 2]
            for c in range(3):
                fo[c] = l0 * F[i, 0, c] + l1 * F[i, 1, c] + l2 * F[i, 2, c]
                ft[c] = fo[c] - l0 * F[i, 0, c]
                force[i, c] = fo[c]
            s = r[0][0] * F[i, 0, 0] + r[0][1] * F[i, 0, 1] + r[0][2] * F[i, 0, 2]
            for c in range(3):
                slip[i, c] = r[0][c] - s * F[i, 0, c]
            w0 += ft[0] * r[1][0] + ft[1] * r[1][1] + ft[2] * r[1][2]
            w1 += l0 * (r[1][0] * F[i, 0, 0] + r[1][1] * F[i, 0, 1] + r[1][2] * F[i, 0, 2])
            w2 += fo[0] * r[2][0] + fo[1] * r[2][1] + fo[2] * r[2][2]
    works[0] = w0
    works[1] = w1
    works[2] = w2
