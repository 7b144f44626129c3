"""Figures of the sliding-contact study: every figure function of fesub.contact.sliding.plots drawn from a
small real model (15 + 20 elements, the paper's 20 + 20 Craig-Bampton modes) or from inputs with
known content, held to the house rules, and checked for what it must show."""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact import simulate

from fesub.contact.analyses import eigen
from fesub.contact.analyses.frf import time_dependent_frf
from fesub.errors import ModelError, ParameterError
from fesub.fe import beam_line, rectangle
from fesub.models.beam_on_beam import BeamOnBeamParams, build, contact_system
from fesub.contact.sliding import plots as pc
from fesub.plots import style
from fesub.signal import window_spectrum

SMALL = BeamOnBeamParams(nx1=15, nx2=20)
FIGURES = {name for name in pc.__all__ if name.startswith("plot_")}


@pytest.fixture(scope="module")
def system():
    return contact_system(build(SMALL, from_files=False))


@pytest.fixture(scope="module")
def transients(system):
    """Smooth and rough runs of 600 steps at mu = 0.3 (same seed, only the roughness differs)."""
    h = 0.9 * system.critical_step()
    out = {}
    for name, std in (("smooth", 0.0), ("rough", 0.002)):
        res = simulate(system, mu=0.3, duration=600 * h, h=h, fs_out=1.0 / h, vx=0.03, roughness_std=std,
                       seed=1)
        out[name] = res
    return out


@pytest.fixture(scope="module")
def loci(system):
    import warnings

    with warnings.catch_warnings():
        # the 40-mode Ritz basis reaches ~84 kHz: the 10 eigenvalues drawn (below ~20 kHz) are
        # well inside it, so its incomplete-spectrum warning does not concern these figures
        warnings.simplefilter("ignore")
        return eigen.eigenvalue_loci(system, np.linspace(0.01, 0.09, 3), 0.3, 10, n_basis=40)


def _unstable_copy(loci, where):
    """The same loci with the eigenvalues at the index pairs ``where`` moved to Re = +5 1/s."""
    lam = np.array(loci.lam)
    for i, k in where:
        lam[i, k] = 5.0 + 1j * lam[i, k].imag
    return eigen.EigenLoci(positions=np.array(loci.positions), lam=lam, mu=loci.mu)


def _burst_table(loci):
    """The bursts of a synthetic signal (noise and one 10.6 kHz oscillation growing at 150 1/s)
    attributed against ``loci``."""
    from fesub.contact.analyses.bursts import attribute, detect_bursts

    fs = 50_000.0
    t = np.arange(int(0.6 * fs)) / fs
    env = np.exp(np.where(t <= 0.35, 150.0 * (t - 0.35), -450.0 * (t - 0.35)))
    x = np.random.default_rng(0).standard_normal(t.size) + 30.0 * env * np.sin(2 * np.pi * 10_600.0 * t)
    bursts = detect_bursts(t, x, 0.01 + 0.1 * t)
    assert len(bursts) == 1
    return attribute(bursts, {"undeformed": (loci.positions, loci.lam)}, name="synthetic")


def _colorbar_image(fig):
    """The colour-mapped artist of the (single) main axes that has a colour bar."""
    for ax in fig.axes:
        for art in list(ax.images) + list(ax.collections):
            if getattr(art, "colorbar", None) is not None:
                return art
    raise AssertionError("no colour bar")


def test_every_figure_passes_the_house_rules(tmp_path, drawn_figures, system, transients, loci):
    drawn = {}

    def draw(name, *args, **kw):
        n = len(drawn_figures)
        getattr(pc, name)(*args, **kw)
        assert len(drawn_figures) == n + 1, f"{name} did not write through style.save"
        drawn[name] = drawn_figures[-1][0]

    rough = transients["rough"]
    s = rough.signals
    draw("plot_loci", _unstable_copy(loci, [(1, 2)]), tmp_path / "loci.png", rayleigh=[("beam 1", 10.0, 1e-7)])
    draw("plot_max_real", [loci, _unstable_copy(loci, [(0, 0)])], tmp_path / "maxre.png")
    draw("plot_stability_map", _map(), tmp_path / "map.png")
    draw("plot_transient", rough, tmp_path / "transient.png")
    draw("plot_spectrogram", s["t"], s["a_T_y"], rough.fs_out, tmp_path / "spec.png", nperseg=128,
         marks=[5e3])
    t0, t1 = s["t"][0], s["t"][-1]
    draw("plot_burst_spectra", [("whole run", *window_spectrum(s["t"], s["a_T_y"], t0, t1))],
         tmp_path / "bursts.png")
    r = time_dependent_frf(system, np.linspace(0.0, 0.5, 6), np.arange(0.0, 5000.0, 100.0), "C_y", "T_y", 0.1,
                           0.005, 0.03, accelerance=True)
    draw("plot_tdfrf", r, tmp_path / "tdfrf.png")
    draw("plot_burst_attribution", loci, _unstable_copy(loci, [(1, 0)]), {"synthetic": _burst_table(loci)},
         tmp_path / "attribution.png")
    plate = rectangle(0.1, 0.01, 4, 1)
    draw("plot_coupled_modes", [(plate, np.ones((plate.n_points, 2)))], tmp_path / "modes.png")
    assert set(drawn) == FIGURES
    for name, fig in drawn.items():
        assert style.check_figure(fig) == [], name


