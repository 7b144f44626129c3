"""Element matrices of isotropic linear-elastic 3D solids, vectorised over elements with NumPy.

Cell types (meshio names, VTK node order, see :mod:`fesub.fe.solid_shapes`) and integration:

========== ===== ================================= ===========================================
cell       nodes stiffness                         consistent mass
========== ===== ================================= ===========================================
hexahedron 8     2x2x2 Gauss (full); or with the   3x3x3 Gauss (exact for any trilinear hex)
                 9 incompatible modes (see below)
tetra      4     1 point (exact)                   2x2x2 conical (degree 3: exact)
tetra10    10    2x2x2 conical (degree 3: exact    3x3x3 conical (degree 5: exact for
                 for straight edges)               straight edges)
wedge      6     (2x2 conical) x 2 Gauss           (3x3 conical) x 3 Gauss
========== ===== ================================= ===========================================

Incompatible-mode hexahedron (Wilson, Taylor, Beresford and Wilson 1976): the displacement is
enriched by ``(1 - xi^2)``, ``(1 - eta^2)``, ``(1 - zeta^2)`` in each of the three directions (nine
modes), condensed out element by element. Their gradients are taken with the Jacobian at the
element centre and scaled by ``det J0 / det J``, so that they integrate to zero on any shape and
the element passes the patch test; a rectangular element then represents pure bending exactly,
where the plain hexahedron locks in shear (and, as nu -> 0.5, in volume).

DOF order: (u_x, u_y, u_z) node by node. Strains and stresses: Voigt order
(xx, yy, zz, yz, xz, xy), engineering shear strains.
"""

from __future__ import annotations

import numpy as np

from ..errors import MeshError, ModelError
from .elements import hrz_lump
from .solid_shapes import CELL_NODES, rule, shapes

__all__ = ["solid_matrices", "solid_strains", "solid_volumes", "STIFFNESS_POINTS", "MASS_POINTS"]

#: points per direction of the stiffness and mass rules of each cell type
STIFFNESS_POINTS = {"hexahedron": 2, "tetra": 1, "tetra10": 2, "wedge": 2}
MASS_POINTS = {"hexahedron": 3, "tetra": 2, "tetra10": 3, "wedge": 3}


def _coords(cell: str, xyz) -> np.ndarray:
    if cell not in CELL_NODES:
        raise MeshError(f"unknown solid cell type {cell!r}; fesub knows {sorted(CELL_NODES)}")
    k = CELL_NODES[cell]
    xyz = np.ascontiguousarray(xyz, dtype=float)
    if xyz.ndim != 3 or xyz.shape[1:] != (k, 3):
        raise MeshError(f"{cell} coordinates must have shape (ne, {k}, 3), got {xyz.shape}")
    if not np.all(np.isfinite(xyz)):
        raise MeshError(f"{cell} coordinates contain NaN or inf")
    return xyz


def _jacobian(dN: np.ndarray, xyz: np.ndarray, inverse: bool = True):
    """Determinant (e, q) of J[e, q, a, b] = d x_b / d xi_a and, if asked, its inverse (e, q, 3, 3)."""
    # nine (e, k) @ (k, q) products give contiguous (e, q) entries J_ab
    X = [np.ascontiguousarray(xyz[:, :, b]) for b in range(3)]
    D = [np.ascontiguousarray(dN[:, :, a].T) for a in range(3)]
    (a, b, c), (d, e, f), (g, h, i) = ([X[col] @ D[row] for col in range(3)] for row in range(3))
    c00, c10, c20 = e * i - f * h, f * g - d * i, d * h - e * g
    det = a * c00 + b * c10 + c * c20
    if not inverse:
        return det, None
    cof = np.empty(det.shape + (3, 3))  # adj(J), the transposed cofactors
    cof[..., 0, 0], cof[..., 1, 0], cof[..., 2, 0] = c00, c10, c20
    cof[..., 0, 1] = c * h - b * i
    cof[..., 0, 2] = b * f - c * e
    cof[..., 1, 1] = a * i - c * g
    cof[..., 1, 2] = c * d - a * f
    cof[..., 2, 1] = b * g - a * h
    cof[..., 2, 2] = a * e - b * d
    with np.errstate(divide="ignore", invalid="ignore"):
        cof /= det[..., None, None]
    return det, cof


_REF_NODES = {"hexahedron": np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                                      [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], float),
              "tetra": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float),
              "wedge": np.array([[0, 0, -1], [1, 0, -1], [0, 1, -1], [0, 0, 1], [1, 0, 1], [0, 1, 1]], float)}


