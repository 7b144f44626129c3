"""NumPy twin of ``fe.pyx``: element matrices of Q4 (optionally with incompatible modes), T3 and
the 2D Euler-Bernoulli frame, vectorised over all elements.

Same signatures as the compiled kernels: inputs are contiguous float64 arrays already validated by
the caller, outputs are written into the preallocated ``Ke`` and ``Me``.
"""

from __future__ import annotations

import numpy as np

_XI = np.array([-1.0, 1.0, 1.0, -1.0])
_ETA = np.array([-1.0, -1.0, 1.0, 1.0])
_G = 1.0 / np.sqrt(3.0)
_GAUSS = [(-_G, -_G), (_G, -_G), (_G, _G), (-_G, _G)]


def _q4_b(dndx, dndy):
    """Strain-displacement matrices (ne, 3, 8) from shape derivatives (ne, 4)."""
    ne = dndx.shape[0]
    B = np.zeros((ne, 3, 8))
    B[:, 0, 0::2] = dndx
    B[:, 1, 1::2] = dndy
    B[:, 2, 0::2] = dndy
    B[:, 2, 1::2] = dndx
    return B


def q4_matrices(xy, D, thickness, rho, incompatible, Ke, Me):
    """Q4 plane-stress stiffness and consistent mass (2x2 Gauss) for every element.

    xy (ne, 4, 2) m; D (3, 3) Pa; thickness m; rho kg/m^3; incompatible 0/1 selects Wilson-Taylor
    incompatible modes (condensed statically, Taylor's centre-Jacobian correction so that the
    patch test holds); Ke, Me (ne, 8, 8) outputs.
    """
    ne = xy.shape[0]
    Kcc = np.zeros((ne, 8, 8))
    Kci = np.zeros((ne, 8, 4))
    Kii = np.zeros((ne, 4, 4))
    M = np.zeros((ne, 8, 8))
    x, y = xy[:, :, 0], xy[:, :, 1]
    # centre Jacobian (xi = eta = 0) for the incompatible modes
    j0 = np.stack([np.stack([_XI @ x.T / 4, _XI @ y.T / 4], -1),
                   np.stack([_ETA @ x.T / 4, _ETA @ y.T / 4], -1)], 1)  # (ne, 2, 2)
    det0 = j0[:, 0, 0] * j0[:, 1, 1] - j0[:, 0, 1] * j0[:, 1, 0]
    for xi, eta in _GAUSS:
        N = 0.25 * (1 + xi * _XI) * (1 + eta * _ETA)
        dxi = 0.25 * _XI * (1 + eta * _ETA)
        deta = 0.25 * _ETA * (1 + xi * _XI)
        J = np.empty((ne, 2, 2))
        J[:, 0, 0] = x @ dxi
        J[:, 0, 1] = y @ dxi
        J[:, 1, 0] = x @ deta
        J[:, 1, 1] = y @ deta
        det = J[:, 0, 0] * J[:, 1, 1] - J[:, 0, 1] * J[:, 1, 0]
        inv00, inv01 = J[:, 1, 1] / det, -J[:, 0, 1] / det
        inv10, inv11 = -J[:, 1, 0] / det, J[:, 0, 0] / det
        dndx = inv00[:, None] * dxi + inv01[:, None] * deta
        dndy = inv10[:, None] * dxi + inv11[:, None] * deta
        B = _q4_b(dndx, dndy)
        DB = np.einsum("ij,ejk->eik", D, B)
        w = det * thickness
        Kcc += np.einsum("eji,ejk,e->eik", B, DB, w)
        NN = np.outer(N, N)
        M[:, 0::2, 0::2] += rho * w[:, None, None] * NN
        M[:, 1::2, 1::2] += rho * w[:, None, None] * NN
        if incompatible:
            dp_xi = np.array([-2 * xi, 0.0])  # P1 = 1 - xi^2, P2 = 1 - eta^2
            dp_eta = np.array([0.0, -2 * eta])
            i00, i01 = j0[:, 1, 1] / det0, -j0[:, 0, 1] / det0
            i10, i11 = -j0[:, 1, 0] / det0, j0[:, 0, 0] / det0
            scale = (det0 / det)[:, None]
            pdx = (i00[:, None] * dp_xi + i01[:, None] * dp_eta) * scale
            pdy = (i10[:, None] * dp_xi + i11[:, None] * dp_eta) * scale
            Bi = np.zeros((ne, 3, 4))
            Bi[:, 0, 0::2] = pdx
            Bi[:, 1, 1::2] = pdy
            Bi[:, 2, 0::2] = pdy
            Bi[:, 2, 1::2] = pdx
            Kci += np.einsum("eji,ejk,e->eik", B, np.einsum("ij,ejk->eik", D, Bi), w)
            Kii += np.einsum("eji,ejk,e->eik", Bi, np.einsum("ij,ejk->eik", D, Bi), w)
    if incompatible:
        Kcc -= np.einsum("eij,ejk->eik", Kci, np.linalg.solve(Kii, np.swapaxes(Kci, 1, 2)))
    Ke[...] = Kcc
    Me[...] = M


