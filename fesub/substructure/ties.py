"""Geometry and algebra of tied interfaces: node pairing, node-to-surface weights, null spaces.

Four pieces, each independent of any model class:

* :func:`match_nodes` pairs two node sets by coordinates (matching meshes);
* :func:`surface_weights` places each slave node on the nearest edge of a master surface and
  returns the values of the edge's shape functions there (non-matching meshes; 2-node edges of
  Q4/T3 cells, 3-node edges of Q8/Q9/T6 cells);
* :func:`mortar_rows` couples a slave surface to a master surface weakly (mortar integrals of
  the slave edge shape functions against both sides);
* :func:`constraint_null_space` turns constraint rows ``B u = 0`` into a sparse basis ``L`` of
  their null space (``u = L v``, ``B L = 0``) by eliminating one coordinate per row, and refuses
  redundant rows.

Units: coordinates and tolerances in m.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from ..errors import ModelError, ParameterError

__all__ = ["match_nodes", "surface_weights", "mortar_rows", "constraint_null_space"]


def _short(nodes, n=12) -> str:
    nodes = [int(v) for v in nodes]
    return str(nodes[:n])[:-1] + (", ...]" if len(nodes) > n else "]")


def match_nodes(points_a, points_b, *, tol: float, what: str = "interface", ids=None, sides=("a", "b")):
    """Pair every point of ``points_a`` with the point of ``points_b`` at the same place.

    Parameters
    ----------
    points_a, points_b : (n, 2) arrays
        Node coordinates (m) of the two sides, in any order.
    tol : float
        Largest distance (m) between paired nodes.
    what : str
        Name of the interface, used in messages.
    ids : tuple of two int arrays, optional
        Node numbers of the rows of each side, listed in messages (default: the rows).
    sides : tuple of two str
        Names of the two sides, used in messages.

    Returns
    -------
    (n,) int array
        ``pair[i]``: row of ``points_b`` paired with row ``i`` of ``points_a``.

    Raises
    ------
    ModelError
        If the two sides differ in size, a node has no partner within ``tol`` (the unmatched
        rows of both sides are listed) or two nodes of one side share a partner.
    """
    a, b = np.asarray(points_a, float), np.asarray(points_b, float)
    dist, pair = cKDTree(b).query(a, k=1, distance_upper_bound=tol)
    found = np.isfinite(dist)
    used = np.zeros(b.shape[0], bool)
    used[pair[found]] = True
    ia, ib = ids if ids is not None else (np.arange(a.shape[0]), np.arange(b.shape[0]))
    sa, sb = sides
    if not found.all() or not used.all() or a.shape[0] != b.shape[0]:
        raise ModelError(f"{what}: nodes do not match within {tol:.3g} m ({sa} has {a.shape[0]} nodes, "
                         f"{sb} {b.shape[0]}); unmatched nodes of {sa} {_short(ia[~found])}, "
                         f"of {sb} {_short(ib[~used])}")
    if np.unique(pair).size != pair.size:
        raise ModelError(f"{what}: several nodes of {sa} match one node of {sb} within {tol:.3g} m; "
                         f"use a smaller tolerance")
    return pair


def _edge_shapes(xi, width):
    """Shape functions (k, width) and derivatives of a 2- or 3-node edge (start, end[, mid]) at xi in [-1, 1]."""
    if width == 2:
        return np.stack([0.5 * (1 - xi), 0.5 * (1 + xi)], -1), np.stack([-0.5 + 0 * xi, 0.5 + 0 * xi], -1), 0 * xi
    N = np.stack([0.5 * xi * (xi - 1), 0.5 * xi * (xi + 1), 1 - xi * xi], -1)
    dN = np.stack([xi - 0.5, xi + 0.5, -2 * xi], -1)
    return N, dN, np.array([1.0, 1.0, -2.0])


def _nearest_on_edges(p, xe):
    """Closest point of each edge (m, w, 2) to each point p (n, 2): (gap (n, m), xi (n, m))."""
    w = xe.shape[1]
    x1, x2 = xe[None, :, 0], xe[None, :, 1]
    d = x2 - x1
    # chord projection, then Newton on (x(xi) - p) . x'(xi) = 0 for curved (3-node) edges
    xi = 2 * np.clip(np.einsum("nmi,nmi->nm", p[:, None] - x1, d) / np.einsum("nmi,nmi->nm", d, d), 0, 1) - 1
    for _ in range(8 if w == 3 else 0):
        N, dN, d2 = _edge_shapes(xi, w)
        r = np.einsum("nmk,mki->nmi", N, xe) - p[:, None]
        t = np.einsum("nmk,mki->nmi", dN, xe)
        c = np.einsum("k,mki->mi", d2, xe)[None]
        g, h = np.einsum("nmi,nmi->nm", r, t), np.einsum("nmi,nmi->nm", t, t) + np.einsum("nmi,nmi->nm", r, c)
        xi = np.clip(xi - g / np.where(h > 0, h, np.inf), -1.0, 1.0)
    N = _edge_shapes(xi, w)[0]
    gap = np.linalg.norm(np.einsum("nmk,mki->nmi", N, xe) - p[:, None], axis=2)
    return gap, xi


def surface_weights(points, X, faces, *, tol: float, what: str = "interface"):
    """Nearest edge of a master surface under each slave node, and the edge's shape functions there.

    The trace of a plane element on one of its edges is interpolated by the edge's own nodes:
    linearly on the 2-node edges of Q4/T3 cells, quadratically on the 3-node edges (start, end,
    mid-node) of Q8/Q9/T6 cells. Each slave node is projected on the closest edge (curved
    quadratic edges by Newton's method on the edge parameter) and tied to the interpolated master
    displacement there, ``u_slave = sum_k N_k(xi) u_k``.

    Parameters
    ----------
    points : (n, 2) array
        Slave node coordinates (m).
    X : (N, 2) array
        Master node coordinates (m).
    faces : dict
        Edge width (2 or 3) -> (m, width) node indices of the master edges (start, end[, mid]),
        as :func:`fesub.fe.loads.boundary_faces` gives them.
    tol : float
        Largest distance (m) between a slave node and the master surface.
    what : str
        Name of the interface, used in messages.

    Returns
    -------
    nodes : (n, 3) int array
        Master nodes that hold each slave node (-1 in unused places).
    weights : (n, 3) float array
        Their shape-function values (-) at the projection; each row sums to 1.

    Raises
    ------
    ModelError
        If a slave node lies farther than ``tol`` from every master edge (they are listed).
    """
    p = np.asarray(points, float)
    n = p.shape[0]
    best = np.full(n, np.inf)
    nodes, weights = np.full((n, 3), -1, np.int64), np.zeros((n, 3))
    for width, f in faces.items():
        if len(f) == 0:
            continue
        gap, xi = _nearest_on_edges(p, X[f])
        e = np.argmin(gap, axis=1)
        g = gap[np.arange(n), e]
        take = g < best
        best[take] = g[take]
        nodes[take], weights[take] = -1, 0.0
        nodes[take, :width] = f[e[take]]
        weights[take, :width] = _edge_shapes(xi[np.arange(n), e][take], width)[0]
    far = best > tol
    if far.any():
        raise ModelError(f"{what}: slave rows {_short(np.flatnonzero(far))} lie farther than {tol:.3g} m from "
                         f"the master surface (largest distance {best.max():.3g} m)")
    return nodes, weights


def _faces_points(faces):
    """(edges (m, 3) padded with -1, widths (m,)) of a dict width -> (m, width) node array."""
    rows = [np.column_stack([f, np.full((len(f), 3 - w), -1)]) for w, f in faces.items() if len(f)]
    widths = [np.full(len(f), w) for w, f in faces.items() if len(f)]
    return (np.vstack(rows), np.concatenate(widths)) if rows else (np.zeros((0, 3), np.int64), np.zeros(0, int))


def mortar_rows(Xs, faces_s, Xm, faces_m, *, tol: float, what: str = "interface", n_gauss: int = 4):
    """Mortar coupling of a slave surface to a master surface: ``D u_s - M u_m = 0``.

    The displacement jump is held to zero weakly, against the slave surface's own shape
    functions ``N_i`` (standard Lagrange multipliers): ``D_ij = int N_i N_j ds`` over the slave
    surface and ``M_ik = int N_i (N_k^m o P) ds`` with ``P`` the closest-point projection onto the
    master surface. Each slave edge is cut at the projections of the master nodes and integrated
    by Gauss-Legendre on every piece, where both sides are polynomial; the rows then hold linear
    fields exactly on both sides, which the node-to-surface rows do only at the nodes.

    Parameters
    ----------
    Xs, Xm : (N, 2) arrays
        Node coordinates (m) of the slave and master substructures.
    faces_s, faces_m : dict
        Edge width (2 or 3) -> (m, width) node indices (start, end[, mid]) of the slave and
        master surface edges.
    tol : float
        Largest distance (m) between the slave surface and the master surface.
    what : str
        Name of the interface, used in messages.
    n_gauss : int
        Gauss points per piece of slave edge (-).

    Returns
    -------
    nodes : (k,) int array
        Slave nodes carrying a multiplier (one row per node and component).
    D : (k, N_s) CSR
        Slave-slave coupling (m) over the slave substructure's nodes.
    M : (k, N_m) CSR
        Slave-master coupling (m) over the master substructure's nodes.
    """
    es, ws = _faces_points(faces_s)
    nodes = np.unique(es[es >= 0])
    row = np.full(Xs.shape[0], -1, np.int64)
    row[nodes] = np.arange(nodes.size)
    gx, gw = np.polynomial.legendre.leggauss(n_gauss)
    em = _faces_points(faces_m)[0]
    master_nodes = np.unique(em[em >= 0])
    Ds, Ms = [], []
    for e, w in zip(es, ws):
        e = e[:w]
        xe = Xs[e][None]
        # the master nodes' projections cut the slave edge into pieces where both sides are smooth
        _, xi = _nearest_on_edges(Xm[master_nodes], xe)
        cuts = np.unique(np.concatenate([[-1.0, 1.0], xi[:, 0]]))
        a, b = cuts[:-1, None], cuts[1:, None]
        keep = (b - a)[:, 0] > 1e-12
        xg = (0.5 * (a + b) + 0.5 * (b - a) * gx[None])[keep].ravel()
        wg = (0.5 * (b - a) * gw[None])[keep].ravel()
        N, dN, _ = _edge_shapes(xg, w)
        x = N @ Xs[e]
        ds = np.linalg.norm(dN @ Xs[e], axis=1) * wg
        mn, mw = surface_weights(x, Xm, faces_m, tol=tol, what=what)
        r = row[e]
        Ds.append((np.repeat(r, w), np.tile(e, w), ((N * ds[:, None]).T @ N).ravel()))
        # N_i(x_g) ds_g N_k^m(P x_g) for slave node i, Gauss point g, master slot k
        Ms.append((np.repeat(r, 3 * len(xg)), np.tile(mn.ravel(), w),
                   np.einsum("ig,gk->igk", (N * ds[:, None]).T, mw).ravel()))
    rD, cD, vD = (np.concatenate(v) for v in zip(*Ds))
    rM, cM, vM = (np.concatenate(v) for v in zip(*Ms))
    ok = cM >= 0
    D = sp.csr_matrix((vD, (rD, cD)), shape=(nodes.size, Xs.shape[0]))
    M = sp.csr_matrix((vM[ok], (rM[ok], cM[ok])), shape=(nodes.size, Xm.shape[0]))
    D.sum_duplicates()
    M.sum_duplicates()
    return nodes, D, M


def constraint_null_space(B, *, prefer=None, rtol: float = 1e-10, labels=None, redundant: str = "error"):
    """Sparse basis of the null space of constraint rows, one coordinate eliminated per row.

    Row by row, the coordinates already eliminated are replaced by their expressions, the
    largest remaining coefficient (or the ``prefer``-red coordinate when it is at least half as
    large) is chosen as the row's dependent coordinate and expressed through the others. Signed
    Boolean rows (matching nodes) give a Boolean ``L``: every coordinate of a tied group equals
    the group's one independent coordinate.

    Parameters
    ----------
    B : (m, n) sparse or dense
        Constraint rows ``B u = 0`` (coefficients dimensionless).
    prefer : (m,) int array, optional
        Coordinate each row should eliminate (the slave side), if the pivot allows.
    rtol : float
        A row whose coefficients, after elimination, all fall below ``rtol`` times its largest
        coefficient is redundant (-).
    labels : sequence of str, optional
        Description of each row, for the message of a redundant one.
    redundant : {"error", "drop"}
        What to do with a row that depends on the rows before it: refuse it, or leave it out
        (the rows kept are returned).

    Returns
    -------
    L : (n, n - r) CSR matrix
        Basis of the null space (r independent rows): ``B @ L = 0``, full column rank.
    independent : (n - r,) int array
        The coordinates kept: column j of ``L`` is 1 at ``independent[j]``.
    rows : (r,) int array
        The rows used (all of them unless ``redundant="drop"`` left some out).

    Raises
    ------
    ModelError
        If a row depends on the others and ``redundant="error"`` (redundant ties make the
        constraints rank-deficient).
    """
    if redundant not in ("error", "drop"):
        raise ParameterError(f"redundant must be 'error' or 'drop', got {redundant!r}")
    B = sp.csr_matrix(B)
    m, n = B.shape
    expr: dict[int, dict[int, float]] = {}   # eliminated coordinate -> {independent: weight}
    users: dict[int, set] = {}               # independent coordinate -> eliminated ones using it
    used = []
    for r in range(m):
        cols = B.indices[B.indptr[r]:B.indptr[r + 1]]
        vals = B.data[B.indptr[r]:B.indptr[r + 1]]
        scale = np.abs(vals).max(initial=0.0)
        row: dict[int, float] = {}
        for c, v in zip(cols.tolist(), vals.tolist()):
            for j, w in (expr[c].items() if c in expr else ((c, 1.0),)):
                row[j] = row.get(j, 0.0) + v * w
        row = {j: v for j, v in row.items() if abs(v) > rtol * scale}
        if not row:
            if redundant == "drop":
                continue
            name = labels[r] if labels is not None else f"row {r}"
            raise ModelError(f"tie constraints are rank-deficient: {name} repeats ties already made "
                             f"(a redundant tie); remove it, or pass redundant='drop'")
        used.append(r)
        big = max(abs(v) for v in row.values())
        p = None if prefer is None else int(prefer[r])
        if p not in row or abs(row[p]) < 0.5 * big:
            p = max(row, key=lambda j: (abs(row[j]), j))
        cp = row.pop(p)
        e = {j: -v / cp for j, v in row.items()}
        for s in users.pop(p, ()):
            wp = expr[s].pop(p)
            for j, w in e.items():
                expr[s][j] = expr[s].get(j, 0.0) + wp * w
                users.setdefault(j, set()).add(s)
        expr[p] = e
        for j in e:
            users.setdefault(j, set()).add(p)
    independent = np.setdiff1d(np.arange(n), np.fromiter(expr, np.int64, len(expr)))
    col = np.full(n, -1, np.int64)
    col[independent] = np.arange(independent.size)
    ri, ci, vi = [independent], [np.arange(independent.size)], [np.ones(independent.size)]
    for s, e in expr.items():
        if e:
            ri.append(np.full(len(e), s))
            ci.append(col[np.fromiter(e, np.int64, len(e))])
            vi.append(np.fromiter(e.values(), float, len(e)))
    L = sp.csr_matrix((np.concatenate(vi), (np.concatenate(ri), np.concatenate(ci))),
                      shape=(n, independent.size))
    L.eliminate_zeros()
    return L, independent, np.array(used, np.int64)
