"""NumPy twin of ``_search3d_faces.pxi``: the closest point on one face of the 3D search.

The faces' shape functions and their parameter derivatives (``shape_functions``), the face point
and its derivatives (``face_point``) and the projection of a point on a face (``closest_point``),
with the same arithmetic as the compiled text that ``search3d.pyx`` includes (there ``_shape``,
``_eval``, ``_closest``: names inside one C module); plain Python, used by ``search3d_ref.py``.
"""

from __future__ import annotations

import math

import numpy as np

_QA = (-1.0, 1.0, 1.0, -1.0)
_QB = (-1.0, -1.0, 1.0, 1.0)
Q9I = (0, 1, 1, 0, 2, 1, 2, 0, 2)
Q9J = (0, 0, 1, 1, 0, 2, 1, 2, 2)
_TA = (0.0, 1.0, 0.0, 0.5, 0.5, 0.0, 1.0 / 3.0)
_TB = (0.0, 0.0, 1.0, 0.0, 0.5, 0.5, 1.0 / 3.0)
_CA = (0.0, 1.0, 0.0)
_CB = (0.0, 0.0, 1.0)
NNODES = (3, 4, 6, 8, 9)
# a step is accepted when it does not raise the squared distance beyond its round-off
_ROUND = 1.0 + 1e-12
# Newton stops when its step moves the face point by no more than the round-off of the point's
# coordinates (this many units in the last place of |p| + |x|)
_RES = 4.0 * np.finfo(float).eps


def _lag(s):
    return ((s * (s - 1.0) / 2.0, s * (s + 1.0) / 2.0, 1.0 - s * s),
            (s - 0.5, s + 0.5, -2.0 * s), (1.0, 1.0, -2.0))


