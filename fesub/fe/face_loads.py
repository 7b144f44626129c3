"""Distributed loads on 3D solid meshes: face tractions and pressures consistently integrated.

A load on a face is a traction ``t`` (Pa, force per unit area), either a vector (constant or a
function of position), or a pressure ``p`` (Pa) pushing on the face against its outward normal,
``t = -p n``. The nodal forces are ``f_i = int N_i t dA`` over each face with the face's own
shape functions: the faces of ``hexahedron`` and ``wedge`` cells are 4-node quadrilaterals
(meshio ``quad``), those of ``tetra`` and ``wedge`` cells 3-node triangles (``triangle``), those
of ``tetra10`` cells 6-node triangles (``triangle6``); :func:`face_forces` integrates on 8- and
9-node quadrilaterals (``quad8``, ``quad9``) as well.

Quadrature, per face type (``n`` points per direction; triangles use the conical-product rule of
:func:`fesub.fe.solid_shapes.triangle_rule`, exact to degree ``2 n - 1``):

========== ================ ==================================================================
face       rule             exact for
========== ================ ==================================================================
triangle   2x2 conical (4)  a pressure or traction up to quadratic in position
quad       2x2 Gauss        a pressure up to linear in position on any (even warped) face,
                            a traction up to linear on a flat face
triangle6  4x4 conical (16) a uniform or linear pressure on curved faces (degree 6 integrand)
quad8/9    4x4 Gauss        the same (degree 7 per direction)
========== ================ ==================================================================

A pressure times the area vector ``a x b`` (``a``, ``b`` the tangents) is polynomial, so these
rules integrate it exactly on curved faces; a traction vector is multiplied by ``|a x b|``, exact
only where that is polynomial (flat faces). A uniform pressure gives the classical splits of
``p A``: 1/4 per node of a quad, 1/3 per node of a triangle, nothing at the corners and 1/3 at
the mid-nodes of a triangle6, -1/12 at the corners and 1/3 at the mid-nodes of a quad8.

Faces are selected by a node set (every boundary face whose nodes all lie in it), by
:class:`SolidFaces` (e.g. from :func:`solid_boundary_faces`), or by surface cells as meshio reads
them from Gmsh (:func:`surface_cells` picks those of a physical surface): a surface cell selects
the face of a solid cell with the same corners, and the load is integrated on that solid face
(its nodes carry the stiffness), whatever the order of the surface cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import MeshError, ModelError
from .solid_shapes import gauss_line, triangle_rule

__all__ = ["SolidFaces", "solid_boundary_faces", "face_forces", "face_load", "surface_cells",
           "face_shapes", "CELL_FACES", "FACE_CORNERS"]

#: face types (meshio surface cell names) and their number of corners
FACE_CORNERS = {"triangle": 3, "triangle6": 3, "quad": 4, "quad8": 4, "quad9": 4}
_FACE_NODES = {"triangle": 3, "triangle6": 6, "quad": 4, "quad8": 8, "quad9": 9}
_POINTS = {"triangle": 2, "triangle6": 4, "quad": 2, "quad8": 4, "quad9": 4}
#: node permutation reversing a face's orientation (its normal)
_FLIP = {"triangle": [0, 2, 1], "triangle6": [0, 2, 1, 5, 4, 3], "quad": [0, 3, 2, 1],
         "quad8": [0, 3, 2, 1, 7, 6, 5, 4], "quad9": [0, 3, 2, 1, 7, 6, 5, 4, 8]}

#: faces of each solid cell type (VTK node order): (face type, local node lists) groups; the
#: local face number runs through the groups in this order
CELL_FACES = {
    "hexahedron": (("quad", ((0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6),
                             (3, 0, 4, 7))),),
    "tetra": (("triangle", ((0, 2, 1), (0, 1, 3), (1, 2, 3), (0, 3, 2))),),
    "tetra10": (("triangle6", ((0, 2, 1, 6, 5, 4), (0, 1, 3, 4, 8, 7), (1, 2, 3, 5, 9, 8),
                               (0, 3, 2, 7, 9, 6))),),
    "wedge": (("triangle", ((0, 2, 1), (3, 4, 5))),
              ("quad", ((0, 1, 4, 3), (1, 2, 5, 4), (2, 0, 3, 5)))),
}

_QUAD_CORNERS = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float)
# quad9 nodes as (i, j) of the 1D Lagrange nodes (-1, 1, 0)
_Q9_IJ = ((0, 0), (1, 0), (1, 1), (0, 1), (2, 0), (1, 2), (2, 1), (0, 2), (2, 2))


@dataclass(frozen=True)
class SolidFaces:
    """Faces of the solid cells of a mesh, of one face type and one owning cell type.

    Parameters
    ----------
    face_type : str
        ``triangle``, ``triangle6`` or ``quad`` (meshio names).
    cell_type : str
        Type of the owning cells (``hexahedron``, ``tetra``, ``tetra10``, ``wedge``).
    nodes : (m, k) int array
        Face nodes, corners then mid-nodes, ordered so that the right-hand normal points out of
        the owning cell.
    cell : (m,) int array
        Index of the owning cell in its block ``mesh.cells[cell_type]`` (-).
    local : (m,) int array
        Local face number in the owning cell (-), see :data:`CELL_FACES`.
    """

    face_type: str
    cell_type: str
    nodes: np.ndarray
    cell: np.ndarray
    local: np.ndarray

    def __len__(self) -> int:
        return len(self.nodes)

    def take(self, index) -> "SolidFaces":
        """The faces picked by ``index`` (an index array or boolean mask)."""
        return SolidFaces(self.face_type, self.cell_type, self.nodes[index], self.cell[index],
                          self.local[index])


def face_shapes(face_type: str, pts):
    """Shape functions of a face type and their reference derivatives.

    Parameters
    ----------
    face_type : str
        ``triangle``, ``triangle6``, ``quad``, ``quad8`` or ``quad9`` (meshio node order).
    pts : (g, 2) array
        Reference coordinates (-): (r, s) on the triangle (0, 0), (1, 0), (0, 1); (xi, eta) on
        the square [-1, 1]^2.

    Returns
    -------
    N : (g, k) array
        Shape functions (-).
    dN : (g, k, 2) array
        Their derivatives along the two reference coordinates (-).
    """
    if face_type not in _FACE_NODES:
        raise MeshError(f"unknown face type {face_type!r}; fesub knows {sorted(_FACE_NODES)}")
    p = np.atleast_2d(np.asarray(pts, dtype=float))
    if face_type.startswith("triangle"):
        r, s = p[:, 0], p[:, 1]
        L = np.column_stack([1.0 - r - s, r, s])
        dL = np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])
        if face_type == "triangle":
            return L, np.broadcast_to(dL, (len(p), 3, 2)).copy()
        N = np.column_stack([L * (2 * L - 1), 4 * L[:, 0] * L[:, 1], 4 * L[:, 1] * L[:, 2],
                             4 * L[:, 2] * L[:, 0]])
        dN = np.empty((len(p), 6, 2))
        dN[:, :3] = (4 * L - 1)[:, :, None] * dL
        for m, (a, b) in enumerate(((0, 1), (1, 2), (2, 0))):
            dN[:, 3 + m] = 4 * (L[:, a, None] * dL[b] + L[:, b, None] * dL[a])
        return N, dN
    x, y = p[:, 0], p[:, 1]
    if face_type == "quad9":
        def lag(s):  # 1D Lagrange functions on (-1, 1, 0) and their derivatives
            return (np.column_stack([s * (s - 1) / 2, s * (s + 1) / 2, 1 - s * s]),
                    np.column_stack([s - 0.5, s + 0.5, -2 * s]))
        (lx, dx), (ly, dy) = lag(x), lag(y)
        N = np.column_stack([lx[:, i] * ly[:, j] for i, j in _Q9_IJ])
        dN = np.stack([np.column_stack([dx[:, i] * ly[:, j] for i, j in _Q9_IJ]),
                       np.column_stack([lx[:, i] * dy[:, j] for i, j in _Q9_IJ])], axis=-1)
        return N, dN
    xa, ya = _QUAD_CORNERS[:, 0], _QUAD_CORNERS[:, 1]
    fx, fy = 1 + x[:, None] * xa, 1 + y[:, None] * ya  # (g, 4)
    if face_type == "quad":
        return fx * fy / 4, np.stack([xa * fy / 4, ya * fx / 4], axis=-1)
    # quad8 (serendipity): corners, then the mid-nodes of sides 0-1, 1-2, 2-3, 3-0
    c = x[:, None] * xa + y[:, None] * ya
    N = np.empty((len(p), 8))
    dN = np.empty((len(p), 8, 2))
    N[:, :4] = fx * fy * (c - 1) / 4
    dN[:, :4, 0] = xa * fy * (2 * x[:, None] * xa + y[:, None] * ya) / 4
    dN[:, :4, 1] = ya * fx * (x[:, None] * xa + 2 * y[:, None] * ya) / 4
    for m, (a, b) in enumerate(((0.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0))):
        if a == 0.0:
            N[:, 4 + m] = (1 - x * x) * (1 + y * b) / 2
            dN[:, 4 + m] = np.column_stack([-x * (1 + y * b), b * (1 - x * x) / 2])
        else:
            N[:, 4 + m] = (1 + x * a) * (1 - y * y) / 2
            dN[:, 4 + m] = np.column_stack([a * (1 - y * y) / 2, -y * (1 + x * a)])
    return N, dN


@lru_cache(maxsize=None)
def _face_rule(face_type: str):
    """Shape functions N (g, k), reference derivatives dN (g, k, 2) and weights (g,) at the
    face's quadrature points (read-only)."""
    n = _POINTS[face_type]
    if face_type.startswith("triangle"):
        pts, w = triangle_rule(n)
    else:
        g, wg = gauss_line(n)
        pts = np.column_stack([v.ravel() for v in np.meshgrid(g, g, indexing="ij")])
        w = np.outer(wg, wg).ravel()
    out = (*face_shapes(face_type, pts), w)
    for a in out:
        a.flags.writeable = False
    return out


