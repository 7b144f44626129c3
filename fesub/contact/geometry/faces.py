"""Node-to-face geometry in 3D: a target surface of faces prepared once, closest points, frames.

A :class:`FaceSet` holds the master faces of a contact surface (``triangle``, ``quad``,
``triangle6``, ``quad8``, ``quad9``; also named tri3, quad4, tri6), checks them once (no zero
area, neighbouring faces oriented alike, every edge shared by at most two faces) and enters them
in a hashed uniform grid (the ``search3d`` kernel). A query returns, for each slave point, the
closest point of the surface within the search distance ``reach``, by Newton's method in the
face's parameters (bilinear and quadratic faces are curved), clamped to the face: a point beyond
a face's edge goes to that edge or corner.

The rule at edges and corners (ridges, peaks, valleys): the closest point of the whole surface
is taken; when it lies on an edge or a vertex shared by several faces, the gap is the distance to
it, signed by the sum of the normals there of every face sharing the point (outside positive);
the normal is the direction from that point to the slave (the normal of the sphere touching the
surface there), or the summed normal when the slave lies on the surface. Across a convex ridge
or a peak the normal then turns continuously from one face's normal to the next; in a valley
(two faces' normal regions overlap) the nearer face holds the slave and the normal jumps where
the two are as near; the gap, a distance, is continuous everywhere. A slave whose closest point
is on a free edge of the surface (one face only) and not along that face's normal is reported
``off_surface``.

Frame: the normal ``n`` (outward, unit), the first tangent the set's reference direction
``tangent_ref`` projected on the tangent plane (continuous wherever the normal is), the second
``n x t1``; where the reference is within about 6 degrees of the normal, the axis least aligned
with the normal is projected instead.

Units: SI (lengths in m).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._backend import kernels
from ...errors import MeshError, ModelError, ParameterError, check_positive

__all__ = ["FaceSet", "FaceProjection", "SlaveTracker", "FACE_TYPES"]

#: face type (meshio name) -> (code in the kernel, number of nodes); tri3, quad4, tri6 are aliases
FACE_TYPES = {"triangle": (0, 3), "quad": (1, 4), "triangle6": (2, 6), "quad8": (3, 8), "quad9": (4, 9)}
_ALIASES = {"tri3": "triangle", "tri": "triangle", "quad4": "quad", "tri6": "triangle6"}
# max over the face of sum |N_i| (Lebesgue constant): bounds how far a face point moves when its
# nodes move by at most d (tests/test_contact_faces.py samples it)
_LEBESGUE = np.array([1.0, 1.0, 5.0 / 3.0, 3.0, 25.0 / 16.0])
_CORNERS = np.array([3, 4, 3, 4, 4])
_TRI = np.array([True, False, True, False, False])
# grid cell side over a typical face's extent
_CELL = 1.0
# the grid's origin this many cells below the lowest padded box: on a structured mesh whose
# spacing is the cell side, a padded box (1.2 cells) then overlaps 2 cells along an axis, not 3
# (its low side would otherwise fall on a cell border, rounded outward into the cell below)
_SHIFT = 0.37


def _morton(cells) -> np.ndarray:
    """Morton (Z-order) codes of non-negative integer cells (n, 3): the bits of i, j, k
    interleaved (21 bits each; larger indices are clipped, which only loosens the order)."""
    code = np.zeros(len(cells), dtype=np.uint64)
    for c in range(3):
        v = np.clip(cells[:, c], 0, (1 << 21) - 1).astype(np.uint64)
        for shift, mask in ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF), (8, 0x100F00F00F00F00F),
                            (4, 0x10C30C30C30C30C3), (2, 0x1249249249249249)):
            v = (v | (v << np.uint64(shift))) & np.uint64(mask)
        code |= v << np.uint64(c)
    return code


@dataclass(frozen=True)
class FaceProjection:
    """Closest points of slave points on a :class:`FaceSet` (arrays with one row per point).

    Attributes
    ----------
    face : (n,) int
        Face holding the closest point (-1: no face within the set's ``reach``).
    feature : (n,) int
        0 inside the face, 1 on an edge, 2 at a vertex.
    off_surface : (n,) bool
        On a free edge of the surface, not along the face's normal (beyond the master's border).
    param : (n, 2)
        Face parameters (-): (r, s) on the triangle (0, 0), (1, 0), (0, 1), (xi, eta) on the
        square [-1, 1]^2.
    point : (n, 3)
        The closest point (m).
    gap : (n,)
        Signed distance (m): positive outside (on the side of the faces' normals), +inf where
        ``face`` is -1.
    normal, tangent1, tangent2 : (n, 3)
        The orthonormal local frame at the closest point (-), ``tangent2 = normal x tangent1``.
    """

    face: np.ndarray
    feature: np.ndarray
    off_surface: np.ndarray
    param: np.ndarray
    point: np.ndarray
    gap: np.ndarray
    normal: np.ndarray
    tangent1: np.ndarray
    tangent2: np.ndarray

    @classmethod
    def _from_rows(cls, iout, fout, order):
        face = np.where(iout[:, 0] >= 0, order[np.maximum(iout[:, 0], 0)], -1)
        return cls(face, iout[:, 1].copy(), iout[:, 2] == 1, fout[:, 0:2].copy(),
                   fout[:, 2:5].copy(), fout[:, 5].copy(), fout[:, 6:9].copy(),
                   fout[:, 9:12].copy(), fout[:, 12:15].copy())

    def __len__(self) -> int:
        return int(self.face.shape[0])

    @property
    def faces_master(self) -> np.ndarray:
        """(n,) bool: the point has a closest point on the surface proper (a face within reach,
        not off its free border)."""
        return (self.face >= 0) & ~self.off_surface


def _face_blocks(faces, face_type):
    """[(type name, (m, k) int array)] from the accepted forms of ``faces``."""
    if face_type is not None:
        return [(face_type, faces)]
    if isinstance(faces, dict):
        return list(faces.items())
    if hasattr(faces, "face_type") and hasattr(faces, "nodes"):  # fesub.fe.SolidFaces
        return [(faces.face_type, faces.nodes)]
    if isinstance(faces, (list, tuple)) and faces and all(
            hasattr(b, "face_type") or hasattr(b, "type") for b in faces):
        return [(getattr(b, "face_type", None) or b.type, getattr(b, "nodes", None)
                 if hasattr(b, "face_type") else b.data) for b in faces]
    raise ParameterError("faces: give an (m, k) node array with face_type, a dict {face type: (m, k) "
                         "array}, SolidFaces or meshio cell blocks")


def _connectivity(points, faces, face_type):
    blocks = _face_blocks(faces, face_type)
    conns, types = [], []
    for name, conn in blocks:
        key = _ALIASES.get(str(name).lower(), str(name).lower())
        if key not in FACE_TYPES:
            raise ParameterError(f"face type {name!r} is not known; face types are "
                                 f"{sorted(FACE_TYPES) + sorted(_ALIASES)}")
        code, k = FACE_TYPES[key]
        try:
            conn = np.asarray(conn)
        except (TypeError, ValueError):
            raise ParameterError(f"{key} faces must be an integer (m, {k}) array") from None
        if conn.ndim != 2 or conn.shape[1] != k or (conn.size and conn.dtype.kind not in "iu"):
            raise ParameterError(f"{key} faces must be an integer (m, {k}) array, got "
                                 f"{conn.dtype} {conn.shape}")
        if not len(conn):
            continue
        if conn.min() < 0 or conn.max() >= len(points):
            raise ParameterError(f"{key} faces refer to nodes outside 0..{len(points) - 1}")
        padded = np.full((len(conn), 9), -1, dtype=np.int64)
        padded[:, :k] = conn
        conns.append(padded)
        types.append(np.full(len(conn), code, dtype=np.int64))
    if not conns:
        raise ParameterError("faces: no faces given (the master surface is empty)")
    return np.ascontiguousarray(np.vstack(conns)), np.ascontiguousarray(np.concatenate(types))


def _i32(a) -> np.ndarray:
    """The int32 copy of an index array the kernel reads."""
    return np.ascontiguousarray(a, dtype=np.int32)


def _outward32(boxes) -> np.ndarray:
    """Boxes (m, 6: lo, hi) in float32, rounded outward (each still holds its double box)."""
    out = boxes.astype(np.float32)
    lo, hi = out[:, :3], out[:, 3:]
    down, up = lo > boxes[:, :3], hi < boxes[:, 3:]
    lo[down] = np.nextafter(lo[down], np.float32(-np.inf))
    hi[up] = np.nextafter(hi[up], np.float32(np.inf))
    return np.ascontiguousarray(out)


def _points(P, name="slave points"):
    try:
        P = np.asarray(P, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be (n, 3) coordinates in m") from None
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] != 3:
        raise ParameterError(f"{name} must be (n, 3) coordinates (x, y, z) in m, got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ParameterError(f"{name} contain NaN or inf")
    return np.ascontiguousarray(P)


class FaceSet:
    """Master faces of a 3D contact surface, checked and entered in a search grid once.

    Parameters
    ----------
    points : (n, 3) array
        Node coordinates (m).
    faces : (m, k) int array, dict or SolidFaces
        Face nodes (meshio order: corners counter-clockwise seen from outside, then mid-nodes),
        with ``face_type``; or a dict ``{face type: (m, k) array}`` (several types at once); or
        :class:`fesub.fe.SolidFaces` (e.g. from :func:`fesub.fe.solid_boundary_faces`).
    face_type : str, optional
        ``triangle`` (tri3), ``quad`` (quad4), ``triangle6`` (tri6), ``quad8``, ``quad9``.
    reach : float, optional
        Search distance (m): slave points farther than this from every face have no closest
        point (``face`` -1, gap +inf). Default: the grid's cell size (the median face extent).
    margin : float, optional
        Motion (m) a tracked slave may make, master drift included, before its candidate faces
        are searched again (:meth:`tracker`); also the padding of the faces' boxes in the grid.
        Default: a tenth of ``reach``.
    tangent_ref : (3,) array, optional
        Reference direction of the first tangent (default: the coordinate axis least aligned
        with the surface's mean normal).

    Raises
    ------
    MeshError
        A face of zero area, two neighbouring faces of opposite orientation (their normals
        disagree across the shared edge), an edge shared by more than two faces.

    Attributes
    ----------
    size : float
        A typical face's extent (the median of the faces' box sides, m); the grid's cell side.
    reach, margin : float
        As given, or their defaults (m).
    order : (m,) int
        The faces in the grid's order (they are kept renumbered along a Morton curve through
        the grid's cells, neighbours close in memory); every face number returned is the
        caller's.
    backend : str
        'compiled' or 'python': the ``search3d`` kernel chosen when the set was made.
    examined : int
        Candidate faces met by the last :meth:`project` (the search's work, for all its points).
    newton_iterations : int
        Newton iterations of the last :meth:`project`'s closest-point projections (on faces and
        along their edges), all its points together.

    Notes
    -----
    Cost: building O(m) (boxes, a grid of about 2 m hash buckets); a query O(1) when the faces
    are of similar size (the few cells within ``reach`` of the point: first those within half a
    cell, the rest only when nothing nearer was found); :meth:`refit` O(m). At an edge or a
    vertex shared by several faces, which of them is reported in ``face`` is not specified (the
    point, gap and normal do not depend on it).
    """

    def __init__(self, points, faces, face_type=None, *, reach=None, margin=None, tangent_ref=None):
        X = _points(points, "master node positions")
        conn, ftype = _connectivity(X, faces, face_type)
        self.points, self.conn, self.ftype = X, conn, ftype
        self._kernel = kernels("search3d")
        self.backend = "python" if self._kernel.__name__.endswith("_ref") else "compiled"
        self.fflags = self._check_topology()
        mean_normal = self._check_areas()
        boxes = np.empty((len(conn), 6))
        small = np.empty((len(conn), 6), np.float32)
        self._kernel.face_boxes(X, _i32(conn), _i32(ftype), boxes, small)
        ext = (boxes[:, 3:] - boxes[:, :3]).max(axis=1)
        self.size = float(np.median(ext))  # a typical face's extent (m)
        self.reach = self.size if reach is None else check_positive("reach", reach)
        self.margin = 0.1 * self.reach if margin is None else check_positive("margin", margin)
        self.h = _CELL * self.size
        self.tol = 1e-9 * self.size
        # the faces renumbered along a Morton (Z-order) curve through the cells of their box
        # centres: a cell's faces and its neighbours' close in memory, in all three directions
        # (a query reads a few nearby rows rather than rows a surface's width apart); ``order``
        # maps back to the caller's numbering
        cells = np.floor((boxes[:, :3] + boxes[:, 3:] - 2 * boxes[:, :3].min(axis=0)) / (2 * self.h))
        self.order = np.argsort(_morton(cells), kind="stable")
        self.conn, self.ftype = np.ascontiguousarray(conn[self.order]), np.ascontiguousarray(ftype[self.order])
        self.fflags = np.ascontiguousarray(self.fflags[self.order])
        self.boxes = np.ascontiguousarray(boxes[self.order])
        # what a query reads, compact: the nodes renumbered in the order the faces first use them
        # (the nodes of neighbouring faces close in memory), int32 indices, float32 boxes
        flat = self.conn.ravel()
        used, first = np.unique(flat[flat >= 0], return_index=True)
        self._knodes = used[np.argsort(first)]
        local = np.full(len(X), -1, dtype=np.int64)
        local[self._knodes] = np.arange(len(self._knodes))
        self._kconn = _i32(np.where(self.conn >= 0, local[np.maximum(self.conn, 0)], -1))
        self._kX = np.ascontiguousarray(X[self._knodes])
        self._kftype, self._kflags = _i32(self.ftype), _i32(self.fflags)
        self._kboxes = np.ascontiguousarray(small[self.order])
        if tangent_ref is None:
            tangent_ref = np.eye(3)[int(np.argmin(np.abs(mean_normal)))]
        ref = np.asarray(tangent_ref, dtype=float)
        if ref.shape != (3,) or not np.all(np.isfinite(ref)) or np.linalg.norm(ref) == 0:
            raise ParameterError(f"tangent_ref must be a non-zero 3-vector, got {tangent_ref!r}")
        self.tangent_ref = ref / np.linalg.norm(ref)
        self.origin = self.boxes[:, :3].min(axis=0) - self.margin - _SHIFT * self.h
        self._lebesgue = float(_LEBESGUE[np.unique(ftype)].max())
        self.drift = 0.0  # bound on how far any face point moved since the set was made (m)
        self._tables = 1 << int(np.ceil(np.log2(2 * len(conn) + 1)))
        if len(conn) >= 2 ** 28:
            raise ParameterError(f"at most 2^28 faces in one FaceSet, got {len(conn)}")
        self.entries = self.keys = np.empty(0, dtype=np.int32)
        self._wc = self._wd = None
        self.examined = self.newton_iterations = 0
        self._bin()

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_mesh(cls, mesh, where, **kwargs) -> "FaceSet":
        """The boundary faces of a solid mesh picked by ``where``, oriented outwards.

        Parameters
        ----------
        mesh : fesub.fe.SolidMesh
            The mesh (m); a Gmsh physical surface read with it is a node set of its name.
        where : str or dict
            A node set name (every boundary face whose nodes all lie in it), or surface cells
            ``{type: (m, k) nodes}`` (e.g. :func:`fesub.fe.surface_cells` of a Gmsh physical
            surface): each picks the boundary face of a solid cell with the same corners.
        **kwargs
            As :class:`FaceSet` (``reach``, ``margin``, ``tangent_ref``).
        """
        from ...fe import solid_boundary_faces

        blocks = solid_boundary_faces(mesh)
        if isinstance(where, str):
            keep = np.zeros(mesh.n_points, bool)
            keep[mesh.nodes(where)] = True
            picked = {}
            for b in blocks:
                sel = b.nodes[keep[b.nodes].all(axis=1)]
                if len(sel):
                    picked[b.face_type] = np.vstack([picked[b.face_type], sel]) \
                        if b.face_type in picked else sel
            if not picked:
                raise MeshError(f"{mesh.source}: node set {where!r} holds no whole boundary face (a "
                                f"surface between two cells of the solid is none)")
            return cls(mesh.points, picked, **kwargs)
        if not isinstance(where, dict):
            raise ParameterError("where: a node set name or surface cells {type: (m, k) nodes}")
        keys = {}
        for b in blocks:
            c = _CORNERS[FACE_TYPES[b.face_type][0]]
            for r, row in enumerate(np.sort(b.nodes[:, :c], axis=1)):
                keys[tuple(row)] = (b.face_type, b.nodes[r])
        picked = {}
        for name, conn in where.items():
            key = _ALIASES.get(name, name)
            if key not in FACE_TYPES:
                raise ParameterError(f"surface cells of type {name!r}: face types are {sorted(FACE_TYPES)}")
            c = _CORNERS[FACE_TYPES[key][0]]
            for row in np.asarray(conn):
                hit = keys.get(tuple(np.sort(row[:c])))
                if hit is None:
                    raise MeshError(f"{mesh.source}: surface cell {row.tolist()} is no boundary face "
                                    f"of a solid cell")
                picked.setdefault(hit[0], []).append(hit[1])
        return cls(mesh.points, {k: np.array(v) for k, v in picked.items()}, **kwargs)

    def _check_topology(self) -> np.ndarray:
        """Free-edge bits per face; MeshError on opposite orientation or non-manifold edges."""
        c = _CORNERS[self.ftype]
        m = len(self.conn)
        rows = np.arange(m)
        a, b, face, edge = [], [], [], []
        for e in range(4):
            has = c > e
            r = rows[has]
            a.append(self.conn[r, e])
            b.append(self.conn[r, (e + 1) % c[has]])
            face.append(r)
            edge.append(np.full(r.size, e))
        a, b, face, edge = (np.concatenate(v) for v in (a, b, face, edge))
        if np.any(a == b):
            f = int(face[np.argmax(a == b)])
            raise MeshError(f"face {f} (nodes {self._nodes(f)}) repeats a corner: it has zero area")
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        key = lo * (int(self.conn.max()) + 1) + hi
        order = np.argsort(key, kind="stable")
        ks = key[order]
        _, first, count = np.unique(ks, return_index=True, return_counts=True)
        if count.max() > 2:
            i = order[first[np.argmax(count)]]
            raise MeshError(f"edge ({int(lo[i])}, {int(hi[i])}) is shared by {int(count.max())} faces: "
                            f"the master surface must be a manifold (each edge in one or two faces)")
        two = first[count == 2]
        i, j = order[two], order[two + 1]
        same = a[i] == a[j]  # both faces run the shared edge the same way: opposite normals
        if same.any():
            k = int(np.argmax(same))
            f1, f2 = sorted((int(face[i[k]]), int(face[j[k]])))
            raise MeshError(f"faces {f1} and {f2} are oriented oppositely (their normals disagree "
                            f"across their shared edge ({int(lo[i[k]])}, {int(hi[i[k]])})); "
                            f"number every face's corners counter-clockwise seen from outside")
        free = np.ones(len(a), bool)
        free[i] = free[j] = False
        flags = np.zeros(m, dtype=np.int64)
        np.bitwise_or.at(flags, face[free], 1 << edge[free])
        return flags

    def _nodes(self, f) -> list:
        return self.conn[f][self.conn[f] >= 0].tolist()

    def _check_areas(self) -> np.ndarray:
        """MeshError for a face of zero area; returns the surface's mean normal (unit)."""
        # 4 points inside each face (those of a degree-2 triangle rule; on the square through
        # xi = 2 r - 1): a face whose tangents are parallel there has collapsed
        ab = np.array([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3], [1 / 3, 1 / 3]])
        total = np.zeros(3)
        for lo in range(0, len(self.conn), 50_000):  # in blocks: 18 doubles per point
            f = np.arange(lo, min(lo + 50_000, len(self.conn)))
            face = np.repeat(f, len(ab))
            pts = np.tile(ab, (len(f), 1))
            quad = ~_TRI[self.ftype][face]
            pts[quad] = 2.0 * pts[quad] - 1.0
            d = np.empty((len(face), 18))
            self._kernel.face_eval(self.points, _i32(self.conn), _i32(self.ftype), np.ascontiguousarray(face),
                                   np.ascontiguousarray(pts), d)
            d = d.reshape(len(f), len(ab), 18)
            av = np.cross(d[:, :, 3:6], d[:, :, 6:9])
            conn = self.conn[f]
            corners = self.points[np.where(conn >= 0, conn, conn[:, :1])]
            diam = np.ptp(corners, axis=1).max(axis=1)
            bad = np.linalg.norm(av, axis=2).min(axis=1) <= 1e-12 * diam ** 2
            if bad.any():
                k = int(f[np.argmax(bad)])
                raise MeshError(f"face {k} (nodes {self._nodes(k)}) has zero area (its tangents "
                                f"are parallel); remove it or fix its nodes")
            total += av.sum(axis=(0, 1))
        norm = np.linalg.norm(total)
        return total / norm if norm > 0 else np.array([0.0, 0.0, 1.0])

    def _bin(self):
        self.fat = _outward32(np.hstack([self.boxes[:, :3] - self.margin, self.boxes[:, 3:] + self.margin]))
        self.start = np.empty(self._tables + 1, dtype=np.int32)
        need = self._kernel.grid_bin(self.fat, self.origin, self.h, self.start, self.entries, self.keys)
        if need > len(self.entries):
            if need >= 2 ** 31:
                raise ParameterError(f"the grid needs {need} entries, more than int32 indices hold")
            self.entries = np.empty(int(1.25 * need), dtype=np.int32)
            self.keys = np.empty_like(self.entries)
            self._kernel.grid_bin(self.fat, self.origin, self.h, self.start, self.entries, self.keys)

    def __len__(self) -> int:
        return int(self.conn.shape[0])

    # -- queries --------------------------------------------------------------------------------
    def _work(self, k):
        """Room for k candidate faces of one query (reused from call to call)."""
        if self._wc is None or self._wc.shape[1] < k:
            self._wc, self._wd = np.empty((2, k), dtype=np.int64), np.empty((2, k))
        return self._wc, self._wd

    def _out(self, n):
        return np.empty((n, 3), dtype=np.int64), np.empty((n, 15))

    def project(self, P) -> FaceProjection:
        """Closest points of the slave points ``P`` ((3,) or (n, 3), m) within ``reach``,
        through the grid (O(1) per point)."""
        P = _points(P)
        iout, fout = self._out(len(P))
        stats = np.zeros(1, dtype=np.int64)
        self.examined = self._kernel.grid_query(self._kX, self._kconn, self._kftype, self._kflags, self._kboxes,
                                self.fat, self.start, self.entries, self.keys, self.origin, self.h, P,
                                self.reach, self.tangent_ref, self.tol, *self._work(256), iout, fout, stats)
        self.newton_iterations = int(stats[0])
        return FaceProjection._from_rows(iout, fout, self.order)

    def project_brute(self, P, *, prune: bool = True) -> FaceProjection:
        """:meth:`project` by examining every face for every point (O(m) per point): each face
        projected (``prune=False``: the brute force), or only those whose box lies within reach
        and within the nearest distance found so far (a linear scan)."""
        P = _points(P)
        iout, fout = self._out(len(P))
        self._kernel.brute_query(self._kX, self._kconn, self._kftype, self._kflags, self._kboxes, P,
                                 self.reach, self.tangent_ref, self.tol, bool(prune), iout, fout)
        return FaceProjection._from_rows(iout, fout, self.order)

    def refit(self, points) -> int:
        """Move the master nodes to ``points`` ((n, 3), m, same numbering): the boxes are
        recomputed; the grid is entered again only for a face that left its padded box.
        Returns 1 when the grid was rebuilt, else 0."""
        X = _points(points, "master node positions")
        if X.shape != self.points.shape:
            raise ParameterError(f"points must have the prepared shape {self.points.shape}, got {X.shape}")
        self.drift += self._lebesgue * float(np.sqrt(((X - self.points) ** 2).sum(axis=1).max()))
        self.points = X
        self._kX = np.ascontiguousarray(X[self._knodes])
        self._kernel.face_boxes(self._kX, self._kconn, self._kftype, self.boxes, self._kboxes)
        if np.all(self.boxes[:, :3] >= self.fat[:, :3]) and np.all(self.boxes[:, 3:] <= self.fat[:, 3:]):
            return 0
        self.origin = np.minimum(self.origin, self.boxes[:, :3].min(axis=0) - self.margin - _SHIFT * self.h)
        self._bin()
        return 1

    def shape_values(self, face, param, *, stored=False) -> np.ndarray:
        """Shape functions of the faces ``face`` ((n,) int, in the caller's numbering, as
        :class:`FaceProjection` gives them) at their parameters ``param`` ((n, 2)): (n, 9) values, column j the weight of the
        face's j-th node (0 past its last node), so that the point is ``sum_j N_j x_j``; they
        sum to 1. The kernel's own shape functions (those its projections use). ``stored``:
        ``face`` in the set's storage order (as :meth:`SlaveTracker.project_rows` gives them)."""
        face = np.asarray(face, dtype=np.int64)
        param = np.ascontiguousarray(param, dtype=float).reshape(-1, 2)
        if not hasattr(self, "_local_conn"):
            self._local_conn = _i32(np.where(self.conn >= 0, np.arange(9)[None, :], -1))
            self._inverse = np.argsort(self.order)
            self._bases = [np.ascontiguousarray(np.eye(9)[:, 3 * c:3 * c + 3]) for c in range(3)]
        face = np.ascontiguousarray(face if stored else self._inverse[face])
        if param.shape[0] != face.size:
            raise ParameterError(f"param must be ({face.size}, 2) face parameters, got {param.shape[0]} rows")
        N = np.empty((face.size, 9))
        self._kernel.face_shapes(self._kftype, face, param, N)
        return N

    def shape_derivatives(self, face, param) -> np.ndarray:
        """Shape functions of the faces ``face`` ((n,) int, the caller's numbering) at
        ``param`` ((n, 2), not clamped: a face's polynomial continues past its edges) with their
        first and second parameter derivatives: (6, n, 9) array ``[N, N_a, N_b, N_aa, N_ab,
        N_bb]`` (column j the face's j-th node, 0 past its last), from the kernel's face
        interpolation as :meth:`shape_values`."""
        face = np.asarray(face, dtype=np.int64)
        param = np.ascontiguousarray(param, dtype=float).reshape(-1, 2)
        self.shape_values(face[:0], param[:0])  # the local connectivity and bases, made once
        face = np.ascontiguousarray(self._inverse[face])
        out, D = np.empty((face.size, 18)), np.zeros((6, face.size, 9))
        for c, basis in enumerate(self._bases):
            self._kernel.face_eval(basis, self._local_conn, self._kftype, face, param, out)
            D[:, :, 3 * c:3 * c + 3] = out.reshape(-1, 6, 3).transpose(1, 0, 2)
        return D

    def tracker(self, n_slaves: int, *, capacity: int = 16) -> "SlaveTracker":
        """A :class:`SlaveTracker` for ``n_slaves`` slave nodes (candidates kept per node)."""
        return SlaveTracker(self, n_slaves, capacity=capacity)

    def check_slaves(self, P) -> FaceProjection:
        """Closest points of the slave set ``P``; :class:`ModelError` when no slave node faces
        the master (every one beyond ``reach`` or beyond the master's free border)."""
        pr = self.project(P)
        if not pr.faces_master.any():
            near = np.where(pr.face >= 0, np.abs(pr.gap), np.inf).min()
            where = (f"the nearest is {near:.4g} m away, off the master's border" if np.isfinite(near)
                     else f"none lies within reach = {self.reach:.4g} m of a master face")
            raise ModelError(f"the slave set ({len(pr)} nodes) faces no master face: {where}; "
                             f"check the interface's surfaces or raise reach")
        return pr


