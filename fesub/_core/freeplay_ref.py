"""NumPy twin of ``freeplay.pyx``: fixed-step batch RK4 for the forced two-mass free-play oscillator.

Same function name and signature as the compiled kernel; vectorised over the initial conditions.

``batch_rk4(X0, W, prm, law, n_transient, n_record, steps, sec_dir, costab, strobe, ext, sec, nsec,
nswitch)`` advances ``B = X0.shape[0]`` states ``[x1, y1, x2, y2]`` of::

    y1' = (Q1 cos(W t) - c y1 - k x1 - mu x1^3 + kd r + mud r^3 + cd r' - F(x1)) / m,  r = x2 - x1
    y2' = (Q2 cos(W t) - c y2 - k x2 - mu x2^3 - kd r - mud r^3 - cd r') / m

from t = 0 with ``steps`` RK4 steps per forcing period ``T = 2 pi / W[b]``, for ``n_transient``
periods (discarded) then ``n_record`` periods (recorded). ``prm = [m, c, k, mu, cd, kd, mud, kp, a,
Q1, Q2, delta]``.

* ``law = 1``: logistic sigmoid ``F = kp [z1 expit(-delta z1) - z2 expit(-delta z2)]``.
* ``law = 0``: exact law, region ``s`` per trajectory. An RK4 trial step uses the current region's
  polynomial; when its end point leaves the closed region, the crossing fraction ``th`` of the RK4
  sub-step map ``x1(th h) = b`` (``b = +-a``) is found by Illinois regula falsi (|f| < 1e-14), the
  state is advanced to it, ``x1`` is set to ``b``, the region switches and the step is finished;
  up to 4 switches per step. Each region's law extends smoothly past its border, so the scheme
  stays fourth order.

``costab[i] = cos(pi i / steps)`` (i = 0..2 steps) gives cos(W t) at the RK4 stages of full steps.

Outputs (allocated by the caller):

* ``strobe (B, n_record+1, 4)``: state at t = (n_transient + j) T, j = 0..n_record;
* ``ext (B, 2)``: max and min of x1 over the recorded periods (step end points and section points);
* ``sec (B, nsmax, 5)``: Poincare section y1 = x1' = 0 in the recorded periods, rows
  ``[x1, x2, y2, phase in [0, 1), direction]`` (direction -1: maximum of x1, +1: minimum); the
  crossing fraction is linear in y1 and x1 is the cubic Hermite interpolant of the step;
  only crossings with ``sec_dir == 0`` or ``direction == sec_dir`` are kept;
* ``nsec (B,)``: number of section points (may exceed nsmax; only the first nsmax are stored);
* ``nswitch (B,)``: number of region switches in the recorded periods (exact law);
* ``n_used (B,)``: transient periods actually integrated. With ``conv_tol > 0`` the transient
  ends early once the stroboscopic state repeats within ``conv_tol`` (max norm) after
  ``q <= conv_pmax`` periods (``conv_pmax <= 8``); ``conv_tol = 0`` integrates all
  ``n_transient`` periods.

A trajectory that leaves |x| < 1e6 or becomes non-finite gets NaN in ``strobe`` and ``ext``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["batch_rk4", "basin_transient"]


def _expit_neg(y):
    """1/(1+exp(y)) without overflow; 0 for y > 40 (value < 4.3e-18), 1 for y < -40 (exact)."""
    out = np.empty_like(y)
    pos = (y >= 0) & (y <= 40.0)
    neg = (y < 0) & (y >= -40.0)
    e = np.exp(-y[pos])
    out[pos] = e / (1.0 + e)
    out[neg] = 1.0 / (1.0 + np.exp(y[neg]))
    out[y > 40.0] = 0.0
    out[y < -40.0] = 1.0
    return out


def _rhs(Z, cw, p, law, S):
    x1, y1, x2, y2 = Z[:, 0], Z[:, 1], Z[:, 2], Z[:, 3]
    r = x2 - x1
    rv = y2 - y1
    coup = p[5] * r + p[6] * r * r * r + p[4] * rv
    a, d = p[8], p[11]
    if law == 1:
        z1 = a + x1
        z2 = a - x1
        F = p[7] * (z1 * _expit_neg(d * z1) - z2 * _expit_neg(d * z2))
    else:
        F = np.where(S == 0, 0.0, p[7] * (x1 - S * a))
    out = np.empty_like(Z)
    out[:, 0] = y1
    out[:, 1] = (p[9] * cw - p[1] * y1 - p[2] * x1 - p[3] * x1 * x1 * x1 + coup - F) / p[0]
    out[:, 2] = y2
    out[:, 3] = (p[10] * cw - p[1] * y2 - p[2] * x2 - p[3] * x2 * x2 * x2 - coup) / p[0]
    return out


def _rk4(Z, h, c0, c1, c2, p, law, S):
    h = np.asarray(h)[..., None] if np.ndim(h) else h
    c0, c1, c2 = (np.asarray(c) for c in (c0, c1, c2))
    k1 = _rhs(Z, c0, p, law, S)
    k2 = _rhs(Z + 0.5 * h * k1, c1, p, law, S)
    k3 = _rhs(Z + 0.5 * h * k2, c1, p, law, S)
    k4 = _rhs(Z + h * k3, c2, p, law, S)
    return Z + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def _region(x, a):
    return np.where(x > a, 1, np.where(x < -a, -1, 0))


def _mismatch(S, x, a):
    return np.where(S == 0, (x > a) | (x < -a), np.where(S == 1, x < a, x > -a))


def _exact_step(Z, S, t, h, W, c0, c1, c2, p):
    """Vectorised twin of the compiled _exact_step; returns (Znew, Snew, nswitch)."""
    a = p[8]
    B = Z.shape[0]
    S = np.where((Z[:, 0] == a) | (Z[:, 0] == -a), S, _region(Z[:, 0], a))
    Z = Z.copy()
    Zn = _rk4(Z, h, np.full(B, c0), np.full(B, c1), np.full(B, c2), p, 0, S)
    nsw = np.zeros(B, dtype=np.int32)
    rem = h.copy()
    tc = np.array(np.broadcast_to(t, (B,)), dtype=float)
    for _ in range(4):
        idx = np.nonzero(_mismatch(S, Zn[:, 0], a))[0]
        if idx.size == 0:
            break
        s = S[idx]
        z = Z[idx]
        zn = Zn[idx]
        b = np.where(s == 0, np.where(zn[:, 0] > a, a, -a), np.where(s == 1, a, -a))
        r_ = rem[idx]
        t_ = tc[idx]
        w_ = W[idx]
        lo = np.zeros(idx.size)
        hi = np.ones(idx.size)
        flo = z[:, 0] - b
        fhi = zn[:, 0] - b
        side = np.zeros(idx.size, dtype=int)
        th = np.zeros(idx.size)
        zt = z.copy()
        active = flo != 0.0
        for _it in range(100):
            ia = np.nonzero(active)[0]
            if ia.size == 0:
                break
            tha = (lo[ia] * fhi[ia] - hi[ia] * flo[ia]) / (fhi[ia] - flo[ia])
            th[ia] = tha
            hh = tha * r_[ia]
            tt = t_[ia]
            ww = w_[ia]
            zt[ia] = _rk4(z[ia], hh, np.cos(ww * tt), np.cos(ww * (tt + 0.5 * hh)),
                          np.cos(ww * (tt + hh)), p, 0, s[ia])
            f = zt[ia, 0] - b[ia]
            done = np.abs(f) < 1e-14
            same = (f > 0.0) == (fhi[ia] > 0.0)
            upd_hi = ~done & same
            upd_lo = ~done & ~same
            j = ia[upd_hi]
            hi[j] = tha[upd_hi]
            fhi[j] = f[upd_hi]
            flo[j] = np.where(side[j] == -1, flo[j] * 0.5, flo[j])
            side[j] = -1
            j = ia[upd_lo]
            lo[j] = tha[upd_lo]
            flo[j] = f[upd_lo]
            fhi[j] = np.where(side[j] == 1, fhi[j] * 0.5, fhi[j])
            side[j] = 1
            narrow = (hi[ia] - lo[ia]) < 1e-15
            active[ia] = ~(done | narrow)
        zt[:, 0] = b
        tc[idx] = t_ + th * r_
        rem[idx] = r_ * (1.0 - th)
        s_new = np.where(s == 0, np.where(b > 0, 1, -1), 0)
        S[idx] = s_new
        nsw[idx] += 1
        Z[idx] = zt
        hr = rem[idx]
        tt = tc[idx]
        zn_new = _rk4(zt, hr, np.cos(w_ * tt), np.cos(w_ * (tt + 0.5 * hr)), np.cos(w_ * (tt + hr)),
                      p, 0, s_new)
        Zn[idx] = zn_new
    return Zn, S, nsw


def batch_rk4(X0, W, prm, law, n_transient, n_record, steps, sec_dir, costab, strobe, ext, sec,
              nsec, nswitch, conv_tol, conv_pmax, n_used):
    """Advance B initial conditions with fixed-step RK4 (see the module docstring)."""
    X0 = np.asarray(X0, dtype=float)
    W = np.asarray(W, dtype=float)
    p = np.asarray(prm, dtype=float)
    B = X0.shape[0]
    nsmax = sec.shape[1]
    N = int(steps)
    P = int(conv_pmax)
    total = n_transient + n_record
    T = 2.0 * np.pi / W
    h = T / N
    Z = X0.copy()
    S = _region(Z[:, 0], p[8])
    nsec[:] = 0
    nswitch[:] = 0
    n_used[:] = n_transient
    ext[:, 0] = -1e300
    ext[:, 1] = 1e300
    dead = np.zeros(B, dtype=bool)
    per = np.zeros(B, dtype=np.int64)  # period index of each trajectory (may jump)
    hist = np.zeros((P + 1, B, 4))
    hist[0] = Z
    with np.errstate(all="ignore"):
        while True:
            active = (per < total) & ~dead
            if not active.any():
                break
            rec = active & (per >= n_transient)
            start = active & (per == n_transient)
            strobe[start, 0, :] = Z[start]
            ext[start, 0] = Z[start, 0]
            ext[start, 1] = Z[start, 0]
            for j in range(N):
                Zs = Z
                if law == 1:
                    Zn = _rk4(Zs, h, costab[2 * j], costab[2 * j + 1], costab[2 * j + 2], p, 1, S)
                else:
                    Zn, Sn, nsw = _exact_step(Zs, S, j * h, h, W, costab[2 * j],
                                              costab[2 * j + 1], costab[2 * j + 2], p)
                    S = np.where(active, Sn, S)
                    nswitch[rec] += nsw[rec]
                Z = np.where(active[:, None], Zn, Zs)
                d = np.where((Zs[:, 1] > 0.0) & (Z[:, 1] <= 0.0), -1,
                             np.where((Zs[:, 1] < 0.0) & (Z[:, 1] >= 0.0), 1, 0))
                ext[rec, 0] = np.maximum(ext[rec, 0], Z[rec, 0])
                ext[rec, 1] = np.minimum(ext[rec, 1], Z[rec, 0])
                idx = np.nonzero(rec & (d != 0))[0]
                if idx.size:
                    zs, z, hh = Zs[idx], Z[idx], h[idx]
                    th = zs[:, 1] / (zs[:, 1] - z[:, 1])
                    t2 = th * th
                    t3 = t2 * th
                    x1h = ((2 * t3 - 3 * t2 + 1) * zs[:, 0] + (t3 - 2 * t2 + th) * hh * zs[:, 1]
                           + (-2 * t3 + 3 * t2) * z[:, 0] + (t3 - t2) * hh * z[:, 1])
                    ext[idx, 0] = np.maximum(ext[idx, 0], x1h)
                    ext[idx, 1] = np.minimum(ext[idx, 1], x1h)
                    keep = (sec_dir == 0) | (d[idx] == sec_dir)
                    idx, x1h, th, zs, z = idx[keep], x1h[keep], th[keep], zs[keep], z[keep]
                    dd = d[idx]
                    k = nsec[idx]
                    ok = k < nsmax
                    i2, k2 = idx[ok], k[ok]
                    sec[i2, k2, 0] = x1h[ok]
                    sec[i2, k2, 1] = (zs[:, 2] + th * (z[:, 2] - zs[:, 2]))[ok]
                    sec[i2, k2, 2] = (zs[:, 3] + th * (z[:, 3] - zs[:, 3]))[ok]
                    sec[i2, k2, 3] = ((j + th) / N)[ok]
                    sec[i2, k2, 4] = dd[ok]
                    nsec[idx] += 1
            bad = active & ~(np.all(np.isfinite(Z), axis=1) & (np.abs(Z[:, 0]) < 1e6)
                             & (np.abs(Z[:, 2]) < 1e6))
            if bad.any():
                dead |= bad
                Z = np.where(dead[:, None], 0.0, Z)
                active &= ~bad
                rec &= ~bad
            ir = np.nonzero(rec)[0]
            strobe[ir, per[ir] - n_transient + 1, :] = Z[ir]
            tr = active & ~rec
            if conv_tol > 0.0 and tr.any():
                kk = per + 1
                it = np.nonzero(tr)[0]
                hist[kk[it] % (P + 1), it] = Z[it]
                cand = it[kk[it] > P]
                if cand.size:
                    conv = np.zeros(cand.size, dtype=bool)
                    for q in range(1, P + 1):
                        old = hist[(kk[cand] - q) % (P + 1), cand]
                        conv |= np.max(np.abs(Z[cand] - old), axis=1) < conv_tol
                    done = cand[conv]
                    n_used[done] = kk[done]
                    per[done] = n_transient - 1
            per[active] += 1
    if dead.any():
        strobe[dead] = np.nan
        ext[dead] = np.nan
    return None


# ------------------------------------------------------------------- basins that stop early ---
# ``basin_transient(Z, W, prm, law, n_transient, steps, costab, conv_tol, conv_pmax, match_tol,
# cell, n_confirm, tkeys, tvals, att_pts, att_per, att_cell, counters, status, how, n_used, path,
# hist)`` runs the transients of the B cells ``Z (B, 4)`` of a basin at one forcing frequency W,
# all in step, one forcing period at a time, and stops a cell as soon as it is recognised:
#
# * the stroboscopic state z_k (t = k T) falls in a cell of a coarse grid of the section (side
#   ``cell`` in each of the four coordinates); the grid is a hash table ``tkeys``/``tvals``
#   (size a power of 2, linear probing, key = the four integer cell coordinates + 32768 packed in
#   16 bits each, ``-1`` empty; never filled beyond one half, ``counters[1]`` cells). A value
#   ``a * 8 + i`` says: a trajectory in this cell is at orbit point i of attractor a (period
#   ``att_per[a] <= 8``, points ``att_pts[a, :q]``); -2 says the cell was seen on two attractors
#   or two phases (a basin boundary passes through it: never used);
# * recognition: ``n_confirm`` successive stroboscopic states lie in cells marked with the
#   successive orbit points i, i+1, ... (mod q) of one attractor; the cell then stops with
#   ``status = a * 8 + (orbit point at t = n_transient T)``, ``how = 2``;
# * convergence: z_k = z_{k-q} within ``conv_tol`` (max norm), smallest q <= conv_pmax; the cell
#   runs on until (n_transient - k) is a multiple of q (same phase as the full transient) and is
#   matched with a known attractor of period q (a point within ``match_tol``) or registered as a
#   new one (``counters[0]`` attractors, ``att_cell[a]`` = the cell that found it, point 0 = its
#   state then); ``how = 1``. Without room for a new attractor it stops with status -1.
#
# Each recognised or converged trajectory marks the cells of its whole stroboscopic path (kept in
# ``path (B, n_transient + 1)``) with its attractor and orbit point; the cells of the attractors'
# points are marked at the start. Cells are treated in index order after every period, so that
# the compiled kernel and this twin take the same decisions. ``status = -1``: the full transient
# was integrated (or no room), ``-2`` diverged (``how = 3``). ``Z`` holds the end states and
# ``n_used`` the periods integrated. ``hist (B, conv_pmax + 1, 4)`` is workspace.

_EMPTY, _CONFLICT, _EMPTY_KEY = -1, -2, -1
_M64 = (1 << 64) - 1


def _cell_key(z, cell):
    key = 0
    for i in range(4):
        f = float(z[i]) / cell
        if not (-32767.0 < f < 32767.0):
            return _EMPTY_KEY
        key |= int(f + 32768.0) << (16 * i)
    return key - (1 << 64) if key >= (1 << 63) else key


def _slot(key, tkeys):
    mask = tkeys.shape[0] - 1
    j = (((key & _M64) * 11400714819323198485) & _M64) >> 40 & mask
    while tkeys[j] != key and tkeys[j] != _EMPTY_KEY:
        j = (j + 1) & mask
    return j


def _lookup(key, tkeys, tvals):
    if key == _EMPTY_KEY:
        return _EMPTY
    j = _slot(key, tkeys)
    return _EMPTY if tkeys[j] == _EMPTY_KEY else int(tvals[j])


def _mark(key, v, tkeys, tvals, counters):
    if key == _EMPTY_KEY:
        return
    j = _slot(key, tkeys)
    if tkeys[j] == _EMPTY_KEY:
        if 2 * (counters[1] + 1) > tkeys.shape[0]:
            return
        tkeys[j] = key
        tvals[j] = v
        counters[1] += 1
    elif tvals[j] != v:
        tvals[j] = _CONFLICT


def _mark_path(path, b, k, a, i, q, tkeys, tvals, counters):
    for kk in range(k + 1):
        _mark(int(path[b, kk]), a * 8 + (i - (k - kk)) % q, tkeys, tvals, counters)


def _advance_period(Z, S, W, p, law, N, costab):
    """One forcing period of fixed-step RK4 for the rows of Z (regions S, exact law)."""
    B = Z.shape[0]
    h = np.full(B, 2.0 * np.pi / W / N)
    Wv = np.full(B, W)
    for j in range(N):
        if law == 1:
            Z = _rk4(Z, h, costab[2 * j], costab[2 * j + 1], costab[2 * j + 2], p, 1, S)
        else:
            Z, S, _ = _exact_step(Z, S, j * h, h, Wv, costab[2 * j], costab[2 * j + 1],
                                  costab[2 * j + 2], p)
    return Z, S


def _match(z, q, att_pts, att_per, n_att, match_tol):
    """(attractor, orbit point) of period q with a point within match_tol of z, or (-1, 0)."""
    for a in range(n_att):
        if att_per[a] != q:
            continue
        for i in range(q):
            if np.max(np.abs(z - att_pts[a, i])) < match_tol:
                return a, i
    return -1, 0


def basin_transient(Z, W, prm, law, n_transient, steps, costab, conv_tol, conv_pmax, match_tol,
                    cell, n_confirm, tkeys, tvals, att_pts, att_per, att_cell, counters, status,
                    how, n_used, path, hist):
    """Transients of the cells of a basin, stopped on recognition (see the comment above)."""
    p = np.asarray(prm, dtype=float)
    B, P, Amax = Z.shape[0], int(conv_pmax), att_pts.shape[0]
    S = _region(Z[:, 0], p[8])
    hits = np.zeros(B, dtype=int)
    last = np.zeros(B, dtype=int)
    alignq = np.zeros(B, dtype=int)
    for a in range(counters[0]):
        for i in range(att_per[a]):
            _mark(_cell_key(att_pts[a, i], cell), a * 8 + i, tkeys, tvals, counters)
    status[:] = -1
    how[:] = 0
    n_used[:] = n_transient
    for b in range(B):
        path[b, 0] = _cell_key(Z[b], cell)
    hist[:, 0] = Z
    for per in range(n_transient):
        k = per + 1
        act = np.nonzero((how == 0) & (status == -1))[0]
        if act.size == 0:
            break
        with np.errstate(all="ignore"):
            Zn, Sn = _advance_period(Z[act], S[act], W, p, law, int(steps), costab)
        Z[act] = Zn
        S[act] = Sn
        for b in act:
            z = Z[b]
            if not (np.all(np.isfinite(z)) and abs(z[0]) < 1e6 and abs(z[2]) < 1e6):
                status[b], how[b], n_used[b] = -2, 3, k
                continue
            path[b, k] = _cell_key(z, cell)
            hist[b, k % (P + 1)] = z
            if alignq[b] == 0:
                v = _lookup(int(path[b, k]), tkeys, tvals)
                if v >= 0:
                    qa = int(att_per[v // 8])
                    if hits[b] > 0 and v == (last[b] // 8) * 8 + (last[b] % 8 + 1) % qa:
                        hits[b] += 1
                    else:
                        hits[b] = 1
                    last[b] = v
                    if hits[b] >= n_confirm:
                        a = v // 8
                        status[b] = a * 8 + (v % 8 + n_transient - k) % qa
                        how[b], n_used[b] = 2, k
                        _mark_path(path, b, k, a, v % 8, qa, tkeys, tvals, counters)
                        continue
                else:
                    hits[b] = 0
                if conv_tol > 0.0 and k > P:
                    for q in range(1, P + 1):
                        if np.max(np.abs(z - hist[b, (k - q) % (P + 1)])) < conv_tol:
                            alignq[b] = q
                            break
            if alignq[b] == 0 or (n_transient - k) % alignq[b] != 0:
                continue
            q = int(alignq[b])
            n_used[b], how[b] = k, 1
            a, i = _match(z, q, att_pts, att_per, counters[0], match_tol)
            if a < 0:
                if counters[0] >= Amax:
                    continue
                a = int(counters[0])
                counters[0] += 1
                att_per[a] = q
                att_cell[a] = b
                att_pts[a, 0] = z
                for i in range(1, q):
                    att_pts[a, i] = hist[b, (k - q + i) % (P + 1)]
                for i in range(q):
                    _mark(_cell_key(att_pts[a, i], cell), a * 8 + i, tkeys, tvals, counters)
                i = 0
            status[b] = a * 8 + i
            _mark_path(path, b, k, a, i, q, tkeys, tvals, counters)
    return None