#: reference coordinates of the face centres
_CENTRE = {"triangle": (1 / 3, 1 / 3), "triangle6": (1 / 3, 1 / 3), "quad": (0.0, 0.0)}


def _values(spec, x, shape, what):
    v = np.asarray(spec(x) if callable(spec) else spec, dtype=float)
    if not callable(spec) and v.shape == shape[1:]:
        v = np.broadcast_to(v, shape)
    if v.shape != shape or not np.all(np.isfinite(v)):
        raise ModelError(f"{what} (Pa) must be finite of shape {shape[1:]} (a constant) or {shape} (a "
                         f"function of the points), got shape {v.shape}")
    return v


def face_forces(face_type: str, xyz, *, traction=None, pressure=None) -> np.ndarray:
    """Consistent nodal forces of a traction or pressure on faces of one type.

    Parameters
    ----------
    face_type : str
        ``triangle``, ``triangle6``, ``quad``, ``quad8`` or ``quad9`` (meshio node order).
    xyz : (m, k, 3) array
        Coordinates of the face nodes (m).
    traction : array_like of 3 floats, or callable, optional
        Force per unit area (Pa), or a function of the points ``(g, 3)`` (m) returning ``(g, 3)``
        (Pa).
    pressure : float or callable, optional
        Pressure (Pa) pushing against the right-hand normal of the node order, or a function of
        the points ``(g, 3)`` (m) returning ``(g,)`` (Pa).

    Returns
    -------
    f : (m, k, 3) array
        Nodal forces (N).
    """
    if (traction is None) == (pressure is None):
        raise ModelError("give exactly one of traction (Pa, a vector) and pressure (Pa)")
    if face_type not in _FACE_NODES:
        raise MeshError(f"unknown face type {face_type!r}; fesub knows {sorted(_FACE_NODES)}")
    k = _FACE_NODES[face_type]
    xyz = np.asarray(xyz, dtype=float)
    if xyz.ndim != 3 or xyz.shape[1:] != (k, 3) or not np.all(np.isfinite(xyz)):
        raise MeshError(f"{face_type} coordinates must be finite of shape (m, {k}, 3), got {xyz.shape}")
    N, dN, w = _face_rule(face_type)
    x = np.einsum("gk,mkc->mgc", N, xyz)
    area = np.cross(np.einsum("gk,mkc->mgc", dN[..., 0], xyz),
                    np.einsum("gk,mkc->mgc", dN[..., 1], xyz))  # normal x dA per reference area
    pts = x.reshape(-1, 3)
    if pressure is not None:
        t = -_values(pressure, pts, (len(pts),), "pressure").reshape(x.shape[:2])[..., None] * area
    else:
        t = _values(traction, pts, (len(pts), 3), "traction").reshape(x.shape) * np.linalg.norm(
            area, axis=-1, keepdims=True)
    return np.einsum("gk,mgc,g->mkc", N, t, w)


