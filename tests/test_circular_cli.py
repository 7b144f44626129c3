"""``fesub circular`` end to end (parts resumed, interrupts, bad input, figures, summary), the
result protocol of every circular-contact result (exact round trips, units) and the example."""

from __future__ import annotations

import dataclasses
import json
import math
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import fesub
from fesub.circular import ExactCircularFriction, HarmonicFriction, LinearEllipsoidalFriction
from fesub.circular.dynamics import LimitDirection, ReducedContactSystem
from fesub.circular.sliding import Trajectory
from fesub.circular.results import (LimitDirectionDiagram, CircleCurves,
                                    LimitDirections, bifurcation_table, circle_curves, direction_error_map,
                                    profile_curves)
from fesub.cli import main

ROOT = Path(__file__).resolve().parents[1]
# a short run: one law, harmonic models up to N = 2, two force levels, coarse grids, no figures
SMALL = ["--quick", "--N", "2", "--law", "uniform", "--forces", "0.03", "0.7"]


# ------------------------------------------------------------------------------------ helpers
def _same(x, y, what):
    """Equal bit for bit (arrays with their dtype kind and shape; NaN and inf included)."""
    if isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and x.shape == y.shape, what
        assert x.dtype.kind == y.dtype.kind, what
        if x.dtype.kind in "US":
            assert x.tolist() == y.tolist(), what
        else:
            assert x.astype(x.dtype).tobytes() == y.astype(x.dtype).tobytes(), what
    elif isinstance(x, dict):
        assert isinstance(y, dict) and sorted(x) == sorted(y), what
        for k in x:
            _same(x[k], y[k], f"{what}[{k}]")
    elif isinstance(x, (list, tuple)):
        assert type(x) is type(y) and len(x) == len(y), what
        for i, (a, b) in enumerate(zip(x, y)):
            _same(a, b, f"{what}[{i}]")
    elif dataclasses.is_dataclass(x):
        assert type(x) is type(y), what
        for f in dataclasses.fields(x):
            _same(getattr(x, f.name), getattr(y, f.name), f"{what}.{f.name}")
    elif isinstance(x, float) and math.isnan(x):
        assert isinstance(y, float) and math.isnan(y), what
    else:
        assert type(x) is type(y) and x == y, (what, x, y)


def _assert_round_trip(result, tmp_path, name):
    """save -> fesub.load gives the same class and every attribute bit for bit; every variable
    and coordinate of the dataset carries a unit."""
    ds = result.to_xarray()
    for v in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[v].attrs, f"{type(result).__name__}.{v} has no units"
    path = result.save(tmp_path / name)
    assert path.name == f"{name}.nc"
    back = fesub.load(path)
    assert type(back) is type(result)
    assert type(result).load(path.with_suffix("")).__class__ is type(result)
    _same(vars(result), vars(back), type(result).__name__)
    assert back.to_xarray().identical(ds)
    summary = result.summary()
    assert summary["schema"] == fesub.io.SUMMARY_SCHEMA
    assert fesub.io.info(path)["study"] == summary["study"]
    return back


@pytest.fixture(scope="module")
def models():
    ex = ExactCircularFriction("uniform")
    return ex, {"linear": LinearEllipsoidalFriction("uniform"),
                "harmonic N=2": HarmonicFriction("uniform", N=2)}


@pytest.fixture(scope="module")
def discs(models):
    ex, approx = models
    d = {"exact": ReducedContactSystem.disc(ex)}
    d.update({k: ReducedContactSystem.disc(m) for k, m in approx.items()})
    return d


# ----------------------------------------------------------------------- the result protocol
def test_profile_and_error_map_round_trip(tmp_path, models):
    ex, approx = models
    prof = profile_curves(ex, approx, np.geomspace(1e-3, 1e3, 31), n_theta=101)
    back = _assert_round_trip(prof, tmp_path, "profiles_uniform")
    assert back.models == ["linear", "harmonic N=2"] and back.Q.shape == (2, 31)
    assert back.to_xarray()["eps"].attrs["units"] == "1"
    emap = direction_error_map(ex, approx, n=9)
    back = _assert_round_trip(emap, tmp_path, "error_map_uniform")
    assert back.error.shape == (2, 9, 18) and back.to_xarray()["theta"].attrs["units"] == "rad"


