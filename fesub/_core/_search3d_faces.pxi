# The closest point on one face of the 3D search (fesub._core.search3d): the faces' Lagrange shape
# functions and their parameter derivatives (``_shape``), the face point and its derivatives
# (``_eval``), and the projection of a point on a face (``_closest``: ``_affine``, ``_newton2``,
# ``_newton1``). Text included by search3d.pyx (``include``), below its cimports of sqrt, fabs,
# INFINITY (libc.math) and DBL_EPSILON (libc.float): compiled in that module, so its calls stay
# direct C calls the compiler inlines. NumPy twin: _search3d_faces.py.
#
# Faces: the node indices ``cf`` of one face (a row of the (m, 9) ``conn``), its type code ``t``
# (0 triangle, 1 quad, 2 triangle6, 3 quad8, 4 quad9, meshio node order); parameters (a, b) in
# the triangle (0, 0), (1, 0), (0, 1) or the square [-1, 1]^2. The closest point: Newton's method
# in the parameters (exact Hessian, Gauss-Newton where it is not positive definite, a line
# search, clamped to the parameter domain), then, when that point lies on the domain's boundary,
# Newton along each edge; each stops when its step moves the face point by less than the
# round-off of the coordinates (``_RES``). A face whose point is affine in its parameters (a
# linear triangle, a flat parallelogram quad) has its closest point from its 2 x 2 normal
# equations when that lies inside it (no iterations).

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