class SlaveTracker:
    """Closest points of a fixed set of slave nodes over a march: each keeps the faces within
    ``reach + margin`` found at its last grid search and searches again only when its own
    motion plus the master's drift (:meth:`FaceSet.refit`) since then exceeds ``margin``.

    Attributes
    ----------
    searches : int
        Grid searches done so far (the others reused their candidates).
    queries : int
        Slave points answered so far.
    """

    def __init__(self, faces: FaceSet, n_slaves: int, *, capacity: int = 16):
        from ...errors import check_count

        n = check_count("n_slaves", n_slaves, lo=1)
        self.faces = faces
        self.p0 = np.full((n, 3), np.nan)
        self.drift0 = np.zeros(n)
        self.cand = np.empty((n, check_count("capacity", capacity, lo=1)), dtype=np.int64)
        self.ncand = np.full(n, -1, dtype=np.int64)
        self.searches = 0
        self.queries = 0

    def project(self, P) -> FaceProjection:
        """Closest points of the slaves at ``P`` ((n_slaves, 3), m)."""
        return FaceProjection._from_rows(*self.project_rows(P), self.faces.order)

    def project_rows(self, P):
        """:meth:`project` as the query's rows, not copied into a :class:`FaceProjection`:
        ``iout`` (n, 3) int (the face in the set's storage order, -1 for none, then ``feature``
        and ``off_surface`` as 0/1) and ``fout`` (n, 15) float (``param`` (2), ``point`` (3),
        ``gap``, then ``normal``, ``tangent1``, ``tangent2``: each row's frame as a 3 x 3 in
        place). ``FaceSet.order`` maps a stored face to its number."""
        fs = self.faces
        P = _points(P)
        if P.shape != self.p0.shape:
            raise ParameterError(f"slave points must be ({len(self.p0)}, 3), got {P.shape}")
        iout, fout = fs._out(len(P))
        self.searches += fs._kernel.tracked_query(
            fs._kX, fs._kconn, fs._kftype, fs._kflags, fs._kboxes, fs.fat, fs.start, fs.entries, fs.keys,
            fs.origin, fs.h, P, fs.reach, fs.margin, fs.drift, fs.tangent_ref, fs.tol, self.p0,
            self.drift0, self.cand, self.ncand, *fs._work(self.cand.shape[1]), iout, fout)
        self.queries += len(P)
        if (self.ncand < 0).any():  # more candidates than kept: room for twice as many
            self.cand = np.empty((len(P), 2 * self.cand.shape[1]), dtype=np.int64)
            self.ncand[:] = -1
        return iout, fout
