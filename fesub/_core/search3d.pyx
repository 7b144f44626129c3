# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node-to-face search in 3D over explicit node positions, compiled.

Twin: ``search3d_ref.py`` (same functions and signatures). Used by
:class:`fesub.contact.geometry.FaceSet`, which validates every input and allocates every array.

Faces: ``conn`` is (m, 9) int32, the node indices of each face padded with -1; ``ftype`` (int32)
its type code: 0 triangle (3 nodes), 1 quad (4), 2 triangle6 (6), 3 quad8 (8), 4 quad9 (9),
meshio node order. The arrays a query reads are compact (the search's time at 1e6 faces is the
memory it touches, not its arithmetic): int32 indices, the face boxes ``boxes`` and padded boxes
``fat`` float32 (rounded outward by the caller, so a box still holds its face and its distance
stays a lower bound), each grid entry an int32 face with 32 bits of its cell's hash (``_tag``).
Parameters: (a, b) in the triangle (0, 0), (1, 0), (0, 1) or the square [-1, 1]^2.

Broad phase: a uniform grid of cubic cells of side ``h`` stored as a hash table (``start`` of
T + 1 bucket offsets, T a power of two, into ``entries``): a face is entered in every cell its
padded box (``fat``) overlaps. A uniform grid answers a query in O(1) (the cells around the
point) when the faces are of similar size, as the faces of one contact surface are; hashing the
cells keeps memory O(m) for a surface curved in 3D (a dense grid of its bounding box would hold
O(m^1.5) cells); a face's box that stays inside its padded box after the master moves needs no
new entry, so refitting is a recomputation of the boxes. A face found in several cells is
examined once, in the cell holding the low corner of the overlap of its padded box and the
query box. Narrow phase: the closest point of each candidate face by Newton's method in its
parameters (exact Hessian, Gauss-Newton where it is not positive definite, a line search,
clamped to the parameter domain), then, when that point lies on the domain's boundary, Newton
along each edge; each stops when its step moves the face point by less than the round-off of
the coordinates (``_RES``). ``grid_query`` counts the Newton iterations (``stats[0]``). A face
whose point is affine in its parameters (a linear triangle, a flat parallelogram quad) has its
closest point from its 2 x 2 normal equations when that lies inside it (no iterations).

