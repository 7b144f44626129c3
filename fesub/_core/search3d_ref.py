"""NumPy twin of ``search3d.pyx``: node-to-face search in 3D over explicit node positions.

Same functions, signatures and arithmetic as the compiled kernel (see its docstring for the
layout of the arrays, the grid and the closest-point method); plain Python loops, for tests.
"""

from __future__ import annotations

import math

import numpy as np

from ._search3d_faces import (NNODES, Q9I, Q9J, closest_point, cross, dot, face_point, feature_bits,
                              shape_functions)

_MASK64 = (1 << 64) - 1


class _Best:
    __slots__ = ("face", "bits", "d", "a", "b", "x", "nf", "nacc", "iters")

    def __init__(self):
        self.face, self.d, self.iters = -1, math.inf, [0]


def _consider(X, conn, ftype, f, p, tol, B):
    cf, t = conn[f], int(ftype[f])
    d, a, b = closest_point(X, cf, t, p, B.iters)
    x, dd = face_point(X, cf, t, a, b)
    n = cross(dd[0:3], dd[3:6])
    ln = math.sqrt(dot(n, n))
    n = [v / ln for v in n]
    if B.face >= 0 and d <= B.d + tol:
        sep = math.sqrt((x[0] - B.x[0]) ** 2 + (x[1] - B.x[1]) ** 2 + (x[2] - B.x[2]) ** 2)
        if d >= B.d - tol and sep <= tol:
            B.nacc = [B.nacc[c] + n[c] for c in range(3)]
            if f < B.face:
                B.face, B.a, B.b, B.bits, B.nf = f, a, b, feature_bits(t in (0, 2), a, b), n
            return
        if d >= B.d - tol and f > B.face:
            return
    elif B.face >= 0:
        return
    B.face, B.d, B.a, B.b, B.bits = f, d, a, b, feature_bits(t in (0, 2), a, b)
    B.x, B.nf, B.nacc = x, n, list(n)


def _finish(B, p, fflags, ref, tol, io, fo):
    if B.face < 0:
        io[:] = (-1, 0, 0)
        fo[:] = math.nan
        fo[5] = math.inf
        return
    r = [p[c] - B.x[c] for c in range(3)]
    nb = bin(B.bits).count("1")
    feat = 0 if nb == 0 else (1 if nb == 1 else 2)
    if feat == 0:
        n = list(B.nf)
        fo[5] = dot(r, n)
    else:
        s = 1.0 if dot(r, B.nacc) >= 0.0 else -1.0
        if B.d > tol:
            n = [s * r[c] / B.d for c in range(3)]
        else:
            ln = math.sqrt(dot(B.nacc, B.nacc))
            n = [B.nacc[c] / ln for c in range(3)]
        fo[5] = s * B.d
    off = (B.bits & int(fflags[B.face])) != 0 and B.d > tol and abs(dot(r, B.nf)) < (1.0 - 1e-8) * B.d
    io[:] = (B.face, feat, 1 if off else 0)
    fo[0], fo[1] = B.a, B.b
    rn = dot(ref, n)
    t1 = [ref[c] - rn * n[c] for c in range(3)]
    ln = math.sqrt(dot(t1, t1))
    if ln < 0.1:
        k = 0
        best = abs(n[0])
        for c in range(1, 3):
            if abs(n[c]) < best:
                best, k = abs(n[c]), c
        t1 = [-n[k] * n[c] for c in range(3)]
        t1[k] += 1.0
        ln = math.sqrt(dot(t1, t1))
    t1 = [v / ln for v in t1]
    fo[2:5] = B.x
    fo[6:9] = n
    fo[9:12] = t1
    fo[12:15] = cross(n, t1)


def _cell(v, o, h):
    return int(math.floor((v - o) / h))


def _key(i, j, k):
    """The cell's 64-bit hash, as the kernel's (two's complement, as a signed 64-bit integer)."""
    u = ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791)) & _MASK64
    return u - (1 << 64) if u >= (1 << 63) else u


def _tag(key):
    """Bits 16..47 of a cell's hash as the kernel stores them (a signed 32-bit integer)."""
    u = ((key & _MASK64) >> 16) & 0xFFFFFFFF
    return u - (1 << 32) if u >= (1 << 31) else u


def _boxdist(bx, p):
    s = 0.0
    for c in range(3):
        e = float(bx[c]) - p[c]
        if e < 0.0:
            e = p[c] - float(bx[3 + c])
        if e > 0.0:
            s += e * e
    return math.sqrt(s)


