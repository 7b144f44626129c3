"""The 3D pad-on-plate study (``fesub pad-on-plate``) and the time series of deformed contact
surfaces: ParaView collections read back by an independent reader (ElementTree for the ``.pvd``,
meshio for the VTU files), animations counted frame by frame (Pillow)."""

import json
import sys
import xml.etree.ElementTree as ET

import meshio
import numpy as np
import pytest

import fesub
from fesub.cli import main
from fesub.errors import ParameterError
from fesub.plots.series import animate_frames, read_pvd, write_pvd


def _frames(k=3):
    """k frames of two parts: a unit quad moving up and a fixed triangle, with a point array."""
    quad = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float)
    tri = np.array([[2, 0, 0], [3, 0, 0], [2, 1, 0]], float)
    out = []
    for j in range(k):
        out.append({"moving": meshio.Mesh(quad + [0, 0, 0.1 * j], [("quad", [[0, 1, 2, 3]])],
                                          point_data={"p": np.arange(4.0) * j}),
                    "fixed": meshio.Mesh(tri, [("triangle", [[0, 1, 2]])], point_data={"q": np.ones(3)})})
    return out


def test_pvd_lists_every_part_and_time_and_the_vtu_files_hold_the_frames(tmp_path):
    times = [0.0, 1e-3, 2.5e-3]
    path = write_pvd(tmp_path / "series", times, _frames())
    assert path.name == "series.pvd"
    # the collection read by ElementTree, the data sets by meshio (neither is fesub's code)
    sets = list(ET.parse(path).getroot().iter("DataSet"))
    assert [float(s.get("timestep")) for s in sets] == [0.0, 0.0, 1e-3, 1e-3, 2.5e-3, 2.5e-3]
    assert [s.get("part") for s in sets[:2]] == ["0", "1"]
    for s in sets:
        m = meshio.read(tmp_path / s.get("file"))
        j = times.index(float(s.get("timestep")))
        if s.get("name") == "moving":
            assert np.array_equal(m.points[:, 2], np.full(4, 0.1 * j))
            assert np.array_equal(m.point_data["p"], np.arange(4.0) * j)
        else:
            assert np.array_equal(m.point_data["q"], np.ones(3))
    assert [(t, n) for t, n, _ in read_pvd(path)] == [(t, n) for t in times for n in ("moving", "fixed")]
    # a shorter series in the same place leaves no file of the longer one
    write_pvd(path, times[:2], _frames(2))
    assert sorted(f.name for f in (tmp_path / "series_vtu").iterdir()) == [
        "fixed_0000.vtu", "fixed_0001.vtu", "moving_0000.vtu", "moving_0001.vtu"]
    # bad input: one error each
    with pytest.raises(ParameterError, match="one frame per time"):
        write_pvd(tmp_path / "x", [0.0, 1.0], _frames(3))
    with pytest.raises(ParameterError, match="increasing"):
        write_pvd(tmp_path / "x", [0.0, 0.0, 1.0], _frames(3))


def test_animation_has_one_picture_per_frame(tmp_path):
    pytest.importorskip("pyvista")
    Image = pytest.importorskip("PIL.Image")
    path = animate_frames(_frames(4), tmp_path / "a.gif", scalars="p", titles=[f"frame {j}" for j in range(4)],
                          styles={"fixed": "wireframe"}, window_size=(240, 160))
    with Image.open(path) as im:
        assert im.n_frames == 4 and im.size == (240, 160)


def test_animation_without_pyvista_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyvista", None)  # import pyvista -> ImportError
    with pytest.raises(ImportError, match=r"fesub\[viz\]"):
        animate_frames(_frames(2), tmp_path / "a.gif", scalars="p")


