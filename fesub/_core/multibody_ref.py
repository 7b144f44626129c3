"""NumPy twin of ``multibody.pyx``: a chunk of steps of the multibody contact march.

Same functions, signatures and arithmetic as the compiled kernel, loop for loop (see its module
docstring for the method and every array); the loops over the modal coordinates are NumPy
vector operations, the sweeps of the contact problem are those of ``friction_lcp_ref.solve``.
Results differ from the compiled kernel by the summation order of the dot products (round-off).
"""

from __future__ import annotations

import math

import numpy as np

from .friction_lcp_ref import coulomb_one
from .friction_lcp_ref import solve as _pgs_solve

#: most passes of the active-set loop in one step
PASSES = 50
_NEVER = -(1 << 62)


def step_time(i, h):
    """Time of index i as the Python stepper forms it: (i - 1) h + h."""
    return (i - 1) * h + h


class _Nodes:
    """Rows, windows, positions and driven parts of a set of nodes (see the kernel's ``Nodes``)."""

    def __init__(self, R, win, X, dv, ds):
        self.R, self.win, self.X, self.dv, self.ds = R, win, X, dv, ds

    def driven(self, j, tt, row):
        dx, dy = self.dv[j, 0] * tt, self.dv[j, 1] * tt
        if self.ds.shape[0]:
            dx, dy = dx + self.ds[row, j, 0], dy + self.ds[row, j, 1]
        return dx, dy

    def disp(self, j, e, tt, row):
        a, b = self.win[j]
        sx, sy = float(self.R[j, 0, a:b] @ e[a:b]), float(self.R[j, 1, a:b] @ e[a:b])
        dx, dy = self.driven(j, tt, row)
        return sx + dx, sy + dy

    def cached(self, j, e, tt, row, stamp, C, S):
        if S[j] != stamp:
            C[j] = self.disp(j, e, tt, row)
            S[j] = stamp
        return C[j, 0], C[j, 1]


def segment_frame(px, py, ax, ay, bx, by):
    """(alpha, gap, nx, ny, tx, ty) of P on A -> B (``interface.frames``), in the kernel's
    arithmetic: alpha = (r . d) / |d|^2, t = d / |d|."""
    dx, dy = bx - ax, by - ay
    l2 = dx * dx + dy * dy
    ln = math.sqrt(l2)
    rx, ry = px - ax, py - ay
    tx, ty = dx / ln, dy / ln
    nx, ny = -ty, tx
    return (rx * dx + ry * dy) / l2, rx * nx + ry * ny, nx, ny, tx, ty


def _walk_alpha(px, py, x1, y1, x2, y2):
    dx, dy = x2 - x1, y2 - y1
    l2 = dx * dx + dy * dy
    return ((px - x1) * dx + (py - y1) * dy) / l2, (-dy * (px - x1) + dx * (py - y1)) / math.sqrt(l2)


def segment_walk(ms, segs, lo, m, px, py, start, e, tt, row, stamp, C, S):
    """Local segment index under P by the walk from ``start``, full scan as a fallback; -1 when off."""

    def ag(k):
        i, j = segs[lo + k]
        x1, y1 = ms.cached(i, e, tt, row, stamp, C, S)
        x2, y2 = ms.cached(j, e, tt, row, stamp, C, S)
        return _walk_alpha(px, py, ms.X[i, 0] + x1, ms.X[i, 1] + y1, ms.X[j, 0] + x2, ms.X[j, 1] + y2)

    k, prev, steps = start, -2, 0
    if 0 <= k < m:
        while steps < m:
            a, _ = ag(k)
            steps += 1
            if a < 0.0 and k > 0 and segs[lo + k - 1, 1] == segs[lo + k, 0]:
                if prev == k - 1:
                    break
                prev, k = k, k - 1
            elif a >= 1.0 and k < m - 1 and segs[lo + k + 1, 0] == segs[lo + k, 1]:
                if prev == k + 1:
                    break
                prev, k = k, k + 1
            else:
                if 0.0 <= a < 1.0 or (a < 0.0 and prev == k - 1) or (a >= 1.0 and prev == k + 1):
                    return k
                break
    best, bestg = -1, 1e300
    for k in range(m):
        a, g = ag(k)
        if 0.0 <= a <= 1.0 and abs(g) < bestg:
            bestg, best = abs(g), k
    return best