def _cell_faces(mesh, keep=None) -> list:
    """The faces of the solid cells (shared faces once per cell) in the cells' local order,
    those with all corners in the node mask ``keep`` if given."""
    out = []
    for ctype, conn in mesh.cells.items():
        first = 0
        for ftype, local in CELL_FACES[ctype]:
            loc = np.asarray(local)
            nodes = conn[:, loc].reshape(-1, loc.shape[1])
            cell = np.repeat(np.arange(len(conn)), len(loc))
            lf = np.tile(np.arange(first, first + len(loc)), len(conn))
            first += len(loc)
            faces = SolidFaces(ftype, ctype, nodes, cell, lf)
            if keep is not None:
                faces = faces.take(keep[nodes[:, :FACE_CORNERS[ftype]]].all(axis=1))
            out.append(faces)
    return out


def _outward(mesh, faces: SolidFaces) -> SolidFaces:
    """The faces with their nodes ordered so that the right-hand normal points out of the
    owning cell (checked at the face centre against the direction from the cell's centroid)."""
    X = mesh.points[faces.nodes]
    centre = mesh.points[mesh.cells[faces.cell_type][faces.cell]].mean(axis=1)
    mid = face_shapes(faces.face_type, _CENTRE[faces.face_type])[1][0]
    normal = np.cross(np.einsum("k,mkc->mc", mid[:, 0], X), np.einsum("k,mkc->mc", mid[:, 1], X))
    inward = np.einsum("mc,mc->m", normal, X.mean(axis=1) - centre) < 0
    nodes = faces.nodes.copy()
    nodes[inward] = nodes[inward][:, _FLIP[faces.face_type]]
    return SolidFaces(faces.face_type, faces.cell_type, nodes, faces.cell, faces.local)