def t3_matrices(xy, D, thickness, rho, Ke, Me):
    """Constant-strain triangle: stiffness and consistent mass, Ke/Me (ne, 6, 6)."""
    x, y = xy[:, :, 0], xy[:, :, 1]
    area = 0.5 * ((x[:, 1] - x[:, 0]) * (y[:, 2] - y[:, 0]) - (x[:, 2] - x[:, 0]) * (y[:, 1] - y[:, 0]))
    b = np.stack([y[:, 1] - y[:, 2], y[:, 2] - y[:, 0], y[:, 0] - y[:, 1]], 1) / (2 * area[:, None])
    c = np.stack([x[:, 2] - x[:, 1], x[:, 0] - x[:, 2], x[:, 1] - x[:, 0]], 1) / (2 * area[:, None])
    ne = xy.shape[0]
    B = np.zeros((ne, 3, 6))
    B[:, 0, 0::2] = b
    B[:, 1, 1::2] = c
    B[:, 2, 0::2] = c
    B[:, 2, 1::2] = b
    Ke[...] = np.einsum("eji,jk,ekl,e->eil", B, D, B, area * thickness)
    m = (np.ones((3, 3)) + np.eye(3)) / 12.0
    Me[...] = 0.0
    Me[:, 0::2, 0::2] = rho * thickness * area[:, None, None] * m
    Me[:, 1::2, 1::2] = rho * thickness * area[:, None, None] * m


def frame2d_matrices(xy, EA, EI, rhoA, Ke, Me):
    """2D Euler-Bernoulli frame (u, v, theta per node): Hermite bending + linear axial.

    xy (ne, 2, 2) m; EA (ne,) N; EI (ne,) N m^2; rhoA (ne,) kg/m; Ke, Me (ne, 6, 6) in global axes.
    """
    d = xy[:, 1] - xy[:, 0]
    L = np.hypot(d[:, 0], d[:, 1])
    c, s = d[:, 0] / L, d[:, 1] / L
    ne = xy.shape[0]
    k = np.zeros((ne, 6, 6))
    a = EA / L
    k[:, 0, 0] = k[:, 3, 3] = a
    k[:, 0, 3] = k[:, 3, 0] = -a
    b = EI / L**3
    idx = [1, 2, 4, 5]
    kb = np.array([[12, 6, -12, 6], [6, 4, -6, 2], [-12, -6, 12, -6], [6, 2, -6, 4]], float)
    pw = np.array([[0, 1, 0, 1], [1, 2, 1, 2], [0, 1, 0, 1], [1, 2, 1, 2]])
    for i in range(4):
        for j in range(4):
            k[:, idx[i], idx[j]] = b * kb[i, j] * L ** pw[i, j]
    m = np.zeros((ne, 6, 6))
    ma = rhoA * L / 6.0
    m[:, 0, 0] = m[:, 3, 3] = 2 * ma
    m[:, 0, 3] = m[:, 3, 0] = ma
    mb = np.array([[156, 22, 54, -13], [22, 4, 13, -3], [54, 13, 156, -22], [-13, -3, -22, 4]], float)
    for i in range(4):
        for j in range(4):
            m[:, idx[i], idx[j]] = rhoA * L / 420.0 * mb[i, j] * L ** pw[i, j]
    T = np.zeros((ne, 6, 6))
    for o in (0, 3):
        T[:, o, o] = c
        T[:, o, o + 1] = s
        T[:, o + 1, o] = -s
        T[:, o + 1, o + 1] = c
        T[:, o + 2, o + 2] = 1.0
    Ke[...] = np.einsum("eji,ejk,ekl->eil", T, k, T)
    Me[...] = np.einsum("eji,ejk,ekl->eil", T, m, T)


