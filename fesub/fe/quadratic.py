"""Quadratic plane elements: 8-node serendipity quad (Q8), 9-node Lagrange quad (Q9) and 6-node
triangle (T6), isoparametric, vectorised over all elements; and :func:`quadratic_mesh`, which adds
the mid-edge (and centre) nodes to a linear mesh.

Node ordering is meshio's (that of VTK, Gmsh and Abaqus for these cells), so meshes read by
:func:`fesub.fe.mesh.read` assemble directly:

* ``quad8``: corners 0-3 anticlockwise at (xi, eta) = (-1, -1), (1, -1), (1, 1), (-1, 1), then the
  mid-edge nodes 4 (edge 0-1), 5 (1-2), 6 (2-3), 7 (3-0);
* ``quad9``: as ``quad8``, then the centre node 8;
* ``triangle6``: corners 0-2 anticlockwise at (xi, eta) = (0, 0), (1, 0), (0, 1), then the mid-edge
  nodes 3 (edge 0-1), 4 (1-2), 5 (2-0).

Gauss rules: Q8 and Q9 use 3 x 3 Gauss-Legendre points for stiffness and consistent mass (exact
for both on parallelograms; the reduced 2 x 2 rule would leave zero-energy modes); T6 uses the
6-point rule of degree 4 (Strang and Fix), exact for stiffness and mass of straight-sided
triangles. DOF order per element: (u, v) node by node, as for Q4 and T3.
"""

from __future__ import annotations

import numpy as np

from ..errors import MeshError
from .elements import hrz_lump

__all__ = ["q8_matrices", "q9_matrices", "t6_matrices", "quadratic_mesh", "shape_functions",
           "gauss_rule", "CELL_EDGES", "CORNERS"]

#: number of corner nodes (the first ones in meshio order) of every plane cell type
CORNERS = {"quad": 4, "quad8": 4, "quad9": 4, "triangle": 3, "triangle6": 3}

#: element edges as (start corner, end corner[, mid node]) local indices, anticlockwise
CELL_EDGES = {
    "triangle": np.array([[0, 1], [1, 2], [2, 0]]),
    "quad": np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
    "triangle6": np.array([[0, 1, 3], [1, 2, 4], [2, 0, 5]]),
    "quad8": np.array([[0, 1, 4], [1, 2, 5], [2, 3, 6], [3, 0, 7]]),
    "quad9": np.array([[0, 1, 4], [1, 2, 5], [2, 3, 6], [3, 0, 7]]),
}

_QXI = np.array([-1.0, 1.0, 1.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0])
_QETA = np.array([-1.0, -1.0, 1.0, 1.0, -1.0, 0.0, 1.0, 0.0, 0.0])


def _lagrange3(s):
    """Quadratic Lagrange polynomials on nodes (-1, 0, 1) and their derivatives, at points s."""
    s = np.asarray(s, dtype=float)
    val = np.stack([0.5 * s * (s - 1.0), 1.0 - s * s, 0.5 * s * (s + 1.0)], -1)
    der = np.stack([s - 0.5, -2.0 * s, s + 0.5], -1)
    return val, der