def _void(keys: np.ndarray) -> np.ndarray:
    keys = np.ascontiguousarray(np.sort(keys, axis=1), dtype=np.int64)
    return keys.view(np.dtype((np.void, 8 * keys.shape[1]))).ravel()


class _FaceTable:
    """All cell faces, by corner count: sorted corner keys, owners and multiplicities."""

    def __init__(self, mesh, keep=None):
        self.blocks = _cell_faces(mesh, keep)
        self.boundary = [None] * len(self.blocks)
        self.keys, self.first, self.count, self.owner = {}, {}, {}, {}
        for c in (3, 4):
            ids = [i for i, b in enumerate(self.blocks) if FACE_CORNERS[b.face_type] == c]
            if not ids:
                continue
            v = np.concatenate([_void(self.blocks[i].nodes[:, :c]) for i in ids])
            u, idx, inv, cnt = np.unique(v, return_index=True, return_inverse=True, return_counts=True)
            self.keys[c], self.first[c], self.count[c] = u, idx, cnt
            self.owner[c] = (np.concatenate([np.full(len(self.blocks[i]), i) for i in ids]),
                             np.concatenate([np.arange(len(self.blocks[i])) for i in ids]))
            once = cnt[inv] == 1
            start = 0
            for i in ids:
                self.boundary[i] = once[start:start + len(self.blocks[i])]
                start += len(self.blocks[i])

    def lookup(self, corners: np.ndarray, source: str):
        """(block, row) of the first cell face with these corners (w, c), and whether all lie
        on the boundary; MeshError for corners that are no cell face."""
        c = corners.shape[1]
        v = np.unique(_void(corners))
        u = self.keys.get(c, np.empty(0, v.dtype))
        pos = np.minimum(np.searchsorted(u, v), max(len(u) - 1, 0))
        hit = (u[pos] == v) if len(u) else np.zeros(len(v), bool)
        if not hit.all():
            bad = np.frombuffer(v[int(np.argmin(hit))].tobytes(), dtype=np.int64)
            raise MeshError(f"{source}: nodes {bad.tolist()} are not the corners of a face of a "
                            f"solid cell")
        rows = self.first[c][pos]
        return self.owner[c][0][rows], self.owner[c][1][rows], bool((self.count[c][pos] == 1).all())