def _orientation(cell: str, xyz: np.ndarray, *dets: np.ndarray) -> np.ndarray:
    """Sign (+1 / -1) of each element's Jacobian, checked at the vertices and at the points of
    ``dets`` (Jacobian determinants (e, q) already computed).

    Raises MeshError for an element whose Jacobian vanishes or changes sign (inverted, degenerate
    or tangled), and for a negative one except on wedges (whose handedness differs between VTK
    and Gmsh).
    """
    corners = _REF_NODES["tetra" if cell == "tetra10" else cell]
    if cell == "tetra":  # constant Jacobian: the vertices tell all
        det = _jacobian(shapes(cell, corners[:1])[1], xyz, inverse=False)[0]
    else:
        det = np.hstack([_jacobian(shapes(cell, corners)[1], xyz, inverse=False)[0], *dets])
    scale = np.abs(det).max(axis=1)
    sign = np.where(det[:, 0] < 0, -1.0, 1.0)
    bad = (sign[:, None] * det <= 1e-10 * scale[:, None]).any(axis=1)
    if cell != "wedge":
        bad |= sign < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise MeshError(f"{cell} element {i} is inverted, degenerate or tangled (Jacobian "
                        f"determinant from {det[i].min():.3e} to {det[i].max():.3e} m^3 over the element)")
    return sign


def _gradients(cell: str, xyz: np.ndarray, n: int, *, grad: bool = True):
    """Rule points (q, 3), shape functions (q, k), physical gradients (e, q, k, 3) (or None) and
    signed det J w (e, q) (m^3) of the ``n``-per-direction rule."""
    pts, w = rule(cell, n)
    N, dN = shapes(cell, pts)
    det, inv = _jacobian(dN, xyz, inverse=grad)
    G = None
    if grad:  # G[e, q, k, b] = sum_a dN[q, k, a] inv[e, q, b, a]
        G = dN[None, :, :, 0, None] * inv[:, :, None, :, 0]
        G += dN[None, :, :, 1, None] * inv[:, :, None, :, 1]
        G += dN[None, :, :, 2, None] * inv[:, :, None, :, 2]
    return pts, N, G, det * w[None, :]


def _lame_block(G1: np.ndarray, G2: np.ndarray, W: np.ndarray, lam: float, mu: float) -> np.ndarray:
    """int lam div(u) div(v) + 2 mu eps(u):eps(v) for fields with gradients G1 (e,q,k1,3), G2.

    Entry (3a + i, 3b + j) = sum_q W [lam g1_ai g2_bj + mu g1_aj g2_bi + mu delta_ij g1_a . g2_b].
    """
    ne, nq, k1, _ = G1.shape
    k2 = G2.shape[2]
    H1 = (G1 * W[:, :, None, None]).reshape(ne, nq, 3 * k1)
    P = np.matmul(H1.transpose(0, 2, 1), G2.reshape(ne, nq, 3 * k2)).reshape(ne, k1, 3, k2, 3)
    K = lam * P + mu * P.transpose(0, 1, 4, 3, 2)
    S = mu * np.einsum("eaibi->eab", P)
    for i in range(3):
        K[:, :, i, :, i] += S
    return K.reshape(ne, 3 * k1, 3 * k2)


def _incompatible_gradients(xyz: np.ndarray, pts: np.ndarray, W: np.ndarray, sign: np.ndarray):
    """Gradients (e, q, 3, 3) of the modes (1 - xi^2), (1 - eta^2), (1 - zeta^2) with Taylor's
    centre Jacobian: G_m = (det J0 / det J) J0^-1 d/dxi (1 - xi_m^2)."""
    det0, inv0 = _jacobian(shapes("hexahedron", np.zeros((1, 3)))[1], xyz)
    w = rule("hexahedron", STIFFNESS_POINTS["hexahedron"])[1]
    ratio = (sign * det0[:, 0])[:, None] * w[None, :] / W  # det J0 / det J at each point
    # d/dxi_a (1 - xi_m^2) = -2 xi_m delta_am, so G_m,b = ratio * inv0[b, m] * (-2 xi_m)
    return ratio[:, :, None, None] * (-2.0 * pts)[None, :, :, None] * inv0[:, 0].transpose(0, 2, 1)[:, None]


def _prepare(cell: str, xyz: np.ndarray, *, mass: bool = True):
    """Stiffness-rule points, shape functions, gradients and weights |det J| w (m^3); the
    mass-rule shape functions and weights when ``mass``; the orientation sign of each element."""
    pts, N, G, W = _gradients(cell, xyz, STIFFNESS_POINTS[cell])
    Nm = Wm = None
    if mass:
        _, Nm, _, Wm = _gradients(cell, xyz, MASS_POINTS[cell], grad=False)
    sign = _orientation(cell, xyz, *([W, Wm] if mass else [W]))
    W *= sign[:, None]
    if mass:
        Wm *= sign[:, None]
    return pts, N, G, W, Nm, Wm, sign


def _incompatible_parts(xyz, G, W, pts, sign, lam, mu):
    """Blocks K_ci (e, 24, 9), K_ii (e, 9, 9) and the mode gradients of incompatible hexahedra."""
    Gi = _incompatible_gradients(xyz, pts, W, sign)
    return _lame_block(G, Gi, W, lam, mu), _lame_block(Gi, Gi, W, lam, mu), Gi