Result rows: ``iout`` (n, 3) = face (-1: none within ``reach``), feature (0 inside the face, 1 on
an edge, 2 at a vertex), off (1: on a free edge of the surface and not along the face normal);
``fout`` (n, 15) = a, b, closest point (3), signed gap, normal (3), tangent 1 (3), tangent 2 (3).
"""

from libc.math cimport sqrt, fabs, floor, nextafterf, INFINITY, NAN
from libc.float cimport DBL_EPSILON

ctypedef unsigned long ulong

# a step is accepted when it does not raise the squared distance beyond its round-off: near the
# minimum a descent is below what the subtraction resolves
cdef double _ROUND = 1.0 + 1e-12
# Newton stops when its step moves the face point by no more than the round-off of the point's
# coordinates (this many units in the last place of |p| + |x|): below that the iterates only
# wander in the round-off of r = x - p (a face small beside its coordinates would otherwise run
# to the iteration limit, its parameter steps never falling below a fixed parameter tolerance)
cdef double _RES = 4.0 * DBL_EPSILON

cdef double _QA[4]
cdef double _QB[4]
_QA[:] = [-1.0, 1.0, 1.0, -1.0]
_QB[:] = [-1.0, -1.0, 1.0, 1.0]
cdef int _Q9I[9]
cdef int _Q9J[9]
_Q9I[:] = [0, 1, 1, 0, 2, 1, 2, 0, 2]
_Q9J[:] = [0, 0, 1, 1, 0, 2, 1, 2, 2]
# starting samples on the triangle: corners, edge middles, centroid
cdef double _TA[7]
cdef double _TB[7]
_TA[:] = [0.0, 1.0, 0.0, 0.5, 0.5, 0.0, 1.0 / 3.0]
_TB[:] = [0.0, 0.0, 1.0, 0.0, 0.5, 0.5, 1.0 / 3.0]
# corners of the triangle's domain (edge e runs from corner e to corner e + 1)
cdef double _CA[3]
cdef double _CB[3]
_CA[:] = [0.0, 1.0, 0.0]
_CB[:] = [0.0, 0.0, 1.0]


cdef struct Best:
    long face
    long bits
    long iters
    double d
    double a
    double b
    double x[3]
    double nf[3]
    double nacc[3]


cdef inline int _nnodes(long t) noexcept nogil:
    if t == 0:
        return 3
    if t == 1:
        return 4
    if t == 2:
        return 6
    if t == 3:
        return 8
    return 9


cdef inline void _lag(double s, double* l, double* dl, double* ddl) noexcept nogil:
    l[0] = s * (s - 1.0) / 2.0
    l[1] = s * (s + 1.0) / 2.0
    l[2] = 1.0 - s * s
    dl[0] = s - 0.5
    dl[1] = s + 0.5
    dl[2] = -2.0 * s
    ddl[0] = 1.0
    ddl[1] = 1.0
    ddl[2] = -2.0


cdef int _shape(long t, double a, double b, double* N, double* Na, double* Nb, double* Naa,
                double* Nab, double* Nbb) noexcept nogil:
    """Shape functions and their first and second parameter derivatives; returns the count."""
    cdef double L[3]
    cdef double La[3]
    cdef double Lb[3]
    cdef double l[3]
    cdef double dl[3]
    cdef double ddl[3]
    cdef double m[3]
    cdef double dm[3]
    cdef double ddm[3]
    cdef double A, B, u, v, sa, sb, ca, cb
    cdef int i, p, q
    if t == 0 or t == 2:
        L[0] = 1.0 - a - b
        L[1] = a
        L[2] = b
        La[0] = -1.0
        La[1] = 1.0
        La[2] = 0.0
        Lb[0] = -1.0
        Lb[1] = 0.0
        Lb[2] = 1.0
        if t == 0:
            for i in range(3):
                N[i] = L[i]
                Na[i] = La[i]
                Nb[i] = Lb[i]
                Naa[i] = 0.0
                Nab[i] = 0.0
                Nbb[i] = 0.0
            return 3
        for i in range(3):
            N[i] = L[i] * (2.0 * L[i] - 1.0)
            Na[i] = (4.0 * L[i] - 1.0) * La[i]
            Nb[i] = (4.0 * L[i] - 1.0) * Lb[i]
            Naa[i] = 4.0 * La[i] * La[i]
            Nab[i] = 4.0 * La[i] * Lb[i]
            Nbb[i] = 4.0 * Lb[i] * Lb[i]
        for i in range(3):
            p = i
            q = (i + 1) % 3
            N[3 + i] = 4.0 * L[p] * L[q]
            Na[3 + i] = 4.0 * (La[p] * L[q] + L[p] * La[q])
            Nb[3 + i] = 4.0 * (Lb[p] * L[q] + L[p] * Lb[q])
            Naa[3 + i] = 8.0 * La[p] * La[q]
            Nab[3 + i] = 4.0 * (La[p] * Lb[q] + Lb[p] * La[q])
            Nbb[3 + i] = 8.0 * Lb[p] * Lb[q]
        return 6
    if t == 1:
        for i in range(4):
            sa = _QA[i]
            sb = _QB[i]
            N[i] = (1.0 + a * sa) * (1.0 + b * sb) / 4.0
            Na[i] = sa * (1.0 + b * sb) / 4.0
            Nb[i] = sb * (1.0 + a * sa) / 4.0
            Naa[i] = 0.0
            Nab[i] = sa * sb / 4.0
            Nbb[i] = 0.0
        return 4
    if t == 3:
        for i in range(4):
            sa = _QA[i]
            sb = _QB[i]
            u = a * sa
            v = b * sb
            A = 1.0 + u
            B = 1.0 + v
            N[i] = A * B * (u + v - 1.0) / 4.0
            Na[i] = sa * B * (2.0 * u + v) / 4.0
            Nb[i] = sb * A * (u + 2.0 * v) / 4.0
            Naa[i] = B / 2.0
            Nab[i] = sa * sb * (2.0 * u + 2.0 * v + 1.0) / 4.0
            Nbb[i] = A / 2.0
        for i in range(4):
            # mid-nodes of sides 0-1, 1-2, 2-3, 3-0 at (0, -1), (1, 0), (0, 1), (-1, 0)
            ca = (_QA[i] + _QA[(i + 1) % 4]) / 2.0
            cb = (_QB[i] + _QB[(i + 1) % 4]) / 2.0
            if ca == 0.0:
                N[4 + i] = (1.0 - a * a) * (1.0 + b * cb) / 2.0
                Na[4 + i] = -a * (1.0 + b * cb)
                Nb[4 + i] = cb * (1.0 - a * a) / 2.0
                Naa[4 + i] = -(1.0 + b * cb)
                Nab[4 + i] = -a * cb
                Nbb[4 + i] = 0.0
            else:
                N[4 + i] = (1.0 + a * ca) * (1.0 - b * b) / 2.0
                Na[4 + i] = ca * (1.0 - b * b) / 2.0
                Nb[4 + i] = -b * (1.0 + a * ca)
                Naa[4 + i] = 0.0
                Nab[4 + i] = -b * ca
                Nbb[4 + i] = -(1.0 + a * ca)
        return 8
    _lag(a, l, dl, ddl)
    _lag(b, m, dm, ddm)
    for i in range(9):
        p = _Q9I[i]
        q = _Q9J[i]
        N[i] = l[p] * m[q]
        Na[i] = dl[p] * m[q]
        Nb[i] = l[p] * dm[q]
        Naa[i] = ddl[p] * m[q]
        Nab[i] = dl[p] * dm[q]
        Nbb[i] = l[p] * ddm[q]
    return 9


cdef void _eval(const double* X, const int* cf, long t, double a, double b, double* x,
                double* d) noexcept nogil:
    """Point x (3) and derivatives d (15: x_a, x_b, x_aa, x_ab, x_bb) of a face at (a, b)."""
    cdef double N[9]
    cdef double Na[9]
    cdef double Nb[9]
    cdef double Naa[9]
    cdef double Nab[9]
    cdef double Nbb[9]
    cdef int k = _shape(t, a, b, N, Na, Nb, Naa, Nab, Nbb)
    cdef int i, c
    cdef double v
    for c in range(3):
        x[c] = 0.0
    for c in range(15):
        d[c] = 0.0
    for i in range(k):
        for c in range(3):
            v = X[3 * cf[i] + c]
            x[c] += N[i] * v
            d[c] += Na[i] * v
            d[3 + c] += Nb[i] * v
            d[6 + c] += Naa[i] * v
            d[9 + c] += Nab[i] * v
            d[12 + c] += Nbb[i] * v


cdef inline double _dot(const double* u, const double* v) noexcept nogil:
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


cdef inline void _cross(const double* u, const double* v, double* w) noexcept nogil:
    w[0] = u[1] * v[2] - u[2] * v[1]
    w[1] = u[2] * v[0] - u[0] * v[2]
    w[2] = u[0] * v[1] - u[1] * v[0]


cdef inline double _f(const double* X, const int* cf, long t, double a, double b,
                      const double* p) noexcept nogil:
    """Half the squared distance from p to the face point at (a, b)."""
    cdef double N[9]
    cdef double Na[9]
    cdef double Nb[9]
    cdef double Naa[9]
    cdef double Nab[9]
    cdef double Nbb[9]
    cdef int k = _shape(t, a, b, N, Na, Nb, Naa, Nab, Nbb)
    cdef int i
    cdef double x0 = -p[0], x1 = -p[1], x2 = -p[2]
    for i in range(k):
        x0 += N[i] * X[3 * cf[i]]
        x1 += N[i] * X[3 * cf[i] + 1]
        x2 += N[i] * X[3 * cf[i] + 2]
    return 0.5 * (x0 * x0 + x1 * x1 + x2 * x2)


cdef inline void _clamp(bint tri, double* a, double* b) noexcept nogil:
    cdef double e
    if tri:
        if a[0] + b[0] > 1.0:
            e = (a[0] + b[0] - 1.0) / 2.0
            a[0] -= e
            b[0] -= e
        if a[0] < 0.0:
            a[0] = 0.0
        if b[0] < 0.0:
            b[0] = 0.0
        if a[0] > 1.0:
            a[0] = 1.0
        if b[0] > 1.0:
            b[0] = 1.0
    else:
        a[0] = -1.0 if a[0] < -1.0 else (1.0 if a[0] > 1.0 else a[0])
        b[0] = -1.0 if b[0] < -1.0 else (1.0 if b[0] > 1.0 else b[0])


cdef inline long _bits(bint tri, double a, double b) noexcept nogil:
    """Edges of the parameter domain the point (a, b) lies on (bit e: edge e)."""
    cdef double eps = 1e-9
    cdef long s = 0
    if tri:
        if b <= eps:
            s |= 1
        if a + b >= 1.0 - eps:
            s |= 2
        if a <= eps:
            s |= 4
    else:
        if b <= -1.0 + eps:
            s |= 1
        if a >= 1.0 - eps:
            s |= 2
        if b >= 1.0 - eps:
            s |= 4
        if a <= -1.0 + eps:
            s |= 8
    return s


cdef double _newton2(const double* X, const int* cf, long t, const double* p, double* ab,
                     long* iters) noexcept nogil:
    """Closest point in the face's domain from the best of a few samples: returns f."""
    cdef bint tri = (t == 0 or t == 2)
    cdef double x[3]
    cdef double d[15]
    cdef double r[3]
    cdef double a, b, fa, fbest, na, nb, fn, ga, gb, haa, hab, hbb, det, da, db, step, g11, g12, g22, res
    cdef int i, j, it, ls
    cdef bint act_a, act_b, act_h
    fbest = INFINITY
    a = 0.0
    b = 0.0
    if tri:
        for i in range(7):
            fa = _f(X, cf, t, _TA[i], _TB[i], p)
            if fa < fbest:
                fbest = fa
                a = _TA[i]
                b = _TB[i]
    else:
        for i in range(3):
            for j in range(3):
                fa = _f(X, cf, t, i - 1.0, j - 1.0, p)
                if fa < fbest:
                    fbest = fa
                    a = i - 1.0
                    b = j - 1.0
    fa = fbest
    for it in range(40):
        iters[0] += 1
        _eval(X, cf, t, a, b, x, d)
        r[0] = x[0] - p[0]
        r[1] = x[1] - p[1]
        r[2] = x[2] - p[2]
        ga = _dot(r, d)
        gb = _dot(r, d + 3)
        g11 = _dot(d, d)
        g12 = _dot(d, d + 3)
        g22 = _dot(d + 3, d + 3)
        haa = g11 + _dot(r, d + 6)
        hab = g12 + _dot(r, d + 9)
        hbb = g22 + _dot(r, d + 12)
        # constraints held (at a bound with the descent pointing out of the domain)
        if tri:
            act_a = a <= 0.0 and ga > 0.0
            act_b = b <= 0.0 and gb > 0.0
            act_h = a + b >= 1.0 and ga + gb < 0.0
        else:
            act_a = (a <= -1.0 and ga > 0.0) or (a >= 1.0 and ga < 0.0)
            act_b = (b <= -1.0 and gb > 0.0) or (b >= 1.0 and gb < 0.0)
            act_h = False
        if <int>act_a + <int>act_b + <int>act_h >= 2:
            break  # at a vertex, the descent pointing out of both edges
        if act_a:  # along b only
            da = 0.0
            db = -gb / (hbb if hbb > 0.0 else g22)
        elif act_b:
            db = 0.0
            da = -ga / (haa if haa > 0.0 else g11)
        elif act_h:  # along the hypotenuse, direction (1, -1)
            det = haa - 2.0 * hab + hbb
            if not det > 0.0:
                det = g11 - 2.0 * g12 + g22
            da = -(ga - gb) / det
            db = -da
        else:
            det = haa * hbb - hab * hab
            if not (haa > 0.0 and det > 1e-12 * g11 * g22):
                haa = g11
                hbb = g22
                hab = g12
                det = haa * hbb - hab * hab
                if not det > 0.0:
                    break
            da = -(hbb * ga - hab * gb) / det
            db = -(haa * gb - hab * ga) / det
        step = 1.0
        fn = fa
        na = a
        nb = b
        for ls in range(30):
            na = a + step * da
            nb = b + step * db
            _clamp(tri, &na, &nb)
            fn = _f(X, cf, t, na, nb, p)
            if fn <= fa * _ROUND:
                break
            step *= 0.5
        if not fn <= fa * _ROUND:
            break
        da = na - a
        db = nb - b
        step = fabs(da) + fabs(db)
        res = _RES * (fabs(p[0]) + fabs(p[1]) + fabs(p[2]) + fabs(x[0]) + fabs(x[1]) + fabs(x[2]))
        a = na
        b = nb
        fa = fn
        if step < 1e-14 or g11 * da * da + 2.0 * g12 * da * db + g22 * db * db <= res * res:
            break
    ab[0] = a
    ab[1] = b
    return fa


