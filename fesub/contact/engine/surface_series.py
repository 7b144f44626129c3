"""The deformed surfaces of a contact run between solid bodies: ParaView time series and animations.

A run of :func:`~fesub.contact.simulate_multibody` keeps, per output sample, the contact results
of every slave node and the body output channels. A :class:`RunSurface` names a surface of a
body: its points (nodes of the body), its faces, the output channels that carry each point's
displacement (:meth:`RunSurface.outputs` makes them, to pass as the body's ``outputs``) and the
contact interface whose slave nodes lie on it. Then, for every output sample of a run:

* :func:`surface_frames` gives each surface as a :class:`meshio.Mesh` at its deformed position,
  with the point data listed in :data:`POINT_FIELDS` (contact pressure, forces, slip velocity,
  gap and state at the slave nodes);
* :func:`write_contact_series` writes them as a ParaView time series (a ``.pvd`` of VTU files,
  :func:`fesub.plots.series.write_pvd`);
* :func:`animate_contact` renders them off screen into an animated GIF (pyvista, ``pip install
  'fesub[viz]'``; :func:`fesub.plots.series.animate_frames`).

Units: SI (m, N, Pa, m/s).
"""

from __future__ import annotations

import numpy as np

from ...errors import ParameterError

__all__ = ["RunSurface", "POINT_FIELDS", "surface_frames", "write_contact_series", "animate_contact"]

#: point data of every surface in a frame: name -> (unit, meaning). Points that are not slave
#: nodes of the surface's interface have zero forces, pressure and slip velocity, a NaN gap and
#: state -1.
POINT_FIELDS = {
    "displacement": ("m", "displacement of the point at the sample (3 components)"),
    "contact_pressure": ("Pa", "normal contact force of the node over its tributary area on the contact faces"),
    "normal_force": ("N", "normal contact force on the slave node (> 0 in compression)"),
    "tangential_force": ("N", "magnitude of the friction force on the slave node, |(lambda_t1, lambda_t2)|"),
    "contact_force": ("N", "contact force on the slave node in the global axes (3 components)"),
    "slip_velocity": ("m/s", "slip velocity of the node on the master (3 components)"),
    "slip_speed": ("m/s", "magnitude of the slip velocity"),
    "gap": ("m", "normal gap after the step (> 0 open)"),
    "state": ("1", "0 open, 1 stick, 2 slip; -1 for a point that is no contact node"),
    "node": ("1", "the body's node number of the point"),
}
_COMPONENTS = "xyz"