def _check_material(material):
    from .materials import Solid

    if not isinstance(material, Solid):
        raise ModelError(f"3D solid elements need a Solid material, got {type(material).__name__}")


def solid_matrices(cell: str, xyz, material, *, incompatible: bool = False, lumped: bool = False):
    """Stiffness and mass matrices of 3D solid elements of one cell type.

    Parameters
    ----------
    cell : str
        ``"hexahedron"``, ``"tetra"``, ``"tetra10"`` or ``"wedge"`` (meshio names, VTK node order).
    xyz : (ne, k, 3) array
        Node coordinates of each element (m).
    material : fesub.fe.Solid
        Young's modulus (Pa), Poisson's ratio (-) and density (kg/m^3).
    incompatible : bool
        Hexahedra only: add the nine condensed incompatible modes (against shear and volumetric
        locking); ignored for the other cells.
    lumped : bool
        Diagonal (HRZ) mass instead of the consistent one.

    Returns
    -------
    Ke : (ne, 3k, 3k) array
        Element stiffness (N/m), DOFs (u_x, u_y, u_z) node by node.
    Me : (ne, 3k, 3k) array
        Element mass (kg).
    """
    _check_material(material)
    xyz = _coords(cell, xyz)
    pts, _, G, W, N, Wm, sign = _prepare(cell, xyz)
    lam, mu = material.lame
    Ke = _lame_block(G, G, W, lam, mu)
    if cell == "hexahedron" and incompatible:
        Kci, Kii, _ = _incompatible_parts(xyz, G, W, pts, sign, lam, mu)
        Ke -= np.matmul(Kci, np.linalg.solve(Kii, Kci.transpose(0, 2, 1)))
        Ke = 0.5 * (Ke + Ke.transpose(0, 2, 1))  # symmetric to the last bit after condensation
    ne, k = xyz.shape[:2]
    Ms = np.matmul(Wm * material.rho, (N[:, :, None] * N[:, None, :]).reshape(len(N), k * k))
    Me = np.zeros((ne, k, 3, k, 3))
    for i in range(3):
        Me[:, :, i, :, i] = Ms.reshape(ne, k, k)
    Me = Me.reshape(ne, 3 * k, 3 * k)
    return Ke, (hrz_lump(Me, 3, translational=(0, 1, 2)) if lumped else Me)


def solid_strains(cell: str, xyz, ue, material=None, *, incompatible: bool = False):
    """Strains at the stiffness integration points of 3D solid elements.

    Parameters
    ----------
    cell : str
        Cell type (meshio name).
    xyz : (ne, k, 3) array
        Node coordinates (m).
    ue : (ne, 3k) array
        Element displacements (m), (u_x, u_y, u_z) node by node.
    material : fesub.fe.Solid, optional
        Needed with ``incompatible=True`` (the condensed modes depend on it).
    incompatible : bool
        Hexahedra: include the incompatible modes recovered from ``ue``.

    Returns
    -------
    points : (ne, q, 3) array
        Physical coordinates of the integration points (m).
    strain : (ne, q, 6) array
        Strains (-), Voigt order (xx, yy, zz, yz, xz, xy), engineering shear strains. The stresses
        (Pa) are ``strain @ material.D``.
    """
    xyz = _coords(cell, xyz)
    ne, k = xyz.shape[:2]
    ue = np.asarray(ue, dtype=float)
    if ue.shape != (ne, 3 * k):
        raise ModelError(f"element displacements must have shape ({ne}, {3 * k}), got {ue.shape}")
    pts, N, G, W, _, _, sign = _prepare(cell, xyz, mass=False)
    u3 = ue.reshape(ne, k, 3)
    H = np.einsum("eki,eqkb->eqib", u3, G)  # displacement gradient du_i/dx_b
    if cell == "hexahedron" and incompatible:
        if material is None:
            raise ModelError("strains of incompatible-mode hexahedra need the material")
        _check_material(material)
        Kci, Kii, Gi = _incompatible_parts(xyz, G, W, pts, sign, *material.lame)
        alpha = -np.linalg.solve(Kii, np.einsum("eij,ei->ej", Kci, ue)[..., None])[..., 0]
        H += np.einsum("emi,eqmb->eqib", alpha.reshape(ne, 3, 3), Gi)
    strain = np.stack([H[..., 0, 0], H[..., 1, 1], H[..., 2, 2], H[..., 1, 2] + H[..., 2, 1],
                       H[..., 0, 2] + H[..., 2, 0], H[..., 0, 1] + H[..., 1, 0]], axis=-1)
    return np.einsum("qk,ekb->eqb", N, xyz), strain


def solid_volumes(cell: str, xyz) -> np.ndarray:
    """Volumes (m^3) of 3D solid elements, integrated with the mass rule (exact for hexahedra,
    straight-edged tetrahedra and wedges)."""
    xyz = _coords(cell, xyz)
    return _prepare(cell, xyz)[5].sum(axis=1)