@pytest.mark.slow
def test_study_through_the_command_presses_drags_and_writes_its_series(tmp_path):
    """A 5 x 5-node pad (4 x 4 x 2 hexahedra) through the command, with figures and animation."""
    pytest.importorskip("pyvista")
    Image = pytest.importorskip("PIL.Image")
    out = tmp_path / "pop"
    rc = main(["pad-on-plate", "--nx", "4", "--fs-out", "1e4", "--out", str(out), "--quiet"])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    R = s["results"]
    res = fesub.load(out / "run.nc")
    mu = s["parameters"]["mu"]["value"]
    # normal load balance: during the hold the normal forces carry the pressing load; the pad's
    # vertical vibration left by the 0.3 ms ramp is damped to 4e-4 of it (measured 3.5e-4)
    assert abs(R["normal_force_ratio_preload"]["value"] - 1.0) < 1e-3
    # the drag force never exceeds mu N (each node's force lies in its cone, so their sum's x
    # component is at most mu times the normal sum; 1e-9 for the kernel's round-off)
    F = res.contact_forces()
    assert np.all(-F["x"] <= mu * F["normal"] * (1 + 1e-9) + 1e-12)
    # gross sliding: the drag force reaches mu N from below. It stays under it while the rim's
    # outward (Poisson) slip turns towards the drag and while a few nodes of the coarse pad stick
    # again for a sample: within 3 % here (measured 0.984 at 5 x 5 nodes, 0.997 at 9 x 9)
    assert 0.97 < R["drag_force_ratio_end"]["value"] <= 1.0
    assert R["first_slip_drag"]["value"] < 1e-7 and R["status"]["value"] == "completed"
    # the series: one VTU per surface and output sample; their fields are the run's
    sets = list(ET.parse(out / "surfaces.pvd").getroot().iter("DataSet"))
    assert len(sets) == 2 * res.t.size
    cols = np.flatnonzero(res.node_interface == 0)
    for s_ in sets[::7]:
        if s_.get("name") != "pad":
            continue
        j = int(np.argmin(np.abs(res.t - float(s_.get("timestep")))))
        m = meshio.read(out / s_.get("file"))
        slave = m.point_data["state"] >= 0
        # node by node: the point's fields are the result's of the slave node it carries
        where = {int(n): c for c, n in zip(cols, res.node_id[cols])}
        assert sorted(int(n) for n in m.point_data["node"][slave]) == sorted(where)
        for k in np.flatnonzero(slave):
            c = where[int(m.point_data["node"][k])]
            assert m.point_data["normal_force"][k] == res.nodes["lambda_n"][j, c]
            assert m.point_data["state"][k] == res.nodes["state"][j, c]
            assert np.array_equal(m.point_data["slip_velocity"][k],
                                  np.nan_to_num([res.nodes[f"slip_velocity_{x}"][j, c] for x in "xyz"]))
        # the normal forces of the pad's points sum to the run's normal force
        assert m.point_data["normal_force"].sum() == pytest.approx(F["normal"][j], rel=1e-12, abs=1e-12)
        # the points are the reference points plus the recorded displacement (the pad's bottom
        # starts on z = 0: z of its points is their displacement)
        assert np.array_equal(m.points[slave, 2], m.point_data["displacement"][slave, 2])
    with Image.open(out / "contact.gif") as im:
        assert im.n_frames == res.t.size
    for f in ("interface.png", "drag_force.png", "energy.png", "report.html"):
        assert (out / f).is_file()


def test_contact_run_channels_packed_and_files_of_the_old_layout_reopen(tmp_path):
    """The output channels are stored as three (t, channel) arrays; a file written with one
    variable per channel (the layout before) reopens to the same result."""
    from fesub.contact import ContactRunResult
    from fesub.io import save_dataset

    t = np.linspace(0.0, 1e-3, 5)
    rng = np.random.default_rng(0)
    channels = {f"{p}_{n}": rng.normal(size=5) for n in ("pad_3x", "top") for p in "uva"}
    res = ContactRunResult(t=t, nodes={"lambda_n": rng.random((5, 2)), "state": np.ones((5, 2), np.int64)},
                           channels=channels, energies={k: np.zeros(5) for k in ("kinetic", "strain", "damping_loss",
                                                                                 "external_work", "friction_dissipation",
                                                                                 "impact_loss")},
                           node_interface=np.zeros(2, np.int64), node_id=np.arange(2), state_changes=np.zeros(2, np.int64),
                           status="completed", steps=5, h=2e-4, fs_out=5e3, wall_time=0.1, backend="python", tol=1e-12,
                           on_stick="continue", info={"interfaces": ["a/b"]})
    ds = res.to_xarray()
    assert ds["channel_u"].dims == ("t", "channel") and list(ds["channel"].values) == ["pad_3x", "top"]
    back = fesub.load(res.save(tmp_path / "new"))
    assert list(back.channels) == list(channels) and all(np.array_equal(back.channels[k], v) for k, v in channels.items())
    old = ds.drop_vars(["channel_u", "channel_v", "channel_a", "channel"])
    for k, v in channels.items():
        old[k] = ("t", v, {"units": {"u": "m", "v": "m/s", "a": "m/s^2"}[k[0]]})
    old.attrs["channel_order"] = list(channels)
    back = fesub.load(save_dataset(old, tmp_path / "old.nc", ContactRunResult))
    assert list(back.channels) == list(channels) and all(np.array_equal(back.channels[k], v) for k, v in channels.items())