def _outward32(b):
    """float32 boxes rounded outward (lo down, hi up)."""
    out = b.astype(np.float32)
    lo, hi = out[..., :3], out[..., 3:]
    down, up = lo > b[..., :3], hi < b[..., 3:]
    lo[down] = np.nextafter(lo[down], np.float32(-np.inf))
    hi[up] = np.nextafter(hi[up], np.float32(np.inf))
    return out


def face_boxes(X, conn, ftype, boxes, small):
    """Boxes (m, 6: lo xyz, hi xyz) of each face's Bezier control points; ``small`` the same in
    float32 rounded outward."""
    for f in range(conn.shape[0]):
        t = int(ftype[f])
        P = np.array(X[conn[f, :NNODES[t]]], dtype=float)
        if t == 2:
            mids = 2.0 * P[3:6] - 0.5 * (P[0:3] + P[[1, 2, 0]])
            P = np.vstack([P[:3], mids])
        elif t in (3, 4):
            Q = np.zeros((3, 3, 3))
            for i in range(8):
                Q[Q9I[i], Q9J[i]] = P[i]
            Q[2, 2] = (0.5 * P[4:8].sum(axis=0) - 0.25 * P[0:4].sum(axis=0)) if t == 3 else P[8]
            for j in range(3):
                Q[2, j] = 2.0 * Q[2, j] - 0.5 * (Q[0, j] + Q[1, j])
            for i in range(3):
                Q[i, 2] = 2.0 * Q[i, 2] - 0.5 * (Q[i, 0] + Q[i, 1])
            P = Q.reshape(9, 3)
        boxes[f, :3] = P.min(axis=0)
        boxes[f, 3:] = P.max(axis=0)
    small[:] = _outward32(boxes)


def _ranges(fat, f, origin, h):
    return [range(_cell(float(fat[f, c]), origin[c], h), _cell(float(fat[f, 3 + c]), origin[c], h) + 1)
            for c in range(3)]


def grid_bin(fat, origin, h, start, entries, keys):
    """Hashed grid of the faces' boxes (see the kernel); returns the number of entries."""
    T = start.shape[0] - 1
    mask = T - 1
    start[:] = 0
    cells = []
    for f in range(fat.shape[0]):
        ri, rj, rk = _ranges(fat, f, origin, h)
        for i in ri:
            for j in rj:
                for k in rk:
                    key = _key(i, j, k)
                    q = key & mask
                    start[q + 1] += 1
                    cells.append((q, f, key))
    total = len(cells)
    if total <= entries.shape[0]:
        for q in range(T):
            start[q + 1] += start[q]
        for q, f, key in cells:
            entries[start[q]] = f
            keys[start[q]] = _tag(key)
            start[q] += 1
        start[1:] = start[:-1].copy()
        start[0] = 0
    return total


def _grid(X, conn, ftype, boxes, fat, start, entries, keys, origin, h, p, reach, wide, tol, B, cand, cbd,
          K, project):
    mask = start.shape[0] - 2
    lo = [_cell(p[c] - wide, origin[c], h) for c in range(3)]
    hi = [_cell(p[c] + wide, origin[c], h) for c in range(3)]
    n = 0
    for i in range(lo[0], hi[0] + 1):
        for j in range(lo[1], hi[1] + 1):
            for k in range(lo[2], hi[2] + 1):
                key = _key(i, j, k)
                q = key & mask
                tag = _tag(key)
                for e in range(start[q], start[q + 1]):
                    if keys[e] != tag:
                        continue
                    f = int(entries[e])
                    bx = [float(v) for v in fat[f]]
                    if any(bx[3 + c] < p[c] - wide or bx[c] > p[c] + wide for c in range(3)):
                        continue
                    if (_cell(max(bx[0], p[0] - wide), origin[0], h) != i
                            or _cell(max(bx[1], p[1] - wide), origin[1], h) != j
                            or _cell(max(bx[2], p[2] - wide), origin[2], h) != k):
                        continue
                    bd = _boxdist(boxes[f], p)
                    if bd > wide:
                        continue
                    if project:
                        if bd <= reach and (B.face < 0 or bd <= B.d + tol):
                            _consider(X, conn, ftype, f, p, tol, B)
                    elif n < K:
                        cand[n] = f
                        cbd[n] = bd
                    n += 1
    return n


def _narrow(X, conn, ftype, boxes, cand, n, p, reach, tol, B, wc, wd):
    k = 0
    for e in range(n):
        f = int(cand[e])
        bd = _boxdist(boxes[f], p)
        if bd > reach:
            continue
        i = k
        while i > 0 and wd[i - 1] > bd:
            wc[i] = wc[i - 1]
            wd[i] = wd[i - 1]
            i -= 1
        wc[i] = f
        wd[i] = bd
        k += 1
    for e in range(k):
        if B.face >= 0 and wd[e] > B.d + tol:
            break
        _consider(X, conn, ftype, int(wc[e]), p, tol, B)


