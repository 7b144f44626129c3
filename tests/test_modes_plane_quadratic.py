"""Mode-shape output of plane meshes with quadratic and mixed cells: the VTU file carries every
cell block with its VTK type (read back by meshio, an independent reader) and the drawing of
coupled modes outlines each cell through its mid-side nodes."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.fe import Mesh, quadratic_mesh, rectangle
from fesub.plots import style
from fesub.plots.modes import plot_coupled_modes, write_modes_vtu


def _mixed_quadratic():
    """A quad8 strip beside a triangle6 strip sharing their common edge's nodes."""
    quads = quadratic_mesh(rectangle(1.0, 0.2, 4, 1))
    tris = quadratic_mesh(rectangle(0.5, 0.2, 2, 1, origin=(1.0, 0.0), element="triangle"))
    pts = np.vstack([quads.points, tris.points])
    # merge the nodes of the common edge x = 1 (a tie by coordinates)
    _, first, inverse = np.unique(np.round(pts, 12), axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    new = np.empty_like(order)
    new[order] = np.arange(order.size)
    index = new[inverse.ravel()]
    cells = {"quad8": index[quads.cells["quad8"]],
             "triangle6": index[tris.cells["triangle6"] + quads.points.shape[0]]}
    return Mesh(pts[first[order]], cells)


def test_vtu_of_a_mixed_quadratic_mesh_keeps_every_block(tmp_path):
    meshio = pytest.importorskip("meshio")
    mesh = _mixed_quadratic()
    assert sorted(mesh.blocks()) == ["quad8", "triangle6"]
    u = np.zeros((mesh.points.shape[0], 2))
    u[:, 1] = mesh.points[:, 0] ** 2  # a bending-like field (m)
    path = write_modes_vtu(mesh, [u], tmp_path / "modes.vtu", frequencies_hz=[12.5])
    back = meshio.read(path)
    assert {c.type: len(c.data) for c in back.cells} == {"quad8": 4, "triangle6": 4}
    for c in back.cells:
        np.testing.assert_array_equal(c.data, mesh.cells[c.type])
    got = next(v for k, v in back.point_data.items() if k.startswith("mode_01"))
    np.testing.assert_array_equal(got[:, :2], u)
    assert float(np.ravel(back.field_data["natural_frequency_hz"])[0]) == 12.5


def test_coupled_modes_drawing_outlines_quadratic_cells(tmp_path, drawn_figures):
    mesh = _mixed_quadratic()
    u = np.zeros((mesh.points.shape[0], 2))
    u[:, 1] = 0.01 * mesh.points[:, 0]
    plot_coupled_modes([(mesh, u)], tmp_path / "mode.png", title="mixed quadratic mesh")
    fig = drawn_figures[-1][0]
    assert style.check_figure(fig) == []
    polys = [c for c in fig.axes[0].collections if str(c.get_gid()).startswith("deformed")]
    # one polygon per cell: 8 vertices per quad8, 6 per triangle6
    sizes = sorted(len(p.vertices) for c in polys for p in c.get_paths())
    assert sizes.count(9) + sizes.count(8) == 4 and sizes.count(7) + sizes.count(6) == 4
    # ... through the mid-side nodes in turn: every outline segment is half a cell edge (at most
    # half the 320 mm diagonal of a triangle), where the corners-first order would draw whole
    # 250 mm edges and chords between mid-sides
    segs = np.concatenate([c.get_segments() for c in fig.axes[0].collections
                           if str(c.get_gid()).startswith("undeformed")])
    lengths = np.linalg.norm(np.diff(np.asarray(segs), axis=1)[:, 0], axis=1)
    assert lengths.max() <= 0.5 * np.hypot(250.0, 200.0) + 1e-9
