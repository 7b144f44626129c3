"""Mode shapes: matplotlib drawings and off-screen pyvista renderings (PNG, animated GIF), and VTU
files for ParaView.

:func:`plot_coupled_modes` draws with matplotlib only (a core dependency); the ``render_*`` and
``animate_*`` functions need pyvista (``pip install 'fesub[viz]'``).

Every function takes a mesh and a nodal displacement field. Plane meshes (a
:class:`fesub.fe.Mesh` of quad, triangle or line cells): displacements per node, shape
``(n_nodes, 2)`` or ``(n_nodes, 3)`` (m); only the in-plane components (first two columns) deform
the picture, so a frame mode ``(u, v, theta)`` can be passed as is (the rotation is ignored).
Solid meshes (any mesh with ``points`` (n, 3) and ``cells`` holding ``hexahedron``, ``tetra``,
``tetra10``, ``wedge`` or ``pyramid`` cells: a :class:`meshio.Mesh` or a solid mesh of
:mod:`fesub.fe`): displacements ``(n_nodes, 3)``, all three components drawn; the matplotlib
drawing :func:`plot_coupled_modes` is for plane meshes only. A flat DOF vector of length
``2 n_nodes`` or ``3 n_nodes`` (node-major, as :class:`fesub.fe.DofMap` numbers it) is accepted
too.

Rendering works without a display: when ``DISPLAY`` is not set, VTK is asked for an EGL
(GPU-less, headless) render window before pyvista is imported.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import MeshError, ParameterError

__all__ = [
    "animate_mode",
    "auto_scale",
    "common_scale",
    "deformed_grid",
    "nodal_displacement",
    "plot_coupled_modes",
    "render_mode",
    "render_modes",
    "write_modes_vtu",
]

# VTK_QUAD, VTK_TRIANGLE, VTK_LINE, VTK_QUADRATIC_QUAD, VTK_BIQUADRATIC_QUAD, VTK_QUADRATIC_TRIANGLE
_VTK_CELL = {"quad": 9, "triangle": 5, "line": 3, "quad8": 23, "quad9": 28, "triangle6": 22}
#: perimeter of a plane cell in cyclic order (meshio numbers the corners first, then the mid-sides)
_PERIMETER = {"quad8": [0, 4, 1, 5, 2, 6, 3, 7], "quad9": [0, 4, 1, 5, 2, 6, 3, 7],
              "triangle6": [0, 3, 1, 4, 2, 5]}
#: solid cells drawn and written, with their VTK type (meshio's node order is VTK's)
_SOLID_CELLS = {"hexahedron": 12, "tetra": 10, "tetra10": 24, "wedge": 13, "pyramid": 14}


def import_pyvista(what: str = "mode rendering"):
    """Import pyvista for off-screen use (EGL window when there is no display); ImportError
    naming the extra that installs it (``what`` needs pyvista)."""
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    try:
        import pyvista as pv
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ImportError(f"{what} needs pyvista: pip install 'fesub[viz]'") from exc
    pv.OFF_SCREEN = True
    return pv


def _solid_blocks(mesh) -> list:
    """The solid cell blocks ``[(type, conn), ...]`` of ``mesh`` (empty for a plane mesh)."""
    cells = mesh.cells
    blocks = cells.items() if isinstance(cells, dict) else [(c.type, c.data) for c in cells]
    return [(t, np.asarray(c, dtype=np.int64)) for t, c in blocks if t in _SOLID_CELLS]


def _is_solid(mesh) -> bool:
    return np.asarray(mesh.points).shape[1] == 3 and bool(_solid_blocks(mesh))


def _solid_displacement(mesh, u) -> np.ndarray:
    n = len(mesh.points)
    if u.ndim == 1 and u.size == 3 * n:
        u = u.reshape(n, 3)
    if u.shape != (n, 3):
        raise ParameterError(f"displacement of a solid mesh must have shape ({n}, 3) or be a DOF vector "
                             f"of {3 * n} entries (x, y, z per node), got {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ParameterError("displacement contains NaN or inf")
    return u


def nodal_displacement(mesh, displacement) -> np.ndarray:
    """Nodal displacements (m) from a nodal array or a flat DOF vector.

    Parameters
    ----------
    mesh : fesub.fe.Mesh or solid mesh
        Plane mesh, or a mesh with (n, 3) points and solid cells.
    displacement : array_like
        (n_nodes, 2|3) nodal field or flat node-major DOF vector (m).

    Returns
    -------
    (n_nodes, 2) or (n_nodes, 3) float array
        The in-plane components (m) for a plane mesh, all three for a solid mesh.
    """
    u = np.asarray(displacement, dtype=float)
    if _is_solid(mesh):
        return _solid_displacement(mesh, u)
    n = mesh.n_points
    if u.ndim == 1:
        if u.size % n or u.size // n not in (2, 3):
            raise ParameterError(f"displacement vector has {u.size} entries; expected 2 or 3 per node "
                                 f"({2 * n} or {3 * n})")
        u = u.reshape(n, -1)
    if u.ndim != 2 or u.shape[0] != n or u.shape[1] not in (2, 3):
        raise ParameterError(f"displacement must have shape ({n}, 2) or ({n}, 3), got {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ParameterError("displacement contains NaN or inf")
    return u[:, :2]


def auto_scale(mesh, displacement, fraction: float = 0.1) -> float:
    """Scale factor that makes the largest displacement ``fraction`` of the mesh's bounding-box
    diagonal (1.0 for a zero field)."""
    u = nodal_displacement(mesh, displacement)
    umax = np.linalg.norm(u, axis=1).max()
    size = np.linalg.norm(np.ptp(mesh.points, axis=0))
    return float(fraction * size / umax) if umax > 0 else 1.0


def _structural_cells(mesh) -> list:
    """``[(type, conn), ...]`` of a plane mesh's structural cells (every block of a mixed mesh)."""
    if _is_solid(mesh):
        raise ParameterError("a solid mesh is drawn by the pyvista functions (render_mode, "
                             "render_modes, animate_mode); plot_coupled_modes draws plane meshes")
    return list(mesh.blocks().items())