def test_bifurcation_results_round_trip(tmp_path, discs):
    bv = bifurcation_table(discs)
    back = _assert_round_trip(bv, tmp_path, "disc_bifurcation_values")
    assert np.isnan(back.F_F[1]) and back.row("linear")["F_F"] is None        # linear: no fold
    assert back.row("exact")["F_P"] == pytest.approx(0.5, abs=1e-14)        # 1 - (8/9)(9/16)
    ball = bifurcation_table({"exact": ReducedContactSystem.ball(
        ExactCircularFriction("hertz"), lam=5.0)}, lam=5.0)
    assert _assert_round_trip(ball, tmp_path, "ball").system["lam"] == 5.0
    cc = circle_curves(discs, [0.03, 0.7], n=50)
    _assert_round_trip(cc, tmp_path, "disc_circle_curves")
    _assert_round_trip(CircleCurves(cc.psi, cc.models, cc.m, [0.2], "disc"), tmp_path, "one")
    bd = LimitDirectionDiagram.compute(discs["exact"], np.array([0.0, 0.03, 0.7, 1.2]))
    back = _assert_round_trip(bd, tmp_path, "disc_limit_direction_diagram_exact")
    assert back.colour.tolist() == bd.colour.tolist() and back.to_xarray()["F"].attrs["units"] == "N"
    empty = LimitDirectionDiagram(np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), [],
                               np.zeros(0), bd.values, bd.system, "interrupted")
    _assert_round_trip(empty, tmp_path, "empty")
    ld = LimitDirections.compute(discs["exact"].with_force(0.2))
    back = _assert_round_trip(ld, tmp_path, "disc_limit_directions_F0.2")
    assert all(isinstance(x, LimitDirection) for x in back.directions)
    assert back.f == pytest.approx(0.2) and len(back.directions) == 4


@pytest.mark.parametrize("method", ["tau", "t"])
def test_trajectory_round_trip(tmp_path, discs, method):
    tr = discs["harmonic N=2"].with_force(0.2).simulate_sliding([0.3, 0.8, -0.4], method=method)
    back = _assert_round_trip(tr, tmp_path, f"traj_{method}")
    assert isinstance(back, Trajectory) and back.status == "complete" and back.stopped
    ds = back.to_xarray()
    assert ds["t"].attrs["units"] == "s" and ds["u_x"].attrs["units"] == "m/s"
    assert ds["q_angle"].attrs["units"] == "rad" and ds.attrs["units"]["t_stop"] == "s"
    # a run that does not stop (above the tangency force): t_stop = inf survives the file
    run = discs["exact"].with_force(1.2).simulate_sliding([0.1, 0.05, 0.1], t_end=0.5)
    back = _assert_round_trip(run, tmp_path, "runaway")
    assert math.isinf(back.t_stop) and not back.stopped