def shape_functions(t, a, b):
    """(N, Na, Nb, Naa, Nab, Nbb) lists of the face type ``t`` at (a, b)."""
    if t in (0, 2):
        L, La, Lb = (1.0 - a - b, a, b), (-1.0, 1.0, 0.0), (-1.0, 0.0, 1.0)
        if t == 0:
            return list(L), list(La), list(Lb), [0.0] * 3, [0.0] * 3, [0.0] * 3
        N, Na, Nb, Naa, Nab, Nbb = ([0.0] * 6 for _ in range(6))
        for i in range(3):
            N[i] = L[i] * (2.0 * L[i] - 1.0)
            Na[i] = (4.0 * L[i] - 1.0) * La[i]
            Nb[i] = (4.0 * L[i] - 1.0) * Lb[i]
            Naa[i] = 4.0 * La[i] * La[i]
            Nab[i] = 4.0 * La[i] * Lb[i]
            Nbb[i] = 4.0 * Lb[i] * Lb[i]
        for i in range(3):
            p, q = i, (i + 1) % 3
            N[3 + i] = 4.0 * L[p] * L[q]
            Na[3 + i] = 4.0 * (La[p] * L[q] + L[p] * La[q])
            Nb[3 + i] = 4.0 * (Lb[p] * L[q] + L[p] * Lb[q])
            Naa[3 + i] = 8.0 * La[p] * La[q]
            Nab[3 + i] = 4.0 * (La[p] * Lb[q] + Lb[p] * La[q])
            Nbb[3 + i] = 8.0 * Lb[p] * Lb[q]
        return N, Na, Nb, Naa, Nab, Nbb
    if t == 1:
        out = ([0.0] * 4 for _ in range(6))
        N, Na, Nb, Naa, Nab, Nbb = out
        for i in range(4):
            sa, sb = _QA[i], _QB[i]
            N[i] = (1.0 + a * sa) * (1.0 + b * sb) / 4.0
            Na[i] = sa * (1.0 + b * sb) / 4.0
            Nb[i] = sb * (1.0 + a * sa) / 4.0
            Nab[i] = sa * sb / 4.0
        return N, Na, Nb, Naa, Nab, Nbb
    if t == 3:
        N, Na, Nb, Naa, Nab, Nbb = ([0.0] * 8 for _ in range(6))
        for i in range(4):
            sa, sb = _QA[i], _QB[i]
            u, v = a * sa, b * sb
            A, B = 1.0 + u, 1.0 + v
            N[i] = A * B * (u + v - 1.0) / 4.0
            Na[i] = sa * B * (2.0 * u + v) / 4.0
            Nb[i] = sb * A * (u + 2.0 * v) / 4.0
            Naa[i] = B / 2.0
            Nab[i] = sa * sb * (2.0 * u + 2.0 * v + 1.0) / 4.0
            Nbb[i] = A / 2.0
        for i in range(4):
            ca = (_QA[i] + _QA[(i + 1) % 4]) / 2.0
            cb = (_QB[i] + _QB[(i + 1) % 4]) / 2.0
            if ca == 0.0:
                N[4 + i] = (1.0 - a * a) * (1.0 + b * cb) / 2.0
                Na[4 + i] = -a * (1.0 + b * cb)
                Nb[4 + i] = cb * (1.0 - a * a) / 2.0
                Naa[4 + i] = -(1.0 + b * cb)
                Nab[4 + i] = -a * cb
            else:
                N[4 + i] = (1.0 + a * ca) * (1.0 - b * b) / 2.0
                Na[4 + i] = ca * (1.0 - b * b) / 2.0
                Nb[4 + i] = -b * (1.0 + a * ca)
                Nab[4 + i] = -b * ca
                Nbb[4 + i] = -(1.0 + a * ca)
        return N, Na, Nb, Naa, Nab, Nbb
    (l, dl, ddl), (m, dm, ddm) = _lag(a), _lag(b)
    N, Na, Nb, Naa, Nab, Nbb = ([0.0] * 9 for _ in range(6))
    for i in range(9):
        p, q = Q9I[i], Q9J[i]
        N[i] = l[p] * m[q]
        Na[i] = dl[p] * m[q]
        Nb[i] = l[p] * dm[q]
        Naa[i] = ddl[p] * m[q]
        Nab[i] = dl[p] * dm[q]
        Nbb[i] = l[p] * ddm[q]
    return N, Na, Nb, Naa, Nab, Nbb


def face_point(X, cf, t, a, b):
    """(x (3), d (15)) of the face with nodes ``cf`` at (a, b)."""
    S = shape_functions(t, a, b)
    x = [0.0, 0.0, 0.0]
    d = [0.0] * 15
    for i in range(len(S[0])):
        row = X[cf[i]]
        for c in range(3):
            v = row[c]
            x[c] += S[0][i] * v
            d[c] += S[1][i] * v
            d[3 + c] += S[2][i] * v
            d[6 + c] += S[3][i] * v
            d[9 + c] += S[4][i] * v
            d[12 + c] += S[5][i] * v
    return x, d


def dot(u, v, i=0, j=0):
    return u[i] * v[j] + u[i + 1] * v[j + 1] + u[i + 2] * v[j + 2]


def cross(u, v):
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]


def _f(X, cf, t, a, b, p):
    x, _ = face_point(X, cf, t, a, b)
    return 0.5 * ((x[0] - p[0]) ** 2 + (x[1] - p[1]) ** 2 + (x[2] - p[2]) ** 2)


def _clamp(tri, a, b):
    if tri:
        if a + b > 1.0:
            e = (a + b - 1.0) / 2.0
            a -= e
            b -= e
        a = 0.0 if a < 0.0 else a
        b = 0.0 if b < 0.0 else b
        a = 1.0 if a > 1.0 else a
        b = 1.0 if b > 1.0 else b
        return a, b
    return min(max(a, -1.0), 1.0), min(max(b, -1.0), 1.0)


