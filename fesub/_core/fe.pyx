# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Element matrices of Q4 (optionally with incompatible modes), T3 and the 2D Euler-Bernoulli frame.

Compiled twin of ``fe_ref.py`` (same signatures, same mathematics, one element at a time in C).
Inputs are validated by the caller; outputs are written into the preallocated ``Ke`` and ``Me``.
"""

from libc.math cimport sqrt
from libc.stdint cimport int64_t


cdef double[4] XI = [-1.0, 1.0, 1.0, -1.0]
cdef double[4] ETA = [-1.0, -1.0, 1.0, 1.0]


cdef void _solve4(double* A, double* b, int nrhs) noexcept nogil:
    """Solve A X = B in place (A 4x4 row-major, B 4 x nrhs row-major), Gaussian elimination with
    partial pivoting. A is overwritten, B becomes X."""
    cdef int i, j, k, p
    cdef double t, f
    for k in range(4):
        p = k
        for i in range(k + 1, 4):
            if abs(A[i * 4 + k]) > abs(A[p * 4 + k]):
                p = i
        if p != k:
            for j in range(4):
                t = A[k * 4 + j]; A[k * 4 + j] = A[p * 4 + j]; A[p * 4 + j] = t
            for j in range(nrhs):
                t = b[k * nrhs + j]; b[k * nrhs + j] = b[p * nrhs + j]; b[p * nrhs + j] = t
        for i in range(k + 1, 4):
            f = A[i * 4 + k] / A[k * 4 + k]
            for j in range(k, 4):
                A[i * 4 + j] -= f * A[k * 4 + j]
            for j in range(nrhs):
                b[i * nrhs + j] -= f * b[k * nrhs + j]
    for k in range(3, -1, -1):
        for j in range(nrhs):
            t = b[k * nrhs + j]
            for i in range(k + 1, 4):
                t -= A[k * 4 + i] * b[i * nrhs + j]
            b[k * nrhs + j] = t / A[k * 4 + k]


def q4_matrices(const double[:, :, ::1] xy, const double[:, ::1] D, double thickness, double rho,
                int incompatible, double[:, :, ::1] Ke, double[:, :, ::1] Me):
    """Q4 plane-stress stiffness and consistent mass (2x2 Gauss); see fe_ref.q4_matrices.

    Same mathematics as the twin, arranged for speed: the zero pattern of B is used (each strain
    row has two non-zeros per node), only the upper triangle is accumulated (in local arrays) and
    mirrored, and the mass is accumulated as the 4x4 scalar block N_a N_b.
    """
    cdef Py_ssize_t e, ne = xy.shape[0]
    cdef int g, a, b, i, j, k
    cdef double gp = 1.0 / sqrt(3.0)
    cdef double xi, eta, j00, j01, j10, j11, det, i00, i01, i10, i11, w, s
    cdef double c00, c01, c10, c11, det0, sc
    cdef double d00 = D[0, 0], d01 = D[0, 1], d02 = D[0, 2]
    cdef double d10 = D[1, 0], d11 = D[1, 1], d12 = D[1, 2]
    cdef double d20 = D[2, 0], d21 = D[2, 1], d22 = D[2, 2]
    cdef double N[4]
    cdef double dxi[4]
    cdef double deta[4]
    cdef double bx[6]   # d/dx of the 4 shape functions, then of the 2 incompatible modes
    cdef double by[6]
    cdef double DB[3][12]  # D B for the 8 nodal columns then the 4 incompatible columns
    cdef double kk[8][8]
    cdef double mm[4][4]
    cdef double Kci[8][4]
    cdef double Kii[16]
    cdef double X[32]
    cdef double gx[4]
    cdef double gy[4]
    gx[0] = -gp; gx[1] = gp; gx[2] = gp; gx[3] = -gp
    gy[0] = -gp; gy[1] = -gp; gy[2] = gp; gy[3] = gp
    with nogil:
        for e in range(ne):
            for i in range(8):
                for j in range(8):
                    kk[i][j] = 0.0
                for j in range(4):
                    Kci[i][j] = 0.0
            for i in range(4):
                for j in range(4):
                    mm[i][j] = 0.0
            for i in range(16):
                Kii[i] = 0.0
            c00 = 0.0; c01 = 0.0; c10 = 0.0; c11 = 0.0
            for a in range(4):
                c00 += 0.25 * XI[a] * xy[e, a, 0]
                c01 += 0.25 * XI[a] * xy[e, a, 1]
                c10 += 0.25 * ETA[a] * xy[e, a, 0]
                c11 += 0.25 * ETA[a] * xy[e, a, 1]
            det0 = c00 * c11 - c01 * c10
            for g in range(4):
                xi = gx[g]
                eta = gy[g]
                j00 = 0.0; j01 = 0.0; j10 = 0.0; j11 = 0.0
                for a in range(4):
                    N[a] = 0.25 * (1 + xi * XI[a]) * (1 + eta * ETA[a])
                    dxi[a] = 0.25 * XI[a] * (1 + eta * ETA[a])
                    deta[a] = 0.25 * ETA[a] * (1 + xi * XI[a])
                    j00 += dxi[a] * xy[e, a, 0]
                    j01 += dxi[a] * xy[e, a, 1]
                    j10 += deta[a] * xy[e, a, 0]
                    j11 += deta[a] * xy[e, a, 1]
                det = j00 * j11 - j01 * j10
                i00 = j11 / det; i01 = -j01 / det; i10 = -j10 / det; i11 = j00 / det
                for a in range(4):
                    bx[a] = i00 * dxi[a] + i01 * deta[a]
                    by[a] = i10 * dxi[a] + i11 * deta[a]
                w = det * thickness
                if incompatible:
                    # P1 = 1 - xi^2, P2 = 1 - eta^2 with Taylor's centre Jacobian and det0/det
                    sc = det0 / det
                    bx[4] = (c11 / det0 * (-2 * xi)) * sc
                    bx[5] = (-c01 / det0 * (-2 * eta)) * sc
                    by[4] = (-c10 / det0 * (-2 * xi)) * sc
                    by[5] = (c00 / det0 * (-2 * eta)) * sc
                # D B, column pairs (u, v) per node / mode; B col u = (bx, 0, by), v = (0, by, bx)
                for a in range(6 if incompatible else 4):
                    DB[0][2 * a] = w * (d00 * bx[a] + d02 * by[a])
                    DB[1][2 * a] = w * (d10 * bx[a] + d12 * by[a])
                    DB[2][2 * a] = w * (d20 * bx[a] + d22 * by[a])
                    DB[0][2 * a + 1] = w * (d01 * by[a] + d02 * bx[a])
                    DB[1][2 * a + 1] = w * (d11 * by[a] + d12 * bx[a])
                    DB[2][2 * a + 1] = w * (d21 * by[a] + d22 * bx[a])
                # row i = 2a (u): B' row = (bx_a, 0, by_a); row 2a+1 (v): (0, by_a, bx_a)
                for a in range(4):
                    for j in range(2 * a, 8):
                        kk[2 * a][j] += bx[a] * DB[0][j] + by[a] * DB[2][j]
                    for j in range(2 * a + 1, 8):
                        kk[2 * a + 1][j] += by[a] * DB[1][j] + bx[a] * DB[2][j]
                    for b in range(a, 4):
                        mm[a][b] += rho * w * N[a] * N[b]
                if incompatible:
                    for a in range(4):
                        for j in range(4):
                            Kci[2 * a][j] += bx[a] * DB[0][8 + j] + by[a] * DB[2][8 + j]
                            Kci[2 * a + 1][j] += by[a] * DB[1][8 + j] + bx[a] * DB[2][8 + j]
                    for a in range(2):
                        for j in range(2 * a, 4):
                            Kii[(2 * a) * 4 + j] += bx[4 + a] * DB[0][8 + j] + by[4 + a] * DB[2][8 + j]
                        for j in range(2 * a + 1, 4):
                            Kii[(2 * a + 1) * 4 + j] += by[4 + a] * DB[1][8 + j] + bx[4 + a] * DB[2][8 + j]
            if incompatible:
                for i in range(4):
                    for j in range(i):
                        Kii[i * 4 + j] = Kii[j * 4 + i]
                # X = Kii^-1 Kic (4 x 8), then Ke -= Kci X (upper triangle)
                for i in range(4):
                    for j in range(8):
                        X[i * 8 + j] = Kci[j][i]
                _solve4(Kii, X, 8)
                for i in range(8):
                    for j in range(i, 8):
                        s = 0.0
                        for k in range(4):
                            s += Kci[i][k] * X[k * 8 + j]
                        kk[i][j] -= s
            for i in range(8):
                Ke[e, i, i] = kk[i][i]
                for j in range(i + 1, 8):
                    Ke[e, i, j] = kk[i][j]
                    Ke[e, j, i] = kk[i][j]
            for a in range(4):
                for b in range(4):
                    s = mm[a][b] if b >= a else mm[b][a]
                    Me[e, 2 * a, 2 * b] = s
                    Me[e, 2 * a, 2 * b + 1] = 0.0
                    Me[e, 2 * a + 1, 2 * b] = 0.0
                    Me[e, 2 * a + 1, 2 * b + 1] = s


def t3_matrices(const double[:, :, ::1] xy, const double[:, ::1] D, double thickness, double rho,
                double[:, :, ::1] Ke, double[:, :, ::1] Me):
    """Constant-strain triangle; see fe_ref.t3_matrices."""
    cdef Py_ssize_t e, ne = xy.shape[0]
    cdef int i, j, a, b
    cdef double area, w, m
    cdef double bb[3]
    cdef double cc[3]
    cdef double B[3][6]
    cdef double DB[3][6]
    with nogil:
        for e in range(ne):
            area = 0.5 * ((xy[e, 1, 0] - xy[e, 0, 0]) * (xy[e, 2, 1] - xy[e, 0, 1])
                          - (xy[e, 2, 0] - xy[e, 0, 0]) * (xy[e, 1, 1] - xy[e, 0, 1]))
            bb[0] = (xy[e, 1, 1] - xy[e, 2, 1]) / (2 * area)
            bb[1] = (xy[e, 2, 1] - xy[e, 0, 1]) / (2 * area)
            bb[2] = (xy[e, 0, 1] - xy[e, 1, 1]) / (2 * area)
            cc[0] = (xy[e, 2, 0] - xy[e, 1, 0]) / (2 * area)
            cc[1] = (xy[e, 0, 0] - xy[e, 2, 0]) / (2 * area)
            cc[2] = (xy[e, 1, 0] - xy[e, 0, 0]) / (2 * area)
            for a in range(3):
                B[0][2 * a] = bb[a]; B[0][2 * a + 1] = 0.0
                B[1][2 * a] = 0.0; B[1][2 * a + 1] = cc[a]
                B[2][2 * a] = cc[a]; B[2][2 * a + 1] = bb[a]
            for i in range(3):
                for j in range(6):
                    DB[i][j] = D[i, 0] * B[0][j] + D[i, 1] * B[1][j] + D[i, 2] * B[2][j]
            w = area * thickness
            for i in range(6):
                for j in range(6):
                    Ke[e, i, j] = w * (B[0][i] * DB[0][j] + B[1][i] * DB[1][j] + B[2][i] * DB[2][j])
                    Me[e, i, j] = 0.0
            for a in range(3):
                for b in range(3):
                    m = rho * w * (2.0 if a == b else 1.0) / 12.0
                    Me[e, 2 * a, 2 * b] = m
                    Me[e, 2 * a + 1, 2 * b + 1] = m


def frame2d_matrices(const double[:, :, ::1] xy, const double[::1] EA, const double[::1] EI,
                     const double[::1] rhoA, double[:, :, ::1] Ke, double[:, :, ::1] Me):
    """2D Euler-Bernoulli frame element; see fe_ref.frame2d_matrices."""
    cdef Py_ssize_t e, ne = xy.shape[0]
    cdef int i, j, k
    cdef double L, c, s, a, b, mm, t1, t2
    cdef double kl[6][6]
    cdef double ml[6][6]
    cdef double T[6][6]
    cdef double tk[6][6]
    cdef double tm[6][6]
    cdef int[4] idx = [1, 2, 4, 5]
    cdef double[16] kb = [12, 6, -12, 6, 6, 4, -6, 2, -12, -6, 12, -6, 6, 2, -6, 4]
    cdef double[16] mb = [156, 22, 54, -13, 22, 4, 13, -3, 54, 13, 156, -22, -13, -3, -22, 4]
    cdef int[16] pw = [0, 1, 0, 1, 1, 2, 1, 2, 0, 1, 0, 1, 1, 2, 1, 2]
    cdef double Lp[3]
    with nogil:
        for e in range(ne):
            c = xy[e, 1, 0] - xy[e, 0, 0]
            s = xy[e, 1, 1] - xy[e, 0, 1]
            L = sqrt(c * c + s * s)
            c = c / L
            s = s / L
            Lp[0] = 1.0; Lp[1] = L; Lp[2] = L * L
            for i in range(6):
                for j in range(6):
                    kl[i][j] = 0.0
                    ml[i][j] = 0.0
                    T[i][j] = 0.0
            a = EA[e] / L
            kl[0][0] = a; kl[3][3] = a; kl[0][3] = -a; kl[3][0] = -a
            mm = rhoA[e] * L / 6.0
            ml[0][0] = 2 * mm; ml[3][3] = 2 * mm; ml[0][3] = mm; ml[3][0] = mm
            b = EI[e] / (L * L * L)
            mm = rhoA[e] * L / 420.0
            for i in range(4):
                for j in range(4):
                    kl[idx[i]][idx[j]] = b * kb[i * 4 + j] * Lp[pw[i * 4 + j]]
                    ml[idx[i]][idx[j]] = mm * mb[i * 4 + j] * Lp[pw[i * 4 + j]]
            for k in range(0, 6, 3):
                T[k][k] = c; T[k][k + 1] = s; T[k + 1][k] = -s; T[k + 1][k + 1] = c; T[k + 2][k + 2] = 1.0
            for i in range(6):
                for j in range(6):
                    t1 = 0.0
                    t2 = 0.0
                    for k in range(6):
                        t1 += kl[i][k] * T[k][j]
                        t2 += ml[i][k] * T[k][j]
                    tk[i][j] = t1
                    tm[i][j] = t2
            for i in range(6):
                for j in range(6):
                    t1 = 0.0
                    t2 = 0.0
                    for k in range(6):
                        t1 += T[k][i] * tk[k][j]
                        t2 += T[k][i] * tm[k][j]
                    Ke[e, i, j] = t1
                    Me[e, i, j] = t2


cdef inline Py_ssize_t _find(const int64_t[::1] idx, Py_ssize_t lo, Py_ssize_t hi, int64_t v) noexcept nogil:
    """Position of ``v`` in the sorted slice idx[lo:hi], or -1."""
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if idx[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < idx.shape[0] and idx[lo] == v:
        return lo
    return -1


def csr_scatter(const int64_t[:, ::1] conn, const int64_t[::1] node_ptr, const int64_t[::1] node_idx,
                int ndpn, const double[:, :, ::1] Ke, const double[:, :, ::1] Me,
                double[::1] Kdata, double[::1] Mdata):
    """Add element matrices into the data arrays of two CSR matrices with the node-block pattern.

    The pattern is the node graph (``node_ptr``, sorted ``node_idx``) expanded to DOFs node-major:
    DOF row ``(n, i)`` starts at ``ndpn^2 node_ptr[n] + i ndpn deg(n)`` and holds, for each
    neighbour ``m`` of ``n`` (in order), the DOFs ``ndpn m .. ndpn m + ndpn - 1``. ``Kdata`` and
    ``Mdata`` (length ``ndpn^2 node_ptr[-1]``) are accumulated into, not cleared.
    """
    cdef Py_ssize_t ne = conn.shape[0], k = conn.shape[1]
    cdef Py_ssize_t e, a, b, i, j, p, lo, hi, deg, row, pos
    cdef int64_t ra, cb
    with nogil:
        for e in range(ne):
            for a in range(k):
                ra = conn[e, a]
                lo = node_ptr[ra]
                hi = node_ptr[ra + 1]
                deg = hi - lo
                for b in range(k):
                    cb = conn[e, b]
                    p = _find(node_idx, lo, hi, cb)
                    if p < 0:
                        continue
                    p -= lo
                    for i in range(ndpn):
                        row = ndpn * ndpn * lo + i * ndpn * deg + p * ndpn
                        for j in range(ndpn):
                            pos = row + j
                            Kdata[pos] += Ke[e, a * ndpn + i, b * ndpn + j]
                            Mdata[pos] += Me[e, a * ndpn + i, b * ndpn + j]


def dof_pattern(const int64_t[::1] node_ptr, const int64_t[::1] node_idx, int ndpn,
                int64_t[::1] indptr, int64_t[::1] indices):
    """Expand the node graph to the CSR pattern of the node-major DOF matrix (see csr_scatter).

    ``indptr`` (n ndpn + 1,) and ``indices`` (ndpn^2 node_ptr[-1],) are outputs.
    """
    cdef Py_ssize_t n = node_ptr.shape[0] - 1
    cdef Py_ssize_t v, i, j, q, pos, deg
    with nogil:
        pos = 0
        for v in range(n):
            deg = node_ptr[v + 1] - node_ptr[v]
            for i in range(ndpn):
                indptr[v * ndpn + i] = pos
                for q in range(node_ptr[v], node_ptr[v + 1]):
                    for j in range(ndpn):
                        indices[pos] = ndpn * node_idx[q] + j
                        pos += 1
        indptr[n * ndpn] = pos


def node_elements(const int64_t[:, ::1] conn, const int64_t[::1] ne_ptr, int64_t[::1] cursor,
                  int64_t[::1] ne_idx):
    """Elements around each node (CSR): ``ne_idx[ne_ptr[v]:ne_ptr[v+1]]`` lists, in increasing
    order, the elements holding node v (once per occurrence). ``ne_ptr`` comes from the node
    counts; ``cursor`` (n,) is a workspace."""
    cdef Py_ssize_t ne = conn.shape[0], k = conn.shape[1], n = ne_ptr.shape[0] - 1
    cdef Py_ssize_t e, a, v
    with nogil:
        for v in range(n):
            cursor[v] = ne_ptr[v]
        for e in range(ne):
            for a in range(k):
                v = conn[e, a]
                ne_idx[cursor[v]] = e
                cursor[v] += 1


def node_graph_fill(const int64_t[:, ::1] conn, const int64_t[::1] ne_ptr, const int64_t[::1] ne_idx,
                    int64_t[::1] marker, int64_t[::1] ptr, int64_t[::1] idx):
    """Node adjacency (CSR, sorted rows) from the elements around each node.

    ``marker`` (n,) workspace; ``ptr`` (n + 1,) output; ``idx`` output with room for
    ``k * len(ne_idx)`` entries, of which the first ``ptr[n]`` are written.
    """
    cdef Py_ssize_t k = conn.shape[1], n = ne_ptr.shape[0] - 1
    cdef Py_ssize_t v, q, a, u, pos, start, i, j
    cdef int64_t t
    with nogil:
        for v in range(n):
            marker[v] = -1
        pos = 0
        for v in range(n):
            ptr[v] = pos
            start = pos
            for q in range(ne_ptr[v], ne_ptr[v + 1]):
                for a in range(k):
                    u = conn[ne_idx[q], a]
                    if marker[u] != v:
                        marker[u] = v
                        # insertion into the sorted row
                        j = pos
                        while j > start and idx[j - 1] > u:
                            idx[j] = idx[j - 1]
                            j -= 1
                        idx[j] = u
                        pos += 1
        ptr[n] = pos
