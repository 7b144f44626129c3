"""`fesub freeplay` command, figures and the example script (smoke + content checks)."""

from __future__ import annotations

import json
import os
import runpy
import sys

import numpy as np

from fesub.cli import main
from fesub.nonsmooth import P_REF, BasinResult, bifurcation_diagram, plots


def test_cli_radius(tmp_path, capsys):
    assert main(["freeplay", "radius", "--out", str(tmp_path)]) == 0
    info = json.load(open(tmp_path / "radius.json"))
    assert abs(info["R_i"] - 0.0017187) < 5e-8 and (tmp_path / "force_law.png").stat().st_size > 0
    assert (tmp_path / "vector_field_error.png").exists()


def test_cli_basin_both_laws(tmp_path):
    rc = main(["freeplay", "basin", "--grid", "6", "--range", "0.5", "--law", "both",
               "--n-transient", "40", "--workers", "1", "--no-progress", "--out", str(tmp_path)])
    assert rc == 0
    for f in ("basin_W1.15_exact.npz", "basin_W1.15_smooth.json", "basin_W1.15_compare.png"):
        assert (tmp_path / f).exists()
    r = BasinResult.load(tmp_path / "basin_W1.15_exact.npz")
    assert r.labels.shape == (6, 6)


def test_cli_orbit(tmp_path):
    assert main(["freeplay", "orbit", "--W", "1.3", "--ic", "0", "0", "0", "0", "--out",
                 str(tmp_path)]) == 0
    d = json.load(open(tmp_path / "orbit_W1.3_exact.json"))
    assert abs(d["x1_max"] - 0.0884306) < 1e-7 and d["stable"]


def test_cli_bad_input(tmp_path, capsys):
    rc = main(["freeplay", "basin", "--grid", "0", "--workers", "1", "--out", str(tmp_path)])
    assert rc == 1 and "empty" in capsys.readouterr().err
    rc = main(["freeplay", "radius", "--set", "a", "-1", "--out", str(tmp_path)])
    assert rc == 1 and "a (half-gap)" in capsys.readouterr().err


def test_bifurcation_plot_and_save(tmp_path):
    r = bifurcation_diagram(P_REF, [1.2, 1.3], n_transient=20, n_points=10, executor="serial",
                            progress=False)
    plots.bifurcation(r, path=tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 0
    back = type(r).load(r.save(tmp_path / "bif"))
    assert np.array_equal(back.section, r.section, equal_nan=True)


def test_example_runs(tmp_path, monkeypatch):
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "freeplay_basin.py")
    monkeypatch.setattr(sys, "argv", [path, str(tmp_path)])
    runpy.run_path(path, run_name="__main__")
    assert (tmp_path / "basin_W1.15.png").exists()


def test_floquet_and_branch_plots(tmp_path):
    from fesub.nonsmooth import TwoMassFreePlay
    from fesub.nonsmooth.branches import branch_summary, continue_orbit
    from fesub.nonsmooth.orbits import orbit_from_ic

    sys_ = TwoMassFreePlay(P_REF, "exact")
    o = orbit_from_ic(sys_, [0, 0, 0, 0], 1.5)
    br, prob = continue_orbit(sys_, o.z0, 1.5, (1.45, 1.55), ds=0.05, ds_max=0.05, detect=(),
                              progress=False)
    s = branch_summary(br, prob)
    plots.branches([(br, s, "exact")], path=tmp_path / "br.png")
    lam = np.array([np.linalg.eigvals(prob.monodromy(x, W)) for x, W in zip(br.x, br.lam)])
    plots.floquet(lam, W=br.lam, path=tmp_path / "fl.png")
    assert (tmp_path / "br.png").exists() and (tmp_path / "fl.png").exists()