class RunSurface:
    """A surface of a solid body as a run shows it: points, faces, displacement channels, contact.

    Parameters
    ----------
    name : str
        Name of the part (in the ``.pvd``, the VTU file names and the channel names).
    nodes : (n,) int array
        The body's node of each point (its numbering in the body: the slave node numbers of a
        contact interface).
    points : (n, 3) array
        Reference positions of the points (m).
    faces : dict face type -> (f, k) int array
        Faces by point index (0..n-1), meshio face types (``quad``, ``triangle``, ``quad8``,
        ``quad9``, ``triangle6``).
    moving : bool
        Whether the points move (their displacements are read from the output channels named by
        :meth:`channel`); False for a surface held at rest (a fixed plate).
    interface : int or str, optional
        The contact interface (index or name in the run) whose slave nodes lie on this surface:
        its results become the point data of those points.
    """

    def __init__(self, name, nodes, points, faces, *, moving: bool = True, interface=None):
        from ...fe.face_loads import FACE_CORNERS

        self.name = str(name)
        if not self.name.isidentifier():
            raise ParameterError(f"surface name must be a word of letters, digits and _, got {name!r}")
        self.nodes = np.asarray(nodes)
        if self.nodes.ndim != 1 or self.nodes.dtype.kind not in "iu" or self.nodes.size == 0:
            raise ParameterError("nodes must be a non-empty 1-D integer array (the body's node numbers)")
        self.points = np.array(points, dtype=float)
        if self.points.shape != (self.nodes.size, 3) or not np.all(np.isfinite(self.points)):
            raise ParameterError(f"points must be finite, of shape ({self.nodes.size}, 3) (m), got "
                                 f"{self.points.shape}")
        self.faces = {}
        for ftype, conn in dict(faces).items():
            conn = np.asarray(conn)
            if ftype not in FACE_CORNERS or conn.ndim != 2 or conn.dtype.kind not in "iu" or \
                    (conn.size and (conn.min() < 0 or conn.max() >= self.nodes.size)):
                raise ParameterError(f"faces[{ftype!r}] must be an integer (f, k) array of point indices "
                                     f"0..{self.nodes.size - 1} of a face type in {sorted(FACE_CORNERS)}")
            self.faces[ftype] = conn.astype(np.int64)
        if not self.faces:
            raise ParameterError("a surface needs faces")
        self.moving, self.interface = bool(moving), interface

    @classmethod
    def from_mesh(cls, name, mesh, where=None, *, moving: bool = True, interface=None):
        """The boundary faces of a solid mesh (all, or those whose nodes all lie in a node set).

        Parameters
        ----------
        name : str
            Part name.
        mesh : fesub.fe.SolidMesh
            The mesh the body was built from (its node numbers are the body's).
        where : str, optional
            A node set of the mesh (e.g. ``"zmin"``); default the whole outer surface.
        moving, interface
            As the class takes them.
        """
        from ...fe import solid_boundary_faces

        blocks = solid_boundary_faces(mesh)
        if where is not None:
            keep = np.zeros(mesh.n_points, bool)
            keep[mesh.nodes(where)] = True
            blocks = [b.take(keep[b.nodes].all(axis=1)) for b in blocks]
        blocks = [b for b in blocks if len(b)]
        if not blocks:
            raise ParameterError(f"no boundary face of the mesh lies in {where!r}")
        nodes = np.unique(np.concatenate([b.nodes.ravel() for b in blocks]))
        faces = {}
        for b in blocks:
            faces[b.face_type] = np.vstack([faces.get(b.face_type, np.zeros((0, b.nodes.shape[1]), np.int64)),
                                            np.searchsorted(nodes, b.nodes)])
        return cls(name, nodes, mesh.points[nodes], faces, moving=moving, interface=interface)

    def channel(self, k: int, c: str) -> str:
        """Name of the output channel of point k's displacement along c ('x', 'y' or 'z')."""
        return f"{self.name}_{int(self.nodes[k])}{c}"

    def outputs(self, dof) -> dict:
        """The body output channels that carry the surface's displacements.

        Parameters
        ----------
        dof : callable
            ``dof(node, component)`` -> the coordinate (or model DOF, as the body's constructor
            takes its ``outputs``) of that node's displacement along ``component`` ('x', 'y',
            'z'), e.g. ``lambda n, c: int(sub.dofs([n], c)[0])`` of a Substructure.

        Returns
        -------
        dict
            channel name -> coordinate, to merge into the body's ``outputs``.
        """
        return {self.channel(k, c): int(dof(int(n), c)) for k, n in enumerate(self.nodes) for c in _COMPONENTS}

    def contact_areas(self, slaves) -> np.ndarray:
        """Tributary area (m^2) of each point on the faces whose nodes are all slave nodes: the
        consistent nodal force of a unit pressure on those faces (0 off them)."""
        from ...fe import face_forces

        on = np.isin(self.nodes, slaves)
        area = np.zeros(self.nodes.size)
        for ftype, conn in self.faces.items():
            conn = conn[on[conn].all(axis=1)]
            if len(conn):
                f = face_forces(ftype, self.points[conn], pressure=1.0)
                np.add.at(area, conn.ravel(), np.linalg.norm(f, axis=-1).ravel())
        return area

    def meshio_cells(self) -> list:
        return [(t, c) for t, c in self.faces.items()]


def _columns(res, surf: RunSurface):
    """(points that are slave nodes of the surface's interface, their result columns)."""
    if surf.interface is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    names = list(res.info.get("interfaces", []))
    itf = surf.interface
    if isinstance(itf, str):
        if itf not in names:
            raise ParameterError(f"surface {surf.name!r}: no interface {itf!r} in the run (interfaces: {names})")
        itf = names.index(itf)
    cols = np.flatnonzero(res.node_interface == itf)
    if cols.size == 0:
        raise ParameterError(f"surface {surf.name!r}: the run has no slave node of interface {surf.interface!r}")
    where = {int(n): j for j, n in enumerate(surf.nodes)}
    pts = np.array([where.get(int(n), -1) for n in res.node_id[cols]], np.int64)
    if np.any(pts < 0):
        missing = res.node_id[cols][pts < 0][:5].tolist()
        raise ParameterError(f"surface {surf.name!r}: slave nodes {missing} of interface {surf.interface!r} are "
                             f"not points of the surface")
    return pts, cols