def feature_bits(tri, a, b):
    eps = 1e-9
    s = 0
    if tri:
        s |= 1 if b <= eps else 0
        s |= 2 if a + b >= 1.0 - eps else 0
        s |= 4 if a <= eps else 0
    else:
        s |= 1 if b <= -1.0 + eps else 0
        s |= 2 if a >= 1.0 - eps else 0
        s |= 4 if b >= 1.0 - eps else 0
        s |= 8 if a <= -1.0 + eps else 0
    return s


def _newton2(X, cf, t, p, it):
    tri = t in (0, 2)
    samples = zip(_TA, _TB) if tri else ((i - 1.0, j - 1.0) for i in range(3) for j in range(3))
    fbest, a, b = math.inf, 0.0, 0.0
    for sa, sb in samples:
        fa = _f(X, cf, t, sa, sb, p)
        if fa < fbest:
            fbest, a, b = fa, sa, sb
    fa = fbest
    for _ in range(40):
        it[0] += 1
        x, d = face_point(X, cf, t, a, b)
        r = [x[c] - p[c] for c in range(3)]
        ga, gb = dot(r, d, 0, 0), dot(r, d, 0, 3)
        g11, g12, g22 = dot(d, d, 0, 0), dot(d, d, 0, 3), dot(d, d, 3, 3)
        haa = g11 + dot(r, d, 0, 6)
        hab = g12 + dot(r, d, 0, 9)
        hbb = g22 + dot(r, d, 0, 12)
        if tri:
            act_a = a <= 0.0 and ga > 0.0
            act_b = b <= 0.0 and gb > 0.0
            act_h = a + b >= 1.0 and ga + gb < 0.0
        else:
            act_a = (a <= -1.0 and ga > 0.0) or (a >= 1.0 and ga < 0.0)
            act_b = (b <= -1.0 and gb > 0.0) or (b >= 1.0 and gb < 0.0)
            act_h = False
        if int(act_a) + int(act_b) + int(act_h) >= 2:
            break
        if act_a:
            da, db = 0.0, -gb / (hbb if hbb > 0.0 else g22)
        elif act_b:
            da, db = -ga / (haa if haa > 0.0 else g11), 0.0
        elif act_h:
            det = haa - 2.0 * hab + hbb
            if not det > 0.0:
                det = g11 - 2.0 * g12 + g22
            da = -(ga - gb) / det
            db = -da
        else:
            det = haa * hbb - hab * hab
            if not (haa > 0.0 and det > 1e-12 * g11 * g22):
                haa, hbb, hab = g11, g22, g12
                det = haa * hbb - hab * hab
                if not det > 0.0:
                    break
            da = -(hbb * ga - hab * gb) / det
            db = -(haa * gb - hab * ga) / det
        step, fn, na, nb = 1.0, fa, a, b
        for _ in range(30):
            na, nb = _clamp(tri, a + step * da, b + step * db)
            fn = _f(X, cf, t, na, nb, p)
            if fn <= fa * _ROUND:
                break
            step *= 0.5
        if not fn <= fa * _ROUND:
            break
        da, db = na - a, nb - b
        res = _RES * (sum(abs(v) for v in p) + sum(abs(v) for v in x))
        a, b, fa = na, nb, fn
        if abs(da) + abs(db) < 1e-14 or g11 * da * da + 2.0 * g12 * da * db + g22 * db * db <= res * res:
            break
    return fa, a, b


