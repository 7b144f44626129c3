"""Element matrices, vectorised over all elements (compiled kernel or NumPy twin).

DOF order per node: (u, v) for plane elements, (u, v, theta) for the frame element. Element DOF
order: node by node.
"""

from __future__ import annotations

import numpy as np

from .._backend import kernels
from ..errors import MeshError, ModelError

__all__ = ["q4_matrices", "t3_matrices", "frame2d_matrices", "hrz_lump"]


def _xy(xy, nodes: int) -> np.ndarray:
    xy = np.ascontiguousarray(xy, dtype=float)
    if xy.ndim != 3 or xy.shape[1:] != (nodes, 2):
        raise MeshError(f"element coordinates must have shape (ne, {nodes}, 2), got {xy.shape}")
    if not np.all(np.isfinite(xy)):
        raise MeshError("element coordinates contain NaN or inf")
    return xy


def _check_area(xy: np.ndarray, kind: str) -> None:
    x, y = xy[:, :, 0], xy[:, :, 1]
    area = 0.5 * np.sum(x * np.roll(y, -1, 1) - np.roll(x, -1, 1) * y, axis=1)
    if np.any(area <= 0):
        i = int(np.argmin(area))
        raise MeshError(f"{kind} element {i} is inverted or degenerate (signed area {area[i]:.3e} m^2)")


def _check_quads(xy: np.ndarray) -> None:
    """Raise MeshError for inverted, degenerate or non-convex quadrilaterals.

    The bilinear map is one-to-one (det J > 0 everywhere) only on strictly convex quads: a
    re-entrant corner gives a negative Jacobian at some Gauss point and a meaningless matrix.
    """
    x, y = xy[:, :, 0], xy[:, :, 1]
    dx = np.empty(x.shape)
    dy = np.empty(y.shape)
    dx[:, :3] = x[:, 1:] - x[:, :3]  # edge leaving corner a
    dx[:, 3] = x[:, 0] - x[:, 3]
    dy[:, :3] = y[:, 1:] - y[:, :3]
    dy[:, 3] = y[:, 0] - y[:, 3]
    corner = np.empty(x.shape)  # cross product of the edges arriving at and leaving corner a
    corner[:, 1:] = dx[:, :3] * dy[:, 1:] - dy[:, :3] * dx[:, 1:]
    corner[:, 0] = dx[:, 3] * dy[:, 0] - dy[:, 3] * dx[:, 0]
    worst = corner.min(axis=1)
    if np.any(worst <= 0):
        i = int(np.argmin(worst))
        area = 0.5 * ((x[i, 2] - x[i, 0]) * (y[i, 3] - y[i, 1]) - (x[i, 3] - x[i, 1]) * (y[i, 2] - y[i, 0]))
        if area <= 0:
            raise MeshError(f"Q4 element {i} is inverted or degenerate (signed area {area:.3e} m^2)")
        raise MeshError(f"Q4 element {i} is not convex (corner {int(np.argmin(corner[i]))} is re-entrant "
                        "or degenerate); split it into triangles or remesh")


def q4_matrices(xy, material, *, incompatible: bool = True, lumped: bool = False):
    """Stiffness and mass of Q4 elements in plane stress or plane strain (the material's ``D``).

    Parameters
    ----------
    xy : (ne, 4, 2) array
        Node coordinates (m), anticlockwise.
    material : PlaneStress or PlaneStrain
    incompatible : bool
        Add Wilson-Taylor incompatible bending modes (condensed out); strongly advised for beams
        meshed with few elements through the thickness (plain Q4 locks in bending).
    lumped : bool
        Diagonal (HRZ) mass instead of the consistent one.

    Returns
    -------
    Ke, Me : (ne, 8, 8) arrays (N/m, kg).
    """
    xy = _xy(xy, 4)
    _check_quads(xy)
    ne = xy.shape[0]
    Ke, Me = np.empty((ne, 8, 8)), np.empty((ne, 8, 8))
    kernels("fe").q4_matrices(xy, np.ascontiguousarray(material.D), float(material.thickness),
                              float(material.rho), int(bool(incompatible)), Ke, Me)
    return Ke, (hrz_lump(Me, 2) if lumped else Me)