def _samples(res, every, samples):
    if "lambda_t1" not in res.nodes:
        raise ParameterError("the run is not between solid bodies (no 3D node results): no surfaces to draw")
    if samples is None:
        every = int(every)
        if every < 1:
            raise ParameterError(f"every must be an integer >= 1, got {every!r}")
        samples = np.arange(0, res.t.size, every)
    samples = np.asarray(samples, dtype=np.int64).ravel()
    if samples.size == 0 or samples.min() < 0 or samples.max() >= res.t.size or np.any(np.diff(samples) <= 0):
        raise ParameterError(f"samples must be increasing indices in 0..{res.t.size - 1}")
    return samples


def surface_frames(res, surfaces, *, every: int = 1, samples=None) -> tuple:
    """The deformed surfaces of a run with its contact results, one frame per output sample.

    Parameters
    ----------
    res : ContactRunResult
        A run between solid bodies whose bodies had the surfaces' output channels
        (:meth:`RunSurface.outputs`).
    surfaces : sequence of RunSurface
    every : int
        Take every ``every``-th output sample (default all).
    samples : sequence of int, optional
        The output samples to take (increasing), instead of ``every``.

    Returns
    -------
    times : (k,) array
        Times of the frames (s).
    frames : list of dict name -> meshio.Mesh
        Each surface at its deformed position (m) with the point data of :data:`POINT_FIELDS`.
    """
    import meshio

    idx = _samples(res, every, samples)
    surfaces = list(surfaces)
    if not surfaces or not all(isinstance(s, RunSurface) for s in surfaces):
        raise ParameterError("surfaces must be a non-empty sequence of RunSurface")
    if len({s.name for s in surfaces}) != len(surfaces):
        raise ParameterError("surface names must differ")
    nd = res.nodes
    per = []
    for s in surfaces:
        n = s.nodes.size
        u = np.zeros((idx.size, n, 3))
        if s.moving:
            missing = [s.channel(k, c) for k in range(n) for c in _COMPONENTS if f"u_{s.channel(k, c)}" not in res.channels]
            if missing:
                raise ParameterError(f"surface {s.name!r}: the run has no output channel {missing[0]!r} (and "
                                     f"{len(missing) - 1} more): build the body with outputs=surface.outputs(...)")
            for k in range(n):
                for c, comp in enumerate(_COMPONENTS):
                    u[:, k, c] = res.channels[f"u_{s.channel(k, comp)}"][idx]
        pts, cols = _columns(res, s)
        area = s.contact_areas(s.nodes[pts]) if pts.size else np.zeros(n)
        per.append((s, u, pts, cols, area))
    frames = []
    for i, j in enumerate(idx):
        fr = {}
        for s, u, pts, cols, area in per:
            n = s.nodes.size
            data = {"displacement": u[i]}
            lam = np.zeros(n)
            lam[pts] = np.nan_to_num(nd["lambda_n"][j, cols])
            data["normal_force"] = lam
            with np.errstate(divide="ignore", invalid="ignore"):
                data["contact_pressure"] = np.where(area > 0, lam / np.where(area > 0, area, 1.0), 0.0)
            lt = np.zeros(n)
            lt[pts] = np.nan_to_num(np.hypot(nd["lambda_t1"][j, cols], nd["lambda_t2"][j, cols]))
            data["tangential_force"] = lt
            for key, base in (("contact_force", "force"), ("slip_velocity", "slip_velocity")):
                v = np.zeros((n, 3))
                for c, comp in enumerate(_COMPONENTS):
                    v[pts, c] = np.nan_to_num(nd[f"{base}_{comp}"][j, cols])
                data[key] = v
            data["slip_speed"] = np.linalg.norm(data["slip_velocity"], axis=1)
            gap = np.full(n, np.nan)
            gap[pts] = nd["gap"][j, cols]
            data["gap"] = gap
            state = np.full(n, -1.0)
            state[pts] = nd["state"][j, cols]
            data["state"] = state
            data["node"] = s.nodes.astype(np.int64)
            fr[s.name] = meshio.Mesh(s.points + u[i], s.meshio_cells(), point_data=data)
        frames.append(fr)
    return res.t[idx].copy(), frames