def _cell_blocks(mesh) -> list:
    """``[(type, conn, vtk type), ...]`` of the cells drawn and written."""
    if _is_solid(mesh):
        return [(t, c, _SOLID_CELLS[t]) for t, c in _solid_blocks(mesh)]
    return [(kind, conn, _VTK_CELL[kind]) for kind, conn in _structural_cells(mesh)]


def _points3(mesh) -> np.ndarray:
    pts = np.asarray(mesh.points, dtype=float)
    return pts if pts.shape[1] == 3 else np.column_stack([pts, np.zeros(len(pts))])


def _field3(u: np.ndarray) -> np.ndarray:
    """A nodal field with 3 components (a plane field gets a zero z)."""
    return u if u.shape[1] == 3 else np.column_stack([u, np.zeros(len(u))])


def deformed_grid(mesh, displacement, scale: float = 1.0):
    """A :class:`pyvista.UnstructuredGrid` of the mesh moved by ``scale * displacement``.

    Parameters
    ----------
    mesh : fesub.fe.Mesh or solid mesh
        Plane or solid mesh (m).
    displacement : array_like
        Nodal field (m), as :func:`nodal_displacement` takes it.
    scale : float
        Deformation scale factor (-).

    Returns
    -------
    pyvista.UnstructuredGrid
        Point data ``displacement`` (n, 3) (m, unscaled) and ``magnitude`` (m).
    """
    pv = import_pyvista()
    u = _field3(nodal_displacement(mesh, displacement))
    blocks = _cell_blocks(mesh)
    cells = np.concatenate([np.hstack([np.full((len(c), 1), c.shape[1]), c]).ravel() for _, c, _ in blocks])
    types = np.concatenate([np.full(len(c), vtk, dtype=np.uint8) for _, c, vtk in blocks])
    grid = pv.UnstructuredGrid(cells, types, _points3(mesh) + scale * u)
    grid.point_data["displacement"] = u
    grid.point_data["magnitude"] = np.linalg.norm(u, axis=1)
    return grid