cdef double _newton1(const double* X, const int* cf, long t, const double* p, double a0,
                     double b0, double a1, double b1, double* ab, long* iters) noexcept nogil:
    """Closest point on the edge (a0, b0)-(a1, b1) of the domain: returns f."""
    cdef double x[3]
    cdef double d[15]
    cdef double r[3]
    cdef double c1[3]
    cdef double c2[3]
    cdef double ua = a1 - a0, ub = b1 - b0
    cdef double s, fs, fbest, g, H, dt, step, ns, fn
    cdef int i, it, ls, c
    fbest = INFINITY
    s = 0.0
    for i in range(3):
        fs = _f(X, cf, t, a0 + 0.5 * i * ua, b0 + 0.5 * i * ub, p)
        if fs < fbest:
            fbest = fs
            s = 0.5 * i
    fs = fbest
    for it in range(40):
        iters[0] += 1
        _eval(X, cf, t, a0 + s * ua, b0 + s * ub, x, d)
        for c in range(3):
            r[c] = x[c] - p[c]
            c1[c] = d[c] * ua + d[3 + c] * ub
            c2[c] = d[6 + c] * ua * ua + 2.0 * d[9 + c] * ua * ub + d[12 + c] * ub * ub
        g = _dot(r, c1)
        H = _dot(c1, c1) + _dot(r, c2)
        if not H > 0.0:
            H = _dot(c1, c1)
            if not H > 0.0:
                break
        dt = -g / H
        step = 1.0
        ns = s
        fn = fs
        for ls in range(30):
            ns = s + step * dt
            ns = 0.0 if ns < 0.0 else (1.0 if ns > 1.0 else ns)
            fn = _f(X, cf, t, a0 + ns * ua, b0 + ns * ub, p)
            if fn <= fs * _ROUND:
                break
            step *= 0.5
        if not fn <= fs * _ROUND:
            break
        step = fabs(ns - s)
        s = ns
        fs = fn
        if step < 1e-15 or step * step * _dot(c1, c1) <= (_RES * (fabs(p[0]) + fabs(p[1]) + fabs(p[2])
                                                                  + fabs(x[0]) + fabs(x[1]) + fabs(x[2]))) ** 2:
            break
    ab[0] = a0 + s * ua
    ab[1] = b0 + s * ub
    if s <= 0.0:
        ab[0] = a0
        ab[1] = b0
    elif s >= 1.0:
        ab[0] = a1
        ab[1] = b1
    return fs


