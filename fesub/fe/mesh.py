"""Meshes: points, cells by type, named node sets and edge sets; meshio I/O (the generators of
structured meshes are in :mod:`fesub.fe.generators`).

A :class:`Mesh` is 2D (x, y in metres). Cells are stored by meshio type name (``"quad"``,
``"triangle"``, ``"line"``). Named sets survive every format meshio writes:

* Gmsh (.msh 2.2 / 4.1): node sets are physical groups of ``vertex`` cells (dimension 0), edge
  sets physical groups of ``line`` cells (dimension 1); physical groups of the area cells are kept
  as element sets. meshio keys physical names by name alone, so a node set that shares its name
  with an edge or element set (``rectangle`` makes both a node set and an edge set ``"bottom"``)
  is written as the dimension-0 group ``"nodeset:NAME"``; the prefix is stripped on reading.
* other formats (VTU, XDMF, ...): node sets are point-data indicator arrays ``nodeset:NAME``, edge sets
  are ``line`` cells flagged by cell-data indicator arrays ``edgeset:NAME``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import MeshError

__all__ = ["Mesh", "read", "AREA_CELLS"]

#: cell types fesub builds elements for, with their node counts
AREA_CELLS = {"quad": 4, "triangle": 3, "quad8": 8, "quad9": 9, "triangle6": 6}
_NODESET_PREFIX = "nodeset:"
_KNOWN = {**AREA_CELLS, "line": 2}
_CORNERS = {"quad8": 4, "quad9": 4, "triangle6": 3}  # quadratic cells list their corners first


@dataclass
class Mesh:
    """A 2D finite-element mesh.

    Parameters
    ----------
    points : (n, 2) float array
        Node coordinates (m). A third coordinate, if given, must be zero and is dropped.
    cells : dict
        Cell type -> (ne, k) int connectivity. Supported types: ``quad``, ``triangle`` (plane
        elements) and ``line`` (frame elements).
    node_sets : dict
        Name -> sorted unique node indices.
    edge_sets : dict
        Name -> (m, 2) node pairs (element edges, in order along the edge where possible).
    element_sets : dict
        Name -> (cell type, element indices).
    source : str
        File the mesh came from (used in error messages).
    """

    points: np.ndarray
    cells: dict
    node_sets: dict = field(default_factory=dict)
    edge_sets: dict = field(default_factory=dict)
    element_sets: dict = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self):
        pts = np.asarray(self.points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3) or pts.shape[0] == 0:
            raise MeshError(f"{self.source}: points must be an (n, 2) array, got shape {pts.shape}")
        if pts.shape[1] == 3:
            if np.any(np.abs(pts[:, 2]) > 1e-12 * max(1.0, np.abs(pts[:, :2]).max())):
                raise MeshError(f"{self.source}: points have non-zero z; fesub meshes are planar")
            pts = pts[:, :2]
        if not np.all(np.isfinite(pts)):
            raise MeshError(f"{self.source}: points contain NaN or inf")
        self.points = np.ascontiguousarray(pts)
        cells = {}
        for ctype, conn in dict(self.cells).items():
            if ctype not in _KNOWN:
                raise MeshError(f"{self.source}: unknown cell type {ctype!r}; fesub knows "
                                f"{sorted(_KNOWN)}")
            conn = np.asarray(conn)
            if conn.ndim != 2 or conn.shape[1] != _KNOWN[ctype] or not np.issubdtype(conn.dtype, np.integer):
                raise MeshError(f"{self.source}: {ctype} cells must be an integer (ne, {_KNOWN[ctype]}) "
                                f"array, got {conn.dtype} {conn.shape}")
            if conn.size and (conn.min() < 0 or conn.max() >= len(pts)):
                raise MeshError(f"{self.source}: {ctype} connectivity refers to nodes outside "
                                f"0..{len(pts) - 1}")
            cells[ctype] = np.ascontiguousarray(conn, dtype=np.int64)
        if not cells:
            raise MeshError(f"{self.source}: mesh has no cells")
        self.cells = cells
        self.node_sets = {k: np.unique(np.asarray(v, dtype=np.int64)) for k, v in self.node_sets.items()}
        for k, v in self.node_sets.items():
            if v.size and (v.min() < 0 or v.max() >= len(pts)):
                raise MeshError(f"{self.source}: node set {k!r} refers to nodes outside the mesh")
        self.edge_sets = {k: np.asarray(v, dtype=np.int64).reshape(-1, 2) for k, v in self.edge_sets.items()}
        for k, v in self.edge_sets.items():
            if v.size and (v.min() < 0 or v.max() >= len(pts)):
                raise MeshError(f"{self.source}: edge set {k!r} refers to nodes outside the mesh")

    # ------------------------------------------------------------------ queries
    @property
    def n_points(self) -> int:
        return len(self.points)

    @property
    def element_type(self) -> str:
        """The structural cell type: an area type of :data:`AREA_CELLS`, 'line' for a frame
        mesh, or 'mixed' for several area types (see :meth:`blocks`)."""
        area = [c for c in self.cells if c in AREA_CELLS]
        if len(area) > 1:
            return "mixed"
        if area:
            return area[0]
        return "line"

    def blocks(self) -> dict:
        """Structural cells by type: every area block, or the lines of a frame mesh."""
        area = {c: v for c, v in self.cells.items() if c in AREA_CELLS}
        return area or {"line": self.cells["line"]}

    def elements(self) -> np.ndarray:
        """Connectivity of the structural cells (area cells, or lines for a frame mesh); a mesh
        of several area types has no single array: use :meth:`blocks`."""
        if self.element_type == "mixed":
            raise MeshError(f"{self.source}: mixed area cells {sorted(self.blocks())} have no single "
                            "connectivity array; use Mesh.blocks()")
        return self.cells[self.element_type]

    def nodes(self, name: str) -> np.ndarray:
        """Indices of the nodes of node set ``name`` (or of the nodes of edge set ``name``)."""
        if name in self.node_sets:
            return self.node_sets[name]
        if name in self.edge_sets:
            return np.unique(self.edge_sets[name])
        raise MeshError(f"{self.source}: no node set {name!r}; available: "
                        f"{sorted(set(self.node_sets) | set(self.edge_sets))}")

    def edges(self, name: str) -> np.ndarray:
        """(m, 2) node pairs of edge set ``name``."""
        if name not in self.edge_sets:
            raise MeshError(f"{self.source}: no edge set {name!r}; available: {sorted(self.edge_sets)}")
        return self.edge_sets[name]

    def node(self, name: str) -> int:
        """The single node of a one-node set (error if the set has several)."""
        idx = self.nodes(name)
        if idx.size != 1:
            raise MeshError(f"{self.source}: node set {name!r} has {idx.size} nodes, expected one")
        return int(idx[0])

    def nearest_node(self, xy) -> int:
        """Index of the node closest to ``xy`` (m)."""
        d = np.linalg.norm(self.points - np.asarray(xy, float)[None, :2], axis=1)
        return int(np.argmin(d))

    def check(self, *, tol: float = 1e-9) -> "Mesh":
        """Raise :class:`MeshError` on unused nodes, duplicate nodes or inverted/degenerate cells.

        ``tol`` is relative to the mesh size. Returns the mesh itself.
        """
        # areas are products of coordinates: beyond ~1e150 m they overflow, and no structure is
        # that large; say so instead of calling every cell degenerate
        if not np.all(np.isfinite(self.points)):
            raise MeshError(f"{self.source}: node coordinates must be finite (NaN or inf found)")
        big = float(np.abs(self.points).max()) if self.points.size else 0.0
        if big > 1e100:
            raise MeshError(f"{self.source}: node coordinates must be below 1e100 m in magnitude, "
                            f"got {big:.3g} m (units not in metres?)")
        used = np.zeros(self.n_points, bool)
        for conn in self.cells.values():
            used[conn.ravel()] = True
        if not used.all():
            bad = np.flatnonzero(~used)
            raise MeshError(f"{self.source}: {bad.size} unused node(s), e.g. {bad[:5].tolist()}")
        size = np.ptp(self.points, axis=0).max() or 1.0
        key = np.round(self.points / (tol * size)).astype(np.int64)
        _, first, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
        if (counts > 1).any():
            dup = np.flatnonzero(counts > 1)
            raise MeshError(f"{self.source}: {int(counts[dup].sum() - dup.size)} duplicate node(s) "
                            f"at {self.points[first[dup[0]]].tolist()}")
        for ctype in AREA_CELLS:
            if ctype in self.cells:
                area = signed_areas(self.points, self.cells[ctype][:, :_CORNERS.get(ctype, None)])
                if np.any(area <= tol * size**2):
                    i = int(np.argmin(area))
                    raise MeshError(f"{self.source}: {ctype} cell {i} is inverted or degenerate "
                                    f"(signed area {area[i]:.3e} m^2); nodes must run anticlockwise")
        if "line" in self.cells and self.element_type == "line":
            seg = self.points[self.cells["line"][:, 1]] - self.points[self.cells["line"][:, 0]]
            if np.any(np.linalg.norm(seg, axis=1) <= tol * size):
                raise MeshError(f"{self.source}: zero-length line cell")
        return self

    def transformed(self, *, angle: float = 0.0, origin=(0.0, 0.0), translate=(0.0, 0.0)) -> "Mesh":
        """A copy rotated by ``angle`` (rad, anticlockwise) about ``origin`` and then translated (m)."""
        c, s = np.cos(angle), np.sin(angle)
        R = np.array([[c, -s], [s, c]])
        o = np.asarray(origin, float)
        pts = (self.points - o) @ R.T + o + np.asarray(translate, float)
        return Mesh(pts, {k: v.copy() for k, v in self.cells.items()}, dict(self.node_sets),
                    dict(self.edge_sets), dict(self.element_sets), self.source)

    # ------------------------------------------------------------------ I/O
    def to_meshio(self, *, gmsh: bool = False):
        """Convert to a :class:`meshio.Mesh` carrying the named sets (see module docstring)."""
        import meshio

        pts3 = np.column_stack([self.points, np.zeros(self.n_points)])
        blocks, cell_data, field_data = [], {}, {}
        struct = [(k, v) for k, v in self.cells.items() if not (k == "line" and self.element_type != "line")]
        if gmsh:
            phys, geom = [], []
            tag = 1
            for ctype, conn in struct:
                blocks.append((ctype, conn))
                dim = 1 if ctype == "line" else 2
                ids = np.zeros(len(conn), dtype=np.int64)
                for name, (etype, idx) in self.element_sets.items():
                    if etype == ctype:
                        field_data[name] = np.array([tag, dim])
                        ids[np.asarray(idx)] = tag
                        tag += 1
                phys.append(ids)
                geom.append(np.ones(len(conn), dtype=np.int64))
            for name, edges in self.edge_sets.items():
                field_data[name] = np.array([tag, 1])
                blocks.append(("line", edges))
                phys.append(np.full(len(edges), tag, dtype=np.int64))
                geom.append(np.full(len(edges), tag, dtype=np.int64))
                tag += 1
            for name, nodes in self.node_sets.items():
                field_data[self._gmsh_node_group(name)] = np.array([tag, 0])
                blocks.append(("vertex", nodes.reshape(-1, 1)))
                phys.append(np.full(len(nodes), tag, dtype=np.int64))
                geom.append(np.full(len(nodes), tag, dtype=np.int64))
                tag += 1
            cell_data = {"gmsh:physical": phys, "gmsh:geometrical": geom}
            return meshio.Mesh(pts3, blocks, cell_data=cell_data, field_data=field_data)
        for ctype, conn in struct:
            blocks.append((ctype, conn))
        for edges in self.edge_sets.values():
            blocks.append(("line", edges))
        sizes = [len(c) for _, c in blocks]
        for k, (name, edges) in enumerate(self.edge_sets.items()):
            data = [np.zeros(n, np.int32) for n in sizes]
            data[len(struct) + k][:] = 1
            cell_data[f"edgeset:{name}"] = data
        for name, (etype, idx) in self.element_sets.items():
            data = [np.zeros(n, np.int32) for n in sizes]
            for b, (ctype, _) in enumerate(struct):
                if ctype == etype:
                    data[b][np.asarray(idx)] = 1
            cell_data[f"elementset:{name}"] = data
        point_data = {}
        for name, nodes in self.node_sets.items():
            ind = np.zeros(self.n_points, np.int32)
            ind[nodes] = 1
            point_data[f"nodeset:{name}"] = ind
        return meshio.Mesh(pts3, blocks, point_data=point_data, cell_data=cell_data)

    def _gmsh_node_group(self, name: str) -> str:
        """Physical-group name of node set ``name`` (prefixed when the name is taken by another set)."""
        taken = set(self.edge_sets) | set(self.element_sets)
        return f"{_NODESET_PREFIX}{name}" if name in taken else name

    def _write_gmsh41(self, path: str) -> None:
        """Write Gmsh 4.1 ASCII with physical groups for the element, edge and node sets.

        One entity per node set (dimension 0), per edge set (dimension 1) and per run of
        consecutive structural cells with the same element set, so that cell order is kept. All
        nodes are listed in the block of the first structural entity. A node set is one point
        entity holding several point elements: valid MSH 4.1 that meshio and fesub read back, but
        not how Gmsh itself stores geometry points (one node each), so Gmsh may re-classify them.
        """
        gtype = {"vertex": 15, "line": 1, "triangle": 2, "quad": 3, "triangle6": 9, "quad9": 10, "quad8": 16}
        struct = [(k, v) for k, v in self.cells.items() if not (k == "line" and self.element_type != "line")]
        names, blocks = [], []  # names: (dim, phys, name); blocks: (dim, entity, gmsh type, conn, phys)
        count = {0: 0, 1: 0, 2: 0}
        phys = 0
        for ctype, conn in struct:
            dim = 1 if ctype == "line" else 2
            ids = np.zeros(len(conn), dtype=np.int64)
            for name, (etype, idx) in self.element_sets.items():
                if etype == ctype:
                    phys += 1
                    names.append((dim, phys, name))
                    ids[np.asarray(idx, dtype=np.int64)] = phys
            unnamed = 0
            if np.any(ids == 0):
                # meshio drops the physical data of a file in which some entity has none: give the
                # cells outside every element set an unnamed group
                phys += 1
                unnamed = phys
            cuts = np.flatnonzero(np.diff(ids)) + 1
            for run in np.split(np.arange(len(conn)), cuts):
                count[dim] += 1
                blocks.append((dim, count[dim], gtype[ctype], conn[run], int(ids[run[0]]) or unnamed))
        for name, edges in self.edge_sets.items():
            phys += 1
            names.append((1, phys, name))
            count[1] += 1
            blocks.append((1, count[1], 1, edges, phys))
        for name, nodes in self.node_sets.items():
            phys += 1
            names.append((0, phys, self._gmsh_node_group(name)))
            count[0] += 1
            blocks.append((0, count[0], 15, nodes.reshape(-1, 1), phys))
        pts = np.column_stack([self.points, np.zeros(self.n_points)])
        out = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat", "$PhysicalNames", str(len(names))]
        out += [f'{d} {t} "{nm}"' for d, t, nm in names]
        out += ["$EndPhysicalNames", "$Entities", f"{count[0]} {count[1]} {count[2]} 0"]
        for want in (0, 1, 2):
            for dim, ent, _, conn, ph in blocks:
                if dim != want:
                    continue
                p = pts[np.unique(conn)] if conn.size else np.zeros((1, 3))
                lo, hi = p.min(axis=0), p.max(axis=0)
                box = " ".join(f"{v:.16g}" for v in (lo if dim == 0 else np.concatenate([lo, hi])))
                out.append(f"{ent} {box} 1 {ph}" + ("" if dim == 0 else " 0"))
        out += ["$EndEntities", "$Nodes", f"1 {self.n_points} 1 {self.n_points}",
                f"{blocks[0][0]} {blocks[0][1]} 0 {self.n_points}"]
        out += [str(i + 1) for i in range(self.n_points)]
        out += [f"{x:.17g} {y:.17g} {z:.17g}" for x, y, z in pts]
        n_el = sum(len(b[3]) for b in blocks)
        out += ["$EndNodes", "$Elements", f"{len(blocks)} {n_el} 1 {n_el}"]
        tag = 0
        for dim, ent, gt, conn, _ in blocks:
            out.append(f"{dim} {ent} {gt} {len(conn)}")
            for row in conn:
                tag += 1
                out.append(f"{tag} " + " ".join(str(int(v) + 1) for v in row))
        out.append("$EndElements")
        with open(path, "w") as fh:
            fh.write("\n".join(out) + "\n")

    def write(self, path, *, file_format: str | None = None, **kwargs) -> None:
        """Write the mesh with its named sets through meshio (format from the suffix).

        ``.msh`` files are written as Gmsh 2.2 (ASCII) by default, the Gmsh format in which meshio
        stores physical groups element by element; ``file_format="gmsh"`` (or ``"gmsh41"``) writes
        Gmsh 4.1 ASCII with the same physical groups (fesub's own writer: meshio's cannot write
        physical groups without geometric entity data). :func:`read` reads both.
        """
        import meshio

        path = os.fspath(path)
        if file_format in ("gmsh", "gmsh41"):
            try:
                self._write_gmsh41(path)
            except OSError as exc:
                raise MeshError(f"{path}: cannot write mesh ({type(exc).__name__}: {exc})") from exc
            return
        is_gmsh = path.endswith(".msh") or (file_format or "").startswith("gmsh")
        m = self.to_meshio(gmsh=is_gmsh)
        if is_gmsh:
            kwargs.setdefault("binary", False)
            file_format = file_format or "gmsh22"
        try:
            meshio.write(path, m, file_format=file_format, **kwargs)
        except Exception as exc:  # noqa: BLE001 - meshio raises many types
            raise MeshError(f"{path}: cannot write mesh ({type(exc).__name__}: {exc})") from exc


def signed_areas(points: np.ndarray, conn: np.ndarray) -> np.ndarray:
    """Signed areas (m^2) of polygons given by ``conn`` (shoelace formula)."""
    x = points[conn, 0]
    y = points[conn, 1]
    return 0.5 * np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1)


def _from_meshio(m, source: str) -> Mesh:
    """Build a :class:`Mesh` from a :class:`meshio.Mesh`, recovering the named sets."""
    pts = np.asarray(m.points, dtype=float)
    if pts.ndim != 2 or pts.shape[0] == 0:
        raise MeshError(f"{source}: no points")
    cells: dict = {}
    node_sets: dict = {}
    edge_sets: dict = {}
    element_sets: dict = {}
    blocks = list(m.cells)
    for b in blocks:
        if b.type not in _KNOWN and b.type not in ("vertex", "line3"):
            raise MeshError(f"{source}: unknown cell type {b.type!r}; fesub knows "
                            f"{sorted(_KNOWN)} (and vertex for node sets)")
    has_area = any(b.type in AREA_CELLS for b in blocks)
    phys = m.cell_data.get("gmsh:physical")
    names = {}
    for name, val in (m.field_data or {}).items():
        val = np.atleast_1d(val)
        if len(val) >= 2:
            names[(int(val[0]), int(val[1]))] = name

    def add_cells(ctype, conn):
        if ctype in cells:
            start = len(cells[ctype])
            cells[ctype] = np.vstack([cells[ctype], conn])
        else:
            start = 0
            cells[ctype] = np.asarray(conn)
        return start

    edgeset_keys = [k for k in m.cell_data if k.startswith("edgeset:")]
    mids: list = []
    elemset_keys = [k for k in m.cell_data if k.startswith("elementset:")]
    for b_i, b in enumerate(blocks):
        conn = np.asarray(b.data, dtype=np.int64)
        if b.type == "vertex":
            if phys is not None:
                tags = np.asarray(phys[b_i])
                for t in np.unique(tags):
                    nm = names.get((int(t), 0), f"physical_{int(t)}")
                    if nm.startswith(_NODESET_PREFIX):
                        nm = nm[len(_NODESET_PREFIX):]
                    node_sets[nm] = np.union1d(node_sets.get(nm, []), conn[tags == t].ravel())
            continue
        if b.type == "line3" and not has_area:
            raise MeshError(f"{source}: line3 cells only as edge sets of a plane mesh")
        if b.type in ("line", "line3") and has_area:
            # boundary lines of a plane mesh: edge sets (corner pairs; the mid-nodes of a line3
            # set join the node set of that name, so that a support on the edge holds them)
            if b.type == "line3":
                mids.append(conn)
                conn = conn[:, :2]
            if phys is not None:
                tags = np.asarray(phys[b_i])
                for t in np.unique(tags):
                    nm = names.get((int(t), 1), f"physical_{int(t)}")
                    prev = edge_sets.get(nm, np.zeros((0, 2), np.int64))
                    edge_sets[nm] = np.vstack([prev, conn[tags == t]])
            for k in edgeset_keys:
                flag = np.asarray(m.cell_data[k][b_i]).astype(bool)
                if flag.any():
                    nm = k.split(":", 1)[1]
                    prev = edge_sets.get(nm, np.zeros((0, 2), np.int64))
                    edge_sets[nm] = np.vstack([prev, conn[flag]])
            continue
        start = add_cells(b.type, conn)
        dim = 1 if b.type == "line" else 2
        if phys is not None:
            tags = np.asarray(phys[b_i])
            for t in np.unique(tags):
                nm = names.get((int(t), dim))
                if nm is not None:
                    prev = element_sets.get(nm, (b.type, np.zeros(0, np.int64)))[1]
                    element_sets[nm] = (b.type, np.concatenate([prev, start + np.flatnonzero(tags == t)]))
        for k in elemset_keys:
            flag = np.asarray(m.cell_data[k][b_i]).astype(bool)
            if flag.any():
                nm = k.split(":", 1)[1]
                prev = element_sets.get(nm, (b.type, np.zeros(0, np.int64)))[1]
                element_sets[nm] = (b.type, np.concatenate([prev, start + np.flatnonzero(flag)]))
    for k, v in (m.point_data or {}).items():
        if k.startswith("nodeset:"):
            node_sets[k.split(":", 1)[1]] = np.flatnonzero(np.asarray(v).ravel() != 0)
    for k, v in (getattr(m, "point_sets", None) or {}).items():
        node_sets.setdefault(k, np.asarray(v, dtype=np.int64))
    if mids:
        mid_of = {tuple(sorted(e[:2])): e[2] for e in np.vstack(mids).tolist()}
        for nm, edges in edge_sets.items():
            extra = [mid_of[key] for key in map(tuple, np.sort(edges, axis=1).tolist()) if key in mid_of]
            if extra:
                node_sets[nm] = np.union1d(node_sets.get(nm, np.unique(edges)), extra)
    return Mesh(pts, cells, node_sets, edge_sets, element_sets, source)


def read(path, *, file_format: str | None = None, check: bool = True) -> Mesh:
    """Read a mesh with meshio and recover its named sets.

    Parameters
    ----------
    path : str or path-like
        Any format meshio reads (Gmsh .msh 2.2 / 4.1, VTU, XDMF, ...).
    check : bool
        Run :meth:`Mesh.check` (unused or duplicate nodes, inverted cells).

    Raises
    ------
    MeshError
        Naming the file, for a missing, truncated or garbled file, an unknown cell type or an
        inconsistent mesh.
    """
    from .mesh_files import meshio_read

    path = os.fspath(path)
    m = meshio_read(path, file_format=file_format)
    try:
        mesh = _from_meshio(m, path)
    except MeshError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise MeshError(f"{path}: inconsistent mesh data ({type(exc).__name__}: {exc})") from exc
    return mesh.check() if check else mesh