def solid_boundary_faces(mesh) -> list:
    """The boundary faces of a solid mesh (held by one cell only), oriented outwards.

    Parameters
    ----------
    mesh : fesub.fe.SolidMesh
        The mesh (coordinates in m).

    Returns
    -------
    list of SolidFaces
        One entry per (owning cell type, face type) present, each face with its owning cell and
        local face number.
    """
    table = _FaceTable(mesh)
    return [_outward(mesh, b.take(table.boundary[i])) for i, b in enumerate(table.blocks)]


def _corner_arrays(where, source: str) -> list:
    """Corner node arrays (w, 3 or 4) of surface cells, SolidFaces or their lists."""
    if isinstance(where, dict):
        where = list(where.items())
    elif isinstance(where, SolidFaces) or hasattr(where, "data") and hasattr(where, "type"):
        where = [where]
    out = []
    for item in where:
        if isinstance(item, SolidFaces):
            ctype, conn = item.face_type, item.nodes
        elif hasattr(item, "data") and hasattr(item, "type"):  # a meshio CellBlock
            ctype, conn = item.type, item.data
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            ctype, conn = item
        else:
            raise MeshError(f"{source}: faces must be a node set name, SolidFaces, surface cells "
                            f"(a dict type -> connectivity, or meshio cell blocks), got "
                            f"{type(item).__name__}")
        if ctype not in FACE_CORNERS:
            raise MeshError(f"{source}: {ctype!r} cells are no faces; surface cell types are "
                            f"{sorted(FACE_CORNERS)}")
        conn = np.asarray(conn)
        k = _FACE_NODES[ctype]
        if conn.ndim != 2 or conn.shape[1] != k or conn.dtype.kind not in "iu":
            raise MeshError(f"{source}: {ctype} cells must be an integer (m, {k}) array, got "
                            f"{conn.dtype} {conn.shape}")
        if len(conn):
            out.append(conn[:, :FACE_CORNERS[ctype]])
    if not out:
        raise MeshError(f"{source}: no faces given")
    return out


def _select(mesh, where):
    """The faces to load (list of SolidFaces, oriented outwards) and whether they all lie on
    the boundary. Only the cell faces whose corners are all candidates are examined."""
    keep = np.zeros(mesh.n_points, bool)
    if isinstance(where, str):
        keep[mesh.nodes(where)] = True  # MeshError naming the available sets
        table = _FaceTable(mesh, keep)
        sel = [b.take(table.boundary[i] & keep[b.nodes].all(axis=1)) for i, b in enumerate(table.blocks)]
        sel = [_outward(mesh, s) for s in sel if len(s)]
        if not sel:
            raise MeshError(f"{mesh.source}: node set {where!r} holds no whole boundary face")
        return sel, True
    wanted = _corner_arrays(where, mesh.source)
    for corners in wanted:
        if corners.min() < 0 or corners.max() >= mesh.n_points:
            raise MeshError(f"{mesh.source}: face nodes outside 0..{mesh.n_points - 1}")
        keep[corners] = True
    table = _FaceTable(mesh, keep)
    rows: dict = {}
    boundary = True
    for corners in wanted:
        blocks, r, once = table.lookup(corners, mesh.source)
        boundary &= once
        for i in np.unique(blocks):
            rows.setdefault(int(i), []).append(r[blocks == i])
    sel = [_outward(mesh, table.blocks[i].take(np.unique(np.concatenate(r)))) for i, r in rows.items()]
    return sel, boundary