cdef bint _affine(const double* X, const int* cf, long t, const double* p, double* ab) noexcept nogil:
    """The closest point of a face whose point is affine in (a, b) (a linear triangle, a quad
    whose opposite sides are equal vectors to round-off: a flat parallelogram) from its 2 x 2 normal
    equations: True with its parameters in ab when it lies inside the domain (no edge within
    ``_bits``' margin), else False (the face is left to Newton)."""
    cdef const double* x0 = X + 3 * cf[0]
    cdef const double* x1 = X + 3 * cf[1]
    cdef const double* x2 = X + 3 * cf[2]
    cdef const double* x3
    cdef double u[3]
    cdef double v[3]
    cdef double r[3]
    cdef double g11, g12, g22, det, ru, rv, a, b
    cdef int c
    if t == 0:  # x = x0 + a (x1 - x0) + b (x2 - x0)
        for c in range(3):
            u[c] = x1[c] - x0[c]
            v[c] = x2[c] - x0[c]
            r[c] = p[c] - x0[c]
    elif t == 1:  # x = c + a u + b v + a b (x0 - x1 + x2 - x3) / 4: the last term, the twist,
        # within the coordinates' round-off (that of Newton's answer, ``_RES``)
        x3 = X + 3 * cf[3]
        for c in range(3):
            if not fabs(x0[c] - x1[c] + x2[c] - x3[c]) <= _RES * (fabs(x0[c]) + fabs(x1[c]) + fabs(x2[c])
                                                                 + fabs(x3[c])):
                return False
        for c in range(3):
            u[c] = (x1[c] - x0[c] + x2[c] - x3[c]) / 4.0
            v[c] = (x3[c] - x0[c] + x2[c] - x1[c]) / 4.0
            r[c] = p[c] - (x0[c] + x1[c] + x2[c] + x3[c]) / 4.0
    else:
        return False
    g11 = _dot(u, u)
    g12 = _dot(u, v)
    g22 = _dot(v, v)
    det = g11 * g22 - g12 * g12
    if not det > 1e-12 * g11 * g22:
        return False
    ru = _dot(r, u)
    rv = _dot(r, v)
    a = (g22 * ru - g12 * rv) / det
    b = (g11 * rv - g12 * ru) / det
    if _bits(t == 0, a, b) != 0:
        return False
    ab[0] = a
    ab[1] = b
    return True