def csr_scatter(conn, node_ptr, node_idx, ndpn, Ke, Me, Kdata, Mdata):
    """Add element matrices into the data arrays of two CSR matrices with the node-block pattern.

    conn (ne, k) int64; node graph ``node_ptr`` (n + 1,), sorted ``node_idx`` int64; Ke, Me
    (ne, k ndpn, k ndpn); Kdata, Mdata (ndpn^2 node_ptr[-1],) accumulated into. DOF row (n, i)
    starts at ndpn^2 node_ptr[n] + i ndpn deg(n) and lists, for each neighbour m of n in order,
    the DOFs ndpn m .. ndpn m + ndpn - 1 (see fe.pyx).
    """
    ne, k = conn.shape
    n = node_ptr.shape[0] - 1
    r = np.repeat(conn, k, axis=1).ravel()  # node pairs (a, b), a-major
    c = np.tile(conn, (1, k)).ravel()
    keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(node_ptr)) * n + node_idx  # sorted
    q = r * n + c
    hit = np.minimum(np.searchsorted(keys, q), keys.size - 1)
    found = keys[hit] == q
    lo = node_ptr[r]
    p = hit - lo
    deg = node_ptr[r + 1] - lo
    ii = np.arange(ndpn)[None, :, None]
    jj = np.arange(ndpn)[None, None, :]
    pos = (ndpn * ndpn * lo)[:, None, None] + ii * (ndpn * deg)[:, None, None] + (p * ndpn)[:, None, None] + jj
    pos = pos[found].ravel()
    for A, data in ((Ke, Kdata), (Me, Mdata)):
        vals = A.reshape(ne, k, ndpn, k, ndpn).transpose(0, 1, 3, 2, 4).reshape(ne * k * k, ndpn, ndpn)
        data += np.bincount(pos, weights=vals[found].ravel(), minlength=data.size)


def dof_pattern(node_ptr, node_idx, ndpn, indptr, indices):
    """Expand the node graph to the CSR pattern of the node-major DOF matrix (see csr_scatter).

    indptr (n ndpn + 1,) and indices (ndpn^2 node_ptr[-1],) int64 are outputs.
    """
    deg = np.diff(node_ptr)
    nnz = indices.shape[0]
    indptr[:-1] = ((ndpn * ndpn * node_ptr[:-1])[:, None]
                   + np.arange(ndpn)[None, :] * (ndpn * deg)[:, None]).ravel()
    indptr[-1] = nnz
    cols = (ndpn * node_idx[:, None] + np.arange(ndpn)[None, :]).ravel()  # one copy per node row
    seg_start = np.repeat(ndpn * node_ptr[:-1], ndpn)  # where each DOF row's columns start in cols
    seg_len = np.repeat(ndpn * deg, ndpn)
    src = np.arange(nnz, dtype=np.int64) + np.repeat(seg_start - indptr[:-1], seg_len)
    indices[:] = cols[src]


def node_elements(conn, ne_ptr, cursor, ne_idx):
    """Elements around each node (CSR, see fe.pyx): ne_idx[ne_ptr[v]:ne_ptr[v+1]] lists the
    elements holding node v in increasing order; cursor (n,) is a workspace (unused here)."""
    k = conn.shape[1]
    ne_idx[:] = np.argsort(conn.ravel(), kind="stable") // k


def node_graph_fill(conn, ne_ptr, ne_idx, marker, ptr, idx):
    """Node adjacency (CSR, sorted rows) of the elements; writes ptr (n + 1,) and idx[:ptr[n]]
    (see fe.pyx). ne_ptr, ne_idx and marker are not needed by this vectorised version."""
    n = ptr.shape[0] - 1
    k = conn.shape[1]
    r = np.repeat(conn, k, axis=1).ravel()
    c = np.tile(conn, (1, k)).ravel()
    key = np.unique(r * n + c)
    ptr[:] = np.searchsorted(key // n, np.arange(n + 1))
    idx[: key.size] = key % n
