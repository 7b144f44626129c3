"""Mode shapes: off-screen pyvista renderings (PNG, animated GIF) and VTU files for ParaView.

Every function takes a :class:`fesub.fe.Mesh` (quad, triangle or line cells) and a nodal
displacement field. Displacements are given per node, shape ``(n_nodes, 2)`` or
``(n_nodes, 3)`` (m); only the in-plane components (first two columns) deform the picture, so a
frame mode ``(u, v, theta)`` can be passed as is (the rotation is ignored). A flat DOF vector of
length ``2 n_nodes`` or ``3 n_nodes`` (node-major, as :class:`fesub.fe.DofMap` numbers it) is
accepted too.

Rendering works without a display: when ``DISPLAY`` is not set, VTK is asked for an EGL
(GPU-less, headless) render window before pyvista is imported.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import MeshError, ParameterError

__all__ = ["nodal_displacement", "auto_scale", "deformed_grid", "render_mode", "render_modes",
           "animate_mode", "write_modes_vtu"]

_VTK_CELL = {"quad": 9, "triangle": 5, "line": 3}  # VTK_QUAD, VTK_TRIANGLE, VTK_LINE


def _pyvista():
    """Import pyvista for off-screen use (EGL window when there is no display)."""
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    try:
        import pyvista as pv
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ImportError("mode rendering needs pyvista: pip install 'fesub[viz]'") from exc
    pv.OFF_SCREEN = True
    return pv


def nodal_displacement(mesh, displacement) -> np.ndarray:
    """In-plane nodal displacements (n_nodes, 2) (m) from a nodal array or a flat DOF vector."""
    u = np.asarray(displacement, dtype=float)
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


def _structural_cells(mesh):
    kind = mesh.element_type
    return kind, mesh.cells[kind]


def deformed_grid(mesh, displacement, scale: float = 1.0):
    """A :class:`pyvista.UnstructuredGrid` of the mesh moved by ``scale * displacement``.

    Point data: ``displacement`` (n, 3) (m, unscaled) and ``magnitude`` (m).
    """
    pv = _pyvista()
    u = nodal_displacement(mesh, displacement)
    kind, conn = _structural_cells(mesh)
    k = conn.shape[1]
    cells = np.hstack([np.full((len(conn), 1), k), conn]).ravel()
    types = np.full(len(conn), _VTK_CELL[kind], dtype=np.uint8)
    pts = np.column_stack([mesh.points + scale * u, np.zeros(mesh.n_points)])
    grid = pv.UnstructuredGrid(cells, types, pts)
    grid.point_data["displacement"] = np.column_stack([u, np.zeros(mesh.n_points)])
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
    is_line = mesh.element_type == "line"
    if undeformed:
        base = deformed_grid(mesh, np.zeros((mesh.n_points, 2)), 0.0)
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


def _finish(plotter, label, zoom=1.0):
    if label:
        plotter.add_text(label, position="upper_left", font_size=12, color="black")
    plotter.view_xy()
    # fit the (flat) scene to the window, leaving room for the label above and the bar below
    plotter.camera.tight(padding=0.25, adjust_render_window=False, view="xy")
    if zoom != 1.0:
        plotter.camera.zoom(zoom)


def _check_scale(scale):
    if scale is not None and not (np.isfinite(scale) and scale >= 0):
        raise ParameterError(f"scale must be finite and >= 0, got {scale!r}")


def render_mode(mesh, displacement, path, *, scale: float | None = None, title: str | None = None,
                frequency_hz: float | None = None, window_size=(1024, 576), cmap: str = "viridis",
                background: str = "white", show_undeformed: bool = True, show_edges: bool = True,
                line_width: int = 4):
    """Render one deformed mesh, coloured by displacement magnitude, to a PNG (off-screen).

    Parameters
    ----------
    mesh : fesub.fe.Mesh
    displacement : (n_nodes, 2|3) array or flat DOF vector
        Mode shape or any nodal field (m); rotations of frame nodes are ignored.
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