cdef double _closest(const double* X, const int* cf, long t, const double* p, double* ab,
                     long* iters) noexcept nogil:
    """Closest point of a face to p: parameters in ab, returns the distance (Newton iterations
    added to ``iters``; none for an affine face's point inside it, see :func:`_affine`)."""
    cdef bint tri = (t == 0 or t == 2)
    cdef double e[2]
    cdef double f0, fe
    cdef int k
    cdef long bits
    if _affine(X, cf, t, p, ab):
        return sqrt(2.0 * _f(X, cf, t, ab[0], ab[1], p))
    f0 = _newton2(X, cf, t, p, ab, iters)
    bits = _bits(tri, ab[0], ab[1])
    if bits == 0:
        return sqrt(2.0 * f0)
    # on the boundary: Newton along the edges it touches (a check of the active set's answer)
    for k in range(3 if tri else 4):
        if not (bits >> k) & 1:
            continue
        if tri:
            fe = _newton1(X, cf, t, p, _CA[k], _CB[k], _CA[(k + 1) % 3], _CB[(k + 1) % 3], e, iters)
        else:
            fe = _newton1(X, cf, t, p, _QA[k], _QB[k], _QA[(k + 1) % 4], _QB[(k + 1) % 4], e, iters)
        if fe < f0:
            f0 = fe
            ab[0] = e[0]
            ab[1] = e[1]
    return sqrt(2.0 * f0)


cdef void _consider(const double* X, const int* conn, const int* ftype, long f,
                    const double* p, double tol, Best* B) noexcept nogil:
    """Closest point of face f, kept in B when nearer (ties at one point: normals summed)."""
    cdef const int* cf = conn + 9 * f
    cdef long t = ftype[f]
    cdef double ab[2]
    cdef double x[3]
    cdef double dd[15]
    cdef double n[3]
    cdef double d, ln, sep
    cdef int c
    d = _closest(X, cf, t, p, ab, &B.iters)
    _eval(X, cf, t, ab[0], ab[1], x, dd)
    _cross(dd, dd + 3, n)
    ln = sqrt(_dot(n, n))
    for c in range(3):
        n[c] /= ln
    if B.face >= 0 and d <= B.d + tol:
        sep = sqrt((x[0] - B.x[0]) ** 2 + (x[1] - B.x[1]) ** 2 + (x[2] - B.x[2]) ** 2)
        if d >= B.d - tol and sep <= tol:  # the same point: a shared edge or vertex
            for c in range(3):
                B.nacc[c] += n[c]
            if f < B.face:
                B.face = f
                B.a = ab[0]
                B.b = ab[1]
                B.bits = _bits(t == 0 or t == 2, ab[0], ab[1])
                for c in range(3):
                    B.nf[c] = n[c]
            return
        if d >= B.d - tol and f > B.face:  # as near, elsewhere: the lower face number
            return
    elif B.face >= 0:
        return
    B.face = f
    B.d = d
    B.a = ab[0]
    B.b = ab[1]
    B.bits = _bits(t == 0 or t == 2, ab[0], ab[1])
    for c in range(3):
        B.x[c] = x[c]
        B.nf[c] = n[c]
        B.nacc[c] = n[c]


cdef inline void _reset(Best* B) noexcept nogil:
    B.face = -1
    B.d = INFINITY
    B.iters = 0


cdef void _finish(Best* B, const double* p, const int* fflags, const double* ref, double tol,
                  long* io, double* fo) noexcept nogil:
    cdef double r[3]
    cdef double n[3]
    cdef double t1[3]
    cdef double s, ln, rn, best
    cdef int c, k, feat
    cdef long nb
    if B.face < 0:
        io[0] = -1
        io[1] = 0
        io[2] = 0
        for c in range(15):
            fo[c] = NAN
        fo[5] = INFINITY
        return
    for c in range(3):
        r[c] = p[c] - B.x[c]
    nb = (B.bits & 1) + ((B.bits >> 1) & 1) + ((B.bits >> 2) & 1) + ((B.bits >> 3) & 1)
    feat = 0 if nb == 0 else (1 if nb == 1 else 2)
    if feat == 0:
        for c in range(3):
            n[c] = B.nf[c]
        fo[5] = _dot(r, n)
    else:
        s = 1.0 if _dot(r, B.nacc) >= 0.0 else -1.0
        if B.d > tol:
            for c in range(3):
                n[c] = s * r[c] / B.d
        else:
            ln = sqrt(_dot(B.nacc, B.nacc))
            for c in range(3):
                n[c] = B.nacc[c] / ln
        fo[5] = s * B.d
    io[0] = B.face
    io[1] = feat
    io[2] = 1 if ((B.bits & fflags[B.face]) != 0 and B.d > tol
                  and fabs(_dot(r, B.nf)) < (1.0 - 1e-8) * B.d) else 0
    fo[0] = B.a
    fo[1] = B.b
    # tangent 1: the reference direction in the tangent plane; where it is nearly normal, the
    # axis least aligned with the normal
    rn = _dot(ref, n)
    for c in range(3):
        t1[c] = ref[c] - rn * n[c]
    ln = sqrt(_dot(t1, t1))
    if ln < 0.1:
        k = 0
        best = fabs(n[0])
        for c in range(1, 3):
            if fabs(n[c]) < best:
                best = fabs(n[c])
                k = c
        for c in range(3):
            t1[c] = -n[k] * n[c]
        t1[k] += 1.0
        ln = sqrt(_dot(t1, t1))
    for c in range(3):
        t1[c] /= ln
        fo[2 + c] = B.x[c]
        fo[6 + c] = n[c]
        fo[9 + c] = t1[c]
    _cross(n, t1, fo + 12)


