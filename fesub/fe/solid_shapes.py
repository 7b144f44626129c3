"""Reference shape functions and quadrature rules of the 3D solid elements.

Node order is meshio's (the VTK order) for every cell type, so that meshes read by meshio
assemble directly:

* ``hexahedron`` (8 nodes): reference cube [-1, 1]^3, nodes 0-3 the face zeta = -1 anticlockwise
  seen from zeta > 0, starting at (-1, -1, -1); nodes 4-7 the same on zeta = +1.
* ``tetra`` (4 nodes): reference tetrahedron with vertices (0,0,0), (1,0,0), (0,1,0), (0,0,1).
* ``tetra10`` (10 nodes): the four vertices, then the mid-edge nodes of edges 0-1, 1-2, 2-0,
  0-3, 1-3, 2-3.
* ``wedge`` (6 nodes): triangle 0-1-2 at zeta = -1 with vertices (0,0), (1,0), (0,1) in
  (xi, eta), nodes 3-5 above them at zeta = +1. Gmsh orders the base triangle anticlockwise
  seen from the top face (a positive Jacobian here), VTK clockwise (a negative one): the elements
  accept either handedness, as long as it is the same over the element.

Quadrature: tensor Gauss-Legendre on the cube; collapsed (Stroud conical-product) Gauss-Jacobi
rules on the triangle and the tetrahedron, with positive weights, exact for polynomials of
degree ``2 n - 1`` with ``n`` points per direction.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import roots_jacobi

__all__ = ["CELL_NODES", "gauss_line", "triangle_rule", "tet_rule", "hex_rule", "wedge_rule",
           "shapes", "rule", "TET10_EDGES"]

#: solid cell types (meshio names) and their node counts
CELL_NODES = {"hexahedron": 8, "tetra": 4, "tetra10": 10, "wedge": 6}

#: vertex pairs of the mid-edge nodes 4..9 of a tetra10 (VTK order)
TET10_EDGES = ((0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3))

_HEX_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)


def gauss_line(n: int):
    """Gauss-Legendre points (-) and weights on [-1, 1], exact to degree 2n - 1."""
    return np.polynomial.legendre.leggauss(n)


def _jacobi01(n: int, alpha: int):
    """Gauss-Jacobi points on [0, 1] for the weight (1 - u)^alpha, with their weights."""
    x, w = roots_jacobi(n, alpha, 0)
    return 0.5 * (1.0 + x), w / 2.0 ** (alpha + 1)


def triangle_rule(n: int):
    """Conical-product rule on the reference triangle (area 1/2): points (n^2, 2), weights."""
    u, wu = _jacobi01(n, 1)
    v, wv = _jacobi01(n, 0)
    U, V = np.meshgrid(u, v, indexing="ij")
    pts = np.column_stack([U.ravel(), (V * (1.0 - U)).ravel()])
    return pts, np.outer(wu, wv).ravel()


def tet_rule(n: int):
    """Conical-product rule on the reference tetrahedron (volume 1/6): points (n^3, 3), weights."""
    u, wu = _jacobi01(n, 2)
    v, wv = _jacobi01(n, 1)
    s, ws = _jacobi01(n, 0)
    U, V, S = np.meshgrid(u, v, s, indexing="ij")
    pts = np.column_stack([U.ravel(), (V * (1.0 - U)).ravel(), (S * (1.0 - U) * (1.0 - V)).ravel()])
    return pts, np.einsum("i,j,k->ijk", wu, wv, ws).ravel()


def hex_rule(n: int):
    """Tensor Gauss rule on the reference cube (volume 8): points (n^3, 3), weights."""
    g, w = gauss_line(n)
    P = np.meshgrid(g, g, g, indexing="ij")
    return np.column_stack([p.ravel() for p in P]), np.einsum("i,j,k->ijk", w, w, w).ravel()


def wedge_rule(n: int):
    """Triangle rule times Gauss line on the reference wedge (volume 1): points (n^3, 3), weights."""
    t, wt = triangle_rule(n)
    g, wg = gauss_line(n)
    pts = np.column_stack([np.repeat(t, n, axis=0), np.tile(g, len(t))])
    return pts, np.outer(wt, wg).ravel()


def shapes(cell: str, pts: np.ndarray):
    """Shape functions N (q, k) and their reference derivatives dN (q, k, 3) at points (q, 3)."""
    p = np.atleast_2d(np.asarray(pts, dtype=float))
    x, y, z = p[:, 0], p[:, 1], p[:, 2]
    if cell == "hexahedron":
        c = _HEX_CORNERS
        f = 1.0 + p[:, None, :] * c[None, :, :]  # (q, 8, 3): (1 + xi xi_a), ...
        N = 0.125 * f.prod(axis=2)
        dN = np.empty(f.shape)
        dN[..., 0] = 0.125 * c[:, 0] * f[..., 1] * f[..., 2]
        dN[..., 1] = 0.125 * c[:, 1] * f[..., 0] * f[..., 2]
        dN[..., 2] = 0.125 * c[:, 2] * f[..., 0] * f[..., 1]
        return N, dN
    if cell in ("tetra", "tetra10"):
        L = np.column_stack([1.0 - x - y - z, x, y, z])
        dL = np.array([[-1.0, -1.0, -1.0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
        if cell == "tetra":
            return L, np.broadcast_to(dL, (len(p), 4, 3)).copy()
        N = np.empty((len(p), 10))
        dN = np.empty((len(p), 10, 3))
        N[:, :4] = L * (2.0 * L - 1.0)
        dN[:, :4] = (4.0 * L - 1.0)[:, :, None] * dL[None]
        for m, (a, b) in enumerate(TET10_EDGES):
            N[:, 4 + m] = 4.0 * L[:, a] * L[:, b]
            dN[:, 4 + m] = 4.0 * (L[:, a, None] * dL[b] + L[:, b, None] * dL[a])
        return N, dN
    if cell == "wedge":
        L = np.column_stack([1.0 - x - y, x, y])
        dL = np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])
        N = np.empty((len(p), 6))
        dN = np.zeros((len(p), 6, 3))
        for o, h in ((0, 0.5 * (1.0 - z)), (3, 0.5 * (1.0 + z))):
            N[:, o:o + 3] = L * h[:, None]
            dN[:, o:o + 3, :2] = h[:, None, None] * dL[None]
            dN[:, o:o + 3, 2] = L * (0.5 if o else -0.5)
        return N, dN
    raise KeyError(cell)


@lru_cache(maxsize=None)
def rule(cell: str, n: int):
    """Points (q, 3) and weights (q,) of the ``n``-per-direction rule of ``cell`` (read-only)."""
    make = {"hexahedron": hex_rule, "tetra": tet_rule, "tetra10": tet_rule, "wedge": wedge_rule}[cell]
    pts, w = make(n)
    pts.flags.writeable = False
    w.flags.writeable = False
    return pts, w