def t3_matrices(xy, material, *, lumped: bool = False):
    """Stiffness and mass of constant-strain triangles; xy (ne, 3, 2) m -> (ne, 6, 6)."""
    xy = _xy(xy, 3)
    _check_area(xy, "T3")
    ne = xy.shape[0]
    Ke, Me = np.empty((ne, 6, 6)), np.empty((ne, 6, 6))
    kernels("fe").t3_matrices(xy, np.ascontiguousarray(material.D), float(material.thickness),
                              float(material.rho), Ke, Me)
    return Ke, (hrz_lump(Me, 2) if lumped else Me)


def frame2d_matrices(xy, E, A, I, rho, *, lumped: bool = False):  # noqa: E741 - I is the usual name
    """2D Euler-Bernoulli frame elements (Hermite bending + linear axial), global axes.

    Parameters
    ----------
    xy : (ne, 2, 2) array
        End-node coordinates (m).
    E : Young's modulus (Pa); A : area (m^2); I : second moment of area (m^4); rho : density
        (kg/m^3). Scalars or (ne,) arrays, all > 0.
    lumped : bool
        HRZ diagonal mass, formed in local axes: ``m/2`` on each translational DOF of each node
        (``m = rho A L``, so each global direction carries the element mass whatever its
        orientation) and ``m L^2 / 78`` on each rotation (the consistent rotary diagonal
        ``4 m L^2 / 420`` scaled by the transverse HRZ factor ``420 / 312``).

    Returns
    -------
    Ke, Me : (ne, 6, 6) arrays, DOF order (u1, v1, theta1, u2, v2, theta2).
    """
    xy = _xy(xy, 2)
    ne = xy.shape[0]
    if np.any(np.hypot(*(xy[:, 1] - xy[:, 0]).T) <= 0):
        raise MeshError("frame element of zero length")
    vals = {}
    for name, v in (("E", E), ("A", A), ("I", I), ("rho", rho)):
        arr = np.broadcast_to(np.asarray(v, dtype=float), (ne,))
        if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ModelError(f"frame section {name} must be finite and > 0")
        vals[name] = arr
    EA = np.ascontiguousarray(vals["E"] * vals["A"])
    EI = np.ascontiguousarray(vals["E"] * vals["I"])
    rhoA = np.ascontiguousarray(vals["rho"] * vals["A"])
    Ke, Me = np.empty((ne, 6, 6)), np.empty((ne, 6, 6))
    kernels("fe").frame2d_matrices(xy, EA, EI, rhoA, Ke, Me)
    if lumped:
        # HRZ in local axes: the axial and transverse diagonals of the consistent mass differ
        # (2/6 vs 156/420 of m per node), so each is scaled to the element mass on its own; the
        # resulting translational block (m/2) I is invariant under rotation to global axes.
        L = np.hypot(*(xy[:, 1] - xy[:, 0]).T)
        m = vals["rho"] * vals["A"] * L
        Me = np.zeros((ne, 6, 6))
        for o in (0, 3):
            Me[:, o, o] = Me[:, o + 1, o + 1] = 0.5 * m
            Me[:, o + 2, o + 2] = m * L**2 / 78.0
    return Ke, Me


def hrz_lump(Me: np.ndarray, ndpn: int, translational=(0, 1)) -> np.ndarray:
    """Hinton-Rock-Zienkiewicz lumping: keep the diagonal and scale it, direction by direction,
    so that each translational direction carries the element's total mass (taken from the u-u
    block); non-translational DOFs are scaled by the mean of the translational factors."""
    ne, nd, _ = Me.shape
    diag = np.einsum("eii->ei", Me).copy()
    total = Me[:, 0::ndpn, 0::ndpn].sum(axis=(1, 2))  # element mass (kg) from the u-u block
    scaled = np.zeros(nd, bool)
    out = np.zeros_like(Me)
    idx = np.arange(nd)
    factors = []
    for t in translational:
        s = total / diag[:, t::ndpn].sum(axis=1)
        factors.append(s)
        out[:, idx[t::ndpn], idx[t::ndpn]] = diag[:, t::ndpn] * s[:, None]
        scaled[t::ndpn] = True
    rest = idx[~scaled]
    if rest.size:
        out[:, rest, rest] = diag[:, rest] * np.mean(factors, axis=0)[:, None]
    return out