def test_tdfrf_colour_scale_reference_and_title(tmp_path, drawn_figures, system):
    # f = 0 has a zero accelerance (-inf dB): it must not stretch the colour scale
    r = time_dependent_frf(system, np.linspace(0.0, 0.5, 6), np.arange(0.0, 5000.0, 100.0), "C_y", "T_y", 0.1,
                           0.005, 0.03, accelerance=True)
    assert np.any(r.H == 0)
    pc.plot_tdfrf(r, tmp_path / "tdfrf.png")
    fig = drawn_figures[-1][0]
    im = _colorbar_image(fig)
    lo, hi = im.get_clim()
    top = 20 * np.log10(np.abs(r.H).max())
    assert hi == pytest.approx(top, abs=1e-9) and hi - lo <= 120
    assert im.colorbar.ax.get_ylabel() == "|H| [dB re 1 (m/s^2)/N]"
    title = fig.axes[0].get_title()
    assert "C,y" in title and "T,y" in title and "mu = 0.1" in title


def test_spectrogram_db_span(tmp_path, drawn_figures, transients):
    res = transients["rough"]
    s = res.signals
    pc.plot_spectrogram(s["t"], s["a_T_y"], res.fs_out, tmp_path / "spec.png", nperseg=128, title="x")
    im = _colorbar_image(drawn_figures[-1][0])
    lo, hi = im.get_clim()
    assert np.isfinite(lo) and hi - lo <= 120
    assert "dB re 1 (m/s^2)^2/Hz" in im.colorbar.ax.get_ylabel()


def test_loci_unstable_eigenvalues_have_their_own_artist(tmp_path, drawn_figures, loci):
    where = [(0, 1), (2, 3), (2, 4)]
    L = _unstable_copy(loci, where)
    pc.plot_loci(L, tmp_path / "loci.png")
    fig = drawn_figures[-1][0]
    ax = fig.axes[0]
    red = [c for c in ax.collections if c.get_gid() == "unstable"]
    assert len(red) == 1
    got = red[0].get_offsets()
    want = np.array([[L.lam[i, k].real, L.lam[i, k].imag / (2 * np.pi) / 1e3] for i, k in where])
    np.testing.assert_allclose(np.sort(got, axis=0), np.sort(want, axis=0), rtol=1e-12)
    assert np.allclose(red[0].get_edgecolor()[0][:3], (1.0, 0.0, 0.0))
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"Re(lambda) > 0: 3 of {L.lam.size}" in texts
    assert "3 unstable" in ax.get_title() and "mu = 0.3" in ax.get_title()
    assert fig.axes[1].get_ylabel() == "contact position [mm]"


def _map(**kw):
    """A stability map whose sign changes at mu = 0.2 - x / (50 m): boundary known in advance."""
    mus = np.linspace(0.0, 0.4, 5)
    pos = np.linspace(0.01, 0.09, 4)
    kw.setdefault("max_real", (mus[:, None] - 0.2) * 50 + pos[None, :])
    return eigen.StabilityMap(positions=pos, mus=mus, n=10, **kw)