def grid_query(X, conn, ftype, fflags, boxes, fat, start, entries, keys, origin, h, P, reach, ref, tol,
               wc, wd, iout, fout, stats):
    """Closest point within ``reach`` of each point P through the grid; returns the number of
    candidate faces met (``stats[0]``: the Newton iterations)."""
    K = wc.shape[1]
    work = newton = 0
    for s in range(P.shape[0]):
        for rnd in range(2):
            wide = 0.25 * h if (rnd == 0 and 0.25 * h < reach) else reach
            B = _Best()
            cnt = _grid(X, conn, ftype, boxes, fat, start, entries, keys, origin, h, P[s], wide,
                        wide, tol, B, wc[0], wd[0], K, False)
            work += cnt
            if cnt <= K:
                _narrow(X, conn, ftype, boxes, wc[0], cnt, P[s], wide, tol, B, wc[1], wd[1])
            else:
                _grid(X, conn, ftype, boxes, fat, start, entries, keys, origin, h, P[s], wide,
                      wide, tol, B, wc[0], wd[0], K, True)
            newton += B.iters[0]
            if wide == reach or (B.face >= 0 and B.d + tol <= wide):
                break
        _finish(B, P[s], fflags, ref, tol, iout[s], fout[s])
    stats[0] = newton
    return work


def tracked_query(X, conn, ftype, fflags, boxes, fat, start, entries, keys, origin, h, P, reach, margin,
                  drift, ref, tol, p0, drift0, cand, ncand, wc, wd, iout, fout):
    """:func:`grid_query` with each point's candidate faces kept while its motion plus the
    master's drift stays within ``margin``; returns the number of grid searches done."""
    K = cand.shape[1]
    searches = 0
    for s in range(P.shape[0]):
        B = _Best()
        p = P[s]
        moved = math.sqrt((p[0] - p0[s, 0]) ** 2 + (p[1] - p0[s, 1]) ** 2 + (p[2] - p0[s, 2]) ** 2) \
            + (drift - drift0[s])
        if ncand[s] < 0 or not (moved <= margin):
            cnt = _grid(X, conn, ftype, boxes, fat, start, entries, keys, origin, h, p, reach,
                        reach + margin, tol, B, cand[s], wd[0], K, False)
            ncand[s] = cnt if cnt <= K else -1
            p0[s] = p
            drift0[s] = drift
            searches += 1
            if cnt > K:
                _grid(X, conn, ftype, boxes, fat, start, entries, keys, origin, h, p, reach, reach, tol,
                      B, wc[0], wd[0], K, True)
                _finish(B, p, fflags, ref, tol, iout[s], fout[s])
                continue
        _narrow(X, conn, ftype, boxes, cand[s], ncand[s], p, reach, tol, B, wc[1], wd[1])
        _finish(B, p, fflags, ref, tol, iout[s], fout[s])
    return searches


def brute_query(X, conn, ftype, fflags, boxes, P, reach, ref, tol, prune, iout, fout):
    """Every face examined for every point (the reference of :func:`grid_query`)."""
    for s in range(P.shape[0]):
        B = _Best()
        for f in range(conn.shape[0]):
            bd = _boxdist(boxes[f], P[s])
            if not prune or (bd <= reach and (B.face < 0 or bd <= B.d + tol)):
                _consider(X, conn, ftype, f, P[s], tol, B)
        if B.face >= 0 and B.d > reach:
            B = _Best()
        _finish(B, P[s], fflags, ref, tol, iout[s], fout[s])


def face_eval(X, conn, ftype, face, ab, out):
    """Point and parameter derivatives (out (n, 18)) of the faces ``face`` at ``ab`` (n, 2)."""
    for s in range(face.shape[0]):
        x, d = face_point(X, conn[face[s]], int(ftype[face[s]]), ab[s, 0], ab[s, 1])
        out[s, :3] = x
        out[s, 3:] = d


def face_shapes(ftype, face, ab, out):
    """Shape functions (out (n, 9), 0 past a face's last node) of the faces ``face`` at ``ab``."""
    n = face.shape[0]
    if ab.shape[0] != n or out.shape[0] != n or out.shape[1] < 9:
        raise ValueError(f"face_shapes: ab must be ({n}, 2) and out ({n}, 9)")
    for s in range(n):
        if not 0 <= face[s] < ftype.shape[0]:
            raise ValueError(f"face_shapes: face {face[s]} is not in 0..{ftype.shape[0] - 1}")
    for s in range(n):
        N = shape_functions(int(ftype[face[s]]), ab[s, 0], ab[s, 1])[0]
        out[s, :len(N)] = N
        out[s, len(N):] = 0.0