# ------------------------------------------------------------------------------ the study
def _popen(args, env):
    return subprocess.Popen([sys.executable, "-m", "fesub.cli", "circular", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigint_keeps_finished_parts_and_rerun_resumes(tmp_path, subprocess_env):
    out = tmp_path / "run"
    args = SMALL + ["--out", str(out), "--no-figures"]
    proc = _popen(args + ["-q"], subprocess_env)
    part = out / "profiles_uniform.nc"
    deadline = time.monotonic() + 240
    while not part.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted by SIGINT" in err
    assert part.is_file() and not (out / "summary.json").exists()
    before = part.stat()

    rerun = subprocess.run([sys.executable, "-m", "fesub.cli", "circular", *args],
                           env=subprocess_env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert "profiles_uniform: finished in an earlier run, reused" in rerun.stdout
    after = part.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    summary = json.loads((out / "summary.json").read_text())
    assert "profiles_uniform" in summary["details"]["resumed_parts"]
    first = fesub.load(part)

    again = subprocess.run([sys.executable, "-m", "fesub.cli", "circular", *args, "-q",
                            "--overwrite"], env=subprocess_env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stderr
    assert part.stat().st_ino != after.st_ino or part.stat().st_mtime_ns != after.st_mtime_ns
    assert "resumed_parts" not in json.loads((out / "summary.json").read_text()).get("details", {})
    # the recomputed part holds the same numbers
    _same(vars(first), vars(fesub.load(part)), "recomputed")


def test_cli_writes_parts_figures_and_summary(tmp_path, drawn_figures):
    from fesub.plots import style

    out = tmp_path / "o"
    assert main(["circular", "--quick", "--N", "3", "--law", "uniform", "--forces", "0.03", "0.7",
                 "--out", str(out), "-q"]) == 0
    names = {p.name for p in out.iterdir()}
    parts = ["profiles_uniform", "error_map_uniform", "disc_bifurcation_values",
             "disc_circle_curves", "disc_limit_direction_diagram_exact", "disc_limit_direction_diagram_N2",
             "disc_limit_directions_F0.03", "disc_limit_directions_F0.7", "ball_bifurcation_values",
             "ball_limit_direction_diagram_exact"] + [f"disc_trajectory_{i}" for i in range(4)]
    figures = ["profiles_uniform.png", "error_map_uniform.png", "disc_k_curves.png",
               "disc_bifurcation.png", "disc_bifurcation_N2.png", "disc_sphere_F0.03.png",
               "disc_sphere_F0.7.png", "disc_trajectories.png", "ball_bifurcation.png"]
    for name in [p + ".nc" for p in parts] + figures + ["summary.json", "report.html"]:
        assert name in names, name
    # every file the study writes is a result, a figure, the summary, the report or the run record
    assert names == set([p + ".nc" for p in parts] + figures +
                        ["summary.json", "report.html", "fesub-run.json"])
    # every figure passes the house rules
    drawn = {Path(p).name: fig for fig, p in drawn_figures}
    assert sorted(drawn) == sorted(figures)
    for name, fig in drawn.items():
        assert style.check_figure(fig) == [], name
    report = (out / "report.html").read_text()
    for name in figures:
        assert name in report
    # the numbers (rows 11, 22, 23, 27 and 34 of the specification)
    res = fesub.load(out)
    disc = res["disc_bifurcation_values"].row("exact")
    assert disc["F_T"] == pytest.approx(1.0, abs=1e-12)
    assert disc["F_P"] == pytest.approx(0.5, abs=1e-12)
    assert disc["F_F"] == pytest.approx(0.080463, abs=6e-7)
    assert disc["force_free_stop"]["eps"] == pytest.approx(0.653002, abs=6e-7)
    assert res["disc_bifurcation_values"].row("harmonic N=2")["F_T"] == \
        pytest.approx(1.047321, abs=6e-7)
    assert res["ball_bifurcation_values"].row("exact")["F_T"] == pytest.approx(3.5, abs=1e-12)
    # max error of the linear model over theta (row 11), on the quick 2001-point grid
    assert res["profiles_uniform"].max_errors()["linear"][0] == pytest.approx(0.1227, abs=2e-4)
    for i in range(4):
        tr = res[f"disc_trajectory_{i}"]
        assert tr.stopped and math.isfinite(tr.t_stop) and tr.status == "complete"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema"] == fesub.io.SUMMARY_SCHEMA and summary["study"] == "circular"
    assert summary["parameters"]["t_end"] == {"value": 100.0, "unit": "s"}
    assert summary["parameters"]["forces"] == {"value": [0.03, 0.7], "unit": "1"}
    assert summary["parameters"]["m"] == {"value": 1.0, "unit": "kg"}
    assert summary["results"]["disc_F_T"]["unit"] == "N"
    assert summary["results"]["disc_t_stop"]["unit"] == "s"
    assert len(summary["results"]["disc_t_stop"]["value"]) == 4
    for q in list(summary["parameters"].values()) + list(summary["results"].values()):
        assert set(q) == {"value", "unit"}


def test_help_shows_defaults_units_and_common_flags(capsys):
    assert main(["circular", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--out DIR", "-q, --quiet", "--overwrite", "--no-figures"):
        assert flag in text
    assert "(default: fesub-out/circular)" in text
    assert "--no-progress" not in text and "circular_out" not in text
    assert "[s] (default: 100.0)" in text and "[-] (default: 5.0)" in text
    assert "[-] (default: 4)" in text


@pytest.mark.parametrize("args,says", [
    (["--t-end", "-1"], "--t-end"), (["--t-end", "nan"], "--t-end"), (["--N", "0"], "--N"),
    (["--N", "13"], "--N"), (["--N", "1.5"], "--N"), (["--forces", "-0.1"], "--forces"),
    (["--forces", "a"], "--forces"), (["--forces"], "--forces"), (["--lam", "0"], "--lam"),
    (["--traj-force", "inf"], "--traj-force"), (["--law", "cubic"], "--law")])
def test_bad_arguments_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, args, says):
    out = tmp_path / "never"
    assert main(["circular", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub circular: error:") and says in err[0], err
    assert not out.exists()


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("a file")
    assert main(["circular", "--out", str(target), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub circular: error:") and "--out" in err[0]
    assert target.read_text() == "a file"


def test_example_circular_disc(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["circular_disc.py", str(tmp_path)])
    ns = runpy.run_path(str(ROOT / "examples" / "circular_disc.py"), run_name="not_main")
    runs = ns["main"](str(tmp_path))
    out = capsys.readouterr().out
    assert "F_T = 1.000000" in out and "F_P = 0.500000" in out
    # row 31 of the spec: exact stop time 1.354772 s
    assert runs["exact"][1].t_stop == pytest.approx(1.354772, abs=6e-7)
    assert (tmp_path / "circular_disc.png").exists()