def test_stability_map_boundary_and_units(tmp_path, drawn_figures):
    smap = _map()
    pc.plot_stability_map(smap, tmp_path / "map.png")
    fig = drawn_figures[-1][0]
    ax = fig.axes[0]
    from matplotlib.contour import ContourSet

    contours = [c for c in ax.collections if isinstance(c, ContourSet)]
    assert len(contours) == 1 and list(contours[0].levels) == [0.0]
    # the drawn boundary lies where the map is zero: mu = 0.2 - x/50 (x in m)
    xy = np.vstack([p.vertices for p in contours[0].get_paths()])
    np.testing.assert_allclose(xy[:, 1], 0.2 - xy[:, 0] * 1e-3 / 50, atol=1e-12)
    assert ax.get_xlabel() == "contact position [mm]" and ax.get_ylabel() == "friction coefficient mu [-]"
    im = _colorbar_image(fig)
    assert im.colorbar.ax.get_ylabel() == "max Re(lambda) [1/s]"
    lo, hi = im.get_clim()
    assert (lo, hi) == (smap.max_real.min(), smap.max_real.max())
    with pytest.raises(ParameterError, match="shape"):
        pc.plot_stability_map(_map(max_real=smap.max_real.T), tmp_path / "bad.png")
    # stable everywhere: no boundary, and a colour scale symmetric about 0 (stable = blue half)
    pc.plot_stability_map(_map(max_real=-1.0 - np.abs(smap.max_real)), tmp_path / "stable.png")
    fig = drawn_figures[-1][0]
    assert not [c for c in fig.axes[0].collections if isinstance(c, ContourSet)]
    lim = 1.0 + np.abs(smap.max_real).max()
    assert _colorbar_image(fig).get_clim() == (-lim, lim)
    assert style.check_figure(fig) == []


def test_transient_titles_name_the_case(tmp_path, drawn_figures, transients):
    titles = {}
    for name, res in transients.items():
        pc.plot_transient(res, tmp_path / f"{name}.png")
        titles[name] = drawn_figures[-1][0]._suptitle.get_text()
    assert titles["smooth"] != titles["rough"]
    assert "mu = 0.3" in titles["smooth"] and "smooth" in titles["smooth"]
    assert "rough (noise std 2 mN, seed 1)" in titles["rough"]


def test_transient_channels_units_and_values(tmp_path, drawn_figures, transients):
    res = transients["rough"]
    pc.plot_transient(res, tmp_path / "t.png", channels=("lambda", "v_t", "u_T_y", "x_contact"))
    axs = drawn_figures[-1][0].axes
    assert [ax.get_ylabel() for ax in axs] == ["contact force lambda [N]",
                                              "sliding velocity v_t of the slave [mm/s]",
                                              "displacement u_T,y [mm]",
                                              "contact position on the target [mm]"]
    s = res.signals
    # the data drawn are the signals in the unit of the label: N as is, m/s and m times 1000
    for ax, key, factor in zip(axs, ("lambda", "v_t", "u_T_y", "x_contact"), (1.0, 1e3, 1e3, 1e3)):
        np.testing.assert_array_equal(ax.lines[0].get_ydata(), factor * s[key])
        np.testing.assert_array_equal(ax.lines[0].get_xdata(), s["t"])
    assert axs[-1].get_xlabel() == "time [s]"
    with pytest.raises(ParameterError, match=r"unknown 'a_X_y'.*available: .*a_T_y"):
        pc.plot_transient(res, tmp_path / "bad.png", channels=("lambda", "a_X_y"))
    with pytest.raises(ParameterError, match="at least one"):
        pc.plot_transient(res, tmp_path / "bad.png", channels=())


def test_burst_spectra_log_axis_floored(tmp_path, drawn_figures, transients):
    s = transients["rough"].signals
    f, X = window_spectrum(s["t"], s["a_T_y"], s["t"][0], s["t"][-1])
    X[0] = 1e-300  # a numerically empty bin, as the mean-removed DC bin is
    pc.plot_burst_spectra([("whole run", f, X)], tmp_path / "b.png")
    ax = drawn_figures[-1][0].axes[0]
    lo, hi = ax.get_ylim()
    top = X[f <= 20e3].max()
    assert lo == pytest.approx(top * 1e-5, rel=1e-12) and hi > top  # 100 dB below the peak
    assert ax.get_ylabel() == "amplitude of acceleration a_T,y [m/s^2]"


def _drawn(ax, gid):
    (c,) = [c for c in ax.collections if c.get_gid() == gid]
    return [p.vertices for p in c.get_paths()]


