"""Time series of meshes: ParaView collections (``.pvd`` of VTU files) and off-screen animations.

A *frame* is one instant: a dict ``part name -> meshio.Mesh`` (points in m, cells, point data).
:func:`write_pvd` writes the frames of a run as a ParaView collection: one VTU file per part and
instant (written by meshio, each atomically), in a folder beside the ``.pvd`` file that lists
them with their times; ParaView opens the ``.pvd`` as one time-dependent data set whose parts
are blocks. :func:`animate_frames` renders the frames off screen with pyvista (``pip install
'fesub[viz]'``) into an animated GIF, one picture per frame, with a fixed camera and colour range.

Nothing here knows any physics: a capability builds the frames (e.g. the deformed contact
surfaces of :mod:`fesub.contact.engine.surface_series`) and a study chooses where they go.
"""

from __future__ import annotations

import os
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from ..errors import MeshError, ParameterError

__all__ = ["write_pvd", "read_pvd", "animate_frames"]


def _check_frames(times, frames):
    """The times (s) as a float array and the frames as a list, checked: as many frames as times,
    times increasing, every frame the same parts with the same cells."""
    t = np.asarray(times, dtype=float).ravel()
    frames = list(frames)
    if t.size != len(frames) or not frames:
        raise ParameterError(f"give one frame per time: {t.size} times, {len(frames)} frames (at least one)")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ParameterError("times (s) must be finite and increasing")
    first = frames[0]
    if not isinstance(first, dict) or not first:
        raise ParameterError("each frame must be a dict part name -> meshio.Mesh with at least one part")
    for k, fr in enumerate(frames):
        if not isinstance(fr, dict) or list(fr) != list(first):
            raise ParameterError(f"frame {k} has parts {list(fr) if isinstance(fr, dict) else fr!r}; every frame "
                                 f"must have the parts {list(first)}")
        for name, m in fr.items():
            if len(m.points) != len(first[name].points) or not np.all(np.isfinite(m.points)):
                raise ParameterError(f"frame {k}, part {name!r}: {len(m.points)} points (finite, m) expected "
                                     f"{len(first[name].points)} as in the first frame")
    for name in first:
        if not str(name) or any(c in str(name) for c in '/\\:*?"<>|'):
            raise ParameterError(f"part names become file names: {name!r} must be non-empty without /\\:*?\"<>|")
    return t, frames


def write_pvd(path, times, frames) -> Path:
    """Write a time series of meshes as a ParaView collection (``.pvd`` and VTU files).

    Parameters
    ----------
    path : str or os.PathLike
        The collection file; ``.pvd`` is appended unless it ends so. The VTU files go into the
        folder ``<path without .pvd>_vtu`` beside it, named ``<part>_<k>.vtu`` (k the frame's
        index, zero-padded); the VTU files of an earlier series in that folder are replaced or
        removed.
    times : sequence of float
        Time of each frame (s), increasing.
    frames : sequence of dict part name -> meshio.Mesh
        Each frame's parts (points in m, cells, point and cell data with their units in the
        names or in the caller's documentation); every frame has the same parts with the same
        points count.

    Returns
    -------
    pathlib.Path
        The ``.pvd`` written. Every file is written atomically (:func:`fesub.io.atomic_write`),
        the ``.pvd`` last: an interrupted write leaves the previous collection readable.
    """
    import meshio

    from ..atomic import atomic_write, atomic_write_text

    t, frames = _check_frames(times, frames)
    path = Path(path)
    if path.suffix != ".pvd":
        path = path.with_name(path.name + ".pvd")
    folder = path.with_name(path.stem + "_vtu")
    folder.mkdir(parents=True, exist_ok=True)
    width = max(4, len(str(len(frames) - 1)))
    rows, written = [], set()
    for k, (tk, fr) in enumerate(zip(t, frames)):
        for part, (name, mesh) in enumerate(fr.items()):
            rel = f"{folder.name}/{name}_{k:0{width}d}.vtu"

            def write(tmp, mesh=mesh, name=name):
                try:
                    meshio.write(tmp, mesh, file_format="vtu")
                except Exception as exc:  # noqa: BLE001 - meshio raises many kinds
                    raise MeshError(f"{path}: cannot write part {name!r} ({type(exc).__name__}: {exc})") from exc

            written.add(atomic_write(path.parent / rel, write))
            rows.append(f'    <DataSet timestep="{float(tk)!r}" group="" part="{part}" name={quoteattr(str(name))} '
                        f"file={quoteattr(rel)}/>")
    text = ('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">\n'
            "  <Collection>\n" + "\n".join(rows) + "\n  </Collection>\n</VTKFile>\n")
    atomic_write_text(path, text)
    # VTU files of an earlier, longer series in the folder are no part of this one
    for f in folder.glob("*.vtu"):
        if f not in written:
            f.unlink()
    return path


