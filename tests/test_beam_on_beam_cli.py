"""``fesub beam-on-beam`` end to end on short, coarse runs: parts, figures, summary, resuming after
an interrupt, bad input."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import fesub
from fesub.cli import main
from fesub.contact.analyses.eigen import CriticalMu, EigenLoci
from fesub.contact.analyses.frf import TDFRFResult
from fesub.contact.sliding.transient import TransientResult

# coarse loci (19 positions), no transients: the quickest run that makes every other part
QUICK = ["--loci-step", "0.005", "--no-transient"]


def test_short_study_writes_parts_figures_and_summary(tmp_path, drawn_figures, monkeypatch):
    """As after ``pip install .`` without extras: pyvista cannot be imported, and every figure
    is still drawn (mode shapes with matplotlib). One job: every figure is drawn in this process,
    where the fixture sees it."""
    from fesub.contact.sliding import plots as pc
    from fesub.plots import style

    monkeypatch.setitem(sys.modules, "pyvista", None)  # import pyvista -> ImportError
    out = tmp_path / "bob"
    rc = main(["beam-on-beam", "--mu", "0.3", "--roughness", "on", "--duration", "0.02",
               "--loci-step", "0.005", "--out", str(out), "--quiet", "--jobs", "1"])
    assert rc == 0
    # every part, reopened by itself
    kinds = {"loci_mu0.1": EigenLoci, "loci_mu0.3": EigenLoci, "critical_mu": CriticalMu,
             "transient_mu0.3_rough": TransientResult, "tdfrf_mu0.1": TDFRFResult}
    for name, cls in kinds.items():
        assert type(fesub.load(out / f"{name}.nc")) is cls, name
    assert not list(out.glob("*.npz")) and not list(out.glob("*.json.*"))

    s = json.loads((out / "summary.json").read_text())
    assert s["schema"] == "fesub-summary/1" and s["study"] == "beam-on-beam"
    P, R, D = s["parameters"], s["results"], s["details"]
    assert P["Fy"] == {"value": 0.4, "unit": "N"} and P["vx"]["unit"] == "m/s"
    assert P["loci_step"] == {"value": 0.005, "unit": "m"} and P["duration"] == {"value": 0.02, "unit": "s"}
    assert P["mu"]["value"] == [0.3] and P["seed"]["value"] == 0
    assert R["max_real_part_mu0.1"]["unit"] == "1/s" and R["max_real_part_mu0.1"]["value"] < 0
    assert R["min_lambda_mu0.3_rough"]["unit"] == "N" and R["status_mu0.3_rough"]["value"] == "completed"
    # by default the loci examine every mode of the reduced model, and the notes say so
    loci = fesub.load(out / "loci_mu0.3.nc")
    assert R["loci_complete_up_to"] == {"value": loci.complete_up_to_hz, "unit": "Hz"}
    assert loci.complete_up_to_hz == float("inf") and loci.n_basis is None
    assert any(f"every one of the {loci.n_modes} modes" in n for n in s["notes"])
    tr = D["transients"]["mu0.3_rough"]
    for key in ("status", "stop_reason", "steps", "time_step_s", "wall_time_s", "steps_per_second",
                "max_abs_a_T_y_m_s2", "min_lambda_N", "min_v_t_m_s", "bursts_s", "burst_dominant_hz"):
        assert key in tr, key
    # the explicit step is below the critical one, and steps x h covers the requested duration
    assert tr["time_step_s"] < tr["critical_time_step_s"]
    assert abs(tr["steps"] * tr["time_step_s"] - 0.02) < 2 * tr["time_step_s"]
    assert set(D["eigen"]["max_real_part_per_mu_1_s"]) == {"0.1", "0.3"}
    assert D["eigen"]["critical_mu"] == R["critical_mu"]["value"] and "paper_checks" in D
    # the saved signals reload and agree with the summary
    res = TransientResult.load(out / "transient_mu0.3_rough")
    assert res.signals["lambda"].min() == tr["min_lambda_N"]
    assert res.info["load_N"] == 0.4 and res.info["seed"] == 0

    # every figure went through style.save and passes the house rules, with a caption in the report
    drawn = {p.name: fig for fig, p in drawn_figures}
    pngs = {p.name for p in out.glob("*.png")}
    expected = {"loci_mu0.1.png", "loci_mu0.3.png", "max_real_part.png", "transient_mu0.3_rough.png",
                "spectrogram_mu0.3_rough.png", "tdfrf_mu0.1.png"}
    assert expected <= pngs
    if hasattr(pc, "plot_coupled_modes"):
        expected |= {f"coupled_mode_{k}.png" for k in range(1, 5)}
        assert expected <= pngs
        assert [m["file"] for m in D["mode_shapes"]] == [f"coupled_mode_{k}.png" for k in range(1, 5)]
    for name in sorted(expected | (pngs & set(drawn))):
        assert name in drawn, f"{name} not drawn through style.save"
        assert style.check_figure(drawn[name]) == [], name
    report = (out / "report.html").read_text()
    assert all(name in report for name in pngs)
    # the transient's title names the case
    fig = drawn["transient_mu0.3_rough.png"]
    title = fig.get_suptitle() + fig.axes[0].get_title()
    assert all(w in title for w in ("mu = 0.3", "rough", "seed 0", "0.4 N")), title


def test_help_shows_every_default_with_its_unit(capsys):
    assert main(["beam-on-beam", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for piece in ("--duration S simulated time per transient [s]", "[m] (default: 0.00025)",
                  "(default: all)", "(default: fesub-out/beam-on-beam)", "[-] (default: 0)",
                  "--no-figures", "--overwrite", "-q, --quiet"):
        assert piece in text, piece


@pytest.mark.parametrize("argv", [["--mu", "-0.1"], ["--mu", "nan"], ["--duration", "0"],
                                  ["--duration", "-1"], ["--duration", "inf"], ["--loci-step", "0.5"],
                                  ["--loci-step", "0"], ["--basis-modes", "0"], ["--basis-modes", "2.5"],
                                  ["--seed", "-1"], ["--roughness", "maybe"]])
def test_bad_arguments_are_one_line_and_status_2(tmp_path, argv, capsys):
    rc = main(["beam-on-beam", *argv, "--out", str(tmp_path / "o"), "--quiet", "--no-figures"])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub beam-on-beam: error:"), err
    assert not (tmp_path / "o").exists()


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("mine")
    assert main(["beam-on-beam", *QUICK, "--out", str(target), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub beam-on-beam: error:") and "file" in err[0]
    assert target.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def _cli(args):
    return [sys.executable, "-m", "fesub.cli", "beam-on-beam", *args]


def test_sigint_keeps_finished_parts_and_rerun_resumes(tmp_path, subprocess_env):
    """Ctrl-C after the first part: exit 130, no traceback, the finished part kept; the rerun
    reuses it untouched; --overwrite recomputes it to the same numbers. One job (the order of the
    parts is then fixed; a pool is interrupted in the next test)."""
    out = tmp_path / "run"
    # a long transient after the loci keeps the run busy until the signal comes
    args = ["--loci-step", "0.005", "--mu", "0.1", "--roughness", "off", "--duration", "2.5",
            "--out", str(out), "--no-figures", "--jobs", "1"]
    proc = subprocess.Popen(_cli(args + ["-q"]), env=subprocess_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    part = out / "loci_mu0.1.nc"
    deadline = time.monotonic() + 300
    while not part.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted by SIGINT" in err
    assert part.is_file() and not (out / "summary.json").exists()
    assert not (out / "transient_mu0.1_smooth.nc").exists()
    before = part.stat()
    first = fesub.load(part)
    assert first.status == "completed"

    # resume without the transient (the case selection is not a parameter of the parts)
    rerun = subprocess.run(_cli(args + ["--no-transient"]), env=subprocess_env,
                           capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert "loci_mu0.1: finished in an earlier run, reused" in rerun.stdout
    after = part.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    summary = json.loads((out / "summary.json").read_text())
    assert "loci_mu0.1" in summary["details"]["resumed_parts"]

    again = subprocess.run(_cli(args + ["--no-transient", "-q", "--overwrite"]),
                           env=subprocess_env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    now = part.stat()
    assert (now.st_ino, now.st_mtime_ns) != (after.st_ino, after.st_mtime_ns)
    assert "resumed_parts" not in json.loads((out / "summary.json").read_text()).get("details", {})
    redone = fesub.load(part)
    np.testing.assert_array_equal(redone.lam, first.lam)  # the same numbers, recomputed


def _children(pid):
    """Process ids of the children of ``pid`` (Linux /proc)."""
    from pathlib import Path

    kids = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids |= {int(k) for k in (task / "children").read_text().split()}
        except OSError:
            pass
    return kids


def _alive(pid):
    from pathlib import Path

    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigint_with_a_pool_stops_the_workers_and_keeps_no_half_part(tmp_path, subprocess_env):
    """Ctrl-C while a transient runs in a worker of the pool: exit 130, one message and no
    traceback, the workers gone, no part of the unfinished transient; the rerun completes."""
    out = tmp_path / "run"
    args = ["--loci-step", "0.005", "--mu", "0.1", "--roughness", "off", "--duration", "2.5",
            "--out", str(out), "--no-figures", "--jobs", "2", "-q"]
    proc = subprocess.Popen(_cli(args), env=subprocess_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    kids = set()
    while not kids:  # the pool forks its first worker as the transient is submitted
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
        kids = _children(proc.pid)
    time.sleep(0.5)  # the transient is running (it takes seconds)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.count("interrupted by SIGINT") == 1, err
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(k) for k in kids), "a worker outlived the interrupted study"
    assert not (out / "transient_mu0.1_smooth.nc").exists() and not (out / "summary.json").exists()
    rerun = subprocess.run(_cli(args), env=subprocess_env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert fesub.load(out / "transient_mu0.1_smooth.nc").status == "completed"


def _numbers(summary: dict):
    """The summary without what depends on the machine (wall times, rates, the date)."""
    if isinstance(summary, dict):
        return {k: _numbers(v) for k, v in summary.items()
                if "wall_time" not in k and "per_second" not in k and k != "created"}
    if isinstance(summary, list):
        return [_numbers(v) for v in summary]
    return summary


def test_a_pool_gives_the_numbers_and_files_of_one_job(tmp_path, subprocess_env):
    """The same study with one job (all in one process, one part after the other) and with a
    pool of two workers: every part holds the same values (bit for bit), the summaries agree but
    for the wall times, the same figures are written and listed in the same order."""
    import xarray as xr

    base = ["--mu", "0.3", "--duration", "0.3", "--loci-step", "0.005", "-q"]
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        done = subprocess.run(_cli([*base, "--out", str(out), "--jobs", jobs]), env=subprocess_env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
        runs[jobs] = out
    one, two = runs["1"], runs["2"]
    parts = sorted(p.name for p in one.glob("*.nc"))
    assert parts == sorted(p.name for p in two.glob("*.nc"))
    assert {"transient_mu0.3_smooth.nc", "transient_mu0.3_rough.nc", "tdfrf_mu0.1.nc"} <= set(parts)
    for name in parts:
        a = xr.open_dataset(one / name, engine="h5netcdf").load()
        b = xr.open_dataset(two / name, engine="h5netcdf").load()
        for v in a.variables:
            np.testing.assert_array_equal(a[v].values, b[v].values, err_msg=f"{name}: {v}")
    sa, sb = (json.loads((o / "summary.json").read_text()) for o in (one, two))
    assert _numbers(sa) == _numbers(sb)
    assert sorted(p.name for p in one.glob("*.png")) == sorted(p.name for p in two.glob("*.png"))
    order = [[ln for ln in (o / "report.html").read_text().splitlines() if ".png" in ln] for o in (one, two)]
    assert order[0] == order[1] and order[0]


def test_rerun_with_other_parameters_is_refused(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["beam-on-beam", *QUICK, "--out", str(out), "-q", "--no-figures"]) == 0
    capsys.readouterr()
    assert main(["beam-on-beam", "--loci-step", "0.004", "--no-transient", "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "other parameters" in err and "loci_step_m" in err
    s = json.loads((out / "summary.json").read_text())
    # with no transient, the summary still carries every parameter and the analyses' results
    assert s["parameters"]["duration"]["value"] is None and s["details"]["transients"] == {}
    assert math.isfinite(s["results"]["max_real_part_mu0.3"]["value"])


def test_paper_checks_tie_each_burst_to_an_unstable_position_and_frequency():
    """A burst counts as explained only where C crossed a position with a positive real part at
    the burst's frequency (1 %): a burst at a stable position, or at another frequency, does not."""
    from types import SimpleNamespace

    from fesub.cli.beam_on_beam import UNSTABLE_MU, paper_checks

    positions = np.arange(0.040, 0.060, 0.25e-3)
    hot = np.argmin(np.abs(positions - 0.0455))
    loci = {UNSTABLE_MU: SimpleNamespace(
        positions=positions, max_real=140.0,
        unstable=lambda: [(float(positions[hot]), 10_600.0, 140.0)])}
    bursts = {"burst_dominant_hz": [10_650.0, 10_650.0, 10_200.0],
              "burst_positions_m": [[0.0448, 0.0453], [0.0940, 0.0945], [0.0450, 0.0456]]}
    info = {"min_lambda_N": 0.3, "status": "completed", "min_v_t_m_s": 0.02, **bursts}
    checks = paper_checks(loci, {"mu0.3_smooth": info})
    key = "mu0.3_smooth: bursts where an eigenvalue of the same frequency has a positive real part"
    # within one loci step (0.25 mm) of the hot position and 0.5 % off in frequency; 48.5 mm
    # away; 3.8 % off
    assert checks[key] == [True, False, False]
    assert checks["mu0.3_smooth: slave never stops sliding forwards"]