def test_coupled_modes_drawn_in_place_with_one_scale(tmp_path, drawn_figures):
    rng = np.random.default_rng(0)
    plate = rectangle(0.1, 0.004, 10, 2)  # a beam 2 lookalike (m)
    slider = rectangle(0.05, 0.005, 6, 1, element="triangle", origin=(0.02, 0.004))
    frame = beam_line((0.0, 0.02), (0.08, 0.06), 5)
    u_plate = rng.normal(size=(plate.n_points, 2)) * 1e-3
    u_slider = rng.normal(size=(slider.n_points, 2)) * 3e-3  # the largest displacement is here
    u_frame = rng.normal(size=(frame.n_points, 3)) * 1e-4  # (ux, uy, rz): rz ignored
    pairs = [(plate, u_plate), (slider, u_slider), (frame, u_frame)]
    pc.plot_coupled_modes(pairs, tmp_path / "m.png", title="coupled mode 1", labels=["2", "1", "frame"])
    fig = drawn_figures[-1][0]
    ax = fig.axes[0]
    # independent scale: largest |u| of all parts is 10 % of the diagonal of the whole assembly
    pts = np.vstack([plate.points, slider.points, frame.points])
    umax = max(np.linalg.norm(u[:, :2], axis=1).max() for _, u in pairs)
    s = 0.1 * np.hypot(*(pts.max(axis=0) - pts.min(axis=0))) / umax
    for i, (mesh, u) in enumerate(pairs):
        conn = mesh.elements()
        want = (mesh.points[conn] + s * u[conn][..., :2]) * 1e3  # mm, no shift of any part
        got = _drawn(ax, f"deformed:{i}")
        assert len(got) == len(conn)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g[:len(w)], w, rtol=1e-12, atol=1e-12)
        # undeformed edges lie on the mesh nodes
        edges = np.vstack(_drawn(ax, f"undeformed:{i}"))
        assert {tuple(np.round(v, 9)) for v in edges} == {tuple(np.round(v, 9)) for v in mesh.points * 1e3}
    assert ax.get_aspect() == 1.0
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("x [mm]", "y [mm]", "coupled mode 1")
    assert style.check_figure(fig) == []
    # an explicit scale is used as given, for every part
    pc.plot_coupled_modes(pairs[:2], tmp_path / "m2.png", scale=2.0)
    ax = drawn_figures[-1][0].axes[0]
    for i, (mesh, u) in enumerate(pairs[:2]):
        conn = mesh.elements()
        got = np.array([v[:conn.shape[1]] for v in _drawn(ax, f"deformed:{i}")])
        np.testing.assert_allclose(got, (mesh.points[conn] + 2.0 * u[conn]) * 1e3, rtol=1e-12, atol=1e-12)
    with pytest.raises(ParameterError, match="at least one"):
        pc.plot_coupled_modes([], tmp_path / "x.png")
    with pytest.raises(ParameterError, match="scale"):
        pc.plot_coupled_modes(pairs, tmp_path / "x.png", scale=-1.0)


def test_interrupted_loci_before_the_first_position(tmp_path, drawn_figures):
    L = eigen.EigenLoci(positions=np.zeros(0), lam=np.zeros((0, 10), complex), mu=0.3, status="interrupted")
    pc.plot_loci(L, tmp_path / "loci.png")
    pc.plot_max_real([L], tmp_path / "maxre.png")
    for fig, _ in drawn_figures[-2:]:
        assert style.check_figure(fig) == []
    assert drawn_figures[-2][0].axes[0].get_title().endswith("(interrupted: partial)")


def test_surface_point_lies_on_the_target_and_places_the_slave(system):
    # at a target node x, the point is that node; between two nodes, on the chord between them
    xt = system.XT
    for a, b in system.segs[[0, len(system.segs) // 2, -1]]:
        np.testing.assert_array_equal(system.surface_point(float(xt[a, 0])), xt[a])
        mid = 0.5 * (xt[a] + xt[b])
        np.testing.assert_allclose(system.surface_point(float(mid[0])), mid, rtol=0, atol=1e-15)
    with pytest.raises(ModelError, match="not on the target surface"):
        system.surface_point(float(xt[:, 0].max()) + 1.0)
    # the slave node C of beam 1 translated by surface_point(s) - X_C sits on the surface at s
    s = float(np.mean(xt[:, 0]))
    shift = system.surface_point(s) - system.X_C
    moved = system.X_C + shift
    k, alpha = system.segment_at(s)
    a, b = system.segs[k]
    cross = (xt[b] - xt[a])[0] * (moved - xt[a])[1] - (xt[b] - xt[a])[1] * (moved - xt[a])[0]
    assert abs(cross) < 1e-15 and moved[0] == pytest.approx(s, abs=1e-15)