def _newton1(X, cf, t, p, a0, b0, a1, b1, it):
    ua, ub = a1 - a0, b1 - b0
    fbest, s = math.inf, 0.0
    for i in range(3):
        fs = _f(X, cf, t, a0 + 0.5 * i * ua, b0 + 0.5 * i * ub, p)
        if fs < fbest:
            fbest, s = fs, 0.5 * i
    fs = fbest
    for _ in range(40):
        it[0] += 1
        x, d = face_point(X, cf, t, a0 + s * ua, b0 + s * ub)
        r = [x[c] - p[c] for c in range(3)]
        c1 = [d[c] * ua + d[3 + c] * ub for c in range(3)]
        c2 = [d[6 + c] * ua * ua + 2.0 * d[9 + c] * ua * ub + d[12 + c] * ub * ub for c in range(3)]
        g = dot(r, c1)
        H = dot(c1, c1) + dot(r, c2)
        if not H > 0.0:
            H = dot(c1, c1)
            if not H > 0.0:
                break
        dt = -g / H
        step, ns, fn = 1.0, s, fs
        for _ in range(30):
            ns = s + step * dt
            ns = 0.0 if ns < 0.0 else (1.0 if ns > 1.0 else ns)
            fn = _f(X, cf, t, a0 + ns * ua, b0 + ns * ub, p)
            if fn <= fs * _ROUND:
                break
            step *= 0.5
        if not fn <= fs * _ROUND:
            break
        step = abs(ns - s)
        s, fs = ns, fn
        res = _RES * (sum(abs(v) for v in p) + sum(abs(v) for v in x))
        if step < 1e-15 or step * step * dot(c1, c1) <= res * res:
            break
    if s <= 0.0:
        return fs, a0, b0
    if s >= 1.0:
        return fs, a1, b1
    return fs, a0 + s * ua, b0 + s * ub


def _affine(X, cf, t, p):
    """(a, b) of the closest point of an affine face inside it, or None (see the kernel)."""
    if t == 0:
        x0, x1, x2 = X[cf[0]], X[cf[1]], X[cf[2]]
        u = [x1[c] - x0[c] for c in range(3)]
        v = [x2[c] - x0[c] for c in range(3)]
        r = [p[c] - x0[c] for c in range(3)]
    elif t == 1:
        x0, x1, x2, x3 = X[cf[0]], X[cf[1]], X[cf[2]], X[cf[3]]
        if not all(abs(x0[c] - x1[c] + x2[c] - x3[c]) <= _RES * (abs(x0[c]) + abs(x1[c]) + abs(x2[c]) + abs(x3[c]))
                   for c in range(3)):
            return None  # a twist beyond the coordinates' round-off
        u = [(x1[c] - x0[c] + x2[c] - x3[c]) / 4.0 for c in range(3)]
        v = [(x3[c] - x0[c] + x2[c] - x1[c]) / 4.0 for c in range(3)]
        r = [p[c] - (x0[c] + x1[c] + x2[c] + x3[c]) / 4.0 for c in range(3)]
    else:
        return None
    g11, g12, g22 = dot(u, u), dot(u, v), dot(v, v)
    det = g11 * g22 - g12 * g12
    if not det > 1e-12 * g11 * g22:
        return None
    ru, rv = dot(r, u), dot(r, v)
    a, b = (g22 * ru - g12 * rv) / det, (g11 * rv - g12 * ru) / det
    return None if feature_bits(t == 0, a, b) != 0 else (a, b)


def closest_point(X, cf, t, p, it):
    tri = t in (0, 2)
    ab = _affine(X, cf, t, p)
    if ab is not None:
        return math.sqrt(2.0 * _f(X, cf, t, ab[0], ab[1], p)), ab[0], ab[1]
    f0, a, b = _newton2(X, cf, t, p, it)
    bits = feature_bits(tri, a, b)
    if bits == 0:
        return math.sqrt(2.0 * f0), a, b
    for k in range(3 if tri else 4):
        if not (bits >> k) & 1:
            continue
        if tri:
            fe, ea, eb = _newton1(X, cf, t, p, _CA[k], _CB[k], _CA[(k + 1) % 3], _CB[(k + 1) % 3], it)
        else:
            fe, ea, eb = _newton1(X, cf, t, p, _QA[k], _QB[k], _QA[(k + 1) % 4], _QB[(k + 1) % 4], it)
        if fe < f0:
            f0, a, b = fe, ea, eb
    return math.sqrt(2.0 * f0), a, b