def _pairs_scale(pairs, scale):
    _check_scale(scale)
    if scale is not None:
        return float(scale)
    # common scale: the largest displacement of all parts is 10 % of the size of the assembly
    pts = np.vstack([m.points for m, _ in pairs])
    umax = max(np.linalg.norm(nodal_displacement(m, u), axis=1).max() for m, u in pairs)
    size = np.linalg.norm(np.ptp(pts, axis=0))
    return float(0.1 * size / umax) if umax > 0 else 1.0


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
    s = _pairs_scale(pairs, scale)
    mags = [np.linalg.norm(nodal_displacement(m, u), axis=1).max() for m, u in pairs]
    clim = (0.0, max(max(mags), np.finfo(float).tiny))
    pv = _pyvista()
    p = _plotter(pv, window_size, background)
    try:
        for i, (m, u) in enumerate(pairs):
            _add(p, m, u, s, clim, cmap=cmap, undeformed=show_undeformed, show_edges=show_edges,
                 line_width=line_width, bar=(i == 0))
        _finish(p, _label(title, frequency_hz))
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
    pv = _pyvista()
    p = _plotter(pv, window_size, background)
    frames = []
    try:
        grid = _add(p, mesh, u, s, (0.0, umax), cmap=cmap, undeformed=show_undeformed, show_edges=True,
                    line_width=line_width, bar=True)
        # fix the camera on the envelope of the motion: render the extreme position first
        _finish(p, _label(title, frequency_hz), zoom=0.9)
        base = np.column_stack([mesh.points, np.zeros(mesh.n_points)])
        disp3 = np.column_stack([u, np.zeros(mesh.n_points)])
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
    _write_gif(path, frames, fps)
    return path


def _write_gif(path, frames, fps):
    duration_ms = 1000.0 / fps
    try:
        import imageio.v3 as iio
    except ImportError:
        from PIL import Image

        imgs = [Image.fromarray(f) for f in frames]
        imgs[0].save(path, save_all=True, append_images=imgs[1:], duration=duration_ms, loop=0)
    else:
        iio.imwrite(path, np.stack(frames), duration=duration_ms, loop=0)


def write_modes_vtu(mesh, shapes, path, *, frequencies_hz=None, names=None):
    """Write mode shapes to a VTU file (ParaView: "Warp By Vector" on any of the arrays).

    Parameters
    ----------
    mesh : fesub.fe.Mesh
    shapes : sequence of nodal fields, or an (n_dofs, n_modes) array of DOF vectors
        Each field (n_nodes, 2|3) or flat; written as a 3-component point array (m). For frame
        meshes given with 3 DOFs per node the rotation (rad) is written as ``<name>_rz``.
    frequencies_hz : optional sequence, appended to the array names (``"mode_01 (12.3 Hz)"``).
    names : optional sequence of array names (default ``mode_01``, ``mode_02``, ...).

    Returns
    -------
    str : the path written.
    """
    import meshio

    if isinstance(shapes, np.ndarray) and shapes.ndim == 2 and shapes.shape[0] in (2 * mesh.n_points,
                                                                                    3 * mesh.n_points):
        shapes = [shapes[:, j] for j in range(shapes.shape[1])]
    shapes = list(shapes)
    if frequencies_hz is not None and len(frequencies_hz) != len(shapes):
        raise ParameterError(f"{len(frequencies_hz)} frequencies for {len(shapes)} mode shapes")
    if names is not None and len(names) != len(shapes):
        raise ParameterError(f"{len(names)} names for {len(shapes)} mode shapes")
    kind, conn = _structural_cells(mesh)
    point_data = {}
    for j, u in enumerate(shapes):
        full = np.asarray(u, dtype=float)
        full = full.reshape(mesh.n_points, -1) if full.ndim == 1 else full
        u2 = nodal_displacement(mesh, full)
        name = names[j] if names is not None else f"mode_{j + 1:02d}"
        if frequencies_hz is not None:
            name = f"{name} ({float(frequencies_hz[j]):.6g} Hz)"
        if name in point_data:
            raise ParameterError(f"duplicate mode name {name!r}")
        point_data[name] = np.column_stack([u2, np.zeros(mesh.n_points)])
        if kind == "line" and full.shape[1] == 3:
            point_data[f"{name}_rz"] = full[:, 2].copy()
    pts = np.column_stack([mesh.points, np.zeros(mesh.n_points)])
    path = os.fspath(path)
    try:
        meshio.write(path, meshio.Mesh(pts, [(kind, conn)], point_data=point_data), file_format="vtu")
    except Exception as exc:  # noqa: BLE001
        raise MeshError(f"{path}: cannot write modes ({type(exc).__name__}: {exc})") from exc
    return path
