"""NumPy twin of ``cone.pyx``: the exact per-node friction-cone problem in 3D.

Same functions, signatures and arithmetic as the compiled kernel (its module docstring states the
problem, the local solver and why it was chosen); scalar Python on each node, so the results agree
with the compiled ones to round-off.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError

#: law codes of the per-node arrays: the slip coefficient is constant (0, 1) or
#: ``p1 + (p0 - p1) exp(-v / p2)`` (2); the stick limit is ``p0`` for every code
CONSTANT, STATIC_KINETIC, STRIBECK = 0, 1, 2
#: the node cases written to ``case``: no solution found, open, stick, slip
FAILED, OPEN, STICK, SLIP = -1, 0, 1, 2

SAMPLES = 64        # angles sampled on [0, 2 pi) to bracket the roots of the slip equation
ANGLE_ITER = 100    # Illinois steps on a bracket of the angle (~6-10 reach ANGLE_TOL)
ANGLE_TOL = 2e-15   # rad: the bracket of a root closed to a few ulps of 2 pi
OUTER = 100         # iterations of the outer root in mu (Stribeck); Illinois converges in ~10
STICK_SLACK = 1e-12  # relative slack of the stick test |lam_t| <= mu_s lam_n (round-off)


def _hcs(W, q, mu, c, s):
    """(h, A, g) of the slip equation at the direction d = (c, s): with a = (1, -mu d),
    A = (W a)_n, V = A q_t - q_n (W a)_t; h = d x V (zero when V is along d), g = d . V."""
    A = W[0] - mu * (W[1] * c + W[2] * s)
    b1 = W[3] - mu * (W[4] * c + W[5] * s)
    b2 = W[6] - mu * (W[7] * c + W[8] * s)
    v1 = A * q[1] - q[0] * b1
    v2 = A * q[2] - q[0] * b2
    return c * v2 - s * v1, A, c * v1 + s * v2


def _h(W, q, mu, th):
    return _hcs(W, q, mu, math.cos(th), math.sin(th))


# cosines and sines of the sampled angles, computed once
_COS = [math.cos(k * (2.0 * math.pi / SAMPLES)) for k in range(SAMPLES + 1)]
_SIN = [math.sin(k * (2.0 * math.pi / SAMPLES)) for k in range(SAMPLES + 1)]


def _slip_fixed(W, q, mu, ref1, ref2, lam):
    """Slip at the constant coefficient ``mu``: every root of h on [0, 2 pi) bracketed on
    SAMPLES angles and closed by regula falsi (Illinois); of the admissible ones (A > 0, g >= 0: lam_n > 0 and the slip
    velocity along d) the one whose direction is closest to (ref1, ref2). Writes ``lam`` and
    returns the slip speed |u_t| (-1.0 when no root is admissible, ``lam`` untouched)."""
    step = 2.0 * math.pi / SAMPLES
    best, best_dot, best_s = None, -math.inf, -1.0
    th0 = 0.0
    h0, _, _ = _hcs(W, q, mu, _COS[0], _SIN[0])
    qn2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2]
    for k in range(SAMPLES):
        th1 = (k + 1) * step
        h1, _, _ = _hcs(W, q, mu, _COS[k + 1], _SIN[k + 1])
        root = None
        if h0 == 0.0:
            root = th0
        elif (h0 < 0.0 < h1) or (h1 < 0.0 < h0):
            # Illinois' regula falsi on the bracket (a bisection where it would leave it)
            a, b, ha, hb, side = th0, th1, h0, h1, 0
            root = 0.5 * (a + b)
            for _ in range(ANGLE_ITER):
                mid = b - hb * (b - a) / (hb - ha)
                if not (a < mid < b):
                    mid = 0.5 * (a + b)
                hm, _, _ = _h(W, q, mu, mid)
                root = mid
                if hm == 0.0:
                    break
                if (hm < 0.0) == (hb < 0.0):
                    b, hb = mid, hm
                    if side == 1:
                        ha *= 0.5
                    side = 1
                else:
                    a, ha = mid, hm
                    if side == -1:
                        hb *= 0.5
                    side = -1
                if b - a <= ANGLE_TOL:
                    root = 0.5 * (a + b)
                    break
        if root is not None:
            _, A, g = _h(W, q, mu, root)
            if A > 0.0 and g >= -1e-12 * A * math.sqrt(qn2):
                c, s = math.cos(root), math.sin(root)
                dot = c * ref1 + s * ref2
                if dot > best_dot:
                    best, best_dot, best_s = root, dot, max(g / A, 0.0)
                    best_A = A
        th0, h0 = th1, h1
    if best is None:
        return -1.0
    ln = -q[0] / best_A
    lam[0] = ln
    lam[1] = -mu * ln * math.cos(best)
    lam[2] = -mu * ln * math.sin(best)
    return best_s


def _mu_slip(code, p, v):
    if code == STRIBECK:
        return p[1] + (p[0] - p[1]) * math.exp(-v / p[2])
    return p[1]


def _ref_dir(W, q, lam):
    """The slip direction to prefer: against the warm start's tangential impulse, or (none) the
    tangential velocity under the normal impulse alone."""
    t = math.sqrt(lam[1] * lam[1] + lam[2] * lam[2])
    if t > 0.0:
        return -lam[1] / t, -lam[2] / t
    ln = -q[0] / W[0]
    return q[1] + W[3] * ln, q[2] + W[6] * ln


def _solve_node(W, q, code, p, lam):
    """One node's problem (W: 9 values row-major, q: 3, p: 3) into ``lam`` (in: warm start,
    used only to choose the slip branch); returns the case."""
    if q[0] >= 0.0:
        lam[0] = lam[1] = lam[2] = 0.0
        return OPEN
    # stick: W lam = -q by Cholesky (W symmetric positive definite)
    l00 = W[0]
    if not l00 > 0.0:
        return FAILED
    l00 = math.sqrt(l00)
    l10 = W[3] / l00
    l20 = W[6] / l00
    d1 = W[4] - l10 * l10
    if not d1 > 0.0:
        return FAILED
    l11 = math.sqrt(d1)
    l21 = (W[7] - l20 * l10) / l11
    d2 = W[8] - l20 * l20 - l21 * l21
    if not d2 > 0.0:
        return FAILED
    l22 = math.sqrt(d2)
    y0 = -q[0] / l00
    y1 = (-q[1] - l10 * y0) / l11
    y2 = (-q[2] - l20 * y0 - l21 * y1) / l22
    x2 = y2 / l22
    x1 = (y1 - l21 * x2) / l11
    x0 = (y0 - l10 * x1 - l20 * x2) / l00
    if x0 >= 0.0 and math.sqrt(x1 * x1 + x2 * x2) <= (p[0] + STICK_SLACK) * x0:
        lam[0], lam[1], lam[2] = x0, x1, x2
        return STICK
    r1, r2 = _ref_dir(W, q, lam)
    if code != STRIBECK or not p[0] > p[1]:
        s = _slip_fixed(W, q, p[1], r1, r2, lam)
        return FAILED if s < 0.0 else SLIP
    # velocity weakening: the root in mu of F(mu) = mu(v(mu)) - mu on [mu_k, mu_s], v(mu) the
    # slip speed at the constant coefficient mu (F(mu_k) >= 0 >= F(mu_s)); Illinois' regula falsi
    a, b = p[1], p[0]
    s = _slip_fixed(W, q, a, r1, r2, lam)
    if s < 0.0:
        return FAILED
    fa = _mu_slip(code, p, s) - a
    if fa <= 0.0:
        return SLIP
    r1, r2 = -lam[1], -lam[2]
    s = _slip_fixed(W, q, b, r1, r2, lam)
    if s < 0.0:
        return FAILED
    fb = _mu_slip(code, p, s) - b
    if fb >= 0.0:
        return SLIP
    side = 0
    tol = 4e-16 * p[0]  # a few ulps of mu_s
    for _ in range(OUTER):
        m = (a * fb - b * fa) / (fb - fa)
        if not (a < m < b):
            m = 0.5 * (a + b)
        r1, r2 = -lam[1], -lam[2]
        s = _slip_fixed(W, q, m, r1, r2, lam)
        if s < 0.0:
            return FAILED
        fm = _mu_slip(code, p, s) - m
        if abs(fm) <= tol or b - a <= tol:
            break
        if fm > 0.0:
            a, fa = m, fm
            if side == 1:
                fb *= 0.5
            side = 1
        else:
            b, fb = m, fm
            if side == -1:
                fa *= 0.5
            side = -1
        if b - a <= tol:
            break
    return SLIP


def _check(W, q, code, params, lam, case):
    m = q.shape[0]
    for name, arr, shape in (("W", W, (m, 3, 3)), ("q", q, (m, 3)), ("code", code, (m,)),
                             ("params", params, (m, 3)), ("lam", lam, (m, 3)), ("case", case, (m,))):
        if arr.shape != shape:
            raise ParameterError(f"{name} must have shape {shape}, got {arr.shape}")


def solve_nodes(W, q, code, params, lam, case):
    """Every node's exact friction-cone problem, independently (see ``cone.pyx``).

    Parameters
    ----------
    W : (m, 3, 3) float array
        Each node's Delassus block (symmetric positive definite; normal row first).
    q : (m, 3) float array
        Each node's free relative velocity (u = W lam + q).
    code : (m,) int64 array
        Law code per node (CONSTANT, STATIC_KINETIC, STRIBECK).
    params : (m, 3) float array
        Per node (p0, p1, p2): stick limit, slip coefficient (at high speed), Stribeck speed.
    lam : (m, 3) float array
        In: warm start (chooses the slip branch); out: the impulses.
    case : (m,) int64 array
        Out: OPEN, STICK, SLIP, or FAILED (no admissible solution found; ``lam`` unchanged).
    """
    _check(W, q, code, params, lam, case)
    for i in range(q.shape[0]):
        out = [float(lam[i, 0]), float(lam[i, 1]), float(lam[i, 2])]
        c = _solve_node([float(x) for x in W[i].ravel()], [float(x) for x in q[i]], int(code[i]),
                        [float(x) for x in params[i]], out)
        case[i] = c
        if c != FAILED:
            lam[i, 0], lam[i, 1], lam[i, 2] = out


def slip_nodes(W, q, mu, lam, case):
    """Each node's slip solution at the constant coefficient ``mu[i]`` (no open or stick test):
    the inner problem of a velocity-dependent law, for a law evaluated by the caller.
    ``lam`` in: warm start (chooses the branch), out: impulses; ``case`` SLIP or FAILED."""
    m = q.shape[0]
    for name, arr, shape in (("W", W, (m, 3, 3)), ("q", q, (m, 3)), ("mu", mu, (m,)),
                             ("lam", lam, (m, 3)), ("case", case, (m,))):
        if arr.shape != shape:
            raise ParameterError(f"{name} must have shape {shape}, got {arr.shape}")
    for i in range(m):
        Wi = [float(x) for x in W[i].ravel()]
        qi = [float(x) for x in q[i]]
        out = [float(lam[i, 0]), float(lam[i, 1]), float(lam[i, 2])]
        r1, r2 = _ref_dir(Wi, qi, out)
        s = _slip_fixed(Wi, qi, float(mu[i]), r1, r2, out) if qi[0] < 0.0 else -1.0
        case[i] = FAILED if s < 0.0 else SLIP
        if s >= 0.0:
            lam[i, 0], lam[i, 1], lam[i, 2] = out


def _gs_node(Wi, qi, code, p, lam, o):
    """One node's step of the block sweeps: its problem solved with the others frozen, its impulses
    ``lam[o:o + 3]`` updated; returns (case, the change d (zeros when FAILED), the node's largest
    ``|Wi d|``)."""
    old = [float(lam[o]), float(lam[o + 1]), float(lam[o + 2])]
    new = list(old)
    c = _solve_node(Wi, qi, code, p, new)
    if c == FAILED:
        return c, [0.0, 0.0, 0.0], 0.0
    d = [new[0] - old[0], new[1] - old[1], new[2] - old[2]]
    lam[o], lam[o + 1], lam[o + 2] = new
    dv = max(abs(Wi[3 * a] * d[0] + Wi[3 * a + 1] * d[1] + Wi[3 * a + 2] * d[2]) for a in range(3))
    return c, d, dv


def block_gs(W, q, code, params, lam, u, case, tol, max_iter, status):
    """Projected block Gauss-Seidel over coupled nodes (see ``cone.pyx``).

    Parameters
    ----------
    W : (3m, 3m) float array
        The Delassus operator of the m nodes (symmetric; each 3 x 3 diagonal block positive
        definite).
    q : (3m,) float array
        Free relative velocities (u = W lam + q).
    code, params : as in :func:`solve_nodes`.
    lam : (3m,) float array
        In: warm start; out: impulses.
    u : (3m,) float array
        Out: W lam + q.
    case : (m,) int64 array
        Out: each node's case in the last sweep.
    tol : float
        Convergence: the largest |W_ii delta lam_i| (max norm, units of q) of a sweep <= tol.
    max_iter : int
        Largest number of sweeps.
    status : (3,) float array
        Out: sweeps, last largest change, converged (1.0) or not (0.0).
    """
    m = code.shape[0]
    for name, arr, shape in (("W", W, (3 * m, 3 * m)), ("q", q, (3 * m,)), ("params", params, (m, 3)),
                             ("lam", lam, (3 * m,)), ("u", u, (3 * m,)), ("case", case, (m,)),
                             ("status", status, (3,))):
        if arr.shape != shape:
            raise ParameterError(f"{name} must have shape {shape}, got {arr.shape}")
    n = 3 * m
    for k in range(n):
        acc = q[k]
        for j in range(n):
            acc += W[k, j] * lam[j]
        u[k] = acc
    sweeps, change, converged = 0, math.inf, 0.0
    while sweeps < max_iter:
        sweeps += 1
        change, failed = 0.0, False
        for i in range(m):
            o = 3 * i
            Wi = [float(W[o + a, o + b]) for a in range(3) for b in range(3)]
            old = [float(lam[o]), float(lam[o + 1]), float(lam[o + 2])]
            qi = [float(u[o + a]) - (Wi[3 * a] * old[0] + Wi[3 * a + 1] * old[1] + Wi[3 * a + 2] * old[2])
                  for a in range(3)]
            c, d, dv = _gs_node(Wi, qi, int(code[i]), [float(x) for x in params[i]], lam, o)
            case[i] = c
            change = max(change, dv)
            if c == FAILED:
                failed = True
            elif d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
                for k in range(n):
                    u[k] += W[o, k] * d[0] + W[o + 1, k] * d[1] + W[o + 2, k] * d[2]
        if failed:
            change = math.inf
        if change <= tol:
            converged = 1.0
            break
    status[0], status[1], status[2] = sweeps, change, converged




def block_gs_rows(J, w, q, code, params, floor, lam, z, blocks, case, tol, max_iter, status):
    """Projected block Gauss-Seidel over coupled nodes given their rows, the operator
    ``W = J diag(w) J'`` never formed (see ``cone.pyx``): the same sweeps as :func:`block_gs`,
    with ``z = diag(w) J' lam`` kept up to date node by node and each node's value
    ``u_i = J_i z + q_i`` formed from its own three rows. A sweep costs O(rows x columns), where
    the dense operator costs O(rows^2 x columns) to form. The dot products over the columns are
    NumPy's (their order of summation differs from the compiled loop's: round-off).

    Parameters
    ----------
    J : (3m, n) float array
        Each node's three rows (normal, then two tangents) over n columns.
    w : (n,) float array
        Weights of the columns (>= 0): ``W = J diag(w) J'``.
    q : (3m,) float array
        Free values (u = W lam + q).
    code, params : as in :func:`solve_nodes`.
    floor : float
        Every block's diagonal is raised to at least ``floor`` times the largest diagonal entry of
        all blocks (0: not at all), so that a row of zeros still gives a definite block; the
        sweeps then solve with ``W`` plus that diagonal.
    lam : (3m,) float array
        In: warm start; out: impulses.
    z : (n,) float array
        Out: ``diag(w) J' lam``.
    blocks : (m, 3, 3) float array
        Out: each node's block ``J_i diag(w) J_i'`` (before the floor).
    case, tol, max_iter, status : as in :func:`block_gs` (the change measured with the blocks
        after the floor).
    """
    m = code.shape[0]
    n = J.shape[1] if J.ndim == 2 else -1
    for name, arr, shape in (("J", J, (3 * m, n)), ("blocks", blocks, (m, 3, 3))):
        if arr.shape != shape:
            raise ParameterError(f"{name} must have shape {shape}, got {arr.shape}")
    # the rows are the frames' special case: identity frames, each node its own component rows
    block_gs_frames(J.reshape(m, 3, n), np.arange(m), 0, np.tile(np.eye(3), (m, 1, 1)), w, q, code, params, floor,
                    lam, z, blocks, False, case, tol, max_iter, status)


def block_gs_frames(D, nodes, c0, F, w, q, code, params, floor, lam, z, gram, given, case, tol, max_iter, status):
    """The sweeps of :func:`block_gs_rows` on rows given as each node's frame times its
    components' rows, never formed: node i of the problem is j = ``nodes[i]``, its rows
    ``J_i = F[j] D[j]`` over a window of the columns of ``z`` (zero elsewhere), its block
    ``F[j] gram[j] F[j]'`` with ``gram[j] = D[j] diag(w) D[j]'`` the 3 x 3 Gram matrix of its
    components (which does not change with the frame: a caller whose rows stay fixed over many
    problems forms it once). The sweeps, the floor, the convergence measure and the status are
    those of :func:`block_gs_rows` on ``J``; the blocks differ from ``J_i diag(w) J_i'`` by
    round-off.

    Parameters
    ----------
    D : (kd, 3, ns) float array
        Rows of the x, y, z components of kd nodes over ns columns.
    nodes : (m,) int array
        The problem's nodes, indices into ``D``, ``F`` and ``gram``.
    c0 : int or (kd, 2) int array
        The first column of ``z`` (and ``w``) the rows cover: one for every node (its rows over
        ``c0 .. c0 + ns``), or each node's (first column, width <= ns): node j's rows are the first
        ``c0[j, 1]`` columns of ``D[j]``, over ``c0[j, 0] .. c0[j, 0] + c0[j, 1]`` (rows that are
        nonzero on a few of many columns: each node's sweeps over its own).
    F : (kd, 3, 3) float array
        Each node's directions (normal, t1, t2: rows) by their components.
    w : (n,) float array
        Column weights (>= 0), n >= c0 + ns.
    q, code, params, floor, lam : as in :func:`block_gs_rows` (m nodes).
    z : (n,) float array
        In (bit 2 of ``given``) or zero on entry: ``diag(w) J' lam`` of the warm start; out:
        ``diag(w) J' lam``.
    gram : (kd, 3, 3) float array
        In (bit 1 of ``given``) or out (written for the problem's nodes): ``D[j] diag(w) D[j]'``.
    given : int
        Bit flags: 1, take ``gram`` as given; 2, take ``z`` as given (a caller that holds it
        from the problem before, with the same rows and impulses: not formed again).
        ``True``/``False`` are 1 and 0.
    case, tol, max_iter, status : as in :func:`block_gs_rows`.
    """
    m = code.shape[0]
    kd, ns = (D.shape[0], D.shape[2]) if D.ndim == 3 else (-1, -1)
    n = z.shape[0]
    for name, arr, shape in (("D", D, (kd, 3, ns)), ("nodes", nodes, (m,)), ("F", F, (kd, 3, 3)), ("w", w, (n,)),
                             ("q", q, (3 * m,)), ("params", params, (m, 3)), ("lam", lam, (3 * m,)),
                             ("gram", gram, (kd, 3, 3)), ("case", case, (m,)), ("status", status, (3,))):
        if arr.shape != shape:
            raise ParameterError(f"{name} must have shape {shape}, got {arr.shape}")
    if m and (nodes.min() < 0 or nodes.max() >= kd):
        raise ParameterError(f"nodes must be indices in 0..{kd - 1}")
    if isinstance(c0, np.ndarray):
        if c0.shape != (kd, 2):
            raise ParameterError(f"c0 must have shape {(kd, 2)}, got {c0.shape}")
        a, b = c0[nodes, 0], c0[nodes, 1]
        if m and (a.min() < 0 or b.min() < 0 or b.max() > ns or (a + b).max() > n):
            raise ParameterError(f"the nodes' windows must lie in 0..{n} and be at most {ns} wide")
        # each node's window of z and w and its rows over it
        cut = {int(j): (slice(int(c0[j, 0]), int(c0[j, 0] + c0[j, 1])), D[j, :, :int(c0[j, 1])]) for j in nodes}
    else:
        if not 0 <= c0 <= n - ns:
            raise ParameterError(f"c0 must be in 0..{n - ns} (z has {n} columns, D {ns}), got {c0}")
        cut = {int(j): (slice(c0, c0 + ns), D[j]) for j in nodes}
    if not given & 2:
        z[:] = 0.0
    if not given & 1:
        for j in nodes:
            win, Dj = cut[int(j)]
            gram[j] = (Dj * w[win]) @ Dj.T
    blocks = [F[j] @ gram[j] @ F[j].T for j in nodes]
    top = max((float(b.diagonal().max()) for b in blocks), default=0.0)
    for i, j in enumerate(nodes):
        li = lam[3 * i:3 * i + 3]
        if not given & 2 and (li[0] != 0.0 or li[1] != 0.0 or li[2] != 0.0):
            win, Dj = cut[int(j)]
            z[win] += w[win] * ((li @ F[j]) @ Dj)
    low = floor * top
    sweeps, change, converged = 0, math.inf, 0.0
    while sweeps < max_iter:
        sweeps += 1
        change, failed = 0.0, False
        for i, j in enumerate(nodes):
            o = 3 * i
            win, Dj = cut[int(j)]
            s = F[j] @ (Dj @ z[win])
            Wi = [float(x) for x in blocks[i].ravel()]
            old = [float(lam[o]), float(lam[o + 1]), float(lam[o + 2])]
            # the node's free value: its value less its own block's part
            qi = [float(q[o + a]) + float(s[a]) - (Wi[3 * a] * old[0] + Wi[3 * a + 1] * old[1] + Wi[3 * a + 2] * old[2])
                  for a in range(3)]
            for a in range(3):
                Wi[4 * a] = max(Wi[4 * a], low)
            c, d, dv = _gs_node(Wi, qi, int(code[i]), [float(x) for x in params[i]], lam, o)
            case[i] = c
            change = max(change, dv)
            if c == FAILED:
                failed = True
            elif d[0] != 0.0 or d[1] != 0.0 or d[2] != 0.0:
                z[win] += w[win] * ((np.array(d) @ F[j]) @ Dj)
        if failed:
            change = math.inf
        if change <= tol:
            converged = 1.0
            break
    status[0], status[1], status[2] = sweeps, change, converged

def frame_rows(F, S, sign, c0, J):
    """Each node's rows in its frame, added into ``J``: ``J[i, r, c0 + j] += sign * sum_c F[i, r, c]
    S[i, c, j]``.

    Parameters
    ----------
    F : (k, 3, 3) float array
        Per node, three directions (rows) by their components.
    S : (k, 3, ns) float array
        Per node, each component's row over ns columns.
    sign : float
        Factor of the product (+1 or -1).
    c0 : int
        First column of ``J`` the product goes to.
    J : (k, 3, n) float array
        In/out, n >= c0 + ns.
    """
    k, ns = S.shape[0], S.shape[2] if S.ndim == 3 else -1
    for name, arr, shape in (("F", F, (k, 3, 3)), ("S", S, (k, 3, ns))):
        if arr.shape != shape:
            raise ParameterError(f"{name} must have shape {shape}, got {arr.shape}")
    if J.ndim != 3 or J.shape[:2] != (k, 3) or not 0 <= c0 <= J.shape[2] - ns:
        raise ParameterError(f"J must have shape ({k}, 3, >= {c0 + ns}), got {J.shape}")
    J[:, :, c0:c0 + ns] += sign * np.einsum("krc,kcj->krj", F, S)


def close_nodes(P, Q, conn, N, F, lam, on, S, M, gap, force, slip, works):
    """The close of a step of node-to-surface contact, node by node: gaps from the points, forces
    from their components in each node's frame, the tangential part of a relative motion, and
    three sums of work.

    A node's relative motion between two states a, b of the displacements is its own less that of
    its master point: ``rel_ab[i] = (S[a, i] - S[b, i]) - sum_j N[i, j] (M[a] - M[b])[conn[i, j]]``
    (entries with ``conn < 0`` left out). The pairs used are (0, 1), (0, 2) and (3, 4).

    Parameters
    ----------
    P : (k, 3) float array
        The nodes' points.
    Q : (nq, 3) float array
        The points of the master nodes.
    conn : (k, w) int array
        Each node's master nodes (negative: none).
    N : (k, w) float array
        Each node's weights of its master nodes (the shape values of its master point).
    F : (k, 3, 3) float array
        Each node's frame: normal, first and second tangent (rows) by their x, y, z components.
    lam : (k, 3) float array
        Each node's force components along its frame.
    on : (k,) uint8 array
        1 where a node has a master point (else its gap is NaN).
    S : (5, k, 3) float array
        Five states of the nodes' displacements.
    M : (5, nq, 3) float array
        The same five states of the master nodes' displacements.
    gap : (k,) float array
        Out: ``(P[i] - sum_j N[i, j] Q[conn[i, j]]) . F[i, 0]`` (NaN where not ``on``).
    force : (k, 3) float array
        Out: ``lam[i] @ F[i]``, the force in x, y, z.
    slip : (k, 3) float array
        Out: the tangential part of ``rel_01``, ``rel_01 - (rel_01 . n) n``.
    works : (3,) float array
        Out: sums over the nodes of ``(force - lam_n n) . rel_02``, ``lam_n (rel_02 . n)`` and
        ``force . rel_34``.
    """
    k = P.shape[0]
    w = conn.shape[1] if conn.ndim == 2 else -1
    for name, arr, shape in (("Q", Q, (Q.shape[0], 3)), ("conn", conn, (k, w)), ("N", N, (k, w)),
                             ("F", F, (k, 3, 3)), ("lam", lam, (k, 3)), ("on", on, (k,)), ("S", S, (5, k, 3)),
                             ("M", M, (5, Q.shape[0], 3)), ("gap", gap, (k,)), ("force", force, (k, 3)),
                             ("slip", slip, (k, 3)), ("works", works, (3,))):
        if arr.shape != shape:
            raise ParameterError(f"{name} must have shape {shape}, got {arr.shape}")
    if conn.size and (conn.max() >= Q.shape[0]):
        raise ParameterError(f"conn refers to master nodes outside 0..{Q.shape[0] - 1}")
    Nm = np.where(conn >= 0, N, 0.0)
    at = np.maximum(conn, 0)

    def rel(a, b):
        if not Q.shape[0]:
            return S[a] - S[b]
        return (S[a] - S[b]) - np.einsum("kj,kjc->kc", Nm, (M[a] - M[b])[at], optimize=False)

    nv = F[:, 0]
    xm = np.einsum("kj,kjc->kc", Nm, Q[at], optimize=False) if Q.shape[0] else np.zeros((k, 3))
    gap[:] = np.where(on != 0, ((P - xm) * nv).sum(1), np.nan)
    force[:] = lam[:, :1] * nv + lam[:, 1:2] * F[:, 1] + lam[:, 2:3] * F[:, 2]
    r0, r1, r2 = rel(0, 1), rel(0, 2), rel(3, 4)
    slip[:] = r0 - (r0 * nv).sum(1)[:, None] * nv
    works[0] = np.sum((force - lam[:, :1] * nv) * r1)
    works[1] = np.sum(lam[:, 0] * (r1 * nv).sum(1))
    works[2] = np.sum(force * r2)
