# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node-to-face search in 3D over explicit node positions, compiled.

Twin: ``search3d_ref.py`` (same functions and signatures). Used by
:class:`fesub.contact.geometry.FaceSet`, which validates every input and allocates every array.
This file holds the queries: the face boxes, the hashed grid, the candidates' bookkeeping and the
result rows, and the public ``face_eval``/``face_shapes``; the geometry of one face (shape
functions, the closest point) is ``_search3d_faces.pxi``, included as text below so that its
calls stay direct C calls within this module.

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
query box. Narrow phase: the closest point of each candidate face (``_closest``, Newton's
method in the face's parameters, see ``_search3d_faces.pxi``); ``grid_query`` counts the
Newton iterations (``stats[0]``). The nearest face is kept in a ``Best`` record
(``_consider``: ties at one point sum their normals) and written as a result row (``_finish``).

Result rows: ``iout`` (n, 3) = face (-1: none within ``reach``), feature (0 inside the face, 1 on
an edge, 2 at a vertex), off (1: on a free edge of the surface and not along the face normal);
``fout`` (n, 15) = a, b, closest point (3), signed gap, normal (3), tangent 1 (3), tangent 2 (3).
"""

from libc.math cimport sqrt, fabs, floor, nextafterf, INFINITY, NAN
from libc.float cimport DBL_EPSILON

ctypedef unsigned long ulong

# the geometry of one face: shape functions, evaluation, closest point
include "_search3d_faces.pxi"


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
