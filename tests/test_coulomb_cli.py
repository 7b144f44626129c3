"""``fesub coulomb`` end to end (parts resumed, interrupts, bad input, figures, summary) and the
result protocol of every Coulomb result (exact round trips, units)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fesub
from fesub.cli import main
from fesub.coulomb import (ChainModel, NumericRegimeMap, RegimeMap, RegimePoint, SimResult,
                           SteadyState, modal_sums, numeric_regime_map, regime_map, regime_map_point,
                           simulate_chain, simulate_chain_scipy, steady_state)

integrate_module = importlib.import_module("fesub.coulomb.integrate")
numeric_map_module = importlib.import_module("fesub.coulomb.numeric_map")

U2 = ChainModel([1.0, 1.0], [1.0, 1.0])
# a small run: 2 masses, 40 frequency ratios, 2 x 2 simulated points
SMALL = ["--gamma", "1", "1", "--kappa", "1", "1", "--contact", "wall:1", "--load", "0",
         "--betas", "0.3", "0.5", "--nr", "40", "--numeric", "2"]


# ------------------------------------------------------------------------------------ helpers
def _same_value(x, y, what):
    if isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape, what
        assert x.tobytes() == y.tobytes(), what          # bit for bit, NaN and inf included
    elif isinstance(x, dict):
        assert isinstance(y, dict) and sorted(x) == sorted(y), what
        for k in x:
            _same_value(x[k], y[k], f"{what}[{k}]")
    elif isinstance(x, float) and math.isnan(x):
        assert isinstance(y, float) and math.isnan(y), what
    else:
        assert type(x) is type(y) and x == y, (what, x, y)


def _assert_round_trip(result, tmp_path, name):
    """save -> fesub.load gives the same class and every field bit for bit; every variable and
    coordinate of the dataset carries a unit."""
    ds = result.to_xarray()
    for v in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[v].attrs, f"{type(result).__name__}.{v} has no units"
    path = result.save(tmp_path / name)
    assert path.name == f"{name}.nc"
    back = fesub.load(path)
    assert type(back) is type(result)
    for f in dataclasses.fields(result):
        _same_value(getattr(result, f.name), getattr(back, f.name), f.name)
    assert type(result).load(path).summary()["schema"] == "fesub-summary/1"
    return back


def _one_error_line(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("fesub coulomb: error:"), err
    return lines[0]


# ------------------------------------------------------------------------------ result protocol
def test_closed_form_results_round_trip(tmp_path):
    # NaN (no continuous solution) must come back as such
    r = np.linspace(0.2, 2.5, 37)
    ss = steady_state(U2, "wall:1", 0, r, [0.0, 0.3, 2.0])
    assert np.isnan(ss.Z).any()
    _assert_round_trip(ss, tmp_path, "ss")
    _assert_round_trip(steady_state(U2, "base:0", 0, r, [0.1], s_method="paper",
                                    amplitude="monoharmonic"), tmp_path, "ss_base")
    _assert_round_trip(modal_sums(U2, "masses:0,1", 1, r), tmp_path, "ms")
    rm = regime_map(U2, "wall:0", 0, r, np.linspace(0, 1.2, 9), mu=1.3)
    back = _assert_round_trip(rm, tmp_path, "rm")
    assert back.regime.dtype == np.int8 and back.load == 0 and back.mu == 1.3


def test_simulation_results_round_trip(tmp_path):
    res = simulate_chain(U2, "wall:0", 0, 0.45, 0.3)
    assert res.converged and res.state["seglog"].shape[0] >= 1
    _assert_round_trip(res, tmp_path, "sim")
    unsettled = simulate_chain(U2, "wall:0", 0, 0.5, 0.3, max_periods=200)   # NaN amplitudes
    _assert_round_trip(unsettled, tmp_path, "sim_nan")
    # the SciPy baseline keeps no segment log
    base = simulate_chain_scipy(U2, "wall:0", 0, 1.3, 0.6, max_periods=60, tol=1e-6)
    assert "seglog" not in base.state
    _assert_round_trip(base, tmp_path, "sim_scipy")


def test_regime_point_and_numeric_map_round_trip(tmp_path):
    params = {"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:1", "amplitudes": True}
    pt = regime_map_point(params, 0.8, 0.3)
    assert isinstance(pt, RegimePoint) and pt.X is not None and pt.Z is not None
    assert _assert_round_trip(pt, tmp_path, "pt") == pt
    pt0 = regime_map_point(dict(params, amplitudes=False), 0.8, 0.3)
    assert pt0.X is None and pt0.Z is None
    assert _assert_round_trip(pt0, tmp_path, "pt0") == pt0
    mp = numeric_regime_map({"gamma": [1, 1], "kappa": [1, 1], "contact": {"kind": "wall", "j": 0}},
                            [0.45, 1.3], [0.2, 1.2], progress=False)
    back = _assert_round_trip(mp, tmp_path, "map")
    assert back.converged.dtype == bool and back.status == "complete"


# ------------------------------------------------------------------------------ interrupts
def test_simulate_returns_an_interrupted_result(monkeypatch, tmp_path):
    class Stops:
        def run_periods(self, *a):
            raise KeyboardInterrupt

    monkeypatch.setattr(integrate_module, "kernels", lambda name: Stops())
    res = simulate_chain(U2, "wall:0", 0, 0.45, 0.3)
    assert res.status == "interrupted" and not res.converged and res.regime_name == "not determined"
    assert np.isnan(res.X).all() and res.state["x"].shape == (2,)
    _assert_round_trip(res, tmp_path, "interrupted")
    # a map point does not pass an interrupted simulation off as a result
    with pytest.raises(KeyboardInterrupt):
        regime_map_point({"gamma": [1, 1], "kappa": [1, 1]}, 0.45, 0.3)


def test_numeric_map_keeps_finished_points_on_interrupt(monkeypatch):
    real = numeric_map_module.regime_map_point
    calls = []

    def stop_third(params, r, b):
        calls.append((r, b))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(params, r, b)

    monkeypatch.setattr(numeric_map_module, "regime_map_point", stop_third)
    mp = numeric_regime_map({"gamma": [1, 1], "kappa": [1, 1]}, [0.45, 1.3], [0.2, 1.2],
                            progress=False)
    assert mp.status == "interrupted"
    assert (mp.regime[0] >= 0).all() and (mp.regime[1] == -1).all()
    ss = steady_state(U2, "wall:0", 0, [0.45, 1.3], [0.2])
    assert np.array_equal(mp.regime[0], ss.regime[0])   # the finished points are real ones


def test_numeric_map_on_worker_processes_is_the_serial_map(backend):
    # the parallel map must be the serial one bit for bit (independent points, deterministic
    # integrator, workers on the parent's backend); r1 = 0.618034 is exactly the first natural
    # frequency of the unit chain to 1e-9 and is left out (-1) both ways
    params = {"gamma": [1, 1], "kappa": [1, 1], "contact": "wall:1", "amplitudes": True}
    r1, beta = [0.45, (3 - 5 ** 0.5) ** 0.5 / 2 ** 0.5, 1.3], [0.2, 0.7]
    serial = numeric_regime_map(params, r1, beta, progress=False)
    pooled = numeric_regime_map(params, r1, beta, progress=False, jobs=2)
    assert (serial.regime[:, 1] == -1).all() and (serial.regime[:, [0, 2]] >= 0).all()
    for name in ("regime", "converged", "stops", "Z"):
        assert getattr(serial, name).tobytes() == getattr(pooled, name).tobytes(), name
    with pytest.raises(fesub.errors.ParameterError, match="jobs"):
        numeric_regime_map(params, r1, beta, progress=False, jobs=0)


def _popen(args, env):
    return subprocess.Popen([sys.executable, "-m", "fesub.cli", "coulomb", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _sigint_after(sigint_when, proc, part, pause=0.0):
    """Send SIGINT once ``part`` exists (plus ``pause`` s); the run must stop with status 130,
    say so and print no traceback. Returns its stderr."""
    _, err = sigint_when(proc, part.exists, pause=pause)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted by SIGINT" in err
    return err


def test_sigint_keeps_finished_parts_and_rerun_resumes(tmp_path, subprocess_env, sigint_when):
    out = tmp_path / "run"
    args = SMALL + ["--numeric", "4", "--out", str(out), "--no-figures"]
    proc = _popen(args + ["-q"], subprocess_env)
    part = out / "steady_state.nc"
    _sigint_after(sigint_when, proc, part)
    assert part.is_file() and not (out / "summary.json").exists()
    before = part.stat()

    rerun = subprocess.run([sys.executable, "-m", "fesub.cli", "coulomb", *args], env=subprocess_env,
                           capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert "steady_state: finished in an earlier run, reused" in rerun.stdout
    after = part.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    summary = json.loads((out / "summary.json").read_text())
    assert "steady_state" in summary["details"]["resumed_parts"]

    again = subprocess.run([sys.executable, "-m", "fesub.cli", "coulomb", *args, "-q",
                            "--overwrite"], env=subprocess_env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stderr
    assert part.stat().st_ino != after.st_ino or part.stat().st_mtime_ns != after.st_mtime_ns
    assert "resumed_parts" not in json.loads((out / "summary.json").read_text()).get("details", {})
    assert fesub.load(part).Z.shape == (2, 40)


def test_sigint_during_a_parallel_numeric_map(tmp_path, subprocess_env, sigint_when):
    # the closed-form regime map is the part written just before the numeric map starts
    out = tmp_path / "map"
    # 60 x 30 = 1800 integrated points: tens of seconds on 2 workers, so 0.3 s after the map
    # starts it is certainly still running (12 x 6 points could finish within the pause)
    proc = _popen(SMALL + ["--numeric", "0", "--map", "60", "30", "-j", "2", "--out", str(out),
                           "--no-figures", "-q"], subprocess_env)
    part = out / "regime_map.nc"
    err = _sigint_after(sigint_when, proc, part, pause=0.3)
    assert err.count("interrupted by SIGINT") == 1
    assert part.is_file() and not (out / "regime_map_numeric.nc").exists()


# ------------------------------------------------------------------------------ the study
def test_cli_writes_parts_figures_and_summary(tmp_path, drawn_figures):
    from fesub.plots import style

    out = tmp_path / "o"
    assert main(["coulomb", *SMALL, "--map", "3", "2", "--out", str(out), "-q"]) == 0
    names = {p.name for p in out.iterdir()}
    for name in ("steady_state.nc", "regime_map.nc", "regime_map_numeric.nc",
                 "time_history_sim.nc", "summary.json", "report.html", "transmissibility_1.png",
                 "transmissibility_2.png", "transmissibility_contact.png", "phase.png",
                 "regime_map.png", "time_history.png"):
        assert name in names
    assert len([n for n in names if n.startswith("sim_beta")]) == 4
    assert not any(n.endswith((".npz", ".json")) and n not in ("summary.json", "fesub-run.json")
                   for n in names)
    # every figure of the study drawn and acceptable
    assert sorted(Path(p).name for _, p in drawn_figures) == sorted(n for n in names if n.endswith(".png"))
    for fig, path in drawn_figures:
        assert style.check_figure(fig) == [], path
    # the folder reopens as a whole
    study = fesub.load(out)
    assert isinstance(study["steady_state"], SteadyState) and study["steady_state"].Z.shape == (2, 40)
    assert study["steady_state"].contact == {"kind": "wall", "idx": [1]}
    assert isinstance(study["regime_map"], RegimeMap)
    assert isinstance(study["regime_map_numeric"], NumericRegimeMap)
    assert study["regime_map_numeric"].regime.shape == (2, 3)
    assert isinstance(study["time_history_sim"], SimResult)

    s = json.loads((out / "summary.json").read_text())
    assert s["schema"] == "fesub-summary/1" and s["study"] == "coulomb"
    for group in ("parameters", "results"):
        for k, v in s[group].items():
            assert set(v) == {"value", "unit"}, k
    assert s["parameters"]["betas"] == {"value": [0.3, 0.5], "unit": "1"}
    assert s["parameters"]["contact"]["value"] == "wall:1"
    res = s["results"]
    # independent check of the closed form: natural frequencies of the unit 2DOF chain are
    # sqrt((3 -+ sqrt 5)/2) = golden-ratio values
    assert res["natural_frequency_ratios"]["value"] == pytest.approx([0.6180339887, 1.6180339887])
    assert res["simulations"]["value"] == 4
    # time integration and closed form agree wherever both say continuous: 1e-6 relative is
    # far above the integrator's 1e-10 settling tolerance and the 48-point-per-period maxima
    if res["max_relative_difference_X_simulated_vs_closed_form"]["value"] is not None:
        assert res["max_relative_difference_X_simulated_vs_closed_form"]["value"] < 1e-6
    assert res["time_history_regime"]["value"] == "continuous"
    assert 0.0 <= res["time_history_stick_fraction"]["value"] <= 1.0
    assert len(s["details"]["simulations"]) == 4


def test_cli_base_contact_figures(tmp_path, drawn_figures):
    from fesub.plots import style

    assert main(["coulomb", "--contact", "base:1", "--betas", "0.2", "--nr", "30", "--numeric",
                 "1", "--out", str(tmp_path / "b"), "-q"]) == 0
    assert drawn_figures
    for fig, path in drawn_figures:
        assert style.check_figure(fig) == [], path
        assert any("/Y" in ax.get_ylabel() for ax in fig.axes) or "regime" in str(path) \
            or "phase" in str(path)


def test_cli_toml_config(tmp_path):
    cfg = tmp_path / "chain.toml"
    out = tmp_path / "from_toml"
    cfg.write_text('gamma = [1.0, 0.5]\nkappa = [1.0, 0.5]\ncontact = "masses:0,1"\n'
                   f'betas = [0.0, 0.15]\nnr = 30\nnumeric = 0\nout = "{out.as_posix()}"\n')
    assert main(["coulomb", "--config", str(cfg), "--no-figures", "-q"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["parameters"]["gamma"]["value"] == [1.0, 0.5]
    assert s["parameters"]["contact"]["value"] == "masses:0,1"
    # the command line overrides the file
    assert main(["coulomb", "--config", str(cfg), "--nr", "20", "--no-figures", "-q",
                 "--out", str(tmp_path / "cli")]) == 0
    assert fesub.load(tmp_path / "cli" / "steady_state").r1.size == 20


def test_help_shows_defaults_units_and_common_flags(capsys):
    assert main(["coulomb", "--help"]) == 0
    h = " ".join(capsys.readouterr().out.split())   # argparse wraps lines
    for text in ("--out DIR", "fesub-out/coulomb", "-q, --quiet", "--overwrite", "--no-figures",
                 "(default: 1 1)", "(default: 0 0.2 0.4 0.6 0.8)", "(default: 500)",
                 "friction ratios F/P [-]", "omega sqrt(m1/k1) [-]"):
        assert text in h, text
    assert "-j N, --jobs N worker processes for the parallel parts (default: 1)" in h
    for gone in ("--no-progress", "--workers"):
        assert gone not in h


@pytest.mark.parametrize("args, says", [
    (["--r-min", "-1"], "--r-min"),
    (["--nr", "0"], "--nr"),
    (["--numeric", "-2"], "--numeric"),
    (["--map", "0", "0"], "--map"),
    (["--mu", "0.5"], "--mu"),
    (["--betas", "-0.1"], "--betas"),
    (["--betas", "nan"], "--betas"),
    (["--r-min", "2", "--r-max", "1"], "r_min < r_max"),
    (["--contact", "wall:7"], "contact mass index"),
    (["--contact", "wall:x"], "contact must be"),
    (["--gamma", "1", "1", "--kappa", "1"], "same length"),
    (["--gamma", "2", "1"], "gamma[0]"),
    (["--load", "5"], "load"),
])
def test_bad_arguments_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, args, says):
    out = tmp_path / "never"
    assert main(["coulomb", *args, "--out", str(out)]) == 2
    assert says in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("keep")
    assert main(["coulomb", "--nr", "20", "--out", str(f)]) == 2
    assert "is an existing file" in _one_error_line(capsys.readouterr().err)
    assert f.read_text() == "keep" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("line, says", [
    ('gamma = "abc"', "gamma"), ("gamma = [1, true]", "gamma"), ('mu = "x"', "mu"),
    ("nr = 2.5", "nr"), ("nr = true", "nr"), ('betas = ["a"]', "betas"), ("map = [0, 0]", "map"),
    ("map = 3", "map"), ("contact = 5", "contact"), ('r_min = "x"', "r_min"), ('load = "0"', "load"),
    ("numeric = -1", "numeric"), ("out = 3", "out"), ("foo = 3", "unknown keys"),
    ("gamma = [", "not valid TOML"),
])
def test_bad_config_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, line, says):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(line + "\n")
    out = tmp_path / "never"
    assert main(["coulomb", "--config", str(cfg), "--out", str(out)]) == 2
    assert says in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_example_runs(tmp_path, monkeypatch, capsys):
    path = Path(__file__).resolve().parents[1] / "examples" / "coulomb_2dof.py"
    monkeypatch.setattr(sys, "argv", [str(path), str(tmp_path)])
    runpy.run_path(str(path), run_name="__main__")
    assert (tmp_path / "X2.png").exists()
    assert isinstance(fesub.load(tmp_path / "steady_state.nc"), SteadyState)
    assert "continuous" in capsys.readouterr().out