def gram(srow, mrow, i, ia, ib):
    """Gram matrix (6 x 6) of the modal rows [slave x, y; master ia x, y; master ib x, y]."""
    rows = np.vstack([srow[i], mrow[ia], mrow[ib]])
    return rows @ rows.T


def update_one(srow, swin, mrow, mwin, ia, ib, Es, Ex, h2, lam, cNT, G, solved, star):
    """e_next = e* + h^2 J' lam for the one slave node, and the displacements after the step
    (slave, master ia, master ib: x, y each) from the predicted ones ``star`` through G."""
    Ex[:] = Es
    if not solved:
        return np.array(star, dtype=float)
    c = h2 * (lam[0] * cNT[0] + lam[1] * cNT[1])
    a, b = swin[0]
    Ex[a:b] += c[0] * srow[0, 0, a:b] + c[1] * srow[0, 1, a:b]
    a, b = mwin[ia]
    Ex[a:b] += c[2] * mrow[ia, 0, a:b] + c[3] * mrow[ia, 1, a:b] + c[4] * mrow[ib, 0, a:b] + c[5] * mrow[ib, 1, a:b]
    return np.array(star, dtype=float) + G @ c


def _slip_yt(wn, wc, wt, bn, bt, s, mu):
    return bt + (wc + s * mu * wt) * (-bn / (wn + s * mu * wc))


def _law_closed(W, b, code, p, h, lam):
    """Twin of ``_laws.law_closed``: one constraint with a law beyond one coefficient (code 1
    static/kinetic, 2 Stribeck; ``p`` = stick limit, slip coefficient, Stribeck speed m/s) into
    ``lam``; returns the coefficient at the cone's edge (mu_s when open or stuck), None where
    the closed form does not apply."""
    wn, wc, wt = W
    bn, bt = b
    ms, mk = p[0], p[1]
    if not (wn > 0.0 and ms * abs(wc) < wn and wn * wt - wc * wc > 0.0 and mk >= 0.0 and mk <= ms):
        return None
    if not bn < 0.0:
        lam[0] = lam[1] = 0.0
        return ms
    det = wn * wt - wc * wc
    ln = (wc * bt - wt * bn) / det
    lt = (wc * bn - wn * bt) / det
    if ln > 0.0 and abs(lt) <= ms * ln:
        lam[0], lam[1] = ln, lt
        return ms
    s = 1.0 if lam[1] >= 0.0 else -1.0
    for _ in range(2):
        yt = _slip_yt(wn, wc, wt, bn, bt, s, ms)
        if (yt <= 0.0) if s > 0.0 else (yt >= 0.0):
            break
        s = -s
    else:
        return None
    m = mk
    if code == 2 and ms > mk:
        def F(mu):
            return mk + (ms - mk) * math.exp(-abs(_slip_yt(wn, wc, wt, bn, bt, s, mu)) / (h * p[2])) - mu
        a, c = mk, ms
        fa, fc = F(a), F(c)
        m, side = a, 0
        if fa > 0.0 and fc < 0.0:
            for _ in range(200):
                m = (a * fc - c * fa) / (fc - fa)
                if not a < m < c:
                    m = 0.5 * (a + c)
                fm = F(m)
                if fm == 0.0:
                    break
                if fm > 0.0:
                    a, fa = m, fm
                    if side == 1:
                        fc *= 0.5
                    side = 1
                else:
                    c, fc = m, fm
                    if side == -1:
                        fa *= 0.5
                    side = -1
                if c - a <= 4e-16 * ms:
                    break
        elif fc >= 0.0:
            m = c
    ln = -bn / (wn + s * m * wc)
    lam[0], lam[1] = ln, s * m * ln
    return m


