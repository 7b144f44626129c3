"""``fesub pad-on-beam``: the physics of the pad pressed and dragged on the beam, and the study's
command-line conventions.

References independent of the stepper:
* vertical equilibrium: once the preload has settled, the normal forces of the nodes sum to the
  applied load;
* Coulomb's law over the whole contact: in gross sliding the friction force is mu times the
  applied load (at mu = 0.1, where the sliding is steady);
* the energy balance of the run (works of the loads and of the drive against the energy changes
  and losses);
* convergence in the pad's mesh of the drag displacement at which gross sliding begins;
* the drive's displacement, velocity and acceleration against finite differences of each other,
  and the loads of both drives summed against the applied totals.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

import fesub
from fesub.cli import main
from fesub.contact import ContactRunResult, simulate_multibody
from fesub.models import pad_on_beam as pob

# the default study with a coarser pad (10 x 3 Q4), mu = 0.1 (steady sliding), dragged until
# well into gross sliding (it begins after about 0.47 um of drag, 0.57 ms); every step sampled
QUICK = dict(mu=0.1, pad_nx=10, pad_ny=3)
DRAG_TIME = 1.0e-3


def _run(drag_time=DRAG_TIME, **kw):
    model = pob.build(**{**QUICK, **kw})
    res = simulate_multibody(model.model, duration=model.params.t_drag + drag_time)
    return model, res, pob.phases(res, model)


@pytest.fixture(scope="module")
def coarse():
    return _run()


@pytest.fixture(scope="module")
def fine():
    return _run(pad_nx=20, pad_ny=5, drag_time=0.7e-3)  # just past the onset of gross sliding


def test_preload_normal_force_equals_the_load(coarse):
    model, res, ph = coarse
    assert res.status == "completed"
    # the 0.8 ms ramp (4 periods of the beam's first bending mode, 5.1 kHz, damped at 9 % of
    # critical) leaves a vibration that decays by e^-1.8 over the 0.6 ms hold: measured 1.3e-4 of
    # the load; 1e-3 leaves room, a node mapped to a wrong DOF or a lost load would be tens of
    # per cent (a 0.5 ms ramp and 0.3 ms hold leave 1.4e-3, and +-9 % swings at the drag's start)
    assert abs(ph["normal_force_ratio_preload"] - 1) <= 1e-3, ph["normal_force_ratio_preload"]
    # before the drag the top is held: no friction force in total (the edges' Poisson slip is
    # balanced left against right)
    hold = res.t < model.params.t_drag
    T = -res.nodes["lambda_t"].sum(axis=1)
    assert np.abs(T[hold]).max() <= 1e-3 * model.params.mu * model.params.load


def test_stick_then_partial_slip_then_gross_sliding_at_mu_N(coarse):
    model, res, ph = coarse
    p = model.params
    st = res.nodes["state"]
    T = -res.nodes["lambda_t"].sum(axis=1)
    after_drag = res.t > p.t_drag
    # stick first: the friction force builds up before any node slips in the drag direction
    assert ph["first_slip_time_s"] is not None and ph["gross_sliding_time_s"] is not None
    assert ph["first_slip_friction_N"] < 0.5 * p.mu * p.load
    # partial slip: between the first slip and gross sliding, some nodes stick and some slip
    between = after_drag & (res.t >= ph["first_slip_time_s"]) & (res.t < ph["gross_sliding_time_s"])
    assert between.sum() >= 10
    assert np.all(np.any(st[between] == 1, axis=1))
    # gross sliding: Coulomb's law over the whole pad, T = mu N with N the applied load, on
    # average over the sliding within 1 % (measured 0.9991). At each instant N differs from the
    # load by the pad's vertical inertia: the residual vibration swings N by +-0.8 % (measured
    # extremes of T / (mu N_load) 0.989 and 1.003), hence 2 % for the extremes
    assert abs(ph["friction_ratio_gross_sliding"] - 1) <= 0.01, ph
    assert ph["friction_ratio_gross_sliding_min"] >= 0.98 and ph["friction_ratio_gross_sliding_max"] <= 1.02, ph
    gross = res.t >= ph["gross_sliding_time_s"]
    assert np.all(T[gross] <= p.mu * res.nodes["lambda_n"][gross].sum(axis=1) * (1 + 1e-9))


def test_energy_balance_closes(coarse):
    model, res, ph = coarse
    # the central-difference balance holds to O(h^2) (h^2/8 v'Kv): measured 2.9e-7 of the work
    # (9e-5 on the 20 x 5 pad); 1e-3 would still catch a work term left out (friction dissipates
    # 5 % of the work, most of which is the strain energy of the preload)
    assert ph["energy_residual_ratio"] <= 1e-3, ph["energy_residual_ratio"]
    # in steady gross sliding the pad's bottom slides at the drive's velocity under T = mu N:
    # friction dissipates mu N times the drag displacement (the pad's shape no longer changes)
    e = res.energies
    p = model.params
    j = int(np.searchsorted(res.t, ph["gross_sliding_time_s"]))
    u = model.drag_displacement(res.t)
    expected = p.mu * p.load * (u[-1] - u[j])
    got = e["friction_dissipation"][-1] - e["friction_dissipation"][j]
    # measured 1.0018; the friction ratio's mean is within 0.1 % of 1, and the pad's bottom lags the
    # drive while the last stuck nodes let go: 2 %
    assert abs(got / expected - 1) <= 0.02, (got, expected)


def test_gross_sliding_drag_converges_with_the_pad_mesh(coarse, fine):
    """The drag displacement at the onset of gross sliding (the tangential compliance of pad and
    beam times mu N) on a 10 x 3 and a 20 x 5 pad mesh."""
    a, b = coarse[2]["gross_sliding_drag_m"], fine[2]["gross_sliding_drag_m"]
    rel = abs(a - b) / b
    # measured 0.470 and 0.467 um (0.64 %): the Q4 elements with incompatible modes represent
    # shear and bending well on the coarse mesh; 2 % still catches a wrong stiffness (the drag
    # scales with the compliance: 10 % on the pad's modulus moves it by several per cent)
    assert rel <= 0.02, (a, b, rel)
    assert abs(fine[2]["friction_ratio_gross_sliding"] - 1) <= 0.01


def test_drive_is_consistent_and_loads_sum_to_the_applied_totals():
    model = pob.build(pad_nx=4, pad_ny=2)
    p = model.params
    # u, v, a of the prescribed drag against central differences (smoothstep ramp, then constant v)
    t = p.t_drag + np.linspace(-0.1, 2.0, 211) * p.t_accel
    dt = 1e-9
    for k in (0, 1):
        fd = np.array([(model.drag(x + dt)[k] - model.drag(x - dt)[k]) / (2 * dt) for x in t])
        exact = np.array([model.drag(x)[k + 1] for x in t])
        # central differences of a piecewise polynomial: O(dt^2) where it is smooth; at the ends
        # of the ramp the acceleration has corners, where they are first order: 3 V dt /
        # (2 t_accel^2) = 5e-6 of the scale
        np.testing.assert_allclose(fd, exact, atol=2e-5 * np.abs(exact).max())
    assert model.drag(p.t_drag + 3 * p.t_accel)[1] == p.velocity
    # the pad's loads over its coordinates: total y force -N(t) (Craig-Bampton keeps the top's
    # DOFs physical, so the force on them is the applied one), no x force with the velocity drive
    pad = model.model.bodies[0]
    top_y = [pad.node_dofs[n, 1] for n in model.top_nodes]
    top_x = [pad.node_dofs[n, 0] for n in model.top_nodes]
    for tt in (0.0, 0.3 * p.t_load, p.t_load, p.t_drag + 1e-4):
        f = pad.load(tt)
        assert f[top_y].sum() == pytest.approx(-model.normal_load(tt), rel=1e-12, abs=1e-12)
        assert not f[top_x].any()
    forced = pob.build(pad_nx=4, pad_ny=1, drive="force", force_rate=1e4, pad_reduction="full")
    pad = forced.model.bodies[0]
    assert not pad.prescribed
    f = pad.load(forced.params.t_drag + 2e-4)
    assert f[[pad.node_dofs[n, 0] for n in forced.top_nodes]].sum() == pytest.approx(2.0, rel=1e-12)
    assert f.sum() == pytest.approx(2.0 - forced.params.load, rel=1e-12)


def test_bad_model_parameters_are_refused():
    from fesub.errors import ParameterError

    for kw, word in ((dict(mu=-0.1), "mu"), (dict(pad_x=0.09), "on the beam"), (dict(drive="push"), "drive"),
                     (dict(pad_nx=2.5), "pad_nx"), (dict(load=float("nan")), "load"), (dict(colour=1), "unknown"),
                     (dict(pad_ny=1), "pad_modes"), (dict(beam_modes=1000), "beam_modes")):
        with pytest.raises(ParameterError, match=word):
            pob.build(**kw)


# ------------------------------------------------------------------------------------ the study
ARGS = ["--mu", "0.1", "--t-load", "1e-4", "--t-settle", "0", "--drag-time", "1e-4", "--pad-nx", "10"]


def test_study_writes_parts_figures_summary_and_round_trips(tmp_path, drawn_figures):
    from fesub.plots import style

    out = tmp_path / "pob"
    assert main(["pad-on-beam", *ARGS, "--out", str(out), "-q"]) == 0
    part = out / "run_mu0.1.nc"
    res = fesub.load(part)
    assert type(res) is ContactRunResult and res.status == "completed"
    back = ContactRunResult.from_xarray(res.to_xarray())
    for k, v in res.nodes.items():
        np.testing.assert_array_equal(back.nodes[k], v)
    for k, v in res.energies.items():
        np.testing.assert_array_equal(back.energies[k], v)
    ds = res.to_xarray()
    assert all("units" in ds[v].attrs for v in ds.variables)
    again = ContactRunResult.load(res.save(tmp_path / "copy"))
    np.testing.assert_array_equal(again.nodes["lambda_n"], res.nodes["lambda_n"])
    assert again.info == res.info

    s = json.loads((out / "summary.json").read_text())
    assert s["study"] == "pad-on-beam" and s["schema"] == "fesub-summary/1"
    P, R = s["parameters"], s["results"]
    assert P["load"] == {"value": 100.0, "unit": "N"} and P["velocity"]["unit"] == "m/s"
    assert P["mu"]["value"] == [0.1] and P["time_step"]["unit"] == "s"
    assert R["normal_force_ratio_preload_mu0.1"]["unit"] == "1"
    assert R["first_slip_drag_mu0.1"]["unit"] == "m" and R["status_mu0.1"]["value"] == "completed"
    assert s["details"]["cases"]["mu0.1"]["steps"] == res.steps

    drawn = {p.name: fig for fig, p in drawn_figures}
    expected = {"states_run_mu0.1.png", "forces_run_mu0.1.png", "energy_run_mu0.1.png", "friction.png",
                "contact_forces_run_mu0.1.png"}
    assert expected <= set(drawn) and expected <= {p.name for p in out.glob("*.png")}
    for name in expected:
        assert style.check_figure(drawn[name]) == [], name
    report = (out / "report.html").read_text()
    assert all(name in report for name in expected)
    title = drawn["friction.png"].axes[0].get_title()
    assert "N = 100 N" in title


def test_help_is_fast_and_shows_defaults_with_units(capsys, subprocess_env):
    assert main(["pad-on-beam", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for piece in ("[N] (default: 100.0)", "[m/s] (default: 0.001)", "(default: fesub-out/pad-on-beam)",
                  "--no-figures", "--overwrite", "-q, --quiet", "one run each (default: [0.1, 0.3])"):
        assert piece in text, piece
    # --help in a fresh interpreter imports no NumPy
    code = ("import sys; from fesub.cli import main; rc = main(['pad-on-beam', '--help']); "
            "sys.exit(3 if 'numpy' in sys.modules else rc)")
    r = subprocess.run([sys.executable, "-c", code], env=subprocess_env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("argv", [["--mu", "-0.1"], ["--mu", "nan"], ["--load", "0"], ["--velocity", "-1"],
                                  ["--drag-time", "0"], ["--drag-time", "inf"], ["--pad-nx", "0"],
                                  ["--pad-nx", "2.5"], ["--time-step", "-1e-7"], ["--pad", "shell"],
                                  ["--t-settle", "-1"]])
def test_bad_arguments_exit_2_with_one_line(tmp_path, argv, capsys):
    rc = main(["pad-on-beam", *argv, "--out", str(tmp_path / "o"), "-q", "--no-figures"])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub pad-on-beam: error:"), err
    assert not (tmp_path / "o").exists()


def test_time_step_above_the_limit_and_out_file_are_refused_before_work(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("mine")
    assert main(["pad-on-beam", *ARGS, "--out", str(target), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub pad-on-beam: error:") and "file" in err[0]
    assert target.read_text() == "mine"
    assert main(["pad-on-beam", *ARGS, "--time-step", "1e-3", "--out", str(tmp_path / "h"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "stability limit" in err[0], err
    assert not (tmp_path / "h").exists()


def _cli(args):
    return [sys.executable, "-m", "fesub.cli", "pad-on-beam", *args]


def test_sigint_keeps_finished_parts_and_rerun_resumes(tmp_path, subprocess_env, sigint_when, capsys):
    """Ctrl-C while the second case runs: exit 130, no traceback, the first part kept; the rerun
    reuses it untouched and computes the second; --overwrite recomputes both to the same numbers."""
    out = tmp_path / "run"
    args = ["--mu", "0.1", "0.3", "--t-load", "1e-4", "--t-settle", "0", "--drag-time", "2e-3", "--pad-nx", "4",
            "--out", str(out), "--no-figures"]
    part = out / "run_mu0.1.nc"
    proc = subprocess.Popen(_cli(args + ["-q"]), env=subprocess_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _, err = sigint_when(proc, part.exists)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted by SIGINT" in err
    assert part.is_file() and not (out / "run_mu0.3.nc").exists() and not (out / "summary.json").exists()
    before = part.stat()
    first = fesub.load(part)

    # the rerun in this process (the interrupt needed a child)
    assert main(["pad-on-beam", *args]) == 0
    assert "run_mu0.1: finished in an earlier run, reused" in capsys.readouterr().out
    after = part.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (out / "run_mu0.3.nc").is_file()
    assert "run_mu0.1" in json.loads((out / "summary.json").read_text())["details"]["resumed_parts"]

    # the overwrite in a child with the first run's environment (one BLAS thread): the same
    # numbers to the last bit (a process with other BLAS threads may round differently)
    time.sleep(0.01)
    done = subprocess.run(_cli(args + ["-q", "--overwrite"]), env=subprocess_env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    now = part.stat()
    assert (now.st_ino, now.st_mtime_ns) != (after.st_ino, after.st_mtime_ns)
    redone = fesub.load(part)
    np.testing.assert_array_equal(redone.nodes["lambda_n"], first.nodes["lambda_n"])


def test_smoothstep_of_a_number_is_that_of_an_array():
    """The load ramp is called once per time step with a number (a plain-float path) and on
    arrays elsewhere: the same values to the last bit, 0 below 0, 1 above 1, 1/2 at 1/2."""
    from fesub.models.pad_on_beam import smoothstep

    s = np.r_[-1.0, 0.0, np.linspace(0.0, 1.0, 101), 1.0, 2.5]
    np.testing.assert_array_equal([smoothstep(float(x)) for x in s], smoothstep(s))
    assert (smoothstep(-1.0), smoothstep(0.5), smoothstep(3), smoothstep(np.float64(2.0))) == (0.0, 0.5, 1.0, 1.0)
