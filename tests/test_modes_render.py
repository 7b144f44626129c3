"""Off-screen rendering of mode shapes (PNG, GIF) and VTU export."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.errors import ParameterError
from fesub.fe import BeamSection, PlaneStress, beam_line, mesh_matrices, modes, rectangle
from fesub.fe.assembly import free_dofs

from fesub.plots import modes as pm

MAT = PlaneStress(210e9, 0.3, 7800.0, 0.01)


@pytest.fixture
def render():
    """Rendering needs pyvista and Pillow (optional dependencies); VTU writing needs neither."""
    pytest.importorskip("pyvista")
    return pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def plate_mode():
    mesh = rectangle(1.0, 0.1, 20, 3)
    K, M, dm = mesh_matrices(mesh, MAT)
    fr = free_dofs(dm.n_dofs, dm.dofs(mesh.nodes("left")))
    f, phi = modes(K[fr][:, fr], M[fr][:, fr], 3)
    full = np.zeros((dm.n_dofs, 3))
    full[fr] = phi
    return mesh, f, full


def _fraction_not_background(png, background=(255, 255, 255)):
    from PIL import Image

    img = np.asarray(Image.open(png).convert("RGB")).astype(int)
    return np.mean(np.any(np.abs(img - np.array(background)) > 8, axis=-1)), img


def test_render_mode_png(tmp_path, plate_mode, render):
    mesh, f, phi = plate_mode
    out = pm.render_mode(mesh, phi[:, 0].reshape(-1, 2), tmp_path / "mode1.png", title="mode 1",
                         frequency_hz=f[0], window_size=(600, 300))
    frac, img = _fraction_not_background(out)
    assert img.shape == (300, 600, 3)
    # the deformed plate (10 % tip deflection) plus bar and label cover several % of the picture
    assert frac > 0.02, frac
    # the colour map is used: more than a handful of distinct colours
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 20


def test_render_blank_vs_mode_differ(tmp_path, plate_mode, render):
    """A zero field and a mode give different pictures (the deformation is really drawn)."""
    mesh, f, phi = plate_mode
    a = pm.render_mode(mesh, np.zeros((mesh.n_points, 2)), tmp_path / "zero.png", window_size=(400, 200))
    b = pm.render_mode(mesh, phi[:, 1], tmp_path / "mode2.png", window_size=(400, 200))
    ia = np.asarray(render.open(a).convert("RGB")).astype(int)
    ib = np.asarray(render.open(b).convert("RGB")).astype(int)
    assert np.mean(np.any(ia != ib, axis=-1)) > 0.01


def test_frame_and_two_substructures_in_one_picture(tmp_path, render):
    sec = BeamSection.rectangle(210e9, 7800.0, 0.02, 0.01)
    beam = beam_line((0.0, 0.0), (1.0, 0.0), 20)
    K, M, dm = mesh_matrices(beam, sec)
    fr = free_dofs(dm.n_dofs, dm.dofs(beam.nodes("start")))
    f, phi = modes(K[fr][:, fr], M[fr][:, fr], 2)
    u = np.zeros((dm.n_dofs,))
    u[fr] = phi[:, 0]
    frame_u = u.reshape(-1, 3)  # (u, v, theta): the rotation is ignored for drawing
    plate = rectangle(1.0, 0.1, 10, 2, origin=(0.0, -0.3))
    plate_u = np.zeros((plate.n_points, 2))
    plate_u[:, 1] = (plate.points[:, 0] / 1.0) ** 2 * np.abs(frame_u[:, 1]).max()
    out = pm.render_modes([(beam, frame_u), (plate, plate_u)], tmp_path / "coupled.png",
                          title="coupled mode", frequency_hz=f[0], window_size=(500, 400))
    frac, _ = _fraction_not_background(out)
    assert frac > 0.02


def test_animation_gif(tmp_path, plate_mode, render):
    mesh, f, phi = plate_mode
    out = pm.animate_mode(mesh, phi[:, 0], tmp_path / "mode1.gif", n_frames=8, frequency_hz=f[0],
                          window_size=(320, 180))
    im = render.open(out)
    assert im.n_frames == 8
    # frames differ (the mesh moves): compare the frame at a quarter period with the first one
    im.seek(0)
    f0 = np.asarray(im.convert("RGB")).astype(int)
    im.seek(2)
    f2 = np.asarray(im.convert("RGB")).astype(int)
    assert np.mean(np.any(f0 != f2, axis=-1)) > 0.01


def test_vtu_round_trip(tmp_path, plate_mode):
    import meshio

    mesh, f, phi = plate_mode
    out = pm.write_modes_vtu(mesh, phi, tmp_path / "modes.vtu", frequencies_hz=f)
    back = meshio.read(out)
    np.testing.assert_array_equal(back.points[:, :2], mesh.points)
    np.testing.assert_array_equal(back.cells_dict["quad"], mesh.cells["quad"])
    assert len(back.point_data) == 3
    for j in range(3):
        name = f"mode_{j + 1:02d} ({f[j]:.6g} Hz)"
        arr = back.point_data[name]
        assert arr.shape == (mesh.n_points, 3)
        np.testing.assert_array_equal(arr[:, :2], phi[:, j].reshape(-1, 2))  # binary VTU: exact
        assert np.all(arr[:, 2] == 0)


def test_vtu_frame_keeps_rotation(tmp_path):
    import meshio

    beam = beam_line((0.0, 0.0), (1.0, 0.5), 5)
    u = np.arange(3 * beam.n_points, dtype=float).reshape(-1, 3)
    out = pm.write_modes_vtu(beam, [u], tmp_path / "frame.vtu", names=["bend"])
    back = meshio.read(out)
    np.testing.assert_array_equal(back.point_data["bend"][:, :2], u[:, :2])
    np.testing.assert_array_equal(back.point_data["bend_rz"], u[:, 2])


def test_bad_inputs(tmp_path, plate_mode):
    mesh, f, phi = plate_mode
    with pytest.raises(ParameterError, match="displacement must have shape"):
        pm.render_mode(mesh, np.zeros((mesh.n_points + 1, 2)), tmp_path / "x.png")
    with pytest.raises(ParameterError, match="displacement vector has"):
        pm.nodal_displacement(mesh, np.zeros(7))
    with pytest.raises(ParameterError, match="NaN"):
        pm.nodal_displacement(mesh, np.full((mesh.n_points, 2), np.nan))
    with pytest.raises(ParameterError, match="n_frames"):
        pm.animate_mode(mesh, phi[:, 0], tmp_path / "x.gif", n_frames=1)
    with pytest.raises(ParameterError, match="scale"):
        pm.render_mode(mesh, phi[:, 0], tmp_path / "x.png", scale=-1.0)
    with pytest.raises(ParameterError, match="frequencies"):
        pm.write_modes_vtu(mesh, phi, tmp_path / "x.vtu", frequencies_hz=[1.0])


def test_auto_scale():
    mesh = rectangle(3.0, 4.0, 2, 2)  # diagonal 5 m
    u = np.zeros((mesh.n_points, 2))
    u[0] = [0.003, 0.004]  # |u|max = 5 mm
    assert pm.auto_scale(mesh, u) == pytest.approx(0.1 * 5.0 / 0.005)
    assert pm.auto_scale(mesh, np.zeros_like(u)) == 1.0


def test_triangle_mesh_png_and_vtu(tmp_path, render):
    import meshio

    mesh = rectangle(1.0, 0.2, 10, 2, element="triangle")
    K, M, dm = mesh_matrices(mesh, MAT)
    fr = free_dofs(dm.n_dofs, dm.dofs(mesh.nodes("left")))
    f, phi = modes(K[fr][:, fr], M[fr][:, fr], 1)
    u = np.zeros(dm.n_dofs)
    u[fr] = phi[:, 0]
    out = pm.render_mode(mesh, u, tmp_path / "tri.png", frequency_hz=f[0], window_size=(400, 200))
    assert _fraction_not_background(out)[0] > 0.02
    back = meshio.read(pm.write_modes_vtu(mesh, [u], tmp_path / "tri.vtu"))
    np.testing.assert_array_equal(back.cells_dict["triangle"], mesh.cells["triangle"])
    np.testing.assert_array_equal(back.point_data["mode_01"][:, :2], u.reshape(-1, 2))


def test_vtu_natural_frequencies_as_field_data(tmp_path, plate_mode):
    import meshio

    mesh, f, phi = plate_mode
    back = meshio.read(pm.write_modes_vtu(mesh, phi, tmp_path / "modes.vtu", frequencies_hz=f))
    # stored exactly (17 significant digits), one per mode in the order of the point arrays
    np.testing.assert_array_equal(back.field_data["natural_frequency_hz"], f)
    assert list(back.point_data) == [f"mode_{j + 1:02d} ({f[j]:.6g} Hz)" for j in range(3)]
    # without frequencies there is no field data
    assert meshio.read(pm.write_modes_vtu(mesh, phi, tmp_path / "plain.vtu")).field_data == {}


def test_vtu_modes_not_expanded_to_the_mesh(tmp_path, plate_mode):
    """Modes of the constrained model (free DOFs only) are refused with the expected shapes."""
    from fesub.fe.assembly import free_dofs

    mesh, f, phi = plate_mode
    n = mesh.n_points
    fr = free_dofs(2 * n, np.arange(6))  # as if 3 nodes were clamped
    expected = rf"expected each mode a nodal field \({n}, 2\) or \({n}, 3\) or a DOF vector of {2 * n}"
    with pytest.raises(ParameterError, match=rf"shapes: got an array of shape \({fr.size}, 3\); " + expected):
        pm.write_modes_vtu(mesh, phi[fr], tmp_path / "x.vtu")
    with pytest.raises(ParameterError, match=rf"shapes\[1\]: got shape \({fr.size},\); " + expected):
        pm.write_modes_vtu(mesh, [phi[:, 0], phi[fr, 1]], tmp_path / "x.vtu")
    with pytest.raises(ParameterError, match="expanded"):
        pm.write_modes_vtu(mesh, [np.zeros((n, 4))], tmp_path / "x.vtu")
    assert not (tmp_path / "x.vtu").exists()


@pytest.mark.parametrize("shape", ["disc", "bar"])
def test_a_solid_fills_its_picture(tmp_path, render, shape):
    """A solid is framed on its points as the camera sees them: a flat plate seen obliquely
    spans most of the window's width (fitting its bounding sphere left it a third of it), and a
    long bar bent towards the camera stays clear of the colour bar at the bottom (its rows hold
    only the bar's width). Zero field: the undeformed grid and the mesh coincide."""
    from fesub.fe.solid_mesh import box

    mesh = box(0.35, 0.35, 0.01, 14, 14, 1) if shape == "disc" else box(0.3, 0.05, 0.02, 30, 5, 2)
    u = np.zeros((mesh.n_points, 3))
    if shape == "bar":
        u[:, 2] = (mesh.points[:, 0] / 0.3) ** 2           # bent, its free end 10 % of the size up
    out = pm.render_mode(mesh, u, tmp_path / f"{shape}.png", window_size=(800, 450), title="x")
    _, img = _fraction_not_background(out)
    drawn = np.any(np.abs(img - 255) > 8, axis=-1)
    middle = drawn[int(0.15 * 450):int(0.8 * 450)]             # below the label, above the bar
    cols = np.flatnonzero(middle.any(axis=0))
    rows = np.flatnonzero(middle.any(axis=1))
    assert cols.size and rows.size
    assert (cols[-1] - cols[0]) / 800 > 0.6 or (rows[-1] - rows[0]) / middle.shape[0] > 0.9
    # the bar's rows (the bottom 14 %): nothing drawn outside the bar (30-70 % of the width) and
    # its labels (to 77 %)
    low = drawn[int(0.86 * 450):]
    outside = np.concatenate([low[:, :int(0.2 * 800)], low[:, int(0.8 * 800):]], axis=1)
    assert not outside.any()