def work_sizes(nm, m, n_master, n_itf):
    """(doubles, integers) of the work arrays of :func:`march`."""
    return (8 * nm + 4 * m * nm + 26 * m + 8 * n_master + 4 * n_itf + 36, 7 * m + 4 * n_master)


def _pgs_laws(J, w, b, nodes, lcode, lpar, h, lam, z, tol, max_iter, status, mu_used):
    """Twin of ``_laws.pgs_laws``: block Gauss-Seidel over the constraints of ``J`` (2k rows),
    each solved by ``_law_closed`` with its own law (``nodes`` index ``lcode``, ``lpar``), the
    others' forces frozen; ``lam``, ``z``, ``status`` and ``mu_used`` (k) out."""
    k = nodes.size
    z[:] = w * (J.T @ lam)
    sweeps, change, converged = 0, math.inf, 0.0
    while sweeps < max_iter:
        sweeps += 1
        change = 0.0
        for p in range(k):
            Jn, Jt = J[2 * p], J[2 * p + 1]
            W = [float(Jn @ (Jn * w)), float(Jn @ (Jt * w)), float(Jt @ (Jt * w))]
            l2 = [lam[2 * p], lam[2 * p + 1]]
            bb = [b[2 * p] + float(Jn @ z) - (W[0] * l2[0] + W[1] * l2[1]),
                  b[2 * p + 1] + float(Jt @ z) - (W[1] * l2[0] + W[2] * l2[1])]
            c = nodes[p]
            mu = _law_closed(W, bb, lcode[c], lpar[c], h, l2)
            if mu is None:
                change = math.inf
                break
            mu_used[p] = mu
            d0, d1 = l2[0] - lam[2 * p], l2[1] - lam[2 * p + 1]
            if d0 != 0.0 or d1 != 0.0:
                lam[2 * p], lam[2 * p + 1] = l2
                z += w * (Jn * d0 + Jt * d1)
                change = max(change, abs(W[0] * d0 + W[1] * d1), abs(W[1] * d0 + W[2] * d1))
        if change == math.inf:
            break
        if change <= tol:
            converged = 1.0
            break
    status[:] = (sweeps, change, converged)


def _contact(J, b, muo, lall, act, na, nm, w, tol, max_iter, laws=None):
    """The contact problem of the nodes on their surface with the active-set passes: z, the
    sweeps, the passes, the kernel status (the kernel's loop, ``friction_lcp_ref.solve``; with
    ``laws`` = (idx, lcode, lpar, h, mun) each node's own law, ``_pgs_laws``, its edge
    coefficient into ``mun``)."""
    z = np.zeros(nm)
    st3 = np.array([0.0, 0.0, 1.0])
    sweeps, passes, conv = 0.0, 0, True
    while True:
        passes += 1
        z[:] = 0.0
        st3[:] = (0.0, 0.0, 1.0)
        if act[:na].all():
            if na and nm and laws:
                idx, lcode, lpar, h, mun = laws
                mue = np.zeros(na)
                _pgs_laws(J[:2 * na], w, b[:2 * na], idx[:na], lcode, lpar, h, lall[:2 * na], z, tol, max_iter, st3,
                          mue)
                mun[idx[:na]] = mue
            elif na and nm:
                _pgs_solve(J[:2 * na], w, b[:2 * na], muo[:na], lall[:2 * na], z, tol, max_iter, st3)
            elif na:
                lall[:2 * na] = 0.0
            sweeps += st3[0]
            break
        a = np.flatnonzero(act[:na])
        rows = (2 * a[:, None] + np.arange(2)).ravel()
        la = lall[rows]
        if a.size and nm and laws:
            idx, lcode, lpar, h, mun = laws
            mue = np.zeros(a.size)
            _pgs_laws(np.ascontiguousarray(J[rows]), w, b[rows], idx[a], lcode, lpar, h, la, z, tol, max_iter, st3,
                      mue)
            mun[idx[a]] = mue
        elif a.size and nm:
            _pgs_solve(np.ascontiguousarray(J[rows]), w, b[rows], muo[a], la, z, tol, max_iter, st3)
        elif a.size:
            la[:] = 0.0
        lall[:2 * na] = 0.0
        lall[rows] = la
        sweeps += st3[0]
        new = False
        for p in range(na):
            if not act[p] and b[2 * p] + float(J[2 * p] @ z) < -tol:
                act[p] = 2
                new = True
        if st3[2] != 1.0 or not new:
            break
        if passes == PASSES:
            conv = False
            break
        act[act == 2] = 1
    return z, sweeps, passes, st3, conv


