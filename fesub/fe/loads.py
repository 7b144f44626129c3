"""Distributed loads on plane meshes: edge tractions consistently integrated into nodal forces.

A load on an edge is a force per unit length of edge (N/m): either a vector ``q`` (N/m), or a
pressure ``p`` (Pa) on a slice of ``thickness`` t (m), which pushes along the inward normal,
``q = -p t n``. The nodal forces are ``f_i = int N_i q ds`` along each edge, with the edge's own
shape functions: linear on the edges of ``quad``/``triangle`` cells, quadratic (ends and
mid-node) on those of ``quad8``/``quad9``/``triangle6``. Three Gauss points per edge integrate
exactly a load varying up to quadratically along a straight edge, and a uniform or linear
pressure on a curved quadratic edge (``p n ds`` is then polynomial); a uniform pressure gives the
classical splits 1/2-1/2 (linear edge) and 1/6-2/3-1/6 (quadratic edge) of ``p L t``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import MeshError, ModelError, check_positive
from .quadratic import CELL_EDGES

__all__ = ["edge_load", "boundary_faces"]

_GAUSS3 = np.polynomial.legendre.leggauss(3)


def _faces(mesh):
    """All cell edges of the area blocks: (nodes (f, w) start/end/mid, width w) per width."""
    out: dict = {}
    for ctype, conn in mesh.blocks().items():
        if ctype not in CELL_EDGES:
            raise ModelError(f"{mesh.source}: edge loads need a plane mesh, got {ctype} cells")
        faces = conn[:, CELL_EDGES[ctype]].reshape(-1, CELL_EDGES[ctype].shape[1])
        out.setdefault(faces.shape[1], []).append(faces)
    return {w: np.vstack(f) for w, f in out.items()}


def boundary_faces(mesh) -> dict:
    """Cell edges on the boundary (held by one cell only), oriented anticlockwise around it.

    Parameters
    ----------
    mesh : fesub.fe.mesh.Mesh
        Plane mesh (coordinates in m).

    Returns
    -------
    dict
        Edge width (2 for linear edges, 3 for quadratic ones) -> (m, width) int array of node
        indices: start corner, end corner (the outside on the right), mid-node.
    """
    faces = _faces(mesh)
    codes = {w: _codes(f, mesh.n_points) for w, f in faces.items()}
    allc = np.concatenate(list(codes.values()))
    uniq, counts = np.unique(allc, return_counts=True)
    once = uniq[counts == 1]
    return {w: f[np.isin(codes[w], once)] for w, f in faces.items()}


def _codes(faces, n):
    lo, hi = np.minimum(faces[:, 0], faces[:, 1]), np.maximum(faces[:, 0], faces[:, 1])
    return lo * n + hi


def _select(mesh, where):
    """Faces (by width) on which the load acts, and whether each lies on the boundary."""
    if isinstance(where, str):
        if where in mesh.edge_sets:
            where = mesh.edge_sets[where]
        else:
            nodes = mesh.nodes(where)  # MeshError naming the available sets
            bf = boundary_faces(mesh)
            inside = np.zeros(mesh.n_points, bool)
            inside[nodes] = True
            sel = {w: f[inside[f].all(axis=1)] for w, f in bf.items()}
            if not any(len(f) for f in sel.values()):
                raise MeshError(f"{mesh.source}: node set {where!r} holds no whole boundary edge")
            return sel, True
    pairs = np.asarray(where)
    if pairs.ndim != 2 or pairs.shape[1] not in (2, 3) or pairs.shape[0] == 0 or pairs.dtype.kind not in "iu":
        raise MeshError(f"edges must be a set name or an integer (m, 2) or (m, 3) node array, got "
                        f"shape {pairs.shape}")
    faces = _faces(mesh)
    bf = boundary_faces(mesh)
    n = mesh.n_points
    want = _codes(pairs.astype(np.int64), n)
    sel, on_boundary = {}, True
    found = np.zeros(len(want), bool)
    for w, f in faces.items():
        codes = _codes(f, n)
        order = np.argsort(codes, kind="stable")
        pos = np.minimum(np.searchsorted(codes[order], want), len(codes) - 1)
        hit = codes[order][pos] == want
        found |= hit
        if hit.any():
            sel[w] = f[order[pos[hit]]]  # the first cell holding the edge sets its orientation
            on_boundary &= np.isin(codes[order][pos[hit]], _codes(bf[w], n)).all()
    if not found.all():
        a, b = pairs[int(np.argmin(found))][:2]
        raise MeshError(f"{mesh.source}: nodes ({a}, {b}) are not the corners of a cell edge")
    return sel, bool(on_boundary)


def _edge_shapes(width, s):
    if width == 2:
        return np.column_stack([(1 - s) / 2, (1 + s) / 2]), np.column_stack([-0.5 + 0 * s, 0.5 + 0 * s])
    return (np.column_stack([s * (s - 1) / 2, s * (s + 1) / 2, 1 - s * s]),
            np.column_stack([s - 0.5, s + 0.5, -2 * s]))


def edge_load(mesh, where, *, force_per_length=None, pressure=None, thickness: float = 1.0,
              dofmap=None) -> np.ndarray:
    """Consistent nodal forces of a distributed load on edges of a plane mesh.

    Parameters
    ----------
    mesh : fesub.fe.mesh.Mesh
        Plane mesh of quad, triangle, quad8, quad9 and/or triangle6 cells (coordinates in m).
    where : str or int array
        An edge set name, a node set name (every boundary cell edge whose nodes all belong to
        the set is loaded), or an (m, 2) array of edge corner pairs (an (m, 3) array of
        quadratic edges, meshio ``line3`` order, is accepted too: its mid-node column is not
        needed). Mid-nodes are found from the cells.
    force_per_length : array_like of 2 floats, or callable, optional
        Load vector (N/m) per unit length of edge, or a function of the points ``(g, 2)`` (m)
        returning ``(g, 2)`` (N/m).
    pressure : float or callable, optional
        Pressure (Pa) pushing on the edge (along the inward normal of the cell holding it), or a
        function of the points ``(g, 2)`` (m) returning ``(g,)`` (Pa). Only on boundary edges.
    thickness : float
        Out-of-plane thickness (m) that turns the pressure into a force per length, > 0.
    dofmap : fesub.fe.assembly.DofMap, optional
        The model's DOF map, checked to have 2 DOFs per node and the mesh's nodes; the forces are
        always numbered as by :func:`fesub.fe.assembly.mesh_matrices` (DOF ``2 node + c``).

    Returns
    -------
    f : (n_dofs,) array
        Nodal forces (N), node-major (x, y) DOFs.
    """
    if (force_per_length is None) == (pressure is None):
        raise ModelError("give exactly one of force_per_length (N/m) and pressure (Pa)")
    thickness = check_positive("thickness (m)", thickness, error=ModelError)
    if dofmap is not None and (dofmap.ndpn != 2 or dofmap.n_nodes != mesh.n_points):
        raise ModelError(f"dofmap must have 2 DOFs per node and {mesh.n_points} nodes, got "
                         f"{dofmap.ndpn} and {dofmap.n_nodes}")
    sel, on_boundary = _select(mesh, where)
    if pressure is not None and not on_boundary:
        raise ModelError("a pressure acts on boundary edges only (its side is ambiguous inside the "
                         "mesh); give force_per_length for an interior line load")
    load = _load_function(force_per_length, pressure, thickness)
    f = np.zeros(2 * mesh.n_points)
    s, w = _GAUSS3
    for width, faces in sel.items():
        N, dN = _edge_shapes(width, s)
        X = mesh.points[faces]  # (m, width, 2)
        x = np.einsum("gi,mic->mgc", N, X)
        dx = np.einsum("gi,mic->mgc", dN, X)  # tangent d(x, y)/ds, anticlockwise around the cell
        q = load(x.reshape(-1, 2), dx.reshape(-1, 2)).reshape(x.shape)  # N/m per unit ds-scale
        fn = np.einsum("gi,mgc,g->mic", N, q, w)  # (m, width, 2) N
        np.add.at(f, 2 * faces[..., None] + np.arange(2), fn)
    return f


def _load_function(force_per_length, pressure, thickness) -> Callable:
    """q(x, dx/ds) |dx/ds|: the load per unit reference length at points x (N/m)."""
    def values(spec, x, shape, what, unit):
        v = spec(x) if callable(spec) else np.broadcast_to(np.asarray(spec, dtype=float), shape)
        v = np.asarray(v, dtype=float)
        if v.shape != shape or not np.all(np.isfinite(v)):
            raise ModelError(f"{what} must be finite ({unit}) of shape {shape}, got {v.shape}")
        return v

    if pressure is not None:
        def q(x, dx):
            p = values(pressure, x, (len(x),), "pressure", "Pa")
            return -p[:, None] * thickness * np.column_stack([dx[:, 1], -dx[:, 0]])
        return q

    def qv(x, dx):
        return values(force_per_length, x, (len(x), 2), "force_per_length", "N/m") * np.hypot(
            dx[:, 0], dx[:, 1])[:, None]
    return qv