def test_the_study_transient_is_the_literal_equations(tmp_path):
    """The study's saved transient (mu = 0.3, rough, 0.02 s: 82 000 steps on the contact engine)
    equals the paper's equations transcribed literally (``two_body_reference``: dense reduced
    coordinates, one multiplier per step), sample for sample.

    Bounds, relative to each signal's largest value: displacements, forces, contact point 1e-6 and
    velocities, accelerations 1e-5: the round-off of the two marches (another order of the same
    arithmetic) amplified by the contact, measured 5e-8, 1.5e-7 and 9e-7 on this case
    (tests/test_beam_on_beam_general.py explains the scales), with a margin of 10-20x for the
    compiled builds (baseline, AVX2, AVX-512), which round differently. Sample times, segments,
    status and step count are exact."""
    import xarray as xr
    from two_body_reference import simulate_dense

    from fesub.cli.beam_on_beam import FS_OUT
    from fesub.models import beam_on_beam as bb

    out = tmp_path / "study"
    assert main(["beam-on-beam", "--mu", "0.3", "--roughness", "on", "--duration", "0.02", "--loci-step", "0.005",
                 "--no-figures", "--quiet", "--jobs", "1", "--out", str(out)]) == 0
    a = xr.open_dataset(out / "transient_mu0.3_rough.nc", engine="h5netcdf").load()
    model = bb.build()
    p = model.params
    ref = simulate_dense(bb.contact_system(model), mu=0.3, vx=p.vx, duration=0.02, fs_out=FS_OUT,
                         roughness_std=p.roughness * p.Fy, roughness_band=p.roughness_band, seed=0)
    assert a.attrs["status"] == ref.status == "completed" and a.attrs["steps"] == ref.steps
    b = ref.signals
    np.testing.assert_allclose(a["t"].values, b["t"], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(a["segment"].values, b["segment"])
    # the gap after each step is closed to the round-off of positions (~1e-18 m on 5 mm) by both
    np.testing.assert_allclose(a["gap"].values, b["gap"], rtol=0, atol=1e-16)
    for v in a.data_vars:
        if v in ("segment", "gap"):
            continue
        tol = 1e-5 if v.startswith(("v_", "a_")) or v == "v_t" else 1e-6
        x, y = a[v].values, b[v]
        assert np.max(np.abs(x - y)) <= tol * np.max(np.abs(y)) + 1e-300, v