def write_contact_series(res, surfaces, path, *, every: int = 1, samples=None):
    """Write the deformed surfaces of a run as a ParaView time series (``.pvd`` of VTU files).

    Parameters
    ----------
    res, surfaces, every, samples
        As :func:`surface_frames` (one VTU file per surface and sample).
    path : str or os.PathLike
        The ``.pvd`` file (suffix appended when missing); the VTU files go into
        ``<name>_vtu/`` beside it (:func:`fesub.plots.series.write_pvd`).

    Returns
    -------
    pathlib.Path
        The ``.pvd`` written. Point data: :data:`POINT_FIELDS` (SI units).
    """
    from ...plots.series import write_pvd

    times, frames = surface_frames(res, surfaces, every=every, samples=samples)
    return write_pvd(path, times, frames)


def animate_contact(res, surfaces, path, *, field: str = "state", every: int = 1, samples=None,
                    scale: float = 1.0, fps: float = 8.0, styles=None, view=(1.0, -1.2, -0.9),
                    window_size=(800, 520)) -> str:
    """Render the deformed surfaces of a run off screen into an animated GIF (one picture per sample).

    Parameters
    ----------
    res, surfaces, every, samples
        As :func:`surface_frames`.
    path : str or os.PathLike
        The GIF to write.
    field : str
        Point field that colours the surfaces (:data:`POINT_FIELDS`, a scalar one): ``"state"``
        (default: each contact node a sphere in the colour of its state, 0 open, 1 stick, 2 slip,
        on the plain surfaces),
        ``"contact_pressure"``, ``"slip_speed"``, ...; its colour range is fixed over the run.
    scale : float
        Displacement magnification of the picture (-), >= 0.
    fps : float
        Frames per second of the GIF.
    styles : dict surface name -> 'surface' or 'wireframe', optional
        How each surface is drawn.
    view : 3 floats
        Direction from the scene to the camera (default from below: a contact face on z = const
        seen through its master).
    window_size : (int, int)
        Picture size (pixels).

    Returns
    -------
    str
        The path written. Needs pyvista (``pip install 'fesub[viz]'``): ImportError naming the
        extra otherwise.
    """
    from ...plots.series import animate_frames
    from .plots import STATE_COLOURS_3D

    scalar = {k for k, (_, what) in POINT_FIELDS.items() if "3 components" not in what and k != "node"}
    if field not in scalar:
        raise ParameterError(f"field must be one of {sorted(scalar)}, got {field!r}")
    if not (np.isfinite(scale) and scale >= 0):
        raise ParameterError(f"scale must be finite and >= 0, got {scale!r}")
    times, frames = surface_frames(res, surfaces, every=every, samples=samples)
    if scale != 1.0:
        for fr in frames:
            for m in fr.values():
                u = m.point_data["displacement"]
                m.points = m.points + (scale - 1.0) * u
    titles = [f"t = {t * 1e3:.3f} ms" + (f"   displacements x {scale:g}" if scale != 1.0 else "") for t in times]
    unit = POINT_FIELDS[field][0]
    if field == "state":  # one sphere per contact node in its state's colour (no blend over the faces)
        for fr in frames:
            for m in fr.values():
                st = m.point_data["state"]
                m.point_data["state"] = np.where(st >= 0, st, np.nan)
        return animate_frames(frames, path, scalars="state", clim=(-0.5, 2.5), cmap=list(STATE_COLOURS_3D),
                              n_colors=3, fps=fps, titles=titles, styles=styles, view=view, glyphs=True,
                              scalar_title="node state: 0 open (grey), 1 stick (blue), 2 slip (red)",
                              window_size=window_size)
    return animate_frames(frames, path, scalars=field, fps=fps, titles=titles, styles=styles, view=view,
                          scalar_title=f"{field} ({unit})", window_size=window_size)