cdef inline long _cell(double v, double o, double h) noexcept nogil:
    return <long>floor((v - o) / h)


cdef inline ulong _key(long i, long j, long k) noexcept nogil:
    """The cell's 64-bit hash; its low bits pick the bucket, the whole tells cells apart."""
    return ((<ulong>i * <ulong>73856093) ^ (<ulong>j * <ulong>19349663)
            ^ (<ulong>k * <ulong>83492791))


cdef inline int _tag(ulong key) noexcept nogil:
    """Bits 16..47 of a cell's hash, stored with each entry: with the bucket (its low bits) they
    hold all the hash tells apart for cell indices below 2^20 (the products stay below 2^48)."""
    return <int>(<unsigned int>(key >> 16))


cdef inline double _boxdist(const float* bx, const double* p) noexcept nogil:
    cdef double s = 0.0, e
    cdef int c
    for c in range(3):
        e = bx[c] - p[c]
        if e < 0.0:
            e = p[c] - bx[3 + c]
        if e > 0.0:
            s += e * e
    return sqrt(s)


def face_boxes(const double[:, ::1] X, const int[:, ::1] conn, const int[::1] ftype,
               double[:, ::1] boxes, float[:, ::1] small):
    """Boxes (m, 6: lo xyz, hi xyz) holding each face: those of its Bezier control points (the
    corners and, for quadratic faces, 2 m - (a + b) / 2 per edge, the tensor form for quad8/9);
    ``small`` the same in float32 rounded outward (the queries' boxes)."""
    cdef long m = conn.shape[0], f, t
    cdef int i, j, c, k
    cdef double P[9][3]
    cdef double Q[3][3][3]
    cdef double v
    with nogil:
        for f in range(m):
            t = ftype[f]
            k = _nnodes(t)
            for i in range(k):
                for c in range(3):
                    P[i][c] = X[conn[f, i], c]
            if t == 2:
                for i in range(3):
                    for c in range(3):
                        P[3 + i][c] = 2.0 * P[3 + i][c] - 0.5 * (P[i][c] + P[(i + 1) % 3][c])
            elif t == 3 or t == 4:
                # the 3 x 3 Lagrange values at (-1, 1, 0)^2 (quad8: its implied centre), then
                # the 1D Bezier transform along each direction
                for c in range(3):
                    for i in range(9):
                        Q[_Q9I[i]][_Q9J[i]][c] = P[i][c] if i < 8 else 0.0
                    if t == 3:
                        v = 0.0
                        for i in range(4):
                            v += 0.5 * P[4 + i][c] - 0.25 * P[i][c]
                        Q[2][2][c] = v
                    else:
                        Q[2][2][c] = P[8][c]
                    for j in range(3):
                        Q[2][j][c] = 2.0 * Q[2][j][c] - 0.5 * (Q[0][j][c] + Q[1][j][c])
                    for i in range(3):
                        Q[i][2][c] = 2.0 * Q[i][2][c] - 0.5 * (Q[i][0][c] + Q[i][1][c])
                    for i in range(9):
                        P[i][c] = Q[i // 3][i % 3][c]
                k = 9
            for c in range(3):
                boxes[f, c] = P[0][c]
                boxes[f, 3 + c] = P[0][c]
                for i in range(1, k):
                    if P[i][c] < boxes[f, c]:
                        boxes[f, c] = P[i][c]
                    if P[i][c] > boxes[f, 3 + c]:
                        boxes[f, 3 + c] = P[i][c]
                small[f, c] = <float>boxes[f, c]
                if small[f, c] > boxes[f, c]:
                    small[f, c] = nextafterf(small[f, c], -INFINITY)
                small[f, 3 + c] = <float>boxes[f, 3 + c]
                if small[f, 3 + c] < boxes[f, 3 + c]:
                    small[f, 3 + c] = nextafterf(small[f, 3 + c], INFINITY)


def grid_bin(const float[:, ::1] fat, const double[::1] origin, double h, int[::1] start,
             int[::1] entries, int[::1] keys):
    """Enter each face in the hashed cells its box ``fat`` overlaps: bucket b holds
    ``entries[start[b]:start[b + 1]]`` (faces ascending), ``keys`` 32 bits of the hash of each
    entry's cell (``_tag``) (a query skips the entries of most other cells without reading their
    faces; one with the same bits fails the box tests). Returns the
    number of entries; when ``entries`` is too short, nothing is filled (call again with that
    many)."""
    cdef long m = fat.shape[0], T = start.shape[0] - 1, f, i, j, k, total = 0, q
    cdef ulong mask = <ulong>(T - 1)
    cdef long lo[3]
    cdef long hi[3]
    cdef int c
    with nogil:
        for q in range(T + 1):
            start[q] = 0
        for f in range(m):
            for c in range(3):
                lo[c] = _cell(fat[f, c], origin[c], h)
                hi[c] = _cell(fat[f, 3 + c], origin[c], h)
            for i in range(lo[0], hi[0] + 1):
                for j in range(lo[1], hi[1] + 1):
                    for k in range(lo[2], hi[2] + 1):
                        start[(_key(i, j, k) & mask) + 1] += 1
                        total += 1
        if total <= entries.shape[0]:
            for q in range(T):
                start[q + 1] += start[q]
            for f in range(m):
                for c in range(3):
                    lo[c] = _cell(fat[f, c], origin[c], h)
                    hi[c] = _cell(fat[f, 3 + c], origin[c], h)
                for i in range(lo[0], hi[0] + 1):
                    for j in range(lo[1], hi[1] + 1):
                        for k in range(lo[2], hi[2] + 1):
                            q = <long>(_key(i, j, k) & mask)
                            entries[start[q]] = <int>f
                            keys[start[q]] = _tag(_key(i, j, k))
                            start[q] += 1
            for q in range(T, 0, -1):
                start[q] = start[q - 1]
            start[0] = 0
    return total


cdef long _grid(const double* X, const int* conn, const int* ftype, const float[:, ::1] boxes,
                const float[:, ::1] fat, const int[::1] start, const int[::1] entries,
                const int[::1] keys, const double[::1] origin, double h, const double* p, double reach, double wide,
                double tol, Best* B, long* cand, double* cbd, long K, bint project) noexcept nogil:
    """Faces whose box lies within ``wide`` of p, each once: written to ``cand`` with their box
    distances ``cbd`` (up to K); with ``project``, those within ``reach`` are projected on the
    way instead. Returns their count."""
    cdef ulong mask = <ulong>(start.shape[0] - 2)
    cdef long lo[3]
    cdef long hi[3]
    cdef long i, j, k, e, f, q, n = 0
    cdef ulong key
    cdef int tag
    cdef double bd
    cdef int c
    cdef bint own
    for c in range(3):
        lo[c] = _cell(p[c] - wide, origin[c], h)
        hi[c] = _cell(p[c] + wide, origin[c], h)
    for i in range(lo[0], hi[0] + 1):
        for j in range(lo[1], hi[1] + 1):
            for k in range(lo[2], hi[2] + 1):
                key = _key(i, j, k)
                tag = _tag(key)
                q = <long>(key & mask)
                for e in range(start[q], start[q + 1]):
                    if keys[e] != tag:
                        continue  # another cell in the same bucket
                    f = entries[e]
                    own = True
                    for c in range(3):
                        if fat[f, 3 + c] < p[c] - wide or fat[f, c] > p[c] + wide:
                            own = False
                            break
                    if not own:
                        continue
                    # examined once: in the cell of the low corner of (padded box & query box)
                    if (_cell(fat[f, 0] if fat[f, 0] > p[0] - wide else p[0] - wide, origin[0], h) != i
                            or _cell(fat[f, 1] if fat[f, 1] > p[1] - wide else p[1] - wide, origin[1], h) != j
                            or _cell(fat[f, 2] if fat[f, 2] > p[2] - wide else p[2] - wide, origin[2], h) != k):
                        continue
                    bd = _boxdist(&boxes[f, 0], p)
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


cdef void _narrow(const double* X, const int* conn, const int* ftype, const float[:, ::1] boxes,
                  const long* cand, long n, const double* p, double reach, double tol, Best* B,
                  long* wc, double* wd) noexcept nogil:
    """Project p on the faces ``cand`` within ``reach`` (box distance), nearest box first,
    stopping at the first box beyond the nearest distance found (``wc``, ``wd``: room for n)."""
    cdef long e, k = 0, i, f
    cdef double bd
    for e in range(n):
        f = cand[e]
        bd = _boxdist(&boxes[f, 0], p)
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
        _consider(X, conn, ftype, wc[e], p, tol, B)


def grid_query(const double[:, ::1] X, const int[:, ::1] conn, const int[::1] ftype,
               const int[::1] fflags, const float[:, ::1] boxes, const float[:, ::1] fat,
               const int[::1] start, const int[::1] entries, const int[::1] keys,
               const double[::1] origin, double h, const double[:, ::1] P, double reach,
               const double[::1] ref, double tol, long[:, ::1] wc, double[:, ::1] wd, long[:, ::1] iout,
               double[:, ::1] fout, long[::1] stats):
    """Closest point within ``reach`` of each point P through the grid (rows as the module
    says); ``wc``, ``wd`` (2, K): room for K candidates (beyond it the faces are projected in
    the grid's order). Returns the number of candidate faces met (the search's work);
    ``stats[0]``: the Newton iterations of the projections (on faces and their edges)."""
    cdef long n = P.shape[0], K = wc.shape[1], s, cnt, rnd, work = 0, newton = 0
    cdef double wide
    cdef Best B
    with nogil:
        for s in range(n):
            # first the faces within half a cell: when the nearest lies within that, no other
            # can be nearer; else everything within reach
            for rnd in range(2):
                wide = 0.25 * h if (rnd == 0 and 0.25 * h < reach) else reach
                _reset(&B)
                cnt = _grid(&X[0, 0], &conn[0, 0], &ftype[0], boxes, fat, start, entries, keys,
                            origin, h, &P[s, 0], wide, wide, tol, &B, &wc[0, 0], &wd[0, 0], K, False)
                work += cnt
                if cnt <= K:
                    _narrow(&X[0, 0], &conn[0, 0], &ftype[0], boxes, &wc[0, 0], cnt, &P[s, 0],
                            wide, tol, &B, &wc[1, 0], &wd[1, 0])
                else:
                    _grid(&X[0, 0], &conn[0, 0], &ftype[0], boxes, fat, start, entries, keys,
                          origin, h, &P[s, 0], wide, wide, tol, &B, &wc[0, 0], &wd[0, 0], K, True)
                newton += B.iters
                if wide == reach or (B.face >= 0 and B.d + tol <= wide):
                    break
            _finish(&B, &P[s, 0], &fflags[0], &ref[0], tol, &iout[s, 0], &fout[s, 0])
    stats[0] = newton
    return work


def tracked_query(const double[:, ::1] X, const int[:, ::1] conn, const int[::1] ftype,
                  const int[::1] fflags, const float[:, ::1] boxes, const float[:, ::1] fat,
                  const int[::1] start, const int[::1] entries, const int[::1] keys,
                  const double[::1] origin, double h, const double[:, ::1] P, double reach,
                  double margin, double drift,
                  const double[::1] ref, double tol, double[:, ::1] p0, double[::1] drift0,
                  long[:, ::1] cand, long[::1] ncand, long[:, ::1] wc, double[:, ::1] wd,
                  long[:, ::1] iout, double[:, ::1] fout):
    """:func:`grid_query` with each point's candidate faces kept: the faces within
    ``reach + margin`` when the grid was last searched for it (at ``p0``, master drift
    ``drift0``); they serve while the point's motion plus the master's drift since stays within
    ``margin``. ``ncand`` -1: more candidates than ``cand`` holds (searched again next time);
    ``wc``, ``wd`` (2, K) with K >= the columns of ``cand``. Returns the number of grid
    searches done."""
    cdef long n = P.shape[0], K = cand.shape[1], s, cnt, searches = 0
    cdef double moved
    cdef const double* p
    cdef Best B
    cdef int c
    with nogil:
        for s in range(n):
            _reset(&B)
            p = &P[s, 0]
            moved = sqrt((p[0] - p0[s, 0]) ** 2 + (p[1] - p0[s, 1]) ** 2 + (p[2] - p0[s, 2]) ** 2) \
                + (drift - drift0[s])
            if ncand[s] < 0 or not (moved <= margin):
                cnt = _grid(&X[0, 0], &conn[0, 0], &ftype[0], boxes, fat, start, entries, keys, origin,
                            h, p, reach, reach + margin, tol, &B, &cand[s, 0], &wd[0, 0], K, False)
                ncand[s] = cnt if cnt <= K else -1
                for c in range(3):
                    p0[s, c] = p[c]
                drift0[s] = drift
                searches += 1
                if cnt > K:
                    _grid(&X[0, 0], &conn[0, 0], &ftype[0], boxes, fat, start, entries, keys, origin,
                          h, p, reach, reach, tol, &B, &wc[0, 0], &wd[0, 0], K, True)
                    _finish(&B, p, &fflags[0], &ref[0], tol, &iout[s, 0], &fout[s, 0])
                    continue
            _narrow(&X[0, 0], &conn[0, 0], &ftype[0], boxes, &cand[s, 0], ncand[s], p, reach, tol,
                    &B, &wc[1, 0], &wd[1, 0])
            _finish(&B, p, &fflags[0], &ref[0], tol, &iout[s, 0], &fout[s, 0])
    return searches


def brute_query(const double[:, ::1] X, const int[:, ::1] conn, const int[::1] ftype,
                const int[::1] fflags, const float[:, ::1] boxes, const double[:, ::1] P,
                double reach, const double[::1] ref, double tol, bint prune, long[:, ::1] iout,
                double[:, ::1] fout):
    """Every face examined for every point (the reference of :func:`grid_query`): each face
    projected, or, with ``prune``, each face unless its box lies beyond ``reach`` or beyond the
    nearest distance found so far."""
    cdef long n = P.shape[0], m = conn.shape[0], s, f
    cdef double bd
    cdef Best B
    with nogil:
        for s in range(n):
            _reset(&B)
            for f in range(m):
                bd = _boxdist(&boxes[f, 0], &P[s, 0])
                if not prune or (bd <= reach and (B.face < 0 or bd <= B.d + tol)):
                    _consider(&X[0, 0], &conn[0, 0], &ftype[0], f, &P[s, 0], tol, &B)
            if B.face >= 0 and B.d > reach:
                _reset(&B)
            _finish(&B, &P[s, 0], &fflags[0], &ref[0], tol, &iout[s, 0], &fout[s, 0])


def face_eval(const double[:, ::1] X, const int[:, ::1] conn, const int[::1] ftype,
              const long[::1] face, const double[:, ::1] ab, double[:, ::1] out):
    """Point and parameter derivatives (out (n, 18): x, x_a, x_b, x_aa, x_ab, x_bb) of the
    faces ``face`` at the parameters ``ab`` (n, 2)."""
    cdef long n = face.shape[0], s
    with nogil:
        for s in range(n):
            _eval(&X[0, 0], &conn[face[s], 0], ftype[face[s]], ab[s, 0], ab[s, 1], &out[s, 0],
                  &out[s, 3])


def face_shapes(const int[::1] ftype, const long[::1] face, const double[:, ::1] ab, double[:, ::1] out):
    """Shape functions (out (n, 9): column j the face's j-th node, 0 past its last) of the faces
    ``face`` at the parameters ``ab`` (n, 2)."""
    cdef long n = face.shape[0], s
    cdef double N[9]
    cdef double Na[9]
    cdef double Nb[9]
    cdef double Naa[9]
    cdef double Nab[9]
    cdef double Nbb[9]
    cdef int k, i
    if ab.shape[0] != n or out.shape[0] != n or out.shape[1] < 9:
        raise ValueError(f"face_shapes: ab must be ({n}, 2) and out ({n}, 9)")
    for s in range(n):
        if not 0 <= face[s] < ftype.shape[0]:
            raise ValueError(f"face_shapes: face {face[s]} is not in 0..{ftype.shape[0] - 1}")
    with nogil:
        for s in range(n):
            k = _shape(ftype[face[s]], ab[s, 0], ab[s, 1], N, Na, Nb, Naa, Nab, Nbb)
            for i in range(k):
                out[s, i] = N[i]
            for i in range(k, 9):
                out[s, i] = 0.0