def march(h, n_steps, dec, i0, tol, max_iter, stop_on_change, accounts, w2, cdamp, fc, fr, fs, xrow, xwin, xval, eta,
          eta_prev, srow, swin, sX, sdv, sds, mrow, mwin, mX, mdv, mds, segs, node_segs, node_itf, mu, n_itf,
          lcode, lpar, hint, off, lam, code, changes, acc, orow, owin, o_ln, o_lt, o_gap, o_slip, o_state, o_seg, o_geo,
          o_energy, o_chan, work, iwork, stats, status):
    """March ``n_steps`` steps of the multibody contact method from time index ``i0``, in place.

    Parameters
    ----------
    h : float
        Time step (s).
    n_steps, dec, i0 : int
        Steps of this call, output decimation, time index of the first step (step i0 -> i0 + 1).
    tol : float
        Kernel tolerance (m) of the sweeps (``friction_lcp``).
    max_iter : int
        Sweeps allowed per solve.
    stop_on_change : int
        1: stop after a step where a pressed node opened (reason 2) or a sliding one stuck or
        reversed (reason 1), and before a step where a node on its master surface leaves it
        (reason 4).
    accounts : int
        1: accumulate the works in ``acc``; 0: leave ``acc`` as it is and write NaN for its four
        entries in ``o_energy`` (the motion is the same).
    w2, cdamp : (nm,) arrays
        Squared natural frequencies (rad^2/s^2) and diagonal modal damping (1/s).
    fc, fr : (nm,) arrays
        Modal force f = fc + t fr (N per unit modal mass; fr in N/s).
    fs : (n_steps, nm) or (0, nm) array
        Sampled modal forces added at each step (N).
    xrow, xwin : (ns, nm) array, (ns, 2) int array
        Modal rows of the force series (per unit modal mass) and the windows where they are
        non-zero; ``xval`` (n_steps, ns) their values at each step (N).
    eta, eta_prev : (nm,) arrays
        Modal coordinates (m) at i0 and i0 - 1; out: at the end of the chunk.
    srow, mrow : (m, 2, nm), (M, 2, nm) arrays
        Modal rows (m per modal coordinate) of the x and y displacements of the slave and master
        nodes; ``swin``, ``mwin`` (k, 2) the column window where they are non-zero.
    sX, mX : (k, 2) arrays
        Reference positions (m).
    sdv, mdv : (k, 2) arrays
        Driven velocity of each node (m/s): driven displacement dv t.
    sds, mds : (n_steps + 2, k, 2) or (0, k, 2) arrays
        Sampled driven displacements (m) at the time indices i0 - 1 ... i0 + n_steps.
    segs : (S, 2) int array
        Master segments (global master node indices), those of each interface consecutive.
    node_segs : (m, 2) int array
        First and last+1 segment of each slave node's interface.
    node_itf : (m,) int array
        Interface of each slave node (0 .. n_itf - 1).
    mu : (m,) array
        Friction coefficient of each slave node.
    n_itf : int
        Number of interfaces.
    lcode, lpar : (m,) int array, (m, 3) array
        Friction law of each slave node (``fesub.contact.engine.friction.law_arrays``): code 0
        one coefficient (``mu``), 1 static/kinetic, 2 Stribeck; stick limit, slip coefficient,
        Stribeck speed (m/s). One slave node: its closed form (``_law_closed``); several (any
        code other than 0 among them): every node's law in the block sweeps (``_pgs_laws``).
    hint, off, lam, code, changes : node state (see the kernel's docstring), in/out.
    acc : (4,) array
        Damping loss, external work, friction dissipation, impact loss (J), accumulated.
    orow, owin : (nc, nm) array, (nc, 2) int array
        Modal rows of the output channels and their windows.
    o_ln, o_lt, o_gap, o_slip : (k, m) arrays
        Out: normal and tangential force (N), gap after the step (m), slip velocity (m/s).
    o_state : (k, m) int array
        Out: state codes.
    o_seg : (k, m) int array
        Out: master segment under each node (index in its interface; -1 off the surface).
    o_geo : (4, k, m) array
        Out: contact point on the master at the predicted positions (x, y in m; NaN off the
        surface) and the contact force on the slave (x, y in N).
    o_energy : (6, k) array
        Out: kinetic, strain, then the four ``acc`` (J).
    o_chan : (3 nc, k) array
        Out: displacement (m), central velocity (m/s) and acceleration (second difference, m/s^2)
        of each channel.
    work, iwork : float and int arrays of :func:`work_sizes`.
    stats : (4,) array
        In/out: largest sweeps of a step, total sweeps, largest passes, last change (m).
    status : (3,) int array
        Out: steps done, reason (0 done, 1 stick, 2 lift-off, 3 not converged, 4 off the surface:
        that step not taken), samples written.
    """
    nm, m, M, nc, no = eta.shape[0], sX.shape[0], mX.shape[0], orow.shape[0], o_ln.shape[0]
    nd_need, nl_need = work_sizes(nm, m, M, n_itf)
    if work.shape[0] < nd_need or iwork.shape[0] < nl_need:
        raise ValueError(f"work must hold {nd_need} doubles and iwork {nl_need} integers")
    ss, ms = _Nodes(srow, swin, sX, sdv, sds), _Nodes(mrow, mwin, mX, mdv, mds)
    E = [eta_prev.copy(), eta.copy(), np.zeros(nm), np.zeros(nm)]
    SU = [np.zeros((m, 2)) for _ in range(3)]
    MC = [np.zeros((M, 2)) for _ in range(4)]
    MS = [np.full(M, _NEVER, np.int64) for _ in range(4)]
    w = np.full(nm, h * h)
    J, b, lall, muo = np.zeros((2 * m, nm)), np.zeros(2 * m), np.zeros(2 * m), np.zeros(m)
    law = m == 1 and lcode[0] != 0  # one node with a law beyond one coefficient
    mul = mu[0] if m else 0.0
    fast = m == 1 and nm > 0 and M > 0
    laws = not fast and bool(np.any(lcode[:m] != 0))  # several nodes with laws: ``_pgs_laws``
    mun = mu
    act, idx, ab = np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros((m, 2), np.int64)
    alpha, gnv, gap, cpt = np.zeros(m), np.zeros((m, 4)), np.zeros(m), np.zeros((m, 2))
    for i in range(m):
        SU[0][i] = ss.disp(i, E[0], step_time(i0 - 1, h), 0)
        SU[1][i] = ss.disp(i, E[1], step_time(i0, h), 1)
    sp, sn, sx = 0, 1, 2
    fast = m == 1 and nm > 0 and M > 0
    gseg, G6, cNT, seg0 = -1, None, np.zeros((2, 6)), -1
    reason, j, s = 0, 0, 0
    for s in range(n_steps):
        n = i0 + s
        t = n * h
        Ep, En, Es = E[sp], E[sn], E[3]
        tt_p, tt_n, tt_x = step_time(n - 1, h), step_time(n, h), t + h
        # --- predictor
        f = fc + t * fr
        damp = cdamp * (En - Ep) * (1.0 / h)
        Es[:] = 2 * En - Ep + (h * h) * (f - damp - w2 * En)
        if fs.shape[0]:
            Es += (h * h) * fs[s]
        for r in range(xrow.shape[0]):
            val = (h * h) * xval[s, r]
            if val != 0.0:
                a0, a1 = xwin[r]
                Es[a0:a1] += val * xrow[r, a0:a1]
        # --- search and rows of the nodes on their master surface
        na, left = 0, False
        for i in range(m):
            sxp, syp = ss.disp(i, Es, tt_x, s + 2)
            px, py = sX[i, 0] + sxp, sX[i, 1] + syp
            lo, mseg = node_segs[i, 0], node_segs[i, 1] - node_segs[i, 0]
            sgk = hint[i]

            def frame_on(k):
                (ia, ib) = segs[k]
                ax, ay = ms.cached(ia, Es, tt_x, s + 2, n + 1, MC[3], MS[3])
                bx, by = ms.cached(ib, Es, tt_x, s + 2, n + 1, MC[3], MS[3])
                return (ax, ay, bx, by), segment_frame(px, py, mX[ia, 0] + ax, mX[ia, 1] + ay, mX[ib, 0] + bx,
                                                mX[ib, 1] + by)

            (ax, ay, bx, by), (al, g, nx, ny, tx, ty) = frame_on(sgk)
            if not (0.0 <= al <= 1.0) or off[i]:
                k = segment_walk(ms, segs, lo, mseg, px, py, sgk - lo, Es, tt_x, s + 2, n + 1, MC[3], MS[3])
                if k >= 0:
                    off[i], sgk = 0, lo + k
                    hint[i] = sgk
                else:
                    left = left or (not off[i] and bool(stop_on_change))
                    off[i], sgk = 1, lo
                (ax, ay, bx, by), (al, g, nx, ny, tx, ty) = frame_on(sgk)
            ia, ib = segs[sgk]
            ab[i] = ia, ib
            alpha[i], gnv[i], gap[i] = al, (nx, ny, tx, ty), g
            cpt[i] = ((1 - al) * (mX[ia, 0] + ax) + al * (mX[ib, 0] + bx),
                      (1 - al) * (mX[ia, 1] + ay) + al * (mX[ib, 1] + by))
            if off[i]:
                cpt[i] = math.nan
                continue
            cx0, cy0 = ms.cached(ia, En, tt_n, s + 1, n, MC[sn], MS[sn])
            cx1, cy1 = ms.cached(ib, En, tt_n, s + 1, n, MC[sn], MS[sn])
            rx = (sxp - SU[sn][i, 0]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
            ry = (syp - SU[sn][i, 1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
            b[2 * na], b[2 * na + 1] = g, rx * tx + ry * ty
            seg0 = sgk
            if not fast:
                J[2 * na:2 * na + 2] = 0.0
                a0, a1 = swin[i]
                r0, r1 = srow[i, 0, a0:a1], srow[i, 1, a0:a1]
                J[2 * na, a0:a1] += nx * r0 + ny * r1
                J[2 * na + 1, a0:a1] += tx * r0 + ty * r1
            if M and nm and not fast:
                a0, a1 = mwin[ia]
                ex = (1 - al) * mrow[ia, 0, a0:a1] + al * mrow[ib, 0, a0:a1]
                ey = (1 - al) * mrow[ia, 1, a0:a1] + al * mrow[ib, 1, a0:a1]
                J[2 * na, a0:a1] -= nx * ex + ny * ey
                J[2 * na + 1, a0:a1] -= tx * ex + ty * ey
            muo[na] = mu[i]
            lall[2 * na:2 * na + 2] = lam[i]
            act[na] = g <= 0 or lam[i, 0] > 0
            idx[na] = i
            na += 1
        if left:
            reason = 4
            break
        # --- the contact problem, with the active-set passes
        solved = False
        if fast:
            sweeps, passes, st3, conv = 0.0, 1, np.array([0.0, 0.0, 1.0]), True
            if na == 1 and act[0]:
                if gseg != seg0:
                    G6, gseg = gram(srow, mrow, 0, ab[0, 0], ab[0, 1]), seg0
                al = alpha[0]
                for r in range(2):
                    ex, ey = gnv[0, 2 * r], gnv[0, 2 * r + 1]
                    cNT[r] = (ex, ey, -(1 - al) * ex, -(1 - al) * ey, -al * ex, -al * ey)
                Wl = [h * h * float(cNT[r // 2] @ G6 @ cNT[(r + 1) // 2]) for r in range(3)]
                if not law:
                    coulomb_one(Wl, b, muo[0], lall, tol, max_iter, st3)
                else:
                    mul = _law_closed(Wl, b, lcode[0], lpar[0], h, lall)
                    st3[:] = (1.0, 0.0, 1.0) if mul is not None else (1.0, math.inf, 0.0)
                sweeps, solved = st3[0], True
            elif na == 1:
                lall[:2] = 0.0
        else:
            mun = mu.astype(float)  # (a node not solved keeps its stick limit for the state test)
            z, sweeps, passes, st3, conv = _contact(J, b, muo, lall, act, na, nm, w, tol, max_iter,
                                                    (idx, lcode, lpar, h, mun) if laws else None)
        stats[1] += sweeps
        stats[0] = max(stats[0], sweeps)
        stats[2] = max(stats[2], passes)
        stats[3] = st3[1]
        if st3[2] != 1.0 or not conv:
            reason = 3
            break
        # --- update and the works of the loads and of the damping
        Ex = E[sx]
        if fast:
            ia, ib = ab[0]
            nxt = update_one(srow, swin, mrow, mwin, ia, ib, Es, Ex, h * h, lall, cNT, G6, solved,
                              (sxp, syp, ax, ay, bx, by))
            SU[sx][0] = nxt[:2]
            MC[sx][ia], MC[sx][ib] = nxt[2:4], nxt[4:]
            MS[sx][ia] = MS[sx][ib] = n + 1
        else:
            Ex[:] = Es + z
        if accounts:
            a_mod = 0.5 * (Ex - Ep)
            acc[0] += float(damp @ a_mod)
            acc[1] += float(f @ a_mod) + (float(fs[s] @ a_mod) if fs.shape[0] else 0.0) + sum(
                xval[s, r] * float(xrow[r, a0:a1] @ a_mod[a0:a1]) for r, (a0, a1) in enumerate(xwin)
                if xval[s, r] != 0.0)
        # --- close the step of every node
        fsum = np.zeros((n_itf, 4))
        oldc = code.copy()
        lam[:] = 0.0
        lam[idx[:na]] = lall[:2 * na].reshape(-1, 2)
        stop_lift = stop_stick = False
        for i in range(m):
            ia, ib = ab[i]
            al = alpha[i]
            nx, ny, tx, ty = gnv[i]
            if not fast:
                SU[sx][i] = ss.disp(i, Ex, tt_x, s + 2)
            ux, uy = SU[sx][i]
            ax, ay = ms.cached(ia, Ex, tt_x, s + 2, n + 1, MC[sx], MS[sx])
            bx, by = ms.cached(ib, Ex, tt_x, s + 2, n + 1, MC[sx], MS[sx])
            g = segment_frame(sX[i, 0] + ux, sX[i, 1] + uy, mX[ia, 0] + ax, mX[ia, 1] + ay, mX[ib, 0] + bx,
                       mX[ib, 1] + by)[1]
            if off[i]:
                g = math.nan
            cx0, cy0 = ms.cached(ia, En, tt_n, s + 1, n, MC[sn], MS[sn])
            cx1, cy1 = ms.cached(ib, En, tt_n, s + 1, n, MC[sn], MS[sn])
            rx = (ux - SU[sn][i, 0]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
            ry = (uy - SU[sn][i, 1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
            rt0 = rx * tx + ry * ty
            cx0, cy0 = ms.cached(ia, Ep, tt_p, s, n - 1, MC[sp], MS[sp])
            cx1, cy1 = ms.cached(ib, Ep, tt_p, s, n - 1, MC[sp], MS[sp])
            r2x = (ux - SU[sp][i, 0]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
            r2y = (uy - SU[sp][i, 1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
            (dx, dy), (ex, ey) = ss.driven(i, tt_x, s + 2), ss.driven(i, tt_p, s)
            r3x, r3y = dx - ex, dy - ey
            (dx, dy), (ex, ey) = ms.driven(ia, tt_x, s + 2), ms.driven(ia, tt_p, s)
            cx0, cy0 = dx - ex, dy - ey
            (dx, dy), (ex, ey) = ms.driven(ib, tt_x, s + 2), ms.driven(ib, tt_p, s)
            r3x = r3x - ((1 - al) * cx0 + al * (dx - ex))
            r3y = r3y - ((1 - al) * cy0 + al * (dy - ey))
            ln, lt = lam[i]
            fsum[node_itf[i]] += (lt * (r2x * tx + r2y * ty), ln * (r2x * nx + r2y * ny),
                                  ln * (r3x * nx + r3y * ny), lt * (r3x * tx + r3y * ty))
            if not ln > 0:
                st = 0
            elif abs(lt) >= (mul if fast else mun[i]) * ln * (1 - 1e-12):
                st = 2 if (rt0 if rt0 != 0 else -lt) >= 0 else 3
            else:
                st = 1
            old = oldc[i]
            code[i] = st
            changes[i] += st != old
            stop_lift = stop_lift or (old > 0 and st == 0)
            stop_stick = stop_stick or (old >= 2 and st != old)
            gap[i], alpha[i] = g, rt0
        for r in range(n_itf if accounts else 0):
            acc[2] -= 0.5 * fsum[r, 0]
            acc[3] -= 0.5 * fsum[r, 1]
            acc[1] -= 0.5 * (fsum[r, 2] + fsum[r, 3])
        if stop_on_change:
            reason = 2 if stop_lift else (1 if stop_stick else 0)
        if (n % dec == 0 or reason != 0) and j < no:
            o_ln[j], o_lt[j], o_gap[j], o_slip[j], o_state[j] = lam[:, 0], lam[:, 1], gap, alpha / h, code
            o_seg[j] = np.where(off[:m] != 0, -1, hint[:m] - node_segs[:, 0])
            o_geo[:2, j] = cpt.T
            o_geo[2, j] = lam[:, 0] * gnv[:, 0] + lam[:, 1] * gnv[:, 2]
            o_geo[3, j] = lam[:, 0] * gnv[:, 1] + lam[:, 1] * gnv[:, 3]
            v = (Ex - En) * (1.0 / h)
            mid = 0.5 * (En + Ex)
            o_energy[:, j] = (0.5 * float(v @ v), 0.5 * float(w2 @ (mid * mid)), *(acc if accounts else [math.nan] * 4))
            for r in range(nc):
                a0, a1 = owin[r]
                o_chan[3 * r, j] = float(orow[r, a0:a1] @ En[a0:a1])
                o_chan[3 * r + 1, j] = float(orow[r, a0:a1] @ (Ex[a0:a1] - Ep[a0:a1])) / (2 * h)
                o_chan[3 * r + 2, j] = float(orow[r, a0:a1] @ (Ex[a0:a1] - 2.0 * En[a0:a1] + Ep[a0:a1])) / (h * h)
            j += 1
        sp, sn, sx = sn, sx, sp
        if reason != 0:
            s += 1
            break
    else:
        s = n_steps
    eta_prev[:], eta[:] = E[sp], E[sn]
    status[:] = (s, reason, j)