def read_pvd(path) -> list:
    """The data sets a ``.pvd`` collection lists.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.pvd`` file (of :func:`write_pvd` or of another writer).

    Returns
    -------
    list of (float, str, pathlib.Path)
        ``(time in s, part name, VTU file)`` in the order of the file (the part's index when it
        has no name); open a file with ``meshio.read``.
    """
    import xml.etree.ElementTree as ET

    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise MeshError(f"{path}: not a readable ParaView collection ({exc})") from None
    out = []
    for ds in root.iter("DataSet"):
        try:
            out.append((float(ds.get("timestep", "nan")), ds.get("name") or ds.get("part", "0"),
                        path.parent / ds.get("file")))
        except (TypeError, ValueError) as exc:
            raise MeshError(f"{path}: a DataSet without a file or with a bad timestep ({exc})") from None
    return out


def animate_frames(frames, path, *, scalars: str, clim=None, cmap="viridis", fps: float = 10.0,
                   titles=None, styles=None, scalar_title: str | None = None, n_colors: int | None = None,
                   view=(1.0, -1.2, -0.9), window_size=(800, 520), background="white",
                   glyphs: bool = False, point_size: float = 14.0) -> str:
    """Render frames off screen with pyvista into an animated GIF (one picture per frame).

    Parameters
    ----------
    frames : sequence of dict part name -> meshio.Mesh
        As :func:`write_pvd` (at least one frame); the first frame's parts set the camera, which
        then stays fixed.
    path : str or os.PathLike
        The GIF to write.
    scalars : str
        Point array that colours each part holding it (the others are drawn plain grey).
    clim : (float, float), optional
        Colour range; default the range of ``scalars`` over every frame (fixed over the frames).
    cmap : str or list of colours
        Colour map (a list of colour names for a few categories, with ``n_colors``).
    fps : float
        Frames per second (> 0).
    titles : sequence of str, optional
        One line written on each picture (e.g. its time).
    styles : dict part name -> 'surface' or 'wireframe', optional
        How each part is drawn (default 'surface').
    scalar_title : str, optional
        Title of the colour bar (default ``scalars``).
    n_colors : int, optional
        Number of discrete colours (for a categorical array such as a state code).
    view : 3 floats
        Direction from the scene's centre to the camera (default: from below, across x and y, to
        see a contact face lying on z = const from under it).
    window_size, background
        Picture size (pixels) and background colour.
    glyphs : bool
        Draw the parts plain and the points where ``scalars`` is a number (not NaN in the first
        frame) as spheres of ``point_size`` pixels in its colours: one colour per point, for a
        categorical array that an interpolation over the faces would blend.

    Returns
    -------
    str
        The path written. ImportError naming the extra ``fesub[viz]`` without pyvista.
    """
    from .modes import import_pyvista, write_gif

    frames = list(frames)
    _check_frames(np.arange(len(frames), dtype=float), frames)
    if not (np.isfinite(fps) and fps > 0):
        raise ParameterError(f"fps must be > 0, got {fps!r}")
    if titles is not None and len(titles) != len(frames):
        raise ParameterError(f"{len(titles)} titles for {len(frames)} frames")
    styles = dict(styles or {})
    bad = {k: v for k, v in styles.items() if v not in ("surface", "wireframe")}
    if bad:
        raise ParameterError(f"styles must be 'surface' or 'wireframe', got {bad}")
    if clim is None:
        vals = [np.asarray(m.point_data[scalars], float) for fr in frames for m in fr.values()
                if scalars in m.point_data]
        if not vals:
            raise ParameterError(f"no part of the frames has the point array {scalars!r}")
        v = np.concatenate([x.ravel() for x in vals])
        v = v[np.isfinite(v)]
        lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
        clim = (lo, hi if hi > lo else lo + 1.0)
    pv = import_pyvista("rendering an animation")
    p = pv.Plotter(off_screen=True, window_size=tuple(int(w) for w in window_size))
    p.set_background(background)
    grids, dots = {}, {}
    pictures = []
    bar_args = {"title": scalar_title or scalars, "vertical": False, "n_labels": 0 if n_colors else 3,
                "fmt": "%.3g", "position_x": 0.25, "position_y": 0.03, "width": 0.5, "height": 0.08,
                "color": "black"}
    try:
        bar = False
        for name, m in frames[0].items():
            g = pv.from_meshio(m)
            grids[name] = g
            style = styles.get(name, "surface")
            has = scalars in m.point_data and (not glyphs or np.isfinite(np.asarray(m.point_data[scalars], float)).any())
            if has and glyphs:
                p.add_mesh(g, color="#e6e6e6", style=style, show_edges=style == "surface", edge_color="#808080")
                keep = np.isfinite(np.asarray(m.point_data[scalars], float))
                cloud = pv.PolyData(np.asarray(m.points, float)[keep])
                cloud.point_data[scalars] = np.asarray(m.point_data[scalars], float)[keep]
                dots[name] = (cloud, keep)
                p.add_mesh(cloud, scalars=scalars, cmap=cmap, clim=clim, n_colors=n_colors or 256,
                           render_points_as_spheres=True, point_size=point_size, show_scalar_bar=not bar,
                           lighting=n_colors is None, scalar_bar_args=bar_args)
                bar = True
            elif has:
                g.point_data[scalars] = np.nan_to_num(np.asarray(m.point_data[scalars], float), nan=clim[0])
                # a categorical array (n_colors) in flat colours, unlit: its colours read as the bar's
                p.add_mesh(g, scalars=scalars, cmap=cmap, clim=clim, style=style, show_edges=style == "surface",
                           n_colors=n_colors or 256, show_scalar_bar=not bar, edge_color="#404040",
                           lighting=n_colors is None, scalar_bar_args=bar_args)
                bar = True
            else:
                p.add_mesh(g, color="lightgrey", style=style, opacity=1.0 if style == "surface" else 0.6)
        p.camera_position = "xy"
        p.camera.position = tuple(np.asarray(p.camera.focal_point) + np.asarray(view, float))
        p.camera.up = (0.0, 0.0, 1.0)
        p.reset_camera()
        text = p.add_text(titles[0] if titles else "", position="upper_left", font_size=11, color="black")
        for k, fr in enumerate(frames):
            for name, m in fr.items():
                g = grids[name]
                g.points = np.asarray(m.points, float)
                if name in dots:
                    cloud, keep = dots[name]
                    cloud.points = np.asarray(m.points, float)[keep]
                    cloud.point_data[scalars] = np.asarray(m.point_data[scalars], float)[keep]
                elif scalars in g.point_data:
                    g.point_data[scalars] = np.nan_to_num(np.asarray(m.point_data[scalars], float), nan=clim[0])
            if titles:
                text.SetText(2, str(titles[k]))  # the upper-left corner
            p.render()
            pictures.append(np.asarray(p.screenshot(None, return_img=True)))
    finally:
        p.close()
    path = os.fspath(path)
    write_gif(path, pictures, fps)
    return path