def _label(title, frequency_hz):
    parts = []
    if title:
        parts.append(str(title))
    if frequency_hz is not None:
        parts.append(f"f = {float(frequency_hz):.5g} Hz")
    return "   ".join(parts)


def _add(plotter, mesh, u, scale, clim, *, cmap, undeformed, show_edges, line_width, bar):
    grid = deformed_grid(mesh, u, scale)
    is_line = not _is_solid(mesh) and mesh.element_type == "line"
    if undeformed:
        base = deformed_grid(mesh, np.zeros_like(grid.point_data["displacement"]), 0.0)
        plotter.add_mesh(base, style="wireframe", color="grey", opacity=0.35,
                         line_width=1 if not is_line else max(1, line_width // 2))
    plotter.add_mesh(grid, scalars="magnitude", cmap=cmap, clim=clim, show_edges=show_edges and not is_line,
                     edge_color="#303030", line_width=line_width if is_line else 1, show_scalar_bar=bar,
                     scalar_bar_args={"title": "displacement magnitude (m, unscaled)", "vertical": False,
                                      "fmt": "%.2e", "n_labels": 3,
                                      "position_x": 0.3, "position_y": 0.04, "width": 0.4, "height": 0.08,
                                      "color": "black", "title_font_size": 14, "label_font_size": 12})
    return grid


def _plotter(pv, window_size, background):
    p = pv.Plotter(off_screen=True, window_size=tuple(int(v) for v in window_size))
    p.set_background(background)
    return p


def _finish(plotter, label, zoom=1.0, solid=False):
    if label:
        plotter.add_text(label, position="upper_left", font_size=12, color="black")
    if solid:
        plotter.view_isometric()
        plotter.reset_camera()
        _fit_view(plotter)
    else:
        plotter.view_xy()
        # fit the (flat) scene to the window, leaving room for the label above and the bar below
        plotter.camera.tight(padding=0.25, adjust_render_window=False, view="xy")
    if zoom != 1.0:
        plotter.camera.zoom(zoom)


def _fit_view(plotter, width_fill: float = 0.9, height_fill: float = 0.68):
    """Centre the scene's points in the window and narrow the camera's view angle until they span
    ``width_fill`` of its width or ``height_fill`` of its height (room for the label above and
    the bar below).

    The camera's direction and distance are kept; the points are projected as the perspective
    camera sees them (a flat disc seen obliquely fills the window, where fitting its bounding
    sphere left most of the picture empty; the near end of a long solid stays clear of the bar)."""
    pts = [np.asarray(a.mapper.dataset.points) for a in plotter.renderer.actors.values()
           if getattr(a, "mapper", None) is not None and getattr(a.mapper, "dataset", None) is not None
           and a.mapper.dataset.n_points]
    if not pts:
        return
    pts = np.vstack(pts)
    cam = plotter.camera
    w, h = plotter.window_size
    for _ in range(2):      # the centring moves the perspective a little: once more from there
        pos, fp = np.asarray(cam.position, float), np.asarray(cam.focal_point, float)
        dist = np.linalg.norm(fp - pos)
        ahead = (fp - pos) / dist
        right = np.cross(ahead, np.asarray(cam.up, float))
        right /= np.linalg.norm(right)
        up = np.cross(right, ahead)
        depth = (pts - pos) @ ahead
        if depth.min() <= 0:
            return
        x, y = ((pts - pos) @ right) / depth, ((pts - pos) @ up) / depth    # tangents of the sight lines
        if np.ptp(x) <= 0 and np.ptp(y) <= 0:
            return
        shift = dist * (0.5 * (x.max() + x.min()) * right + 0.5 * (y.max() + y.min()) * up)
        cam.focal_point, cam.position = tuple(fp + shift), tuple(pos + shift)
        half = max(0.5 * np.ptp(y) / height_fill, 0.5 * np.ptp(x) / width_fill * h / w)
        cam.view_angle = float(np.degrees(2 * np.arctan(half)))


def _check_scale(scale):
    if scale is not None and not (np.isfinite(scale) and scale >= 0):
        raise ParameterError(f"scale must be finite and >= 0, got {scale!r}")


def render_mode(mesh, displacement, path, *, scale: float | None = None, title: str | None = None,
                frequency_hz: float | None = None, window_size=(1024, 576), cmap: str = "viridis",
                background: str = "white", show_undeformed: bool = True, show_edges: bool = True,
                line_width: int = 4):
    """Render one deformed mesh, coloured by displacement magnitude, to a PNG (off-screen).

    A plane mesh is seen from +z, fitted to the window; a solid mesh in an isometric view.

    Parameters
    ----------
    mesh : fesub.fe.Mesh or solid mesh
        Plane mesh, or a mesh with (n, 3) points (m) and solid cells (see the module docstring).
    displacement : (n_nodes, 2|3) array or flat DOF vector
        Mode shape or any nodal field (m); rotations of frame nodes are ignored; a solid mesh
        takes (n_nodes, 3).
    path : str or path-like
        Output PNG file.
    scale : float, optional
        Deformation scale factor; default :func:`auto_scale` (10 % of the mesh size).
    title, frequency_hz : optional label ``"<title>   f = <frequency> Hz"``.

    Returns
    -------
    str : the path written.
    """
    return render_modes([(mesh, displacement)], path, scale=scale, title=title, frequency_hz=frequency_hz,
                        window_size=window_size, cmap=cmap, background=background,
                        show_undeformed=show_undeformed, show_edges=show_edges, line_width=line_width)


def common_scale(pairs, scale: float | None = None, fraction: float = 0.1) -> float:
    """One deformation scale for several parts drawn together.

    ``scale`` when given (checked finite and >= 0); otherwise the factor that makes the largest
    displacement of all parts ``fraction`` of the bounding-box diagonal of the whole assembly
    (1.0 when every displacement is zero). ``pairs`` is a sequence of ``(mesh, displacement)``.
    """
    _check_scale(scale)
    if scale is not None:
        return float(scale)
    pts = np.vstack([m.points for m, _ in pairs])
    umax = max(np.linalg.norm(nodal_displacement(m, u), axis=1).max() for m, u in pairs)
    size = np.linalg.norm(np.ptp(pts, axis=0))
    return float(fraction * size / umax) if umax > 0 else 1.0


def _edges(conn: np.ndarray) -> np.ndarray:
    """Unique element edges (m, 2) of area cells (each cell's nodes in cyclic order) or lines."""
    if conn.shape[1] == 2:
        return conn
    e = np.stack([conn, np.roll(conn, -1, axis=1)], axis=-1).reshape(-1, 2)
    return np.unique(np.sort(e, axis=1), axis=0)


def plot_coupled_modes(pairs, path, *, title: str | None = None, scale: float | None = None, labels=None):
    """Draw several parts with their displacements in place, with one deformation scale (matplotlib).

    Parameters
    ----------
    pairs : sequence of (mesh, displacement)
        As :func:`render_modes`: :class:`fesub.fe.Mesh` (quad, triangle or line cells) in global
        coordinates (m) and its nodal field (n_nodes, ndpn) with ux, uy (m) first (a frame's
        rotation is ignored), or a flat DOF vector. No part is moved: a part that is displaced
        as a rigid body (a slider at its contact position) must be given at that position.
    path : str or path-like
        PNG to write (through :func:`fesub.plots.style.save`).
    title : str, optional
        Figure title (default ``"coupled mode shape"``).
    scale : float, optional
        Deformation scale shared by all parts; default :func:`common_scale` (the largest
        displacement drawn as 10 % of the size of the whole assembly).
    labels : sequence of str, optional
        Legend names of the parts (default ``part 1``, ``part 2``, ...).

    The undeformed element edges are drawn in grey, each deformed part (node + scale * u) in its
    own colour; axes in mm with equal aspect. Returns the path written.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.lines import Line2D

    from . import style

    pairs = list(pairs)
    if not pairs:
        raise ParameterError("plot_coupled_modes needs at least one (mesh, displacement) pair")
    if labels is not None and len(labels) != len(pairs):
        raise ParameterError(f"{len(labels)} labels for {len(pairs)} parts")
    s = common_scale(pairs, scale)
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    handles = [Line2D([], [], color="0.6", lw=0.8, label="undeformed")]
    for i, (mesh, u) in enumerate(pairs):
        u = nodal_displacement(mesh, u)
        X = mesh.points * 1e3  # mm
        Y = (mesh.points + s * u) * 1e3
        colour = f"C{i}"
        name = labels[i] if labels is not None else f"part {i + 1}"
        for kind, conn in _structural_cells(mesh):
            conn = conn[:, _PERIMETER[kind]] if kind in _PERIMETER else conn
            ax.add_collection(LineCollection(X[_edges(conn)], colors="0.6", linewidths=0.5,
                                             gid=f"undeformed:{i}"))
            if kind == "line":
                ax.add_collection(LineCollection(Y[conn], colors=colour, linewidths=1.8, gid=f"deformed:{i}"))
            else:
                ax.add_collection(PolyCollection(Y[conn], facecolors=colour, edgecolors=colour, alpha=0.45,
                                                 linewidths=0.4, gid=f"deformed:{i}"))
        handles.append(Line2D([], [], color=colour, lw=2.0, label=f"{name}, deformed"))
    ax.autoscale_view()
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [mm]")
    ax.set_ylabel("y [mm]")
    ax.set_title(title or "coupled mode shape")
    ax.legend(handles=handles, fontsize=8, loc="best", title=f"displacements x {s:.3g}")
    return style.save(fig, path)


def render_modes(pairs, path, *, scale: float | None = None, title: str | None = None,
                 frequency_hz: float | None = None, window_size=(1024, 576), cmap: str = "viridis",
                 background: str = "white", show_undeformed: bool = True, show_edges: bool = True,
                 line_width: int = 4):
    """Render several meshes with their displacements in one picture (e.g. the two substructures
    of a coupled mode), with one deformation scale and one colour range for all of them.

    ``pairs`` is a sequence of ``(mesh, displacement)``; other parameters as :func:`render_mode`.
    Returns the PNG path written.
    """
    pairs = list(pairs)
    if not pairs:
        raise ParameterError("render_modes needs at least one (mesh, displacement) pair")
    s = common_scale(pairs, scale)
    mags = [np.linalg.norm(nodal_displacement(m, u), axis=1).max() for m, u in pairs]
    clim = (0.0, max(max(mags), np.finfo(float).tiny))
    pv = import_pyvista()
    p = _plotter(pv, window_size, background)
    try:
        for i, (m, u) in enumerate(pairs):
            _add(p, m, u, s, clim, cmap=cmap, undeformed=show_undeformed, show_edges=show_edges,
                 line_width=line_width, bar=(i == 0))
        _finish(p, _label(title, frequency_hz), solid=any(_is_solid(m) for m, _ in pairs))
        path = os.fspath(path)
        p.screenshot(path)
    finally:
        p.close()
    return path


def animate_mode(mesh, displacement, path, *, n_frames: int = 16, fps: float = 12.0,
                 scale: float | None = None, title: str | None = None, frequency_hz: float | None = None,
                 window_size=(640, 360), cmap: str = "viridis", background: str = "white",
                 show_undeformed: bool = True, line_width: int = 4):
    """Animated GIF of a mode: the mesh oscillates as ``sin(2 pi k / n_frames) * scale * u``.

    The colour (|u| of the current frame) and the camera are kept fixed over the frames. Frames
    are written with imageio when it is installed, otherwise with Pillow. Returns the path.
    """
    if int(n_frames) != n_frames or n_frames < 2:
        raise ParameterError(f"n_frames must be an integer >= 2, got {n_frames!r}")
    if not (np.isfinite(fps) and fps > 0):
        raise ParameterError(f"fps must be > 0, got {fps!r}")
    u = nodal_displacement(mesh, displacement)
    _check_scale(scale)
    s = auto_scale(mesh, u) if scale is None else float(scale)
    umax = max(np.linalg.norm(u, axis=1).max(), np.finfo(float).tiny)
    pv = import_pyvista()
    p = _plotter(pv, window_size, background)
    frames = []
    try:
        grid = _add(p, mesh, u, s, (0.0, umax), cmap=cmap, undeformed=show_undeformed, show_edges=True,
                    line_width=line_width, bar=True)
        # fix the camera on the envelope of the motion: render the extreme position first
        _finish(p, _label(title, frequency_hz), zoom=0.9, solid=_is_solid(mesh))
        base = _points3(mesh)
        disp3 = _field3(u)
        mag = np.linalg.norm(u, axis=1)
        for k in range(int(n_frames)):
            a = np.sin(2 * np.pi * k / n_frames)
            grid.points = base + s * a * disp3
            grid.point_data["magnitude"] = abs(a) * mag
            p.render()
            frames.append(np.asarray(p.screenshot(None, return_img=True)))
    finally:
        p.close()
    path = os.fspath(path)
    write_gif(path, frames, fps)
    return path


def write_gif(path, frames, fps):
    """Write the pictures ``frames`` as an animated GIF at ``fps``, atomically (a reader never sees
    a partial file), with imageio when it is installed, otherwise with Pillow."""
    from ..atomic import atomic_write

    duration_ms = 1000.0 / fps

    def write(tmp):  # (the temporary file's suffix is not .gif: the format is named)
        try:
            import imageio.v3 as iio
        except ImportError:
            from PIL import Image

            imgs = [Image.fromarray(f) for f in frames]
            imgs[0].save(tmp, format="GIF", save_all=True, append_images=imgs[1:], duration=duration_ms, loop=0)
        else:
            iio.imwrite(tmp, np.stack(frames), extension=".gif", duration=duration_ms, loop=0)

    atomic_write(path, write)


def _mode_fields(mesh, shapes) -> list[np.ndarray]:
    """Nodal fields (n_nodes, 2|3) of ``shapes`` (see :func:`write_modes_vtu`), checked."""
    n = len(mesh.points)
    per_node = (3,) if _is_solid(mesh) else (2, 3)
    sizes = " or ".join(str(c * n) for c in per_node)
    expected = (f"each mode a nodal field {' or '.join(f'({n}, {c})' for c in per_node)} or a DOF vector "
                f"of {sizes} entries, or all modes as one ({sizes}, n_modes) array")
    hint = ("; modes of a reduced or constrained model must first be expanded to every node of the "
            "mesh (e.g. Substructure.expand, or CraigBampton.recover then Substructure.expand)")
    if isinstance(shapes, np.ndarray) and shapes.ndim == 2:
        if shapes.shape[0] not in [c * n for c in per_node]:
            raise ParameterError(f"shapes: got an array of shape {shapes.shape}; expected {expected}{hint}")
        shapes = [shapes[:, j] for j in range(shapes.shape[1])]
    fields = []
    for j, u in enumerate(shapes):
        u = np.asarray(u, dtype=float)
        if u.ndim == 1 and u.size in [c * n for c in per_node]:
            u = u.reshape(n, -1)
        if u.ndim != 2 or u.shape[0] != n or u.shape[1] not in per_node:
            raise ParameterError(f"shapes[{j}]: got shape {u.shape}; expected {expected}{hint}")
        nodal_displacement(mesh, u)  # finiteness
        fields.append(u)
    return fields


def _per_mode(name, values, n_modes, unit):
    if values is None:
        return None
    v = np.asarray(values, dtype=float).ravel()
    if v.size != n_modes:
        raise ParameterError(f"{v.size} {name} for {n_modes} mode shapes")
    if not np.all(np.isfinite(v)):
        raise ParameterError(f"{name} ({unit}) contains NaN or inf")
    return v


def _insert_field_data(path: str, arrays: dict) -> None:
    """Add a ``<FieldData>`` block of Float64 arrays (ASCII, 17 significant digits: exact) to the
    dataset of a VTU file written by meshio (which writes none)."""
    items = "".join(
        f'<DataArray type="Float64" Name="{name}" NumberOfTuples="{len(v)}" format="ascii">'
        + " ".join(repr(float(x)) for x in v) + "</DataArray>\n" for name, v in arrays.items())
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    tag = "<UnstructuredGrid>"
    k = text.find(tag)
    if k < 0:
        raise MeshError(f"{path}: no <UnstructuredGrid> element to attach the field data to")
    k += len(tag)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text[:k] + "\n<FieldData>\n" + items + "</FieldData>" + text[k:])


def write_modes_vtu(mesh, shapes, path, *, frequencies_hz=None, damping_ratios=None, names=None):
    """Write mode shapes to a VTU file (ParaView: "Warp By Vector" on any of the arrays).

    Parameters
    ----------
    mesh : fesub.fe.Mesh or solid mesh
        Plane mesh, or a mesh with (n, 3) points (m) and solid cells (``hexahedron``, ``tetra``,
        ``tetra10``, ``wedge``, ``pyramid``; several types at once are written as they are).
    shapes : sequence of nodal fields, or an (n_dofs, n_modes) array of DOF vectors
        Each field (n_nodes, 2|3) (solid mesh: (n_nodes, 3)) or flat, node-major, with 2 or 3
        DOFs per node; written as a 3-component point array (m). For frame meshes given with 3
        DOFs per node the rotation (rad) is written as ``<name>_rz``. Modes of a reduced or
        constrained model must be expanded to every node first; any other shape is a
        ParameterError naming the expected shapes and how to expand.
    frequencies_hz : sequence of float, optional
        Natural frequencies (Hz), stored exactly (17 digits), in the order of the modes, as the
        field data array ``natural_frequency_hz``, and appended to the array names
        (``"mode_01 (12.3 Hz)"``) for ParaView's array list.
    damping_ratios : sequence of float, optional
        Modal damping ratios (-), stored exactly as the field data array ``damping_ratio``.
    names : sequence of str, optional
        Array names (default ``mode_01``, ``mode_02``, ...).

    Returns
    -------
    str
        The path written.
    """
    import meshio

    fields = _mode_fields(mesh, shapes)
    frequencies_hz = _per_mode("frequencies", frequencies_hz, len(fields), "Hz")
    damping_ratios = _per_mode("damping ratios", damping_ratios, len(fields), "-")
    if names is not None and len(names) != len(fields):
        raise ParameterError(f"{len(names)} names for {len(fields)} mode shapes")
    blocks = [(t, c) for t, c, _ in _cell_blocks(mesh)]
    frame = blocks[0][0] == "line"
    point_data = {}
    for j, full in enumerate(fields):
        name = names[j] if names is not None else f"mode_{j + 1:02d}"
        if frequencies_hz is not None:
            name = f"{name} ({frequencies_hz[j]:.6g} Hz)"
        if name in point_data:
            raise ParameterError(f"duplicate mode name {name!r}")
        point_data[name] = full.copy() if _is_solid(mesh) else _field3(full[:, :2])
        if frame and full.shape[1] == 3:
            point_data[f"{name}_rz"] = full[:, 2].copy()
    path = os.fspath(path)
    try:
        meshio.write(path, meshio.Mesh(_points3(mesh), blocks, point_data=point_data), file_format="vtu")
    except Exception as exc:
        raise MeshError(f"{path}: cannot write modes ({type(exc).__name__}: {exc})") from exc
    extra = {"natural_frequency_hz": frequencies_hz, "damping_ratio": damping_ratios}
    extra = {k: v for k, v in extra.items() if v is not None}
    if extra:
        _insert_field_data(path, extra)
    return path