def shape_functions(kind: str, pts):
    """Shape functions and their reference derivatives at reference points.

    Parameters
    ----------
    kind : str
        ``"quad8"``, ``"quad9"`` or ``"triangle6"``.
    pts : (g, 2) array
        Reference coordinates (xi, eta) (-).

    Returns
    -------
    N : (g, k) array
        Shape functions (-), nodes in meshio order.
    dN : (g, 2, k) array
        Derivatives with respect to xi (row 0) and eta (row 1) (-).
    """
    pts = np.atleast_2d(np.asarray(pts, dtype=float))
    xi, eta = pts[:, 0:1], pts[:, 1:2]
    if kind == "quad9":
        idx = np.rint(_QXI).astype(int) + 1, np.rint(_QETA).astype(int) + 1  # node -> 1D node index
        lx, dlx = _lagrange3(xi[:, 0])
        ly, dly = _lagrange3(eta[:, 0])
        N = lx[:, idx[0]] * ly[:, idx[1]]
        dN = np.stack([dlx[:, idx[0]] * ly[:, idx[1]], lx[:, idx[0]] * dly[:, idx[1]]], 1)
        return N, dN
    if kind == "quad8":
        a, b = _QXI[:8], _QETA[:8]
        N = np.empty((len(pts), 8))
        dN = np.empty((len(pts), 2, 8))
        c = slice(0, 4)
        N[:, c] = 0.25 * (1 + xi * a[c]) * (1 + eta * b[c]) * (xi * a[c] + eta * b[c] - 1)
        dN[:, 0, c] = 0.25 * a[c] * (1 + eta * b[c]) * (2 * xi * a[c] + eta * b[c])
        dN[:, 1, c] = 0.25 * b[c] * (1 + xi * a[c]) * (xi * a[c] + 2 * eta * b[c])
        m = np.array([4, 6])  # mid-nodes on eta = -1, 1 (xi = 0)
        N[:, m] = 0.5 * (1 - xi * xi) * (1 + eta * b[m])
        dN[:, 0, m] = -xi * (1 + eta * b[m])
        dN[:, 1, m] = 0.5 * (1 - xi * xi) * b[m]
        m = np.array([5, 7])  # mid-nodes on xi = 1, -1 (eta = 0)
        N[:, m] = 0.5 * (1 + xi * a[m]) * (1 - eta * eta)
        dN[:, 0, m] = 0.5 * a[m] * (1 - eta * eta)
        dN[:, 1, m] = -eta * (1 + xi * a[m])
        return N, dN
    if kind == "triangle6":
        L = np.column_stack([1.0 - xi[:, 0] - eta[:, 0], xi[:, 0], eta[:, 0]])  # area coordinates
        dL = np.array([[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])  # dL_i / d(xi, eta)
        pairs = np.array([[0, 1], [1, 2], [2, 0]])
        N = np.column_stack([L * (2 * L - 1), 4 * L[:, pairs[:, 0]] * L[:, pairs[:, 1]]])
        dcorner = (4 * L - 1)[:, None, :] * dL[None]
        dmid = 4 * (dL[None, :, pairs[:, 0]] * L[:, None, pairs[:, 1]]
                    + L[:, None, pairs[:, 0]] * dL[None, :, pairs[:, 1]])
        return N, np.concatenate([dcorner, dmid], axis=2)
    raise MeshError(f"shape functions: unknown quadratic cell type {kind!r}; expected quad8, quad9 "
                    "or triangle6")


def _triangle_rule4():
    """6-point rule of degree 4 on the reference triangle (Strang and Fix), closed form."""
    s10, r = np.sqrt(10.0), np.sqrt(38.0 - 44.0 * np.sqrt(0.4))
    q = np.sqrt(213125.0 - 53320.0 * s10)
    a, b = (8.0 - s10 + r) / 18.0, (8.0 - s10 - r) / 18.0
    wa, wb = (620.0 + q) / 3720.0, (620.0 - q) / 3720.0
    pts = np.array([[a, a], [1 - 2 * a, a], [a, 1 - 2 * a], [b, b], [1 - 2 * b, b], [b, 1 - 2 * b]])
    return pts, 0.5 * np.array([wa, wa, wa, wb, wb, wb])  # weights sum to the area 1/2


def gauss_rule(kind: str):
    """Quadrature points (g, 2) and weights (g,) (-) used for the element ``kind``."""
    if kind in ("quad8", "quad9"):
        s, w = np.polynomial.legendre.leggauss(3)
        X, Y = np.meshgrid(s, s, indexing="ij")
        return np.column_stack([X.ravel(), Y.ravel()]), np.outer(w, w).ravel()
    if kind == "triangle6":
        return _triangle_rule4()
    raise MeshError(f"no quadrature rule for cell type {kind!r}")


def _jacobians(kind, xy, dN):
    """Jacobians (ne, g, 2, 2) [d(x, y)/d(xi, eta)] and determinants, checked positive."""
    J = dN[None] @ xy[:, None]  # (1, g, 2, k) @ (ne, 1, k, 2)
    det = J[..., 0, 0] * J[..., 1, 1] - J[..., 0, 1] * J[..., 1, 0]
    if np.any(det <= 0):
        e = int(np.argmin(det.min(axis=1)))
        raise MeshError(f"{kind} element {e} is inverted or too distorted (Jacobian determinant "
                        f"{det[e].min():.3e} m^2 <= 0); nodes must run anticlockwise, mid-edge nodes "
                        "near the middle of their edge")
    return J, det


def _matrices(kind: str, xy, material, lumped: bool):
    k = {"quad8": 8, "quad9": 9, "triangle6": 6}[kind]
    xy = np.asarray(xy, dtype=float)
    if xy.ndim != 3 or xy.shape[1:] != (k, 2):
        raise MeshError(f"element coordinates must have shape (ne, {k}, 2), got {xy.shape}")
    if not np.all(np.isfinite(xy)):
        raise MeshError("element coordinates contain NaN or inf")
    pts, w = gauss_rule(kind)
    N, dN = shape_functions(kind, pts)
    node_ref = {"triangle6": [[0, 0], [1, 0], [0, 1], [0.5, 0], [0.5, 0.5], [0, 0.5]]}.get(
        kind, np.column_stack([_QXI[:k], _QETA[:k]]))
    _jacobians(kind, xy, shape_functions(kind, node_ref)[1])  # valid map at the nodes too
    J, det = _jacobians(kind, xy, dN)
    inv = np.stack([np.stack([J[..., 1, 1], -J[..., 0, 1]], -1),
                    np.stack([-J[..., 1, 0], J[..., 0, 0]], -1)], -2) / det[..., None, None]
    dNx = inv @ dN[None]  # (ne, g, 2, k): d N / d(x, y)
    wdet = det * w[None, :] * float(material.thickness)  # (ne, g) m^3 per unit reference area
    # B' D B by blocks: with B_u = (Nx, 0, Ny) and B_v = (0, Ny, Nx) (rows exx, eyy, gxy), each
    # block is a sum of D_ij times the products P_ab = sum_g wdet N_a N_b' (batched matrix products)
    Nx, Ny = dNx[:, :, 0], dNx[:, :, 1]  # (ne, g, k)
    wx, wy = (Nx * wdet[..., None]).transpose(0, 2, 1), (Ny * wdet[..., None]).transpose(0, 2, 1)
    Pxx, Pxy, Pyy = wx @ Nx, wx @ Ny, wy @ Ny
    Pyx = Pxy.transpose(0, 2, 1)
    d = np.asarray(material.D, dtype=float)
    ne = len(det)
    Ke = np.empty((ne, 2 * k, 2 * k))
    Ke[:, 0::2, 0::2] = d[0, 0] * Pxx + d[0, 2] * Pxy + d[2, 0] * Pyx + d[2, 2] * Pyy
    Ke[:, 0::2, 1::2] = d[0, 1] * Pxy + d[0, 2] * Pxx + d[2, 1] * Pyy + d[2, 2] * Pyx
    Ke[:, 1::2, 0::2] = Ke[:, 0::2, 1::2].transpose(0, 2, 1)
    Ke[:, 1::2, 1::2] = d[1, 1] * Pyy + d[1, 2] * Pyx + d[2, 1] * Pxy + d[2, 2] * Pxx
    Ms = (N.T[None] * (wdet * float(material.rho))[:, None, :]) @ N  # (ne, k, k)
    Me = np.zeros((ne, 2 * k, 2 * k))
    Me[:, 0::2, 0::2] = Ms
    Me[:, 1::2, 1::2] = Ms
    return Ke, (hrz_lump(Me, 2) if lumped else Me)


def _doc(name, k, rule):
    return f"""Stiffness and mass of plane {name} elements ({rule}).

    Parameters
    ----------
    xy : (ne, {k}, 2) array
        Node coordinates (m), meshio order (corners anticlockwise first, see the module
        docstring).
    material : PlaneStress or PlaneStrain
        Elasticity matrix ``D`` (Pa), density ``rho`` (kg/m^3) and ``thickness`` (m).
    lumped : bool
        Diagonal (HRZ) mass instead of the consistent one.

    Returns
    -------
    Ke, Me : (ne, {2 * k}, {2 * k}) arrays
        Stiffness (N/m) and mass (kg), DOFs (u, v) node by node.
    """


def q8_matrices(xy, material, *, lumped: bool = False):
    return _matrices("quad8", xy, material, lumped)


def q9_matrices(xy, material, *, lumped: bool = False):
    return _matrices("quad9", xy, material, lumped)


def t6_matrices(xy, material, *, lumped: bool = False):
    return _matrices("triangle6", xy, material, lumped)


q8_matrices.__doc__ = _doc("8-node serendipity quadrilateral (Q8)", 8, "3 x 3 Gauss")
q9_matrices.__doc__ = _doc("9-node Lagrange quadrilateral (Q9)", 9, "3 x 3 Gauss")
t6_matrices.__doc__ = _doc("6-node triangle (T6)", 6, "6-point rule of degree 4")


def quadratic_mesh(mesh, *, quad: str = "quad8"):
    """The quadratic version of a Q4/T3 mesh: a node at the middle of every edge (and at the
    centre of every quad for ``quad9``).

    Mid-edge nodes are shared between neighbouring cells; quads become ``quad`` (``"quad8"`` or
    ``"quad9"``), triangles ``triangle6``. Edge sets keep their corner pairs (the edge loads of
    :mod:`fesub.fe.loads` find the mid-nodes from the cells); the mid-nodes of the edges of edge
    set ``name`` join node set ``name`` (created if absent), so that supports on a named edge
    hold its mid-nodes too. Map the points afterwards (e.g. polar to Cartesian) to place the new
    nodes on curved boundaries.

    Parameters
    ----------
    mesh : fesub.fe.mesh.Mesh
        Mesh of ``quad`` and/or ``triangle`` cells (coordinates in m).
    quad : str
        ``"quad8"`` (serendipity) or ``"quad9"`` (Lagrange).

    Returns
    -------
    fesub.fe.mesh.Mesh
        The quadratic mesh; the original nodes keep their indices, new ones follow.
    """
    from .mesh import Mesh

    if quad not in ("quad8", "quad9"):
        raise MeshError(f"quad must be 'quad8' or 'quad9', got {quad!r}")
    linear = {k: v for k, v in mesh.cells.items() if k in ("quad", "triangle")}
    if not linear or set(mesh.cells) - set(linear):
        raise MeshError(f"{mesh.source}: quadratic_mesh needs a mesh of quad/triangle cells only, "
                        f"got {sorted(mesh.cells)}")
    n = mesh.n_points
    # every cell edge as a sorted corner pair; unique pairs get one new node each
    pairs = np.vstack([np.sort(conn[:, CELL_EDGES[k]].reshape(-1, 2), axis=1) for k, conn in linear.items()])
    uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
    inv = inv.ravel()
    points = [mesh.points, 0.5 * (mesh.points[uniq[:, 0]] + mesh.points[uniq[:, 1]])]
    cells, start, nxt = {}, 0, n + len(uniq)
    rename = {"quad": quad, "triangle": "triangle6"}
    for k, conn in linear.items():
        ne, ned = len(conn), len(CELL_EDGES[k])
        mid = n + inv[start:start + ne * ned].reshape(ne, ned)
        start += ne * ned
        new = np.hstack([conn, mid])
        if k == "quad" and quad == "quad9":
            points.append(mesh.points[conn].mean(axis=1))
            new = np.hstack([new, np.arange(nxt, nxt + ne)[:, None]])
            nxt += ne
        cells[rename[k]] = new
    node_sets = dict(mesh.node_sets)
    codes = uniq[:, 0] * n + uniq[:, 1]
    for name, edges in mesh.edge_sets.items():
        key = np.sort(edges, axis=1)
        pos = np.minimum(np.searchsorted(codes, key[:, 0] * n + key[:, 1]), len(codes) - 1)
        if np.any(codes[pos] != key[:, 0] * n + key[:, 1]):
            raise MeshError(f"{mesh.source}: edge set {name!r} holds a node pair that is no cell edge")
        node_sets[name] = np.union1d(node_sets.get(name, np.unique(edges)), n + pos)
    element_sets = {name: (rename.get(t, t), idx) for name, (t, idx) in mesh.element_sets.items()}
    return Mesh(np.vstack(points), cells, node_sets, dict(mesh.edge_sets), element_sets,
                f"quadratic({mesh.source})")
