"""`fesub circular` and the example script: files are written and hold the right numbers."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

from fesub.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_cli_quick_run(tmp_path, capsys):
    rc = main(["circular", "--out", str(tmp_path), "--quick", "--no-progress", "--N", "3",
               "--law", "uniform", "--forces", "0.03,0.7"])
    assert rc == 0
    names = {p.name for p in tmp_path.iterdir()}
    for f in ("profiles_uniform.png", "error_map_uniform.png", "profiles_uniform.npz",
              "profiles_uniform.json", "disc_bifurcation.png", "disc_k_curves.png",
              "disc_sphere_F0.03.png", "disc_sphere_F0.7.png", "disc_trajectories.png",
              "disc.npz", "disc.json", "ball_bifurcation.png", "ball.json"):
        assert f in names, f
    disc = json.loads((tmp_path / "disc.json").read_text())
    ex = disc["models"]["exact"]
    # the saved numbers are the analysis values (row 22 and row 27 of the spec)
    assert ex["F_T"] == pytest.approx(1.0, abs=1e-12)
    assert ex["F_P"] == pytest.approx(0.5, abs=1e-12)
    assert ex["F_F"] == pytest.approx(0.080463, abs=6e-7)
    assert ex["force_free_stop"]["eps"] == pytest.approx(0.653002, abs=6e-7)
    assert disc["models"]["harmonic N=2"]["F_T"] == pytest.approx(1.047321, abs=6e-7)
    ball = json.loads((tmp_path / "ball.json").read_text())
    assert ball["models"]["exact"]["F_T"] == pytest.approx(3.5, abs=1e-12)
    prof = json.loads((tmp_path / "profiles_uniform.json").read_text())
    # max errors of the linear model over theta (row 11), on the quick 2001-point grid
    assert prof["models"]["linear"]["max_err_Q"] == pytest.approx(0.1227, abs=2e-4)
    arr = np.load(tmp_path / "profiles_uniform.npz")
    assert arr["Q_exact"].shape == arr["eps"].shape
    for run in disc["trajectories"]["runs"]:
        assert run["stopped"] and np.isfinite(run["t_stop"])


def test_cli_bad_arguments(tmp_path, capsys):
    assert main(["circular", "--out", str(tmp_path), "--N", "0", "--no-progress"]) == 1
    assert "--N" in capsys.readouterr().err
    assert main(["circular", "--out", str(tmp_path), "--forces", "a,b", "--no-progress"]) == 1
    assert "--forces" in capsys.readouterr().err


def test_example_circular_disc(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["circular_disc.py", str(tmp_path)])
    ns = runpy.run_path(str(ROOT / "examples" / "circular_disc.py"), run_name="not_main")
    runs = ns["main"](str(tmp_path))
    out = capsys.readouterr().out
    assert "F_T = 1.000000" in out and "F_P = 0.500000" in out
    # row 31 of the spec: exact stop time 1.354772 s
    assert runs["exact"][1].t_stop == pytest.approx(1.354772, abs=6e-7)
    assert (tmp_path / "circular_disc.png").exists()
