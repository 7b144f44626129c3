"""3D solid meshes: points, solid cells by type, named node sets; meshio I/O; a box generator.

A :class:`SolidMesh` holds node coordinates (x, y, z in metres) and cell blocks by meshio type
name (``hexahedron``, ``tetra``, ``tetra10``, ``wedge``; VTK node order), possibly several types
at once (a mixed mesh). Named node sets come from meshio point sets, from point-data indicator
arrays ``nodeset:NAME`` (what :meth:`SolidMesh.to_meshio` writes) and from Gmsh physical groups
of points, curves and surfaces (the nodes of their cells), so that a face tagged in Gmsh can be
clamped by name. :meth:`SolidMesh.on_plane` finds the nodes of any plane.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import MeshError, check_count, check_positive
from .solid_shapes import CELL_NODES, TET10_EDGES

__all__ = ["SolidMesh", "box", "read_solid", "quadratic_tetra"]

_AXES = {"x": 0, "y": 1, "z": 2}


@dataclass
class SolidMesh:
    """A 3D finite-element mesh of solid cells.

    Parameters
    ----------
    points : (n, 3) float array
        Node coordinates (m).
    cells : dict
        Cell type -> (ne, k) int connectivity, types ``hexahedron`` (8), ``tetra`` (4),
        ``tetra10`` (10), ``wedge`` (6) in meshio (VTK) node order.
    node_sets : dict
        Name -> node indices (stored sorted and unique).
    source : str
        Where the mesh came from (used in error messages).
    """

    points: np.ndarray
    cells: dict
    node_sets: dict = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self):
        pts = np.asarray(self.points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] == 0:
            raise MeshError(f"{self.source}: points must be an (n, 3) array, got shape {pts.shape}")
        if not np.all(np.isfinite(pts)):
            raise MeshError(f"{self.source}: points contain NaN or inf")
        self.points = np.ascontiguousarray(pts)
        cells = {}
        for ctype, conn in dict(self.cells).items():
            if ctype not in CELL_NODES:
                raise MeshError(f"{self.source}: unknown solid cell type {ctype!r}; fesub knows "
                                f"{sorted(CELL_NODES)}")
            conn = np.asarray(conn)
            k = CELL_NODES[ctype]
            if conn.ndim != 2 or conn.shape[1] != k or not np.issubdtype(conn.dtype, np.integer):
                raise MeshError(f"{self.source}: {ctype} cells must be an integer (ne, {k}) array, "
                                f"got {conn.dtype} {conn.shape}")
            if conn.size and (conn.min() < 0 or conn.max() >= len(pts)):
                raise MeshError(f"{self.source}: {ctype} connectivity refers to nodes outside "
                                f"0..{len(pts) - 1}")
            if len(conn):
                cells[ctype] = np.ascontiguousarray(conn, dtype=np.int64)
        if not cells:
            raise MeshError(f"{self.source}: mesh has no solid cells (types {sorted(CELL_NODES)})")
        self.cells = cells
        sets = {}
        for name, v in self.node_sets.items():
            v = np.unique(np.asarray(v, dtype=np.int64))
            if v.size and (v.min() < 0 or v.max() >= len(pts)):
                raise MeshError(f"{self.source}: node set {name!r} refers to nodes outside the mesh")
            sets[name] = v
        self.node_sets = sets

    @property
    def n_points(self) -> int:
        return len(self.points)

    @property
    def n_cells(self) -> int:
        return sum(len(c) for c in self.cells.values())

    def nodes(self, name: str) -> np.ndarray:
        """Indices of the nodes of node set ``name``."""
        if name not in self.node_sets:
            raise MeshError(f"{self.source}: no node set {name!r}; available: {sorted(self.node_sets)}")
        return self.node_sets[name]

    def on_plane(self, axis: str, value: float, *, tol: float = 1e-9) -> np.ndarray:
        """Nodes on the plane ``axis = value`` (axis ``"x"``, ``"y"`` or ``"z"``, value in m),
        within ``tol`` times the mesh size."""
        if axis not in _AXES:
            raise MeshError(f"axis must be one of 'x', 'y', 'z', got {axis!r}")
        size = float(np.ptp(self.points, axis=0).max()) or 1.0
        return np.flatnonzero(np.abs(self.points[:, _AXES[axis]] - float(value)) <= tol * size)

    def to_meshio(self):
        """A :class:`meshio.Mesh` with the cell blocks and the node sets as ``nodeset:NAME``
        point-data indicators (read back by :func:`read_solid`)."""
        import meshio

        point_data = {}
        for name, nodes in self.node_sets.items():
            ind = np.zeros(self.n_points, np.int32)
            ind[nodes] = 1
            point_data[f"nodeset:{name}"] = ind
        return meshio.Mesh(self.points, list(self.cells.items()), point_data=point_data)


def from_meshio(m, source: str = "<meshio>") -> SolidMesh:
    """A :class:`SolidMesh` from a :class:`meshio.Mesh`: its solid cell blocks (same types merged)
    and its node sets (see the module docstring); other cells are dropped."""
    cells, sets = {}, {}
    phys = (m.cell_data or {}).get("gmsh:physical")
    names = {}
    for name, val in (m.field_data or {}).items():
        val = np.asarray(val).ravel()
        if len(val) >= 2:
            names[(int(val[0]), int(val[1]))] = name
    dims = {"vertex": 0, "line": 1, "line3": 1, "triangle": 2, "triangle6": 2, "quad": 2, "quad8": 2,
            "quad9": 2}
    for b, block in enumerate(m.cells):
        conn = np.asarray(block.data, dtype=np.int64)
        if block.type in CELL_NODES:
            cells[block.type] = np.vstack([cells[block.type], conn]) if block.type in cells else conn
        elif phys is not None and block.type in dims:
            tags = np.asarray(phys[b])
            for t in np.unique(tags):
                name = names.get((int(t), dims[block.type]), f"physical_{int(t)}")
                sets[name] = np.union1d(sets.get(name, []), conn[tags == t].ravel())
    for k, v in (m.point_data or {}).items():
        if k.startswith("nodeset:"):
            sets[k.split(":", 1)[1]] = np.flatnonzero(np.asarray(v).ravel() != 0)
    for k, v in (getattr(m, "point_sets", None) or {}).items():
        sets.setdefault(k, np.asarray(v, dtype=np.int64))
    pts = np.asarray(m.points, dtype=float)
    if pts.ndim == 2 and pts.shape[1] == 2:
        raise MeshError(f"{source}: a 2D mesh has no solid cells; read it with fesub.fe.read")
    return SolidMesh(pts, cells, sets, source)


def read_solid(path, *, file_format: str | None = None) -> SolidMesh:
    """Read a 3D solid mesh with meshio (Gmsh, VTU, XDMF, Abaqus .inp, ...).

    Parameters
    ----------
    path : str or path-like
        Mesh file; coordinates in m.
    file_format : str, optional
        meshio format name, when the extension does not tell.

    Returns
    -------
    SolidMesh
        Solid cells and named node sets (see the module docstring).
    """
    from .mesh_files import meshio_read

    path = os.fspath(path)
    m = meshio_read(path, file_format=file_format)
    try:
        return from_meshio(m, path)
    except MeshError:
        raise
    except Exception as exc:  # noqa: BLE001 - what a reader returned is not a consistent mesh
        raise MeshError(f"{path}: inconsistent mesh data ({type(exc).__name__}: {exc})") from None


def quadratic_tetra(points: np.ndarray, tets: np.ndarray):
    """Add a node at the middle of every edge of 4-node tetrahedra: (points (n', 3) m, tetra10
    connectivity (ne, 10)), edges shared between tetrahedra getting one node."""
    points = np.asarray(points, dtype=float)
    tets = np.asarray(tets, dtype=np.int64)
    pairs = np.stack([tets[:, list(e)] for e in TET10_EDGES], axis=1)  # (ne, 6, 2)
    key = np.sort(pairs, axis=2).reshape(-1, 2)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    mid = 0.5 * (points[uniq[:, 0]] + points[uniq[:, 1]])
    conn = np.hstack([tets, len(points) + inv.reshape(len(tets), 6)])
    return np.vstack([points, mid]), conn


def _split_hexes(points: np.ndarray, hexes: np.ndarray, element: str):
    """Split structured hexahedra into conforming tetrahedra (6 each, around the 0-6 diagonal)
    or wedges (2 each, cut along the diagonal 0-2 of the bottom face)."""
    if element == "wedge":
        return points, np.vstack([hexes[:, [0, 1, 2, 4, 5, 6]], hexes[:, [0, 2, 3, 4, 6, 7]]])
    # the six monotone paths 0 -> 6 through the cube, one tetrahedron each
    paths = [(0, 1, 2, 6), (0, 1, 5, 6), (0, 3, 2, 6), (0, 3, 7, 6), (0, 4, 5, 6), (0, 4, 7, 6)]
    tets = np.vstack([hexes[:, list(p)] for p in paths])
    x = points[tets]
    vol = np.einsum("ei,ei->e", np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]), x[:, 3] - x[:, 0])
    flip = vol < 0
    tets[flip, 1], tets[flip, 2] = tets[flip, 2], tets[flip, 1].copy()
    if element == "tetra10":
        return quadratic_tetra(points, tets)
    return points, tets


def box(lx: float, ly: float, lz: float, nx: int, ny: int, nz: int, *, origin=(0.0, 0.0, 0.0),
        element: str = "hexahedron") -> SolidMesh:
    """Structured mesh of the box ``lx x ly x lz`` (m) with ``nx x ny x nz`` divisions.

    Node sets ``xmin``, ``xmax``, ``ymin``, ``ymax``, ``zmin``, ``zmax`` hold the nodes of the six
    faces (``xmin`` is the face x = origin x: clamp it for a cantilever along x).

    Parameters
    ----------
    lx, ly, lz : float
        Sides of the box along x, y, z (m), > 0.
    nx, ny, nz : int
        Divisions along x, y, z (-), >= 1.
    origin : tuple of 3 floats
        Corner of the box with the smallest coordinates (m).
    element : str
        ``"hexahedron"`` (8-node), ``"tetra"`` (six 4-node tetrahedra per hexahedron),
        ``"tetra10"`` (the same with mid-edge nodes) or ``"wedge"`` (two 6-node wedges per
        hexahedron).

    Returns
    -------
    SolidMesh
        Coordinates in m, one cell block, the six face node sets.
    """
    lx, ly, lz = (check_positive(n, v, error=MeshError) for n, v in (("lx", lx), ("ly", ly), ("lz", lz)))
    # 1e8 cells is ~100 GB of element matrices: beyond it, a typo more likely than a model
    nx = check_count("nx", nx, 1, 10**8, error=MeshError)
    ny = check_count("ny", ny, 1, 10**8 // nx, error=MeshError)
    nz = check_count("nz", nz, 1, 10**8 // (nx * ny), error=MeshError)
    if element not in CELL_NODES:
        raise MeshError(f"element must be one of {sorted(CELL_NODES)}, got {element!r}")
    o = np.asarray(origin, dtype=float)
    if o.shape != (3,) or not np.all(np.isfinite(o)):
        raise MeshError(f"origin must be 3 finite coordinates (m), got {origin!r}")
    X, Y, Z = np.meshgrid(np.linspace(0, lx, nx + 1), np.linspace(0, ly, ny + 1),
                          np.linspace(0, lz, nz + 1), indexing="ij")
    pts = np.column_stack([X.ravel(), Y.ravel(), Z.ravel()]) + o
    nid = np.arange(pts.shape[0]).reshape(nx + 1, ny + 1, nz + 1)
    c = [nid[i:nx + i, j:ny + j, k:nz + k].ravel()
         for i, j, k in ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1))]
    hexes = np.column_stack(c)
    if element != "hexahedron":
        pts, conn = _split_hexes(pts, hexes, element)
    else:
        conn = hexes
    lo, hi = o, o + (lx, ly, lz)
    size = max(lx, ly, lz)
    sets = {}
    for axis, a in _AXES.items():
        sets[f"{axis}min"] = np.flatnonzero(np.abs(pts[:, a] - lo[a]) <= 1e-12 * size)
        sets[f"{axis}max"] = np.flatnonzero(np.abs(pts[:, a] - hi[a]) <= 1e-12 * size)
    return SolidMesh(pts, {element: conn}, sets, source=f"box({lx}, {ly}, {lz}, {nx}, {ny}, {nz}, {element})")