def face_load(mesh, where, *, traction=None, pressure=None, dofmap=None) -> np.ndarray:
    """Consistent nodal forces of a distributed load on faces of a 3D solid mesh.

    Parameters
    ----------
    mesh : fesub.fe.SolidMesh
        The mesh (coordinates in m).
    where : str, SolidFaces, dict or meshio cell blocks
        A node set name (every boundary face whose nodes all lie in the set is loaded);
        :class:`SolidFaces` or a list of them; or surface cells: a dict ``{type: (m, k) node
        array}`` (types ``triangle``, ``triangle6``, ``quad``, ``quad8``, ``quad9``, e.g. from
        :func:`surface_cells`) or meshio cell blocks. Each face is loaded once, on the solid
        face with its corners.
    traction : array_like of 3 floats, or callable, optional
        Force per unit area (Pa), or a function of the points ``(g, 3)`` (m) returning ``(g, 3)``
        (Pa).
    pressure : float or callable, optional
        Pressure (Pa) pushing against the outward normal of the cell holding the face, or a
        function of the points ``(g, 3)`` (m) returning ``(g,)`` (Pa). Only on boundary faces.
    dofmap : fesub.fe.SolidDofMap, optional
        The model's DOF map, checked to have the mesh's nodes; the forces are always numbered as
        by :func:`fesub.fe.solid_mesh_matrices` (DOF ``3 node + c``).

    Returns
    -------
    f : (3 n_points,) array
        Nodal forces (N), node-major (x, y, z) DOFs.
    """
    if (traction is None) == (pressure is None):
        raise ModelError("give exactly one of traction (Pa, a vector) and pressure (Pa)")
    if dofmap is not None and (dofmap.ndpn != 3 or dofmap.n_nodes != mesh.n_points):
        raise ModelError(f"dofmap must have 3 DOFs per node and {mesh.n_points} nodes, got "
                         f"{dofmap.ndpn} and {dofmap.n_nodes}")
    sel, on_boundary = _select(mesh, where)
    if pressure is not None and not on_boundary:
        raise ModelError("a pressure acts on boundary faces only (its side is ambiguous inside the "
                         "mesh); give a traction for a load on an interior face")
    f = np.zeros(3 * mesh.n_points)
    for faces in sel:
        fe = face_forces(faces.face_type, mesh.points[faces.nodes], traction=traction, pressure=pressure)
        f += np.bincount((3 * faces.nodes[..., None] + np.arange(3)).ravel(), weights=fe.ravel(),
                         minlength=f.size)
    return f


def surface_cells(m, name: str) -> dict:
    """The surface cells of a Gmsh physical surface in a meshio mesh.

    Parameters
    ----------
    m : meshio.Mesh
        Mesh read by meshio from a Gmsh file (coordinates in m; cell data ``gmsh:physical``, field
        data naming the physical groups).
    name : str
        Name of the physical surface (dimension 2).

    Returns
    -------
    dict
        Surface cell type -> (m, k) node indices, for :func:`face_load`.
    """
    tags = {n: int(np.asarray(v).ravel()[0]) for n, v in (m.field_data or {}).items()
            if np.asarray(v).size >= 2 and int(np.asarray(v).ravel()[1]) == 2}
    if name not in tags:
        raise MeshError(f"no physical surface {name!r}; available: {sorted(tags)}")
    phys = (m.cell_data or {}).get("gmsh:physical")
    out: dict = {}
    for b, block in enumerate(m.cells):
        if block.type in FACE_CORNERS and phys is not None:
            conn = np.asarray(block.data)[np.asarray(phys[b]) == tags[name]]
            if len(conn):
                out[block.type] = np.vstack([out[block.type], conn]) if block.type in out else conn
    if not out:
        raise MeshError(f"physical surface {name!r} has no surface cells")
    return out
